import AudioTestSupport
import Foundation
import Testing

private let hasMDAPlugins = FileManager.default.fileExists(atPath: "/usr/lib/lv2/mda.lv2/manifest.ttl")
    && FileManager.default.fileExists(atPath: "/usr/bin/lv2ls")
private let plugins = ["--instrument", "lv2:http://drobilla.net/plugins/mda/Piano",
                       "--effect", "lv2:http://drobilla.net/plugins/mda/Delay,feedback=0.3",
                       "--channel-instrument", "2=lv2:http://drobilla.net/plugins/mda/DX10"]

@Suite("Stems and dataset folders through LV2 plugins", .enabled(if: hasMDAPlugins, "needs lilv and mda-lv2 (Debian packages liblilv-0-0, lilv-utils, mda-lv2)"))
struct LV2StemsCLITests {
    /// A batch's dataset folder through plugins holds what a single render writes, and each
    /// stem is what its MIDI file (in the folder) renders alone: played through new instances
    /// of the instrument and the effect (a delay with feedback: a stem played through the
    /// mix's instance would carry the mix's echoes). MDA Piano plays every channel as one
    /// instrument (one track's sustain pedal holds every note), so the stems do not add up to
    /// the mix as a multitimbral instrument's do.
    @Test("render --stems and a batch's --layout slakh through MDA Piano, MDA DX10 for channel 2 and MDA Delay: the same files, each stem what its MIDI renders alone")
    func stemsThroughPlugins() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        let song = try StemsCLITests.shortSong(in: dir)
        try FileManager.default.copyItem(atPath: song, toPath: input.appendingPathComponent("steps.mid").path)
        let out = dir.appendingPathComponent("out")
        let batch = try CLI.run(["render", input.path, "-o", out.path + "/", "--layout", "slakh", "--format", "f32", "--quiet"] + plugins)
        #expect(batch.status == 0, "\(batch.stderr)")
        let single = dir.appendingPathComponent("single")
        try FileManager.default.createDirectory(at: single, withIntermediateDirectories: true)
        let one = try CLI.run(["render", song, "-o", single.appendingPathComponent("mix.wav").path, "--format", "f32",
                               "--stems", single.appendingPathComponent("stems").path, "--quiet"] + plugins)
        #expect(one.status == 0, "\(one.stderr)")
        let stemNames = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("steps/stems").path).sorted()
        #expect(stemNames.count == 4, "\(stemNames)")
        for name in ["mix.wav"] + stemNames.map({ "stems/" + $0 }) {
            let fromBatch = try Data(contentsOf: out.appendingPathComponent("steps/\(name)"))
            #expect(fromBatch == (try? Data(contentsOf: single.appendingPathComponent(name))), "\(name) differs from the single render's")
        }
        for name in stemNames {
            let stem = out.appendingPathComponent("steps/stems/\(name)").path
            let midi = out.appendingPathComponent("steps/MIDI/\((name as NSString).deletingPathExtension).mid").path
            let alone = dir.appendingPathComponent("alone-\(name)").path
            let r = try CLI.run(["render", midi, "-o", alone, "--format", "f32", "--tail", "4", "--quiet"] + plugins)
            #expect(r.status == 0, "\(r.stderr)")
            let stemSamples = try StemsCLITests.floats(stem), aloneSamples = try StemsCLITests.floats(alone)
            #expect(stemSamples.contains { $0 != 0 }, "\(name) is silent")
            let common = min(stemSamples.count, aloneSamples.count)
            #expect(common > 44_100 && stemSamples[..<common] == aloneSamples[..<common], "\(name) differs from its MIDI rendered alone")
        }
    }

}
