import Foundation
import Testing

@Suite("tactus render --instrument FILE.sfz")
struct SFZCLITests {
    /// The environment of this process without TACTUS_SOUNDFONT.
    func environment() -> [String: String] {
        var e = ProcessInfo.processInfo.environment
        e["TACTUS_SOUNDFONT"] = nil
        return e
    }

    /// A second of a 441 Hz sine, 16-bit mono.
    func writeTone(_ url: URL, frames: Int = 44_100) throws {
        var wav = Data("RIFF".utf8)
        func le32(_ v: Int) -> Data { withUnsafeBytes(of: UInt32(v).littleEndian) { Data($0) } }
        func le16(_ v: Int) -> Data { withUnsafeBytes(of: UInt16(v).littleEndian) { Data($0) } }
        wav += le32(36 + 2 * frames) + Data("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(44_100) + le32(88_200)
            + le16(2) + le16(16) + Data("data".utf8) + le32(2 * frames)
        for i in 0..<frames {
            wav += withUnsafeBytes(of: Int16(10_000 * sin(2 * Double.pi * Double(i) / 100)).littleEndian) { Data($0) }
        }
        try wav.write(to: url)
    }

    @Test("Renders a song through an SFZ instrument, says so, and prints each unplayed opcode as one warning line")
    func renders() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeTone(dir.appendingPathComponent("tone.wav"))
        let sfz = dir.appendingPathComponent("tone.sfz")
        try Data("<group> loop_mode=loop_continuous loop_start=0 loop_end=99\n<region> sample=tone.wav pitch_keycenter=69 fileg_depth=1200\n".utf8)
            .write(to: sfz)
        let out = dir.appendingPathComponent("a.wav").path
        let r = try CLI.run(["render", CLI.song("click-track.mid"), "-o", out, "--instrument", sfz.path, "--no-reverb", "--no-chorus"],
                            environment: environment())
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasSuffix("with the SFZ instrument \(sfz.path)\n"), "\(r.stdout)")
        #expect(r.stderr == "\(sfz.path):2: warning: `fileg_depth` parsed but not played\n")
        let rendered = try Data(contentsOf: URL(fileURLWithPath: out))
        // Past the 44-byte header, the song is not silent.
        #expect(rendered.dropFirst(44).contains { $0 != 0 })
        let quiet = try CLI.run(["render", CLI.song("click-track.mid"), "-o", out, "--instrument", sfz.path, "--quiet"], environment: environment())
        #expect(quiet.status == 0)
        #expect(quiet.stderr == "")
        let strict = try CLI.run(["render", CLI.song("click-track.mid"), "-o", out, "--instrument", sfz.path, "--strict"], environment: environment())
        #expect(strict.status == 65)
        #expect(strict.stderr == "\(sfz.path):2: `fileg_depth` parsed but not played (--strict)\n")
    }

    @Test("An instrument whose includes loop renders, with one warning line per include skipped, as sfizz's include guard loads it")
    func includeLoopsRender() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeTone(dir.appendingPathComponent("tone.wav"))
        try Data("#include \"b.sfz\"\n<region> sample=tone.wav pitch_keycenter=69\n".utf8).write(to: dir.appendingPathComponent("a.sfz"))
        try Data("#include \"a.sfz\"\n".utf8).write(to: dir.appendingPathComponent("b.sfz"))
        let sfz = dir.appendingPathComponent("a.sfz").path
        let out = dir.appendingPathComponent("a.wav").path
        let r = try CLI.run(["render", CLI.song("click-track.mid"), "-o", out, "--instrument", sfz, "--to", "2:1"], environment: environment())
        #expect(r.status == 0, "\(r.stderr)")
        let b = dir.appendingPathComponent("b.sfz").path
        #expect(r.stderr == "\(b):1: warning: #include cycle skipped: \(sfz) -> \(b) -> \(sfz)\n")
    }

    @Test("A missing sample is one line naming it and the region, exit 66; a sample that is not audio exits 65")
    func badSamples() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("a.wav").path
        let missing = dir.appendingPathComponent("missing.sfz")
        try Data("<region> sample=gone.wav\n".utf8).write(to: missing)
        let r = try CLI.run(["render", CLI.song("click-track.mid"), "-o", out, "--instrument", missing.path], environment: environment())
        #expect(r.status == 66)
        #expect(r.stderr == "\(dir.appendingPathComponent("gone.wav").path): sample not found (named by the region at \(missing.path):1)\n")
        #expect(!FileManager.default.fileExists(atPath: out))
        let noFile = try CLI.run(["render", CLI.song("click-track.mid"), "-o", out, "--instrument", dir.appendingPathComponent("none.sfz").path],
                                 environment: environment())
        #expect(noFile.status == 66)
        #expect(noFile.stderr.split(separator: "\n").count == 1)
        try Data("not audio".utf8).write(to: dir.appendingPathComponent("junk.wav"))
        let junk = dir.appendingPathComponent("junk.sfz")
        try Data("<region> sample=junk.wav\n".utf8).write(to: junk)
        let bad = try CLI.run(["render", CLI.song("click-track.mid"), "-o", out, "--instrument", junk.path], environment: environment())
        #expect(bad.status == 65)
        #expect(bad.stderr == "\(dir.appendingPathComponent("junk.wav").path): not a WAV file (no RIFF WAVE header) (sample of the region at \(junk.path):1)\n")
    }

    @Test("--sample-memory bounds the decoded samples: over it is one line naming the sample, exit 65")
    func sampleMemory() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 400,000 frames: 1.2 MB decoded, over a 1 MiB limit.
        try writeTone(dir.appendingPathComponent("long.wav"), frames: 400_000)
        let sfz = dir.appendingPathComponent("long.sfz")
        try Data("<region> sample=long.wav\n".utf8).write(to: sfz)
        let out = dir.appendingPathComponent("a.wav").path
        let r = try CLI.run(["render", CLI.song("click-track.mid"), "-o", out, "--instrument", sfz.path, "--sample-memory", "1"],
                            environment: environment())
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("\(dir.appendingPathComponent("long.wav").path): 400000 frames x 1 channels need 1200138 bytes"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
        let usage = try CLI.run(["render", CLI.song("click-track.mid"), "-o", out, "--sample-memory", "1"], environment: environment())
        #expect(usage.status == 64)
    }
}
