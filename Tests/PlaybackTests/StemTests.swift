import AudioFileOutput
import AudioGraph
import MIDI
@testable import Playback
import Sequencing
import Testing

/// `MusicSequence.stems(by:)`, `Schedule.noteLabels` and `FixedLengthSink`: the library side of
/// `tactus render --stems --labels`.
@Suite struct StemTests {
    /// Piano (with a pedal) and bass on their own channels, a track of program changes only,
    /// and drums, with a tempo change between the notes.
    func song() -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        _ = sequence.tempoTrack.add(.meta(MetaEvent(type: MetaType.tempo, data: [0x07, 0xA1, 0x20])), at: 0)
        _ = sequence.tempoTrack.add(.meta(MetaEvent(type: MetaType.tempo, data: [0x09, 0x70, 0x38])), at: 480)
        var piano = MusicTrack(), bass = MusicTrack(), setup = MusicTrack(), drums = MusicTrack()
        piano.name = "Grand piano"
        _ = piano.add(.message(.controlChange(channel: 0, controller: 64, value: 127)), at: 0)
        _ = piano.addNote(at: 0, channel: 0, key: 60, velocity: 100, duration: 240)
        _ = piano.addNote(at: 960, channel: 0, key: 60, velocity: 80, duration: 100)
        _ = bass.addNote(at: 480, channel: 1, key: 36, velocity: 90, duration: 480)
        _ = setup.add(.message(.controlChange(channel: 1, controller: 0, value: 1)), at: 0)
        _ = setup.add(.message(.programChange(channel: 1, program: 33)), at: 0)
        _ = setup.add(.message(.programChange(channel: 1, program: 81)), at: 1_200)
        _ = drums.addNote(at: 720, channel: 9, key: 36, velocity: 127, duration: 10)
        _ = drums.addNote(at: 1_920, channel: 9, key: 38, velocity: 127, duration: 10)
        sequence.tracks = [piano, bass, setup, drums]
        return sequence
    }

    func notes(_ sequence: MusicSequence) -> [[Int64]] {
        sequence.tracks.map { $0.events.compactMap { if case .note = $0.event { return $0.tick } else { return nil } } }
    }

    @Test func stemsPerTrackKeepEverythingButTheOtherTracksNotes() {
        let song = song()
        let stems = song.stems()
        #expect(stems.map(\.name) == ["01-Grand_piano", "02", "04"])
        #expect(stems.map(\.tracks) == [[0], [1], [3]])
        #expect(notes(stems[0].sequence) == [[0, 960], [], [], []])
        #expect(notes(stems[1].sequence) == [[], [480], [], []])
        // The pedal and the program changes stay; the stem ends where the song does.
        for stem in stems {
            #expect(stem.sequence.tracks[0].events.contains { if case .message(let m) = $0.event { return m.data1 == 64 } else { return false } })
            #expect(stem.sequence.tracks[2].events == song.tracks[2].events)
            #expect(stem.sequence.length == song.length)
            let schedule = Schedule(sequence: stem.sequence, sampleRate: 44_100, defaultNode: 1)
            #expect(schedule.endFrame == Schedule(sequence: song, sampleRate: 44_100, defaultNode: 1).endFrame)
        }
    }

    @Test func stemsByClassFollowTheProgramOfTheFirstNote() {
        let stems = song().stems(by: .instrumentClass)
        #expect(stems.map(\.name) == ["piano", "bass", "drums"])
        #expect(stems.map(\.tracks) == [[0], [1], [3]])
    }

    @Test func labelsAreTheScheduleFramesWithTheChannelState() {
        let song = song()
        let schedule = Schedule(sequence: song, sampleRate: 48_000, defaultNode: 1)
        let names = [0: "a", 1: "b", 3: "d"]
        let labels = schedule.noteLabels { names[$0] }
        let tempo = song.makeTempoMap()
        #expect(labels.map(\.key) == [60, 36, 36, 60, 38])
        #expect(labels.map(\.track) == [0, 1, 3, 0, 3])
        #expect(labels.map(\.stem) == ["a", "b", "d", "a", "d"])
        #expect(labels.map(\.onsetFrame) == [0, 480, 720, 960, 1_920].map { tempo.frame(atTick: $0, sampleRate: 48_000) })
        #expect(labels.map(\.offsetFrame) == [240, 960, 730, 1_060, 1_930].map { tempo.frame(atTick: $0, sampleRate: 48_000) })
        #expect(labels[1].program == 33 && labels[1].bank == 128)
        #expect(labels[0].program == 0 && labels[0].channel == 0)
        #expect(labels[3].onsetSeconds == Double(labels[3].onsetFrame) / 48_000)
        let json = String(decoding: NoteLabel.json(labels, sampleRate: 48_000), as: UTF8.self)
        #expect(json.hasPrefix("{\"sample_rate\": 48000, \"notes\": [\n  {\"track\": 1, \"channel\": 1, \"key\": 60, \"velocity\": 100, \"program\": 0, \"bank\": 0, \"is_drum\": false, \"stem\": \"a\", \"onset_frame\": 0, "))
        #expect(json.contains("\"is_drum\": true"))
    }

    /// The `.npz` archive as `numpy.load` and `zipfile` read it: ZIP records with correct
    /// checksums, `.npy` headers that start the data on 64-byte boundaries, stems as indices.
    @Test func npzLabelsAreAZipOfNumPyColumns() throws {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)  // the CRC-32 check value
        let labels = Schedule(sequence: song(), sampleRate: 48_000, defaultNode: 1).noteLabels { [0: "a", 1: "b", 3: "d"][$0] }
        let bytes = NoteLabel.npz(labels, sampleRate: 48_000, stemNames: ["d", "b"], augmentation: "transpose=1")
        #expect(bytes == NoteLabel.npz(labels, sampleRate: 48_000, stemNames: ["d", "b"], augmentation: "transpose=1"))
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        // Walk the local headers: each entry's stored data checks against its CRC.
        var offset = 0
        var entries: [String: [UInt8]] = [:]
        while u32(offset) == 0x0403_4B50 {
            let size = u32(offset + 18), nameLength = u16(offset + 26)
            let name = String(decoding: bytes[(offset + 30)..<(offset + 30 + nameLength)], as: UTF8.self)
            let data = Array(bytes[(offset + 30 + nameLength)..<(offset + 30 + nameLength + size)])
            #expect(u32(offset + 14) == Int(CRC32.checksum(data)), "\(name)")
            entries[name] = data
            offset += 30 + nameLength + size
        }
        #expect(u32(offset) == 0x0201_4B50)
        #expect(Set(entries.keys) == Set(["track", "channel", "key", "velocity", "program", "bank", "is_drum", "stem", "stem_names",
                                          "onset_frame", "offset_frame", "onset_seconds", "offset_seconds", "sample_rate", "augmentation"]
                                            .map { $0 + ".npy" }))
        for (name, npy) in entries {
            #expect(Array(npy.prefix(8)) == [0x93] + Array("NUMPY".utf8) + [1, 0], "\(name)")
            #expect((10 + Int(npy[8]) + Int(npy[9]) << 8) % 64 == 0, "\(name)")
        }
        func header(_ name: String) -> String {
            let npy = entries[name + ".npy"]!
            return String(decoding: npy[10..<(10 + Int(npy[8]))], as: UTF8.self)
        }
        #expect(header("key").hasPrefix("{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }"))
        #expect(header("stem_names").hasPrefix("{'descr': '<U1', 'fortran_order': False, 'shape': (3,), }"))
        #expect(header("sample_rate").hasPrefix("{'descr': '<i8', 'fortran_order': False, 'shape': (), }"))
        // Stems: the names given first, then "a" as it appears; the values are their indices.
        let stems = entries["stem.npy"]!
        let values = stride(from: stems.count - 20, to: stems.count, by: 4).map { Int32(bitPattern: UInt32(stems[$0]) | UInt32(stems[$0 + 1]) << 8) }
        #expect(values == [2, 1, 0, 2, 0])
        let names = entries["stem_names.npy"]!
        #expect(Array(names.suffix(12)) == [UInt8(ascii: "d"), 0, 0, 0, UInt8(ascii: "b"), 0, 0, 0, UInt8(ascii: "a"), 0, 0, 0])
    }

    final class Collect: AudioSink {
        var frames: [Float] = []
        var finished = false
        func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) {
            frames += UnsafeBufferPointer(start: left, count: count)
        }
        func finish() { finished = true }
        func cancel() {}
    }

    @Test func fixedLengthSinkCutsAndPads() throws {
        let ones = [Float](repeating: 1, count: 10)
        for (written, expected) in [(25, 17), (10, 17)] {
            let collect = Collect()
            let sink = FixedLengthSink(collect, frameCount: 17)
            var left = written
            while left > 0 {
                let n = min(10, left)
                try sink.write(left: ones, right: ones, count: n)
                left -= n
            }
            try sink.finish()
            #expect(collect.finished)
            #expect(collect.frames.count == expected)
            #expect(collect.frames.prefix(min(written, 17)).allSatisfy { $0 == 1 })
            #expect(collect.frames.dropFirst(min(written, 17)).allSatisfy { $0 == 0 })
        }
    }
}
