import Foundation
import MIDIFile
import Sequencing
import Testing

/// Runs the built `tactus` binary, as a user would.
@Suite struct RenderCommandTests {
    /// The `tactus` executable next to the test bundle (both live in the build directory).
    var tactus: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("tactus").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/tactus").path
    }

    func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tactus)
        p.arguments = arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    func workspace() throws -> (dir: String, midi: String) {
        let dir = NSTemporaryDirectory() + "tactus-render-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var seq = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        for i in 0..<8 { track.addNote(at: Int64(i * 240), channel: 0, key: UInt8(60 + i), velocity: 100, duration: 200) }
        seq.tracks = [track]
        let midi = dir + "/song.mid"
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: seq), to: midi)
        return (dir, midi)
    }

    @Test func rendersAWAVFileAndReports() throws {
        let (dir, midi) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/song.wav"
        let r = try run(["render", "--instrument", "builtin", midi, "-o", out, "--sample-rate", "48000", "--format", "s24", "--tail", "0.5", "--mono", "--block-size", "100"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "no progress bar when stderr is not a terminal")
        #expect(r.stdout.contains("peak") && r.stdout.contains("real time") && r.stdout.contains("0:02.458"))
        let d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        // The last note ends at tick 1880 = 1.958333 s at 120 BPM (94,000 frames), plus 0.5 s of tail, mono 24-bit.
        #expect(d.count == 58 + 118_000 * 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["song.mid", "song.wav"])
    }

    @Test func badInputGivesOneLineAndTheRightExitCode() throws {
        let (dir, midi) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/x.wav"
        try Data("not midi".utf8).write(to: URL(fileURLWithPath: dir + "/bad.mid"))
        let cases: [([String], Int32, String)] = [
            (["render", "--instrument", "builtin", midi, "-o", out, "--format", "s8"], 64, out),
            (["render", "--instrument", "builtin", midi, "-o", out, "--sample-rate", "22050"], 64, out),
            (["render", "--instrument", "builtin", midi, "-o", out, "--block-size", "0"], 64, out),
            (["render", "--instrument", "builtin", dir + "/missing.mid", "-o", out], 66, dir + "/missing.mid"),
            (["render", "--instrument", "builtin", dir + "/bad.mid", "-o", out], 65, dir + "/bad.mid"),
            (["render", "--instrument", "builtin", midi, "-o", dir + "/no/such/dir/x.wav"], 73, dir + "/no/such/dir/x.wav"),
            (["render", "--instrument", "builtin", midi, "-o", dir], 73, dir),
        ]
        for (arguments, status, path) in cases {
            let r = try run(arguments)
            #expect(r.status == status, "\(arguments): \(r.stderr)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix(path + ":"), "\(arguments): \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["bad.mid", "song.mid"], "nothing left behind")
    }
}
