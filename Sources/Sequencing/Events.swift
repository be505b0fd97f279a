import MIDI

/// A note with its duration, as a sequencer thinks of it: one event instead of a note-on and
/// a note-off.
public struct NoteEvent: Hashable, Sendable {
    // Packed into 11 bytes (two 32-bit words and three bytes), so a ``SequenceEvent`` takes
    // 12 and a ``TimedEvent`` 24: tracks hold millions of events, and this is most of a
    // loaded file's memory. The channel shares a word with the duration, the zero-velocity
    // flag a byte with the release velocity.

    /// The duration in the low 28 bits, the channel in the high 4.
    @usableFromInline var durationAndChannel: UInt32
    /// Position of the release among the events of its tick (see ``TimedEvent/order``).
    public var releaseOrder: UInt32
    /// Key number, 0...127.
    public var key: UInt8
    /// Attack velocity, 1...127.
    public var velocity: UInt8
    /// The release velocity in the low 7 bits, the zero-velocity note-on flag in the high bit.
    @usableFromInline var releaseBits: UInt8

    /// The longest duration a note holds: 268,435,455 ticks (2^28 - 1), the largest delta
    /// time a Standard MIDI File can store in one event. Longer durations are clamped; the
    /// file reader keeps a note-on and note-off further apart than this as two messages.
    public static let maximumDuration: Int64 = 0x0FFF_FFFF

    /// Creates a note; `duration` is clamped to 0...``maximumDuration``.
    @inlinable
    public init(channel: UInt8, key: UInt8, velocity: UInt8, duration: Int64,
                releaseVelocity: UInt8 = 0, releasedByZeroVelocityNoteOn: Bool = false,
                releaseOrder: UInt32 = 0) {
        self.durationAndChannel = UInt32(channel & 0x0F) << 28 | UInt32(min(max(0, duration), Self.maximumDuration))
        self.key = key & 0x7F
        self.velocity = velocity & 0x7F
        self.releaseBits = releaseVelocity & 0x7F | (releasedByZeroVelocityNoteOn ? 0x80 : 0)
        self.releaseOrder = releaseOrder
    }

    /// Length in ticks, 0...``maximumDuration`` (larger values are clamped); 0 means the
    /// release falls on the same tick as the attack.
    @inlinable
    public var duration: Int64 {
        get { Int64(durationAndChannel & 0x0FFF_FFFF) }
        set { durationAndChannel = durationAndChannel & 0xF000_0000 | UInt32(min(max(0, newValue), Self.maximumDuration)) }
    }

    /// MIDI channel, 0...15.
    @inlinable
    public var channel: UInt8 {
        get { UInt8(truncatingIfNeeded: durationAndChannel >> 28) }
        set { durationAndChannel = durationAndChannel & 0x0FFF_FFFF | UInt32(newValue & 0x0F) << 28 }
    }

    /// Release velocity, 0...127 (0 when the release was a note-on with velocity 0).
    @inlinable
    public var releaseVelocity: UInt8 {
        get { releaseBits & 0x7F }
        set { releaseBits = releaseBits & 0x80 | newValue & 0x7F }
    }

    /// True when the release is encoded as a note-on with velocity 0, as many files do;
    /// kept so a file comes back with the bytes it had.
    @inlinable
    public var releasedByZeroVelocityNoteOn: Bool {
        get { releaseBits & 0x80 != 0 }
        set { releaseBits = releaseBits & 0x7F | (newValue ? 0x80 : 0) }
    }

    /// The message that starts the note.
    @inlinable
    public var onMessage: MIDIMessage { MIDIMessage(status: 0x90 | channel, data1: key & 0x7F, data2: velocity & 0x7F) }

    /// The message that ends the note.
    @inlinable
    public var offMessage: MIDIMessage {
        releasedByZeroVelocityNoteOn
            ? MIDIMessage(status: 0x90 | channel, data1: key & 0x7F, data2: 0)
            : MIDIMessage(status: 0x80 | channel, data1: key & 0x7F, data2: releaseVelocity)
    }
}

/// A system exclusive event as stored in a track: an F0 message, or an F7 packet (a
/// continuation of a divided sysex, or an escape carrying any bytes).
public struct SysexEvent: Hashable, Sendable {
    // The array before the byte: 9 bytes instead of 16, within a ``SequenceEvent``'s 12.

    /// The bytes after the status, exactly as stored (an F0 message normally ends with F7).
    public var payload: [UInt8]
    /// 0xF0 for a sysex start, 0xF7 for a continuation packet or escape.
    public var status: UInt8

    /// Creates a sysex event.
    public init(status: UInt8 = 0xF0, payload: [UInt8]) {
        self.status = status == 0xF7 ? 0xF7 : 0xF0
        self.payload = payload
    }

    /// True when this F0 packet does not end with F7, so continuation packets follow.
    public var isPacketStart: Bool { status == 0xF0 && payload.last != 0xF7 }
}

/// The meta event types the SMF specification defines.
public enum MetaType {
    /// 00: the sequence number.
    public static let sequenceNumber: UInt8 = 0x00
    /// 01: any text.
    public static let text: UInt8 = 0x01
    /// 02: the copyright notice.
    public static let copyright: UInt8 = 0x02
    /// 03: the sequence or track name.
    public static let trackName: UInt8 = 0x03
    /// 04: the instrument name.
    public static let instrumentName: UInt8 = 0x04
    /// 05: a lyric syllable.
    public static let lyric: UInt8 = 0x05
    /// 06: a marker (rehearsal letter, section name).
    public static let marker: UInt8 = 0x06
    /// 07: a cue point.
    public static let cuePoint: UInt8 = 0x07
    /// 08: the program name.
    public static let programName: UInt8 = 0x08
    /// 09: the device (port) name.
    public static let deviceName: UInt8 = 0x09
    /// 20: the MIDI channel the following meta events concern.
    public static let channelPrefix: UInt8 = 0x20
    /// 21: the MIDI port the track plays on.
    public static let midiPort: UInt8 = 0x21
    /// 2F: the end of the track.
    public static let endOfTrack: UInt8 = 0x2F
    /// 51: a tempo, in microseconds per quarter note.
    public static let tempo: UInt8 = 0x51
    /// 54: the SMPTE time the track starts at.
    public static let smpteOffset: UInt8 = 0x54
    /// 58: a time signature.
    public static let timeSignature: UInt8 = 0x58
    /// 59: a key signature.
    public static let keySignature: UInt8 = 0x59
    /// 7F: data for one sequencer.
    public static let sequencerSpecific: UInt8 = 0x7F
}

/// A meta event: a type byte and its data, kept exactly as stored whatever the type.
public struct MetaEvent: Hashable, Sendable {
    // The array before the byte: 9 bytes instead of 16, within a ``SequenceEvent``'s 12.

    /// The event's data, without the length prefix.
    public var data: [UInt8]
    /// The meta type (0x00...0x7F in practice; any byte is kept).
    public var type: UInt8

    /// Creates a meta event.
    public init(type: UInt8, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    /// A tempo event in microseconds per quarter note (clamped to 1...0xFFFFFF).
    public static func tempo(microsecondsPerQuarter: Int) -> MetaEvent {
        let us = UInt32(min(max(microsecondsPerQuarter, 1), 0xFF_FFFF))
        return MetaEvent(type: MetaType.tempo, data: [UInt8(us >> 16), UInt8((us >> 8) & 0xFF), UInt8(us & 0xFF)])
    }

    /// A tempo event in beats per minute.
    public static func tempo(bpm: Double) -> MetaEvent {
        tempo(microsecondsPerQuarter: Int((60_000_000.0 / bpm).rounded()))
    }

    /// A time signature event; `denominator` must be a power of two.
    public static func timeSignature(_ signature: TimeSignature) -> MetaEvent {
        MetaEvent(type: MetaType.timeSignature,
                  data: [signature.numerator, signature.denominatorPower, signature.clocksPerClick, signature.thirtySecondsPerQuarter])
    }

    /// A key signature: `sharpsOrFlats` in -7...7, `minor` for a minor key.
    public static func keySignature(sharpsOrFlats: Int8, minor: Bool) -> MetaEvent {
        MetaEvent(type: MetaType.keySignature, data: [UInt8(bitPattern: sharpsOrFlats), minor ? 1 : 0])
    }

    /// A text-like meta event (text, track name, marker, lyric...) from a string.
    public static func text(_ type: UInt8, _ string: String) -> MetaEvent {
        MetaEvent(type: type, data: Array(string.utf8))
    }

    /// Microseconds per quarter note of a well-formed tempo event (at least 3 data bytes).
    public var tempoMicrosecondsPerQuarter: Int? {
        guard type == MetaType.tempo, data.count >= 3 else { return nil }
        return Int(data[0]) << 16 | Int(data[1]) << 8 | Int(data[2])
    }

    /// The time signature of a well-formed time signature event.
    public var timeSignature: TimeSignature? {
        guard type == MetaType.timeSignature, data.count >= 4 else { return nil }
        return TimeSignature(numerator: data[0], denominatorPower: data[1], clocksPerClick: data[2], thirtySecondsPerQuarter: data[3])
    }

    /// The text of a text-like event, decoded as UTF-8 when valid and as Latin-1 otherwise.
    public var text: String {
        if let s = String(validating: data, as: UTF8.self) { return s }
        return String(data.map { Character(Unicode.Scalar($0)) })
    }
}

/// Which part of a node a parameter event addresses, as in Apple's audio unit scopes.
public enum ParameterScope: UInt8, Hashable, Sendable, Codable {
    /// The node as a whole.
    case global = 0
    /// One input bus (the element is the bus).
    case input = 1
    /// One output bus (the element is the bus).
    case output = 2
    /// One group, such as a MIDI channel (the element is the group).
    case group = 3
}

/// The curve of a parameter ramp.
public enum RampShape: UInt8, Hashable, Sendable, CaseIterable {
    /// Equal steps per frame.
    case linear = 0
    /// Equal ratios per frame (for frequencies and gains); linear when the two values differ
    /// in sign or one is zero.
    case exponential = 1
}

/// Parameter automation: sets a parameter of a node of the audio graph, and optionally ramps it
/// from there.
public struct ParameterEvent: Hashable, Sendable {
    /// A ramp that starts at the event: from ``ParameterEvent/value`` to `target` over
    /// `duration` ticks, reaching `target` exactly at the frame of the event's tick plus `duration`.
    public struct Ramp: Hashable, Sendable {
        /// The value the ramp ends on.
        public var target: Float
        /// Length in ticks (at least 1).
        public var duration: Int64
        /// The curve.
        public var shape: RampShape

        /// Creates a ramp.
        public init(to target: Float, duration: Int64, shape: RampShape = .linear) {
            self.target = target
            self.duration = max(1, duration)
            self.shape = shape
        }
    }

    /// The node's identifier in the graph.
    public var node: UInt32
    /// The parameter's identifier within the node.
    public var parameter: UInt32
    /// The element (bus or channel) within the scope.
    public var element: UInt32
    /// The new value, in the parameter's unit (a ramp's start value).
    public var value: Float
    /// The scope of the parameter.
    public var scope: ParameterScope
    /// The ramp from `value` on, or nil for a plain change.
    public var ramp: Ramp?

    /// Creates a parameter event.
    public init(node: UInt32, parameter: UInt32, scope: ParameterScope = .global, element: UInt32 = 0, value: Float,
                ramp: Ramp? = nil) {
        self.node = node
        self.parameter = parameter
        self.scope = scope
        self.element = element
        self.value = value
        self.ramp = ramp
    }

    /// Creates a parameter event at `address`.
    public init(_ address: ParameterAddress, value: Float, ramp: Ramp? = nil) {
        self.init(node: address.node, parameter: address.parameter, scope: address.scope, element: address.element,
                  value: value, ramp: ramp)
    }

    /// Where the event goes.
    public var address: ParameterAddress {
        ParameterAddress(node: node, parameter: parameter, scope: scope, element: element)
    }
}

/// One parameter of one node of the audio graph: what automation addresses.
public struct ParameterAddress: Hashable, Sendable {
    /// The node's identifier in the graph.
    public var node: UInt32
    /// The parameter's identifier within the node.
    public var parameter: UInt32
    /// The scope of the parameter.
    public var scope: ParameterScope
    /// The element (bus or channel) within the scope.
    public var element: UInt32

    /// Creates an address.
    public init(node: UInt32, parameter: UInt32, scope: ParameterScope = .global, element: UInt32 = 0) {
        self.node = node
        self.parameter = parameter
        self.scope = scope
        self.element = element
    }
}

/// An application-defined event: opaque bytes the player hands back to a callback.
public struct UserEvent: Hashable, Sendable {
    /// The application's bytes.
    public var data: [UInt8]
    /// Creates a user event.
    public init(data: [UInt8]) { self.data = data }
}

/// Anything a track can hold.
public enum SequenceEvent: Hashable, Sendable {
    /// A note with a duration.
    case note(NoteEvent)
    /// Any other short MIDI message: control and program changes, pitch bend, pressure, and
    /// note-ons or note-offs that have no partner; system common and real-time bytes found
    /// inside a file are kept here too.
    case message(MIDIMessage)
    /// A sysex message or packet.
    case sysex(SysexEvent)
    /// A meta event.
    case meta(MetaEvent)
    /// Parameter automation. Boxed: parameter events are rare, and keeping the payload out of
    /// line holds ``TimedEvent`` at a 24-byte stride.
    indirect case parameter(ParameterEvent)
    /// An application event.
    case user(UserEvent)

    /// Rank in the documented same-tick order used for playback: note-offs first, then
    /// resets, bank select, program change, other controllers and pitch bend, and note-ons
    /// last. Meta, sysex and automation events come before channel messages so a tempo
    /// or parameter change applies to the notes on its tick.
    public var playbackRank: UInt8 {
        switch self {
        case .meta: return 0
        case .sysex: return 2
        case .parameter: return 3
        case .user: return 9
        case .note: return 8
        case .message(let m):
            switch m.status & 0xF0 {
            case 0x80: return 1
            case 0x90: return m.data2 == 0 ? 1 : 8
            case 0xB0:
                switch m.data1 {
                case 120, 121, 123, 124, 125, 126, 127: return 4
                case 0, 32: return 5
                default: return 7
                }
            case 0xC0: return 6
            case 0xF0: return 2
            default: return 7
            }
        }
    }
}

/// An event placed on a track.
public struct TimedEvent: Hashable, Sendable {
    // Declared event, order, tick: the 12-byte event, the order in the 4 bytes after it, then
    // the tick; a 24-byte stride (48 with the tick first), most of a loaded file's memory.

    /// The event.
    public var event: SequenceEvent
    /// Position among events of the same tick. Loading keeps the file's order here, so a file
    /// is written back with its same-tick order; new events get the next free value.
    public var order: UInt32
    /// Position in ticks from the start of the track.
    public var tick: Int64

    /// Creates a timed event.
    public init(tick: Int64, order: UInt32 = 0, event: SequenceEvent) {
        self.tick = tick
        self.order = order
        self.event = event
    }

    /// The tick at which the event ends: `tick + duration` for notes, `tick` otherwise.
    public var endTick: Int64 {
        if case .note(let n) = event { return tick + n.duration }
        return tick
    }
}
