import Foundation
import Testing

@Suite("tactus render and play: choosing the instrument")
struct InstrumentCLITests {
    static let timGM6mb = "/usr/share/sounds/sf2/TimGM6mb.sf2"

    func requireBank() throws -> String {
        try #require(FileManager.default.fileExists(atPath: Self.timGM6mb),
                     "\(Self.timGM6mb) is missing: install the Debian package timgm6mb-soundfont")
        return Self.timGM6mb
    }

    /// The environment of this process without TACTUS_SOUNDFONT, plus `extra`.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var e = ProcessInfo.processInfo.environment
        e["TACTUS_SOUNDFONT"] = nil
        return e.merging(extra) { $1 }
    }

    @Test("--soundfont renders through the sampler and says so; --instrument builtin forces the synthesizer",
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/TimGM6mb.sf2"), "needs /usr/share/sounds/sf2/TimGM6mb.sf2 (Debian package timgm6mb-soundfont)"))
    func soundFontAndBuiltIn() throws {
        let bank = try requireBank()
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("a.wav").path
        // What is checked is the summary's choice of instrument: two bars are enough to render.
        let short = ["--to", "3:1", "--tail", "0.5"]
        let sampled = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--soundfont", bank, "--no-reverb",
                                   "--no-chorus", "--quiet"] + short, environment: environment())
        #expect(sampled.status == 0, "\(sampled.stderr)")
        #expect(sampled.stdout.hasSuffix("with the SoundFont \(bank) (--soundfont)\n"), "\(sampled.stdout)")
        let builtIn = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--instrument", "builtin"] + short,
                                  environment: environment(["TACTUS_SOUNDFONT": bank]))
        #expect(builtIn.status == 0)
        #expect(builtIn.stdout.hasSuffix("with the built-in synthesizer\n"), "\(builtIn.stdout)")
        let fromEnvironment = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--quiet"] + short,
                                          environment: environment(["TACTUS_SOUNDFONT": bank]))
        #expect(fromEnvironment.stdout.hasSuffix("with the SoundFont \(bank) (TACTUS_SOUNDFONT)\n"), "\(fromEnvironment.stdout)")
    }

    @Test("A SoundFont asked for by name that is missing: one line naming the paths tried, exit 66, no file")
    func missingBank() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("a.wav").path
        let missing = dir.appendingPathComponent("none.sf2").path
        let explicit = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--soundfont", missing], environment: environment())
        #expect(explicit.status == 66)
        #expect(explicit.stderr == "\(missing): no such SoundFont file; tried \(missing) (from --soundfont)\n")
        let variable = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out],
                                   environment: environment(["TACTUS_SOUNDFONT": missing]))
        #expect(variable.status == 66)
        #expect(variable.stderr == "\(missing): no such SoundFont file; tried \(missing) (from TACTUS_SOUNDFONT)\n")
        let play = try CLI.run(["play", CLI.song("little-waltz.mid"), "--soundfont", missing, "--device", "null"], environment: environment())
        #expect(play.status == 66)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("Conflicting or malformed instrument options exit 64 before anything is read")
    func usage() throws {
        let out = "/tmp/tactus-never-written-\(UUID().uuidString).wav"
        for options in [["--instrument", "builtin", "--soundfont", "x.sf2"], ["--instrument", "piano.txt"],
                        ["--instrument", "p.json", "--soundfont", "x.sf2"], ["--polyphony", "0"], ["--polyphony", "5000"]] {
            let r = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out] + options, environment: environment())
            #expect(r.status == 64, "\(options)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(options): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("--instrument PATCH.json plays a WAV file on every channel")
    func audioFilePatch() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // One second of a 441 Hz sine, 16-bit mono.
        let frames = 44_100
        var wav = Data("RIFF".utf8)
        func le32(_ v: Int) -> Data { withUnsafeBytes(of: UInt32(v).littleEndian) { Data($0) } }
        func le16(_ v: Int) -> Data { withUnsafeBytes(of: UInt16(v).littleEndian) { Data($0) } }
        wav += le32(36 + 2 * frames) + Data("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(44_100) + le32(88_200)
            + le16(2) + le16(16) + Data("data".utf8) + le32(2 * frames)
        for i in 0..<frames {
            wav += withUnsafeBytes(of: Int16(10_000 * sin(2 * Double.pi * Double(i) / 100)).littleEndian) { Data($0) }
        }
        try wav.write(to: dir.appendingPathComponent("tone.wav"))
        let patch = dir.appendingPathComponent("tone.json")
        try Data(#"{"zones": [{"file": "tone.wav", "rootKey": 69, "loopStart": 0, "loopEnd": 44100}]}"#.utf8).write(to: patch)
        let out = dir.appendingPathComponent("a.wav").path
        let r = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--instrument", patch.path], environment: environment())
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasSuffix("with the patch \(patch.path)\n"), "\(r.stdout)")
        #expect(!r.stdout.contains("silence"))
        let broken = dir.appendingPathComponent("broken.json")
        try Data(#"{"zones": [{"file": "missing.wav"}]}"#.utf8).write(to: broken)
        let bad = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--instrument", broken.path], environment: environment())
        #expect(bad.status == 66, "\(bad.stderr)")
    }
}
