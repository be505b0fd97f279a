import Foundation
import MIDIFile
import Playback
import Sequencing
import Testing

/// Lyric, text and marker events reach the session's event stream as the song plays.
@Suite struct TextEventTests {
    static let karaokeFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/corpus/files/jazz-soft/midi/test-karaoke-kar.mid")

    /// Plays `sequence` offline and returns the text events and user events of its stream.
    static func play(_ sequence: MusicSequence, loop: (Int64, Int64, Int)? = nil) async throws -> [PlaybackEvent] {
        let session = try PlaybackSession(sequence: sequence, options: PlaybackSession.Options(instrument: .builtIn, tailSeconds: 0.1, sampleRate: 44_100))
        if let loop { session.setLoop(fromTick: loop.0, toTick: loop.1, count: .times(loop.2)) }
        let events = session.events()
        try session.start(on: OfflineBackend(destination: .memory, blockSize: 256))
        var received: [PlaybackEvent] = []
        for await event in events {
            switch event {
            case .text, .userEvent: received.append(event)
            default: break
            }
        }
        return received
    }

    @Test func lyricsTextAndMarkersArriveOnceEachInOrderWithTheirTicksAndUserEvents() async throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 150)), at: 0)
        sequence.tempoTrack.add(.meta(.text(MetaType.marker, "Verse")), at: 0)
        sequence.tempoTrack.add(.meta(.text(MetaType.marker, "Chorus")), at: 1_920)
        var voice = MusicTrack()
        voice.name = "Voice"
        let syllables = ["Twin", "kle ", "twin", "kle ", "lit", "tle ", "star\r"]
        for (i, s) in syllables.enumerated() {
            voice.addNote(at: Int64(i * 480), channel: 0, key: 60, velocity: 90, duration: 400)
            voice.add(.meta(.text(MetaType.lyric, s)), at: Int64(i * 480))
        }
        voice.add(.user(UserEvent(data: [7])), at: 960)
        var muted = MusicTrack()
        muted.add(.meta(.text(MetaType.lyric, "silent")), at: 480)
        muted.isMuted = true
        var other = MusicTrack()
        other.add(.meta(.text(MetaType.text, "ad lib")), at: 480)
        other.add(.meta(.text(MetaType.cuePoint, "not a text event")), at: 480)
        sequence.tracks = [voice, muted, other]

        let received = try await Self.play(sequence)
        let expected: [PlaybackEvent] = [
            .text(PlayedTextEvent(tick: 0, track: nil, type: MetaType.marker, bytes: Array("Verse".utf8))),
            .text(PlayedTextEvent(tick: 0, track: 0, type: MetaType.lyric, bytes: Array("Twin".utf8))),
            .text(PlayedTextEvent(tick: 480, track: 0, type: MetaType.lyric, bytes: Array("kle ".utf8))),
            .text(PlayedTextEvent(tick: 480, track: 2, type: MetaType.text, bytes: Array("ad lib".utf8))),
            .text(PlayedTextEvent(tick: 960, track: 0, type: MetaType.lyric, bytes: Array("twin".utf8))),
            .userEvent(PlayedUserEvent(tick: 960, track: 0, data: [7])),
            .text(PlayedTextEvent(tick: 1_440, track: 0, type: MetaType.lyric, bytes: Array("kle ".utf8))),
            .text(PlayedTextEvent(tick: 1_920, track: nil, type: MetaType.marker, bytes: Array("Chorus".utf8))),
            .text(PlayedTextEvent(tick: 1_920, track: 0, type: MetaType.lyric, bytes: Array("lit".utf8))),
            .text(PlayedTextEvent(tick: 2_400, track: 0, type: MetaType.lyric, bytes: Array("tle ".utf8))),
            .text(PlayedTextEvent(tick: 2_880, track: 0, type: MetaType.lyric, bytes: Array("star\r".utf8))),
        ]
        #expect(received == expected)
    }

    @Test func aLoopedPassSingsItsLyricsAgainAtTheirTicks() async throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var voice = MusicTrack()
        for (i, s) in ["la ", "di ", "da"].enumerated() {
            voice.addNote(at: Int64(i * 480), channel: 0, key: 64, velocity: 90, duration: 400)
            voice.add(.meta(.text(MetaType.lyric, s)), at: Int64(i * 480))
        }
        sequence.tracks = [voice]
        let received = try await Self.play(sequence, loop: (0, 960, 2))
        let sung = received.compactMap { if case .text(let t) = $0 { return "\(t.tick):\(t.text)" } else { return nil } }
        #expect(sung == ["0:la ", "480:di ", "0:la ", "480:di ", "960:da"])
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: karaokeFile.path), "needs ../shared/corpus beside the repository (the shared test material)"))
    func aKaraokeFileDeliversEveryWordOnceInOrderWithItsTick() async throws {
        let sequence = try SMFReader.read(contentsOf: Self.karaokeFile.path).makeSequence()
        let words = Lyrics.events(in: sequence)
        #expect(words.count == 26)
        let received = try await Self.play(sequence)
        let texts = received.compactMap { if case .text(let t) = $0 { return t } else { return nil } }
        // The stream carries every text event (the title and header fields too); the words
        // are those the lyric rule picks, in the same order.
        // (A lyric event numbers tracks as allTracks does; `lyric` converts.)
        let playedWords = texts.filter { t in words.contains { $0 == t.lyric } }
        #expect(playedWords.map(\.lyric) == words)
        #expect(texts.count == words.count + 2)
        #expect(LyricSheet(playedWords.map(\.lyric)).lines.map(\.text)
                == ["Mary was a little lame,", "Little lame,", "Little lame,", "Mary was a little lame,", "A little lame was she!"])
    }
}
