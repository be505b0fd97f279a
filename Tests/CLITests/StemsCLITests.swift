import AudioTestSupport
import Foundation
import MIDI
import MIDIFile
import Sequencing
import Testing

/// `tactus render --stems DIR --labels FILE.json`: training data beside the mix.
@Suite("tactus render --stems and --labels")
struct StemsCLITests {
    static let bank = "/usr/share/sounds/sf2/TimGM6mb.sf2"

    /// The interleaved samples of a 32-bit float WAV.
    static func floats(_ path: String) throws -> [Float] {
        let data = try WAVChunks.samples(atPath: path)
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Below this a sample counts as silence: the sampler settles at about 1e-18 rather than
    /// exactly 0 once a voice has played (a guard against denormals), 300 dB under full scale.
    static let silence: Float = 1e-12

    /// The first two bars of `Songs/morning-steps.mid` (four tracks with notes: piano, bass,
    /// strings, drums, all from the first beat), so the test renders in seconds in a debug build.
    static func shortSong(in dir: URL) throws -> String {
        var sequence = try SMFReader.read(contentsOf: CLI.song("morning-steps.mid")).makeSequence()
        // Two bars: every track plays from the first beat, and a debug build renders the mix and
        // four stems twice (two block sizes) in a few seconds.
        let end = Int64(2 * 4 * sequence.ticksPerQuarter)
        for i in sequence.tracks.indices {
            sequence.tracks[i].removeAll { $0.tick >= end }
            sequence.tracks[i].explicitLength = end
        }
        let path = dir.appendingPathComponent("morning-steps-2.mid").path
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: sequence), to: path)
        return path
    }

    struct Label: Decodable {
        var track: Int
        var channel: Int
        var key: Int
        var velocity: Int
        var program: Int
        var stem: String?
        var onset_frame: Int
        var offset_frame: Int
        var onset_seconds: Double
    }

    struct Labels: Decodable {
        var sample_rate: Int
        var notes: [Label]
    }

    static func labels(_ path: String) throws -> Labels {
        try JSONDecoder().decode(Labels.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The stem files of a folder, by name without the extension.
    static func stems(in dir: URL) throws -> [String: String] {
        var result: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) where name.hasSuffix(".wav") {
            result[String(name.dropLast(4))] = dir.appendingPathComponent(name).path
        }
        return result
    }

    @Test("With the effects off, the stems of a four-track song add up to the mix, each as long as it, at any block size",
          .enabled(if: FileManager.default.fileExists(atPath: StemsCLITests.bank), "needs TimGM6mb"))
    func stemsAddUpToTheMix() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let mix = dir.appendingPathComponent("mix.wav").path
        let stemsDir = dir.appendingPathComponent("stems")
        let labelsPath = dir.appendingPathComponent("labels.json").path
        let song = try Self.shortSong(in: dir)
        let r = try CLI.run(["render", song, "-o", mix, "--format", "f32", "--soundfont", Self.bank,
                             "--no-reverb", "--no-chorus", "--stems", stemsDir.path, "--labels", labelsPath])
        #expect(r.status == 0, "\(r.stderr)")
        let stems = try Self.stems(in: stemsDir)
        #expect(stems.keys.sorted() == ["01-Piano", "02-Bass", "03-Strings", "04-Drums"])
        let mixSamples = try Self.floats(mix)
        var sum = [Float](repeating: 0, count: mixSamples.count)
        for path in stems.values {
            let samples = try Self.floats(path)
            #expect(samples.count == mixSamples.count, "\(path)")
            for i in 0..<min(samples.count, sum.count) { sum[i] += samples[i] }
        }
        var worst: Float = 0
        var peak: Float = 0
        for i in sum.indices {
            worst = max(worst, abs(sum[i] - mixSamples[i]))
            peak = max(peak, abs(mixSamples[i]))
        }
        #expect(peak > 0.05)
        #expect(worst < 1e-5, "largest difference \(worst)")

        // Each stem holds only its tracks' notes: it is silent until its first labelled onset,
        // and where it is silent, another stem's onset does not make it sound (these stems
        // seldom fall silent: the click test below checks every onset).
        let labels = try Self.labels(labelsPath)
        #expect(Set(labels.notes.compactMap(\.stem)) == Set(stems.keys))
        for (name, path) in stems {
            let samples = try Self.floats(path)
            let own = labels.notes.filter { $0.stem == name }.map(\.onset_frame)
            let first = (0..<samples.count / 2).first { abs(samples[2 * $0]) > Self.silence || abs(samples[2 * $0 + 1]) > Self.silence }
            #expect(first == own.min(), "\(name): first sound at \(String(describing: first)), first note at \(String(describing: own.min()))")
            for other in labels.notes where other.stem != name {
                let f = other.onset_frame
                guard f >= 64, 2 * (f + 64) <= samples.count, !own.contains(where: { abs($0 - f) < 64 }) else { continue }
                guard samples[(2 * (f - 64))..<(2 * f)].allSatisfy({ abs($0) <= Self.silence }) else { continue }
                #expect(samples[(2 * f)..<(2 * (f + 64))].allSatisfy { abs($0) <= Self.silence }, "\(name) sounds at \(f), a note of \(other.stem ?? "?")")
            }
        }

        // The stems do not depend on the block size.
        let other = dir.appendingPathComponent("stems37")
        let again = try CLI.run(["render", song, "-o", dir.appendingPathComponent("mix37.wav").path,
                                 "--format", "f32", "--soundfont", Self.bank, "--no-reverb", "--no-chorus", "--block-size", "37",
                                 "--stems", other.path])
        #expect(again.status == 0, "\(again.stderr)")
        for (name, path) in stems {
            let b = try Data(contentsOf: other.appendingPathComponent(name + ".wav"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == b, "\(name)")
        }
    }

    /// A WAV click (every sample non-zero from the first) as a JSON patch, and a two-track song
    /// with a tempo change whose notes are apart, so each note's first sample can be found.
    static func clickSong(in dir: URL) throws -> (song: String, patch: String) {
        let frames = 200
        func le32(_ v: Int) -> Data { withUnsafeBytes(of: UInt32(v).littleEndian) { Data($0) } }
        func le16(_ v: Int) -> Data { withUnsafeBytes(of: UInt16(v).littleEndian) { Data($0) } }
        var wav = Data("RIFF".utf8)
        wav += le32(36 + 2 * frames) + Data("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(44_100) + le32(88_200)
            + le16(2) + le16(16) + Data("data".utf8) + le32(2 * frames)
        for _ in 0..<frames { wav += withUnsafeBytes(of: Int16(20_000).littleEndian) { Data($0) } }
        try wav.write(to: dir.appendingPathComponent("click.wav"))
        let patch = dir.appendingPathComponent("click.json")
        try Data(#"{"zones": [{"file": "click.wav", "rootKey": 60}]}"#.utf8).write(to: patch)

        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        _ = sequence.tempoTrack.add(.meta(MetaEvent(type: MetaType.tempo, data: [0x07, 0xA1, 0x20])), at: 0)
        // 97 BPM from beat 3: frames that are not a round number of blocks.
        _ = sequence.tempoTrack.add(.meta(MetaEvent(type: MetaType.tempo, data: [0x09, 0x70, 0x38])), at: 960)
        var first = MusicTrack(), second = MusicTrack()
        first.name = "Clicks A"
        second.name = "Clicks B"
        for i in 0..<6 {
            _ = first.addNote(at: Int64(i * 480 + 7 * i), channel: 0, key: 60, velocity: 100, duration: 60)
            _ = second.addNote(at: Int64(i * 480 + 240 + 3 * i), channel: 1, key: 60, velocity: 90, duration: 60)
        }
        sequence.tracks = [first, second]
        let song = dir.appendingPathComponent("clicks.mid").path
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: sequence), to: song)
        return (song, patch.path)
    }

    @Test("Every labelled onset frame is the first non-zero sample of that note in its stem")
    func labelsMatchTheAudio() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (song, patch) = try Self.clickSong(in: dir)
        let stemsDir = dir.appendingPathComponent("stems")
        let labelsPath = dir.appendingPathComponent("labels.json").path
        let r = try CLI.run(["render", song, "-o", dir.appendingPathComponent("mix.wav").path, "--format", "f32",
                             "--instrument", patch, "--block-size", "64", "--stems", stemsDir.path, "--labels", labelsPath])
        #expect(r.status == 0, "\(r.stderr)")
        let labels = try Self.labels(labelsPath)
        #expect(labels.sample_rate == 44_100)
        #expect(labels.notes.count == 12)
        #expect(Set(labels.notes.compactMap(\.stem)) == ["01-Clicks_A", "02-Clicks_B"])
        // Frames of a block grid would all be multiples of 64: these are not.
        #expect(labels.notes.contains { $0.onset_frame % 64 != 0 })
        for note in labels.notes {
            #expect(abs(note.onset_seconds * 44_100 - Double(note.onset_frame)) < 1e-6)
            #expect(note.offset_frame > note.onset_frame)
            let samples = try Self.floats(stemsDir.appendingPathComponent((note.stem ?? "") + ".wav").path)
            let f = note.onset_frame
            #expect(abs(samples[2 * f]) > 1e-6, "\(note.stem ?? ""): silent at its onset \(f)")
            if f > 0 { #expect(abs(samples[2 * (f - 1)]) <= Self.silence, "\(note.stem ?? ""): sounding before its onset \(f)") }
            // The other stem stays silent where this note starts: it holds none of its notes.
            for other in Set(labels.notes.compactMap(\.stem)) where other != note.stem {
                let theirs = try Self.floats(stemsDir.appendingPathComponent(other + ".wav").path)
                #expect(theirs[(2 * f)..<(2 * (f + 64))].allSatisfy { abs($0) <= Self.silence }, "\(other) sounds at \(f), a note of \(note.stem ?? "")")
            }
        }
    }

    @Test("A stems folder that is a file, or whose parent is missing, is one line naming it and exit 73, nothing written; usage errors exit 64")
    func badOutputs() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (song, patch) = try Self.clickSong(in: dir)
        let mix = dir.appendingPathComponent("mix.wav").path
        let file = dir.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        let notFolder = try CLI.run(["render", song, "-o", mix, "--instrument", patch, "--stems", file.path])
        #expect(notFolder.status == 73)
        #expect(notFolder.stderr == "\(file.path): the stems folder is not a directory\n")
        #expect(!FileManager.default.fileExists(atPath: mix))

        let orphan = dir.appendingPathComponent("missing/stems").path
        let noParent = try CLI.run(["render", song, "-o", mix, "--instrument", patch, "--stems", orphan])
        #expect(noParent.status == 73)
        #expect(noParent.stderr == "\(orphan): cannot create the stems folder (No such file or directory)\n")
        #expect(!FileManager.default.fileExists(atPath: mix))

        // A stem that cannot be written (a folder holds its name): the mix written before it
        // is removed too.
        let stemsDir = dir.appendingPathComponent("stems")
        try FileManager.default.createDirectory(at: stemsDir.appendingPathComponent("02-Clicks_B.wav"), withIntermediateDirectories: true)
        let blocked = try CLI.run(["render", song, "-o", mix, "--instrument", patch, "--stems", stemsDir.path])
        #expect(blocked.status == 73, "\(blocked.stderr)")
        #expect(blocked.stderr.hasPrefix(stemsDir.appendingPathComponent("02-Clicks_B.wav").path + ": "), "\(blocked.stderr)")
        #expect(blocked.stderr.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: mix))
        #expect(!FileManager.default.fileExists(atPath: stemsDir.appendingPathComponent("01-Clicks_A.wav").path))

        let labelsPath = dir.appendingPathComponent("labels.json").path
        for arguments in [["-o", "-", "--stems", stemsDir.path], ["-o", mix, "--labels", labelsPath, "--rate", "2"],
                          ["-o", mix, "--stems", stemsDir.path, "--stems-by", "colour"], ["-o", mix, "--labels", song]] {
            let r = try CLI.run(["render", song, "--instrument", patch] + arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(arguments): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: labelsPath))
        }
        let batch = try CLI.run(["render", song, song, "-o", dir.appendingPathComponent("out/").path, "--labels", labelsPath])
        #expect(batch.status == 64, "\(batch.stderr)")
    }

    @Test("--stems-by class groups tracks by General MIDI program family and drums",
          .enabled(if: FileManager.default.fileExists(atPath: StemsCLITests.bank), "needs TimGM6mb"))
    func stemsByClass() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var bassA = MusicTrack(), bassB = MusicTrack(), drums = MusicTrack()
        _ = bassA.add(.message(.programChange(channel: 0, program: 33)), at: 0)
        _ = bassA.addNote(at: 0, channel: 0, key: 40, velocity: 100, duration: 240)
        _ = bassB.add(.message(.programChange(channel: 1, program: 38)), at: 0)
        _ = bassB.addNote(at: 480, channel: 1, key: 43, velocity: 100, duration: 240)
        _ = drums.addNote(at: 240, channel: 9, key: 36, velocity: 100, duration: 60)
        sequence.tracks = [bassA, drums, bassB]
        let song = dir.appendingPathComponent("classes.mid").path
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: sequence), to: song)
        let stemsDir = dir.appendingPathComponent("stems")
        let labelsPath = dir.appendingPathComponent("labels.json").path
        let r = try CLI.run(["render", song, "-o", dir.appendingPathComponent("mix.wav").path, "--soundfont", Self.bank,
                             "--stems", stemsDir.path, "--stems-by", "class", "--labels", labelsPath])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Set(try Self.stems(in: stemsDir).keys) == ["bass", "drums"])
        let labels = try Self.labels(labelsPath)
        #expect(labels.notes.map(\.stem) == ["bass", "drums", "bass"])
        #expect(labels.notes.map(\.program) == [33, 0, 38])
    }
}
