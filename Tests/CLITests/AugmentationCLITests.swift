import Foundation
import MIDIFile
import Sequencing
import Testing

/// `tactus render --augment SPEC --seed N`: training audio varied per file, reproducibly.
@Suite("tactus render --augment")
struct AugmentationCLITests {
    static let spec = "transpose=-4..4,tempo=0.8..1.25,velocity=0.7..1.4,gain=-6..0"

    /// Four short songs, two in a sub-folder.
    static func corpus() throws -> (dir: URL, input: String) {
        let dir = try CLI.temporaryDirectory()
        let input = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input.appendingPathComponent("sub"), withIntermediateDirectories: true)
        for (i, name) in ["one.mid", "two.mid", "sub/three.mid", "sub/four.mid"].enumerated() {
            try BatchRenderCLITests.writeSong(input.appendingPathComponent(name).path, key: UInt8(48 + 3 * i), notes: 4)
        }
        return (dir, input.path)
    }

    func render(_ input: String, to out: URL, seed: Int, extra: [String] = []) throws {
        let r = try CLI.run(["render", input, "-o", out.path + "/", "--augment", Self.spec, "--seed", "\(seed)", "--jobs", "1"]
                            + BatchRenderCLITests.common + extra, environment: BatchRenderCLITests.environment([:]))
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test("Three shards draw and render what one run does; the manifest's draw re-renders a file alone exactly; another seed differs")
    func shardsAndManifest() throws {
        let (dir, input) = try Self.corpus()
        defer { try? FileManager.default.removeItem(at: dir) }
        let whole = dir.appendingPathComponent("whole")
        try render(input, to: whole, seed: 11)
        let expected = try BatchRenderCLITests.outputs(whole)
        #expect(expected.count == 4)

        let sharded = dir.appendingPathComponent("sharded")
        for index in 0..<3 { try render(input, to: sharded, seed: 11, extra: ["--shard", "\(index)/3"]) }
        #expect(try BatchRenderCLITests.outputs(sharded) == expected, "the shards' outputs are the whole run's, byte for byte")

        let records = try BatchRenderCLITests.records(whole).filter { $0["status"] as? String == "ok" }
        let draws = Dictionary(uniqueKeysWithValues: records.compactMap { r in
            (r["relative_path"] as? String).map { ($0, r["augmentation"] as? String ?? "") }
        })
        #expect(draws.count == 4 && draws.values.allSatisfy { $0.hasPrefix("transpose=") && $0.contains(",gain=") }, "\(draws)")
        #expect(Set(draws.values).count == 4, "each file draws its own values")
        let shardDraws = try BatchRenderCLITests.records(sharded).filter { $0["status"] as? String == "ok" }
            .compactMap { r in (r["relative_path"] as? String).map { ($0, r["augmentation"] as? String ?? "") } }
        #expect(Dictionary(uniqueKeysWithValues: shardDraws) == draws)

        // One file alone, given its recorded draw as the spec (no seed needed: the values are fixed).
        let draw = try #require(draws["sub/three.mid"])
        let alone = dir.appendingPathComponent("alone.wav").path
        let single = try CLI.run(["render", input + "/sub/three.mid", "-o", alone, "--augment", draw] + BatchRenderCLITests.common)
        #expect(single.status == 0, "\(single.stderr)")
        #expect(single.stdout.contains("\(alone): augmented with \(draw)"), "\(single.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: alone)) == expected["sub/three.wav"])

        let other = dir.appendingPathComponent("other")
        try render(input, to: other, seed: 12)
        let otherOutputs = try BatchRenderCLITests.outputs(other)
        #expect(otherOutputs.keys.sorted() == expected.keys.sorted())
        #expect(expected.keys.allSatisfy { otherOutputs[$0] != expected[$0] }, "another seed, other audio")
    }

    @Test("The labels follow the draw and record it; a malformed spec, or --seed without --augment, is one line and exit 64 with nothing written")
    func labelsAndRefusals() throws {
        let (dir, input) = try Self.corpus()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = input + "/one.mid"
        func labels(_ arguments: [String], _ name: String) throws -> StemsCLITests.Labels {
            let path = dir.appendingPathComponent(name + ".json").path
            let r = try CLI.run(["render", song, "-o", dir.appendingPathComponent(name + ".wav").path, "--labels", path]
                                + arguments + BatchRenderCLITests.common)
            #expect(r.status == 0, "\(r.stderr)")
            return try StemsCLITests.labels(path)
        }
        let plain = try labels([], "plain")
        let faster = try labels(["--augment", "tempo=2,transpose=3"], "faster")
        #expect(plain.notes.count == 4 && faster.notes.count == 4)
        for (p, f) in zip(plain.notes, faster.notes) {
            #expect(f.key == p.key + 3)
            #expect(abs(f.onset_seconds - p.onset_seconds / 2) <= 1 / 44_100.0)
        }
        let text = try String(contentsOfFile: dir.appendingPathComponent("faster.json").path, encoding: .utf8)
        #expect(text.contains(#""augmentation": "transpose=3,tempo=2""#), "\(text.prefix(200))")
        // Seeded draws repeat: the same seed, the same audio and labels.
        let first = try labels(["--augment", Self.spec, "--seed", "5"], "first")
        let again = try labels(["--augment", Self.spec, "--seed", "5"], "again")
        #expect(first.notes.map(\.onset_frame) == again.notes.map(\.onset_frame) && first.notes.map(\.key) == again.notes.map(\.key))
        #expect(try Data(contentsOf: dir.appendingPathComponent("first.wav")) == Data(contentsOf: dir.appendingPathComponent("again.wav")))

        let out = dir.appendingPathComponent("refused.wav").path
        for (spec, reason) in [("tempo=9", "tempo must lie in 0.25...4"), ("pitch=2", "unknown knob 'pitch'"), ("gain=-1..-3", "low end is above")] {
            let r = try CLI.run(["render", song, "-o", out, "--augment", spec] + BatchRenderCLITests.common)
            #expect(r.status == 64, "\(spec): \(r.stderr)")
            #expect(r.stderr == "\(out): augmentation '\(spec)': \(reason)\n" || r.stderr.contains(reason), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        // A seed without --augment would render the file unvaried: refused, as in a batch.
        let seedOnly = try CLI.run(["render", song, "-o", out, "--seed", "7"] + BatchRenderCLITests.common)
        #expect(seedOnly.status == 64 && seedOnly.stderr == "\(out): --seed 7 needs --augment SPEC (the seed only chooses augmentation draws)\n",
                "\(seedOnly.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let seedOnlyBatch = try CLI.run(["render", input, "-o", dir.appendingPathComponent("batch").path + "/", "--seed", "7"]
                                        + BatchRenderCLITests.common, environment: BatchRenderCLITests.environment([:]))
        #expect(seedOnlyBatch.status == 64 && seedOnlyBatch.stderr.contains("--seed 7 needs --augment"), "\(seedOnlyBatch.stderr)")
        let batch = try CLI.run(["render", input, "-o", dir.appendingPathComponent("batch").path + "/", "--augment", "colour=1"]
                                + BatchRenderCLITests.common, environment: BatchRenderCLITests.environment([:]))
        #expect(batch.status == 64 && batch.stderr.contains("unknown knob 'colour'"), "\(batch.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("batch").path))
    }

    @Test("reverb=0 and chorus=0 render what --no-reverb and --no-chorus render; programs=1 swaps every program within its family and leaves the drums; the effect knobs are refused with an LV2 instrument",
          .enabled(if: FileManager.default.fileExists(atPath: StemsCLITests.bank), "needs /usr/share/sounds/sf2/TimGM6mb.sf2 (Debian package timgm6mb-soundfont)"))
    func effectsAndPrograms() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = dir.appendingPathComponent("band.mid").path
        try DatasetLayoutCLITests.writeBand(song, key: 60)
        let common = ["--soundfont", StemsCLITests.bank, "--quiet", "--tail", "0.5", "--format", "f32"]
        func render(_ name: String, _ extra: [String]) throws -> Data {
            let out = dir.appendingPathComponent(name + ".wav").path
            let r = try CLI.run(["render", song, "-o", out] + common + extra)
            #expect(r.status == 0, "\(r.stderr)")
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        let plain = try render("plain", [])
        #expect(try render("dry", ["--augment", "reverb=0"]) == render("no-reverb", ["--no-reverb"]))
        #expect(try render("flat", ["--augment", "chorus=0"]) == render("no-chorus", ["--no-chorus"]))
        #expect(try render("half", ["--augment", "reverb=0.5"]) != plain)
        #expect(try render("same", ["--augment", "reverb=1,chorus=1"]) == plain)

        let labelsPath = dir.appendingPathComponent("swapped.json").path
        _ = try render("swapped", ["--augment", "programs=1", "--labels", labelsPath])
        let plainLabels = dir.appendingPathComponent("plain.json").path
        _ = try render("plain-labels", ["--labels", plainLabels])
        let before = try StemsCLITests.labels(plainLabels).notes, after = try StemsCLITests.labels(labelsPath).notes
        #expect(before.count == after.count && !before.isEmpty)
        for (b, a) in zip(before, after) {
            if b.channel == 10 {
                #expect(a.program == b.program)
            } else {
                #expect(a.program != b.program && a.program / 8 == b.program / 8, "\(b.program) -> \(a.program)")
            }
        }

        let refused = try CLI.run(["render", song, "-o", dir.appendingPathComponent("lv2.wav").path, "--instrument", "lv2:urn:none",
                                   "--augment", "reverb=0.5"])
        #expect(refused.status == 64 && refused.stderr.contains("an LV2 instrument has its own controls"), "\(refused.stderr)")
    }
}
