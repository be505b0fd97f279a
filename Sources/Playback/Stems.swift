import MIDI
import Sequencing

/// How ``Sequencing/MusicSequence/stems(by:)`` groups notes into stems.
public enum StemGrouping: String, Sendable, Hashable, CaseIterable {
    /// One stem per event track that has notes.
    case track
    /// One stem per General MIDI program family (piano, organ, bass, ...) and one for the
    /// drums (channel 10), as Slakh groups its stems.
    case instrumentClass = "class"
}

/// One stem of a song: a copy of the sequence that plays only some tracks' notes.
///
/// Every other event of the song stays in ``sequence`` (tempo, program and controller
/// changes, pitch bend, pedals, automation, the tracks' lengths), so the stem's notes sound
/// exactly as they do in the mix and the stem ends where the mix does. Rendered with the
/// same instrument and options, the stems add up to the mix wherever the instrument is linear
/// in its voices: see ``Sequencing/MusicSequence/stems(by:)`` for where it is not.
public struct Stem: Sendable, Hashable {
    /// A name usable as a file name: `01-Piano` (track number as `tactus info` counts event
    /// tracks, then the track's name) or a class such as `bass` or `drums`.
    public var name: String
    /// The event tracks (indices into `MusicSequence.tracks`) whose notes the stem plays.
    public var tracks: [Int]
    /// The song with every note of the other tracks removed.
    public var sequence: MusicSequence

    /// A stem named `name` playing the notes of `tracks` in `sequence`.
    public init(name: String, tracks: [Int], sequence: MusicSequence) {
        self.name = name
        self.tracks = tracks
        self.sequence = sequence
    }
}

extension MusicSequence {
    /// The song split into stems, in track order (for classes, in the order of each class's
    /// first track). Tracks without notes make no stem.
    ///
    /// The stems' sum equals the mix (to float rounding) when the instrument treats each voice
    /// on its own: the SoundFont sampler with `--no-reverb --no-chorus`, under the voice limit,
    /// with a limiter that does not engage. The sampler's reverb and chorus are sends shared
    /// by all voices: each stem carries its own share through its own copy of the effects,
    /// and as they are linear the sum still matches to float rounding. It differs where voices
    /// share state: voice stealing past the voice limit, the limiter when the mix reaches its
    /// ceiling, per-note random draws (SFZ `lorand`), two tracks playing the same key on the
    /// same channel, and the built-in synthesizer (its noise is seeded per voice slot).
    ///
    /// With ``StemGrouping/instrumentClass`` a track belongs to the class of its first note:
    /// drums on channel 10, else the family of the program playing that note's channel then.
    public func stems(by grouping: StemGrouping = .track) -> [Stem] {
        var groups: [(name: String, tracks: [Int])] = []
        let classes = grouping == .instrumentClass ? trackClasses() : [:]
        for (index, track) in tracks.enumerated() where track.hasNotes {
            let name: String
            switch grouping {
            case .track: name = Self.stemName(track: index, title: track.name)
            case .instrumentClass: name = classes[index] ?? "other"
            }
            if let existing = groups.firstIndex(where: { $0.name == name }) {
                groups[existing].tracks.append(index)
            } else {
                groups.append((name, [index]))
            }
        }
        return groups.map { Stem(name: $0.name, tracks: $0.tracks, sequence: keepingNotes(ofTracks: Set($0.tracks))) }
    }

    /// A copy in which only the tracks in `kept` (indices into `tracks`) play notes. Every
    /// track keeps its length, so the copy ends where the sequence does.
    public func keepingNotes(ofTracks kept: Set<Int>) -> MusicSequence {
        var copy = self
        for index in copy.tracks.indices where !kept.contains(index) {
            let length = copy.tracks[index].length
            copy.tracks[index].explicitLength = length
            copy.tracks[index].removeAll { $0.event.startsNote }
        }
        return copy
    }

    /// The General MIDI family names, by program / 8.
    public static let programFamilies = ["piano", "chromatic-percussion", "organ", "guitar", "bass", "strings",
                                         "ensemble", "brass", "reed", "pipe", "synth-lead", "synth-pad",
                                         "synth-effects", "ethnic", "percussive", "sound-effects"]

    /// The class of each track with notes: the program of its first note's channel at that
    /// note's tick (program changes of every track count, as the instrument hears them all).
    func trackClasses() -> [Int: String] {
        var programChanges: [(tick: Int64, channel: UInt8, program: UInt8)] = []
        for track in allTracks {
            for e in track.events {
                if case .message(let m) = e.event, m.status & 0xF0 == 0xC0 {
                    programChanges.append((e.tick + track.offset, m.status & 0x0F, m.data1))
                }
            }
        }
        // Stable, so same-tick changes keep their tracks' order.
        programChanges = programChanges.enumerated().sorted { a, b in
            a.element.tick != b.element.tick ? a.element.tick < b.element.tick : a.offset < b.offset
        }.map(\.element)
        var result: [Int: String] = [:]
        for (index, track) in tracks.enumerated() {
            guard let first = track.events.first(where: { $0.event.startsNote }), let channel = first.event.noteChannel else { continue }
            if channel == 9 {
                result[index] = "drums"
                continue
            }
            let tick = first.tick + track.offset
            // A program change on the note's own tick plays first (its rank is lower).
            let program = programChanges.last { $0.channel == channel && $0.tick <= tick }?.program ?? 0
            result[index] = Self.programFamilies[Int(program) / 8]
        }
        return result
    }

    /// `01-Name`: a number first so the files sort in track order, then the name with
    /// characters that are awkward in file names replaced.
    static func stemName(track index: Int, title: String?) -> String {
        let number = index + 1 < 10 ? "0\(index + 1)" : "\(index + 1)"
        guard let title, !title.isEmpty else { return number }
        var cleaned = ""
        for scalar in title.unicodeScalars.prefix(64) {
            let safe = scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_" || scalar == "."
            cleaned.unicodeScalars.append(safe ? scalar : "_")
        }
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        return cleaned.isEmpty ? number : number + "-" + cleaned
    }
}

extension MusicTrack {
    /// True when the track starts at least one note.
    var hasNotes: Bool { events.contains { $0.event.startsNote } }
}

extension SequenceEvent {
    /// A note, or a lone note-on message with a velocity.
    var startsNote: Bool {
        switch self {
        case .note: return true
        case .message(let m): return m.status & 0xF0 == 0x90 && m.data2 > 0
        default: return false
        }
    }

    /// The channel of a note or a note-on message.
    var noteChannel: UInt8? {
        switch self {
        case .note(let n): return n.channel
        case .message(let m): return m.status & 0x0F
        default: return nil
        }
    }
}
