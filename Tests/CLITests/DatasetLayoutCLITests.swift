import Foundation
import MIDI
import MIDIFile
import Sequencing
import Testing

/// `tactus render FOLDER -o OUT/ --layout slakh`: a batch writing training data, a folder per
/// input, that equals what a single-file render with `--stems` and `--labels` writes.
@Suite("tactus render --layout slakh")
struct DatasetLayoutCLITests {
    /// A lead on channel 1 and drums on channel 10, in two tracks, so stems by track and by
    /// class both split it in two.
    static func writeBand(_ path: String, key: UInt8) throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var lead = MusicTrack(), drums = MusicTrack()
        lead.add(.message(MIDIMessage(status: 0xC0, data1: 33, data2: 0)), at: 0)
        for i in 0..<4 {
            lead.addNote(at: Int64(i * 240), channel: 0, key: key + UInt8(i), velocity: 100, duration: 200)
            drums.addNote(at: Int64(i * 240 + 120), channel: 9, key: 36 + UInt8(i % 2) * 2, velocity: 90, duration: 60)
        }
        sequence.tracks = [lead, drums]
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: sequence), to: path)
    }

    static func corpus() throws -> (dir: URL, input: String) {
        let dir = try CLI.temporaryDirectory()
        let input = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try writeBand(input.appendingPathComponent("one.mid").path, key: 60)
        try writeBand(input.appendingPathComponent("sub/two.mid").path, key: 52)
        return (dir, input.path)
    }

    /// Every file under `folder` (relative path → bytes), manifests left out.
    static func files(under folder: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let walker = FileManager.default.enumerator(atPath: folder.path)
        while let relative = walker?.nextObject() as? String {
            let url = folder.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  !relative.hasPrefix("tactus-manifest") else { continue }
            result[relative] = try Data(contentsOf: url)
        }
        return result
    }

    static let spec = "transpose=2,tempo=1.25"

    @Test("Each input's folder holds the mix, stems, labels and MIDI a single render writes; all_src.mid re-renders the mix; two shards write what one run writes; a rerun skips complete folders and clears a dead run's half folder")
    func folders() throws {
        let (dir, input) = try Self.corpus()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out")
        // A folder a killed run left half-filled (its process is gone): removed by the next run.
        let stale = out.appendingPathComponent(".one.partial-999999999-abcdef")
        try FileManager.default.createDirectory(at: stale.appendingPathComponent("stems"), withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: stale.appendingPathComponent("stems/half.wav"))
        let options = ["--layout", "slakh", "--stems-by", "class", "--augment", Self.spec, "--seed", "9"] + BatchRenderCLITests.common
        let run = try CLI.run(["render", input, "-o", out.path + "/", "--jobs", "2"] + options, environment: BatchRenderCLITests.environment([:]))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        let written = try Self.files(under: out)
        for song in ["one", "sub/two"] {
            for name in ["mix.wav", "stems/bass.wav", "stems/drums.wav", "MIDI/bass.mid", "MIDI/drums.mid", "all_src.mid", "labels.json", "labels.npz", "metadata.yaml"] {
                #expect(written["\(song)/\(name)"] != nil, "\(song)/\(name) missing; have \(written.keys.sorted())")
            }
        }
        #expect(written.keys.allSatisfy { !$0.contains(".partial-") })

        // The same files as a single render of the same song with the same draw.
        let single = dir.appendingPathComponent("single")
        try FileManager.default.createDirectory(at: single, withIntermediateDirectories: true)
        let one = try CLI.run(["render", input + "/one.mid", "-o", single.appendingPathComponent("mix.wav").path,
                               "--stems", single.appendingPathComponent("stems").path, "--stems-by", "class",
                               "--labels", single.appendingPathComponent("labels.json").path,
                               "--augment", Self.spec, "--seed", "9"] + BatchRenderCLITests.common)
        #expect(one.status == 0, "\(one.stderr)")
        for name in ["mix.wav", "stems/bass.wav", "stems/drums.wav", "labels.json"] {
            #expect(try Data(contentsOf: single.appendingPathComponent(name)) == written["one/\(name)"], "\(name) differs")
        }
        // The song as rendered: rendering all_src.mid alone gives the mix (the spec has no gain).
        let again = dir.appendingPathComponent("again.wav")
        let source = try CLI.run(["render", out.appendingPathComponent("one/all_src.mid").path, "-o", again.path] + BatchRenderCLITests.common)
        #expect(source.status == 0, "\(source.stderr)")
        #expect(try Data(contentsOf: again) == written["one/mix.wav"])
        // Each stem's MIDI plays its notes: the labels' keys of that stem.
        let labels = try StemsCLITests.labels(out.appendingPathComponent("one/labels.json").path)
        let drums = try SMFReader.read(contentsOf: out.appendingPathComponent("one/MIDI/drums.mid").path).makeSequence()
        let drumKeys = drums.tracks.flatMap { $0.events.compactMap { e -> UInt8? in if case .note(let n) = e.event { return n.key }; return nil } }
        #expect(drumKeys == labels.notes.filter { $0.stem == "drums" }.map { UInt8($0.key) })
        let metadata = try String(contentsOf: out.appendingPathComponent("one/metadata.yaml"), encoding: .utf8)
        #expect(metadata.contains("  \"bass\":\n    tracks: [1]\n    inst_class: \"bass\"\n    is_drum: false\n    program_num: 33\n"), "\(metadata)")
        #expect(metadata.contains("augmentation: \"transpose=2,tempo=1.25\""))

        // Two shards write what one run writes.
        let sharded = dir.appendingPathComponent("sharded")
        for index in 0..<2 {
            let r = try CLI.run(["render", input, "-o", sharded.path + "/", "--shard", "\(index)/2"] + options,
                                environment: BatchRenderCLITests.environment([:]))
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(try Self.files(under: sharded) == written)

        // A rerun finds both folders complete.
        let rerun = try CLI.run(["render", input, "-o", out.path + "/", "--dry-run"] + options, environment: BatchRenderCLITests.environment([:]))
        #expect(rerun.stdout.split(separator: "\n").filter { $0.hasPrefix("complete\t") }.count == 2, "\(rerun.stdout)")
    }

    @Test("--layout with one file, an unknown layout, and --stems or --labels in a batch are one line and exit 64, with nothing written")
    func refusals() throws {
        let (dir, input) = try Self.corpus()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out")
        let cases: [([String], String)] = [
            (["render", input + "/one.mid", "-o", out.path + ".wav", "--layout", "slakh"], "--layout writes a batch"),
            (["render", input, "-o", out.path + "/", "--layout", "musdb"], "--layout 'musdb' is not 'slakh'"),
            (["render", input, "-o", out.path + "/", "--stems", dir.appendingPathComponent("s").path], "a batch writes stems and labels with --layout slakh"),
            (["render", input, "-o", out.path + "/", "--layout", "slakh", "--labels", dir.appendingPathComponent("l.json").path], "leave out --stems and --labels"),
        ]
        for (arguments, reason) in cases {
            let r = try CLI.run(arguments + BatchRenderCLITests.common, environment: BatchRenderCLITests.environment([:]))
            #expect(r.status == 64 && r.stderr.contains(reason), "\(arguments): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out.path) && !FileManager.default.fileExists(atPath: out.path + ".wav"))
        }
    }
}
