/// A sung word or syllable of a song, with where it falls.
///
/// Which events count as lyrics (``Lyrics/events(in:)``): every lyric meta event (type 05).
/// A file without any takes its words from the karaoke convention of `.kar` files (Soft
/// Karaoke), which puts each syllable in a text meta event (type 01) of a words track: a
/// track with a text event that starts with `/` or `\` (the convention's line and paragraph
/// marks), or a track named "Words". There, text events that start with `@` are the file's
/// header fields (title, language, version), not words, and are left out. Lyric events win
/// over karaoke text because many `.kar` files carry the words both ways; showing both would
/// sing every word twice.
public struct LyricEvent: Hashable, Sendable {
    /// The tick, from the start of the song.
    public var tick: Int64
    /// The index of the track in the list searched (for a sequence's `allTracks`, 0 is the
    /// tempo track).
    public var track: Int
    /// The meta type: ``MetaType/lyric`` or, for karaoke words, ``MetaType/text``.
    public var type: UInt8
    /// The event's bytes, as stored.
    public var bytes: [UInt8]

    /// Creates a lyric event.
    public init(tick: Int64, track: Int, type: UInt8, bytes: [UInt8]) {
        self.tick = tick
        self.track = track
        self.type = type
        self.bytes = bytes
    }

    /// The text: UTF-8 when the bytes are valid UTF-8, otherwise Latin-1 (as the meta event's
    /// own text reads).
    public var text: String { MetaEvent(type: type, data: bytes).text }
}

/// Finds the lyrics of a song: see ``LyricEvent`` for which events count.
public enum Lyrics {
    /// The lyric events of `tracks`, in time order (tick, then track, then the order within
    /// the track).
    public static func events(in tracks: [MusicTrack]) -> [LyricEvent] {
        var lyrics: [(LyricEvent, UInt32)] = []
        for (index, track) in tracks.enumerated() {
            for e in track.events {
                if case .meta(let m) = e.event, m.type == MetaType.lyric {
                    lyrics.append((LyricEvent(tick: e.tick, track: index, type: m.type, bytes: m.data), e.order))
                }
            }
        }
        if lyrics.isEmpty {
            for (index, track) in tracks.enumerated() where isKaraokeWordsTrack(track) {
                for e in track.events {
                    if case .meta(let m) = e.event, m.type == MetaType.text, m.data.first != UInt8(ascii: "@") {
                        lyrics.append((LyricEvent(tick: e.tick, track: index, type: m.type, bytes: m.data), e.order))
                    }
                }
            }
        }
        lyrics.sort { a, b in
            if a.0.tick != b.0.tick { return a.0.tick < b.0.tick }
            if a.0.track != b.0.track { return a.0.track < b.0.track }
            return a.1 < b.1
        }
        return lyrics.map(\.0)
    }

    /// The lyric events of a sequence (track 0 is its tempo track).
    public static func events(in sequence: MusicSequence) -> [LyricEvent] {
        events(in: sequence.allTracks)
    }

    /// True for a track that holds karaoke words by the `.kar` convention.
    public static func isKaraokeWordsTrack(_ track: MusicTrack) -> Bool {
        if let name = track.name, name.lowercased() == "words" { return true }
        return track.events.contains { e in
            guard case .meta(let m) = e.event, m.type == MetaType.text, let first = m.data.first else { return false }
            return first == UInt8(ascii: "/") || first == UInt8(ascii: "\\")
        }
    }
}
