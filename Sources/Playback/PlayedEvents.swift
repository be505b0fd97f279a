import MIDI
import Sequencing

/// A user event that playback passed, as the player's callback receives it.
public struct PlayedUserEvent: Sendable, Hashable {
    /// The event's tick in the song's timeline (track offset and loop repeats included).
    public var tick: Int64
    /// The track, as an index into `MusicSequence.tracks` (the numbering of
    /// ``PlaybackSession/setMuted(_:track:)`` and every other track argument); nil for the
    /// tempo track.
    public var track: Int?
    /// The application's bytes.
    public var data: [UInt8]

    /// Creates a record of a played user event.
    public init(tick: Int64, track: Int?, data: [UInt8]) {
        self.tick = tick
        self.track = track
        self.data = data
    }
}

/// A text, lyric or marker event of the song that playback passed, as the player's callback
/// receives it.
public struct PlayedTextEvent: Sendable, Hashable {
    /// The event's tick in the song's timeline (track offset and loop repeats included).
    public var tick: Int64
    /// The track, as an index into `MusicSequence.tracks` (as ``PlayedUserEvent/track``); nil
    /// for the tempo track.
    public var track: Int?
    /// The meta type: `MetaType.text`, `MetaType.lyric` or `MetaType.marker`.
    public var type: UInt8
    /// The text's bytes, as stored.
    public var bytes: [UInt8]

    /// Creates a record of a played text event.
    public init(tick: Int64, track: Int?, type: UInt8, bytes: [UInt8]) {
        self.tick = tick
        self.track = track
        self.type = type
        self.bytes = bytes
    }

    /// The text (UTF-8 when valid, otherwise Latin-1, as `MetaEvent.text` reads it).
    public var text: String { MetaEvent(type: type, data: bytes).text }

    /// The event as a lyric, for `LyricSheet`.
    public var lyric: LyricEvent { LyricEvent(tick: tick, track: track.map { $0 + 1 } ?? 0, type: type, bytes: bytes) }
}
