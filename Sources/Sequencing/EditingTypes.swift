import MIDI

/// Which events an edit touches. Every restriction left nil means "all".
public struct EditScope: Hashable, Sendable {
    /// Indices into ``MusicSequence/tracks``.
    public var tracks: Set<Int>?
    /// MIDI channels, 0...15.
    public var channels: Set<UInt8>?
    /// Keys of notes (other events are unaffected by a key restriction).
    public var keys: ClosedRange<UInt8>?
    /// Ticks in which an event must start.
    public var range: Range<Int64>?

    /// Creates a scope.
    public init(tracks: Set<Int>? = nil, channels: Set<UInt8>? = nil, keys: ClosedRange<UInt8>? = nil, range: Range<Int64>? = nil) {
        self.tracks = tracks
        self.channels = channels
        self.keys = keys
        self.range = range
    }

    /// Everything.
    public static let all = EditScope()

    /// True when the scope includes track `index`.
    public func includesTrack(_ index: Int) -> Bool { tracks?.contains(index) ?? true }

    /// True when `event` is in scope (ignoring the track restriction).
    public func includes(_ event: TimedEvent) -> Bool {
        if let range, !range.contains(event.tick) { return false }
        switch event.event {
        case .note(let n):
            if let channels, !channels.contains(n.channel) { return false }
            if let keys, !keys.contains(n.key) { return false }
            return true
        case .message(let m):
            guard m.isChannelMessage else { return channels == nil && keys == nil }
            if let channels, !channels.contains(m.channel) { return false }
            if let keys, m.status & 0xE0 == 0x80 || m.status & 0xF0 == 0xA0, !keys.contains(m.data1) { return false }
            return true
        default:
            return channels == nil && keys == nil
        }
    }
}

/// What to do with a note transposed out of 0...127.
public enum TransposeOverflowPolicy: String, Hashable, Sendable, CaseIterable {
    /// Pin it to 0 or 127.
    case clamp
    /// Move it by whole octaves back into range.
    case foldOctave = "fold"
    /// Remove the note.
    case drop
}

/// What a tempo edit preserves.
public enum TempoEditKeeps: String, Hashable, Sendable {
    /// Events keep their ticks: the music speeds up or slows down.
    case beats
    /// Events are re-timed so they sound at the same moments (within a tick).
    case seconds
}

/// A quantize grid: a note value, straight, triplet or dotted.
public struct QuantizeGrid: Hashable, Sendable, CustomStringConvertible {
    /// The denominator of the note value: 4 for quarters, 16 for sixteenths.
    public var noteValue: Int
    /// Triplet grid (two thirds of the straight value).
    public var triplet: Bool
    /// Dotted grid (one and a half times the straight value).
    public var dotted: Bool

    /// Creates a grid; `noteValue` must be a power of two from 1 to 128.
    public init(noteValue: Int, triplet: Bool = false, dotted: Bool = false) {
        self.noteValue = noteValue
        self.triplet = triplet
        self.dotted = dotted
    }

    /// Parses "1/16", "1/8t" (triplet), "1/4." or "1/4d" (dotted).
    public init?(parsing text: String) {
        var body = Substring(text.lowercased())
        var triplet = false, dotted = false
        if body.hasSuffix("t") { triplet = true; body = body.dropLast() } else if body.hasSuffix(".") || body.hasSuffix("d") { dotted = true; body = body.dropLast() }
        guard body.hasPrefix("1/"), let value = Int(body.dropFirst(2)), value >= 1, value <= 128, value & (value - 1) == 0 else { return nil }
        self.init(noteValue: value, triplet: triplet, dotted: dotted)
    }

    /// The grid step in ticks at `ticksPerQuarter` (rounded to a whole tick, at least 1).
    public func ticks(ticksPerQuarter: Int) -> Int64 {
        var step = Double(ticksPerQuarter) * 4 / Double(noteValue)
        if triplet { step *= 2.0 / 3.0 }
        if dotted { step *= 1.5 }
        return max(1, Int64(step.rounded()))
    }

    public var description: String { "1/\(noteValue)\(triplet ? "t" : dotted ? "." : "")" }
}

/// Event kinds that ``MusicSequence/removeEvents(_:scope:)`` can remove.
public enum RemovableEventKind: Hashable, Sendable {
    /// System exclusive messages.
    case sysex
    /// Control changes; `nil` means every controller number.
    case controller(UInt8?)
    /// Program changes.
    case programChange
    /// Pitch bends.
    case pitchBend
    /// Channel pressure (aftertouch).
    case channelPressure
    /// Polyphonic key pressure.
    case polyPressure
    /// Meta events of one type; `nil` means every meta event except tempo and signatures.
    case meta(UInt8?)
    /// Notes.
    case notes
    /// Parameter (automation) events.
    case parameter
    /// User events.
    case user

    func matches(_ event: SequenceEvent) -> Bool {
        switch (self, event) {
        case (.sysex, .sysex), (.notes, .note), (.parameter, .parameter), (.user, .user): return true
        case (.controller(let n), .message(let m)): return m.status & 0xF0 == 0xB0 && (n == nil || m.data1 == n)
        case (.programChange, .message(let m)): return m.status & 0xF0 == 0xC0
        case (.pitchBend, .message(let m)): return m.status & 0xF0 == 0xE0
        case (.channelPressure, .message(let m)): return m.status & 0xF0 == 0xD0
        case (.polyPressure, .message(let m)): return m.status & 0xF0 == 0xA0
        case (.notes, .message(let m)): return m.status & 0xE0 == 0x80
        case (.meta(let type), .meta(let meta)):
            if let type { return meta.type == type }
            return ![MetaType.tempo, MetaType.timeSignature, MetaType.keySignature].contains(meta.type)
        default: return false
        }
    }
}

/// A piece of a sequence taken out by ``MusicSequence/cut(_:scope:)`` or ``MusicSequence/copy(_:scope:)``:
/// per track, events with ticks relative to the start of the range.
public struct SequenceClip: Hashable, Sendable {
    /// Length of the clip in ticks.
    public var length: Int64
    /// True when the clip was taken from every track, the tempo track included; pasting it
    /// then makes room in every track.
    public var includesTempoTrack: Bool
    /// Events of the tempo track.
    public var tempoEvents: [TimedEvent]
    /// Events per track index.
    public var trackEvents: [Int: [TimedEvent]]
}

/// Counts what an edit changed, for `--dry-run` reports and tests.
public struct EditReport: Hashable, Sendable {
    /// Events touched per track index (-1 is the tempo track).
    public var touched: [Int: Int] = [:]

    /// An empty report.
    public init() {}

    /// Counts `n` events touched in track `track`.
    public mutating func add(_ track: Int, _ n: Int = 1) {
        if n > 0 { touched[track, default: 0] += n }
    }
}
