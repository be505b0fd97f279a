/// A short MIDI message: a status byte and up to two data bytes.
///
/// This is the only MIDI value that crosses into the audio thread, so it is a plain,
/// trivially copyable value of three bytes. System exclusive data never travels in a
/// `MIDIMessage`; see ``MIDIStatus`` for which status bytes carry how many data bytes.
@frozen
public struct MIDIMessage: Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    /// The status byte (0x80...0xFF).
    public var status: UInt8
    /// The first data byte, or 0 when the message has none.
    public var data1: UInt8
    /// The second data byte, or 0 when the message has fewer than two.
    public var data2: UInt8

    /// Creates a message from its raw bytes; unused data bytes should be 0.
    @inlinable
    public init(status: UInt8, data1: UInt8 = 0, data2: UInt8 = 0) {
        self.status = status
        self.data1 = data1
        self.data2 = data2
    }

    /// Note on. A velocity of 0 is, by MIDI convention, a note off.
    @inlinable
    public static func noteOn(channel: UInt8, key: UInt8, velocity: UInt8) -> MIDIMessage {
        MIDIMessage(status: 0x90 | (channel & 0x0F), data1: key & 0x7F, data2: velocity & 0x7F)
    }

    /// Note off with a release velocity.
    @inlinable
    public static func noteOff(channel: UInt8, key: UInt8, velocity: UInt8 = 0) -> MIDIMessage {
        MIDIMessage(status: 0x80 | (channel & 0x0F), data1: key & 0x7F, data2: velocity & 0x7F)
    }

    /// Control change.
    @inlinable
    public static func controlChange(channel: UInt8, controller: UInt8, value: UInt8) -> MIDIMessage {
        MIDIMessage(status: 0xB0 | (channel & 0x0F), data1: controller & 0x7F, data2: value & 0x7F)
    }

    /// Program change.
    @inlinable
    public static func programChange(channel: UInt8, program: UInt8) -> MIDIMessage {
        MIDIMessage(status: 0xC0 | (channel & 0x0F), data1: program & 0x7F)
    }

    /// Pitch bend, `value` in 0...16383 with 8192 as centre.
    @inlinable
    public static func pitchBend(channel: UInt8, value: UInt16) -> MIDIMessage {
        let v = min(value, 16383)
        return MIDIMessage(status: 0xE0 | (channel & 0x0F), data1: UInt8(v & 0x7F), data2: UInt8(v >> 7))
    }

    /// Channel pressure (aftertouch for the whole channel).
    @inlinable
    public static func channelPressure(channel: UInt8, pressure: UInt8) -> MIDIMessage {
        MIDIMessage(status: 0xD0 | (channel & 0x0F), data1: pressure & 0x7F)
    }

    /// Polyphonic key pressure.
    @inlinable
    public static func polyPressure(channel: UInt8, key: UInt8, pressure: UInt8) -> MIDIMessage {
        MIDIMessage(status: 0xA0 | (channel & 0x0F), data1: key & 0x7F, data2: pressure & 0x7F)
    }

    /// The kind of message, decoded from the status byte.
    @inlinable
    public var kind: MIDIMessageKind { MIDIMessageKind(status: status) }

    /// The channel (0...15) of a channel voice message; meaningless for system messages.
    @inlinable
    public var channel: UInt8 { status & 0x0F }

    /// True for status bytes 0x80...0xEF.
    @inlinable
    public var isChannelMessage: Bool { status >= 0x80 && status < 0xF0 }

    /// True for a note on with a velocity above zero.
    @inlinable
    public var isNoteOn: Bool { status & 0xF0 == 0x90 && data2 > 0 }

    /// True for a note off, or a note on with velocity zero.
    @inlinable
    public var isNoteOff: Bool { status & 0xF0 == 0x80 || (status & 0xF0 == 0x90 && data2 == 0) }

    /// The 14-bit pitch bend value of a pitch bend message.
    @inlinable
    public var pitchBendValue: UInt16 { UInt16(data1 & 0x7F) | (UInt16(data2 & 0x7F) << 7) }

    /// Number of data bytes that follow the status byte (0, 1 or 2).
    @inlinable
    public var dataByteCount: Int { MIDIStatus.dataByteCount(status) ?? 0 }

    /// The message's bytes on the wire: status then its data bytes.
    public var bytes: [UInt8] {
        switch dataByteCount {
        case 0: return [status]
        case 1: return [status, data1]
        default: return [status, data1, data2]
        }
    }

    public var description: String {
        bytes.map { byte in
            let s = String(byte, radix: 16)
            return s.count == 1 ? "0" + s : s
        }.joined(separator: " ")
    }
}

/// What a status byte says a message is.
public enum MIDIMessageKind: Hashable, Sendable {
    /// 8n: a key released.
    case noteOff
    /// 9n: a key pressed (velocity 0 means released).
    case noteOn
    /// An: pressure on one held key (polyphonic aftertouch).
    case polyPressure
    /// Bn: a controller moved, or a channel mode message (controllers 120...127).
    case controlChange
    /// Cn: a program (instrument) chosen.
    case programChange
    /// Dn: pressure on the whole channel (channel aftertouch).
    case channelPressure
    /// En: the pitch wheel, 14 bits centred on 8192.
    case pitchBend
    /// F0: the start of a system exclusive message.
    case systemExclusive
    /// F1: a MIDI time code quarter frame.
    case quarterFrame
    /// F2: the song position pointer, in sixteenth notes.
    case songPosition
    /// F3: a song chosen.
    case songSelect
    /// F6: analog synthesizers should tune.
    case tuneRequest
    /// F7: the end of a system exclusive message.
    case endOfExclusive
    /// F8: MIDI clock, 24 per quarter note.
    case timingClock
    /// FA: start from the beginning.
    case start
    /// FB: continue from the current position.
    case `continue`
    /// FC: stop.
    case stop
    /// FE: the sender is alive.
    case activeSensing
    /// FF: return to the power-up state.
    case systemReset
    /// Status bytes the MIDI specification leaves undefined (F4, F5, F9, FD) or data bytes.
    case undefined

    /// Decodes a status byte.
    @inlinable
    public init(status: UInt8) {
        switch status & 0xF0 {
        case 0x80: self = .noteOff
        case 0x90: self = .noteOn
        case 0xA0: self = .polyPressure
        case 0xB0: self = .controlChange
        case 0xC0: self = .programChange
        case 0xD0: self = .channelPressure
        case 0xE0: self = .pitchBend
        case 0xF0:
            switch status {
            case 0xF0: self = .systemExclusive
            case 0xF1: self = .quarterFrame
            case 0xF2: self = .songPosition
            case 0xF3: self = .songSelect
            case 0xF6: self = .tuneRequest
            case 0xF7: self = .endOfExclusive
            case 0xF8: self = .timingClock
            case 0xFA: self = .start
            case 0xFB: self = .continue
            case 0xFC: self = .stop
            case 0xFE: self = .activeSensing
            case 0xFF: self = .systemReset
            default: self = .undefined
            }
        default: self = .undefined
        }
    }
}

/// Facts about status bytes.
public enum MIDIStatus {
    /// How many data bytes follow `status` in a short message, or nil where the number is not
    /// fixed (system exclusive) or the status is undefined (F4, F5, F9, FD) or not a status.
    @inlinable
    public static func dataByteCount(_ status: UInt8) -> Int? {
        switch status {
        case 0x80...0xBF, 0xE0...0xEF: return 2
        case 0xC0...0xDF: return 1
        case 0xF1, 0xF3: return 1
        case 0xF2: return 2
        case 0xF6, 0xF8, 0xFA, 0xFB, 0xFC, 0xFE, 0xFF: return 0
        default: return nil
        }
    }

    /// True for the system real-time bytes (F8...FF) that may appear anywhere in a stream.
    @inlinable
    public static func isRealTime(_ byte: UInt8) -> Bool { byte >= 0xF8 }
}

/// Well-known controller numbers.
public enum MIDIController {
    /// Bank select, coarse (0).
    public static let bankSelectMSB: UInt8 = 0
    /// The modulation wheel (1).
    public static let modulationWheel: UInt8 = 1
    /// Data entry for the selected RPN or NRPN, coarse (6).
    public static let dataEntryMSB: UInt8 = 6
    /// Channel volume (7).
    public static let volume: UInt8 = 7
    /// Pan (10): 0 left, 64 centre, 127 right.
    public static let pan: UInt8 = 10
    /// Expression (11): a fraction of the channel volume.
    public static let expression: UInt8 = 11
    /// Bank select, fine (32).
    public static let bankSelectLSB: UInt8 = 32
    /// Data entry, fine (38).
    public static let dataEntryLSB: UInt8 = 38
    /// The sustain (damper) pedal (64): down at 64 and above.
    public static let sustainPedal: UInt8 = 64
    /// The sostenuto pedal (66): holds the notes down when it is pressed.
    public static let sostenutoPedal: UInt8 = 66
    /// Sound controller 5, brightness (74): in MPE the third dimension of touch, the timbre of
    /// the note on a member channel.
    public static let timbre: UInt8 = 74
    /// Reverb send level (91).
    public static let reverbSend: UInt8 = 91
    /// Chorus send level (93).
    public static let chorusSend: UInt8 = 93
    /// Non-registered parameter number, fine (98).
    public static let nrpnLSB: UInt8 = 98
    /// Non-registered parameter number, coarse (99).
    public static let nrpnMSB: UInt8 = 99
    /// Registered parameter number, fine (100).
    public static let rpnLSB: UInt8 = 100
    /// Registered parameter number, coarse (101).
    public static let rpnMSB: UInt8 = 101
    /// All sound off (120): silences the channel at once, releases included.
    public static let allSoundOff: UInt8 = 120
    /// Reset all controllers (121).
    public static let resetAllControllers: UInt8 = 121
    /// All notes off (123): releases every note of the channel.
    public static let allNotesOff: UInt8 = 123

    /// The pitch bend range (RPN 0) after data entry of `value`, in semitones with the cents
    /// as the fraction: the MSB (`coarse`) sets the semitones and keeps the cents of `current`,
    /// the LSB sets the cents (0...99) and keeps its semitones.
    public static func bendRange(_ current: Float, afterDataEntry value: UInt8, coarse: Bool) -> Float {
        let semitones = current.rounded(.down)
        return coarse ? Float(value) + (current - semitones) : semitones + Float(min(value, 99)) / 100
    }
}
