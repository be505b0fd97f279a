import Foundation
import Testing

@Suite("tactus render and play --tuning")
struct TuningCLITests {
    static let just = """
    ! just.scl
    Twelve-tone just intonation
    12
    16/15
    9/8
    6/5
    5/4
    4/3
    45/32
    3/2
    8/5
    5/3
    9/5
    15/8
    2/1

    """

    /// The environment of this process without TACTUS_SOUNDFONT.
    func environment() -> [String: String] {
        var e = ProcessInfo.processInfo.environment
        e["TACTUS_SOUNDFONT"] = nil
        return e
    }

    /// Two bars are enough to hear a tuning.
    static let short = ["--to", "3:1", "--tail", "0.5"]

    @Test("A Scala scale retunes the built-in synthesizer and the summary says so")
    func scaleChangesTheRender() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let scl = dir.appendingPathComponent("just.scl").path
        try Self.just.write(toFile: scl, atomically: true, encoding: .utf8)
        let kbm = dir.appendingPathComponent("a432.kbm").path
        try "0\n0\n127\n60\n69\n432.0\n0\n".write(toFile: kbm, atomically: true, encoding: .utf8)
        let plain = dir.appendingPathComponent("plain.wav").path
        let tuned = dir.appendingPathComponent("tuned.wav").path
        let mapped = dir.appendingPathComponent("mapped.wav").path
        let song = CLI.song("little-waltz.mid")
        let a = try CLI.run(["render", song, "-o", plain, "--instrument", "builtin"] + Self.short, environment: environment())
        #expect(a.status == 0, "\(a.stderr)")
        let b = try CLI.run(["render", song, "-o", tuned, "--instrument", "builtin", "--tuning", scl] + Self.short, environment: environment())
        #expect(b.status == 0, "\(b.stderr)")
        #expect(b.stdout.hasSuffix("with the built-in synthesizer tuned to \(scl)\n"), "\(b.stdout)")
        let c = try CLI.run(["render", song, "-o", mapped, "--instrument", "builtin", "--tuning", "\(scl),\(kbm)"] + Self.short,
                            environment: environment())
        #expect(c.status == 0, "\(c.stderr)")
        #expect(c.stdout.hasSuffix("with the built-in synthesizer tuned to \(scl) (\(kbm))\n"), "\(c.stdout)")
        let plainBytes = try Data(contentsOf: URL(fileURLWithPath: plain))
        let tunedBytes = try Data(contentsOf: URL(fileURLWithPath: tuned))
        let mappedBytes = try Data(contentsOf: URL(fileURLWithPath: mapped))
        #expect(plainBytes.count == tunedBytes.count)
        #expect(plainBytes != tunedBytes && tunedBytes != mappedBytes)
        // The same tuning renders the same file again.
        let again = try CLI.run(["render", song, "-o", plain, "--instrument", "builtin", "--tuning", scl] + Self.short, environment: environment())
        #expect(again.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)) == tunedBytes)
    }

    @Test("A bad Scala file is one line naming the file, line and reason, exit 65; a missing one exit 66; nothing written")
    func badFiles() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("a.wav").path
        let bad = dir.appendingPathComponent("bad.scl").path
        try "bad\n3\n100.0\nfifth\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let good = dir.appendingPathComponent("good.scl").path
        try Self.just.write(toFile: good, atomically: true, encoding: .utf8)
        let badMap = dir.appendingPathComponent("bad.kbm").path
        try "12\n0\n200\n".write(toFile: badMap, atomically: true, encoding: .utf8)
        let missing = dir.appendingPathComponent("none.scl").path
        let song = CLI.song("little-waltz.mid")
        let cases: [(String, Int32, String)] = [
            (bad, 65, "\(bad): line 4: 'fifth' is not a ratio (such as 3/2) or cents (such as 701.955)\n"),
            ("\(good),\(badMap)", 65, "\(badMap): line 3: the last key 200 is outside 0...127\n"),
            (missing, 66, "\(missing): no such file\n"),
        ]
        for (tuning, status, message) in cases {
            for command in [["render", song, "-o", out, "--instrument", "builtin"], ["play", song, "--device", "null", "--instrument", "builtin"]] {
                let r = try CLI.run(command + ["--tuning", tuning], environment: environment())
                #expect(r.status == status, "\(command[0]) --tuning \(tuning): \(r.stderr)")
                #expect(r.stderr == message, "\(command[0])")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("--tuning retunes a sampler instrument too")
    func samplerIsRetuned() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Half a second of a 441 Hz sine, 16-bit mono, looped.
        let frames = 22_050
        var wav = Data("RIFF".utf8)
        func le32(_ v: Int) -> Data { withUnsafeBytes(of: UInt32(v).littleEndian) { Data($0) } }
        func le16(_ v: Int) -> Data { withUnsafeBytes(of: UInt16(v).littleEndian) { Data($0) } }
        wav += le32(36 + 2 * frames) + Data("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(44_100) + le32(88_200)
            + le16(2) + le16(16) + Data("data".utf8) + le32(2 * frames)
        for i in 0..<frames {
            wav += withUnsafeBytes(of: Int16(10_000 * sin(2 * Double.pi * Double(i) / 100)).littleEndian) { Data($0) }
        }
        try wav.write(to: dir.appendingPathComponent("tone.wav"))
        let patch = dir.appendingPathComponent("tone.json").path
        try Data(#"{"zones": [{"file": "tone.wav", "rootKey": 69, "loopStart": 0, "loopEnd": 22050}]}"#.utf8).write(to: URL(fileURLWithPath: patch))
        let scl = dir.appendingPathComponent("just.scl").path
        try Self.just.write(toFile: scl, atomically: true, encoding: .utf8)
        let plain = dir.appendingPathComponent("plain.wav").path, tuned = dir.appendingPathComponent("tuned.wav").path
        let song = CLI.song("little-waltz.mid")
        let a = try CLI.run(["render", song, "-o", plain, "--instrument", patch] + Self.short, environment: environment())
        let b = try CLI.run(["render", song, "-o", tuned, "--instrument", patch, "--tuning", scl] + Self.short, environment: environment())
        #expect(a.status == 0 && b.status == 0, "\(a.stderr)\(b.stderr)")
        #expect(b.stdout.hasSuffix("with the patch \(patch) tuned to \(scl)\n"), "\(b.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)) != Data(contentsOf: URL(fileURLWithPath: tuned)))
    }

    @Test("--tuning with an LV2 instrument or without a scale is a usage error")
    func usage() throws {
        let out = "/tmp/tactus-never-written-\(UUID().uuidString).wav"
        for options in [["--instrument", "lv2:urn:x", "--tuning", "a.scl"], ["--tuning", ",a.kbm"]] {
            let r = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out] + options, environment: environment())
            #expect(r.status == 64, "\(options): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(options): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
