import Foundation
import Testing

/// A signal acts while a long song is still being prepared (issue 24: scheduling a song of
/// millions of events took 14 s, and SIGTERM and --timeout waited for the first audio).
@Suite("tactus render: signals and --timeout before the first audio")
struct SignalDuringPreparationCLITests {
    /// A song whose schedule takes this build a while: many notes on one track.
    static func longSong(in dir: URL) throws -> String {
        let song = dir.appendingPathComponent("long.mid").path
        try BatchRenderCLITests.writeSong(song, key: 30, notes: 600_000)
        return song
    }

    static func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }

    @Test("SIGTERM while the song is prepared ends the render far sooner than the preparation would, exit 143, nothing left")
    func sigtermDuringPreparation() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = try Self.longSong(in: dir)
        let out = dir.appendingPathComponent("out.wav").path
        let arguments = ["render", song, "-o", out, "--instrument", "builtin", "--quiet", "--to", "2:1", "--tail", "0"]
        let clock = ContinuousClock()
        // What the preparation takes here, uninterrupted (the render of two bars is short).
        let began = clock.now
        #expect(try CLI.run(arguments).status == 0)
        let whole = Self.seconds(clock.now - began)
        try FileManager.default.removeItem(atPath: out)

        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = arguments
        let err = Pipe()
        process.standardError = err
        try process.run()
        // The temporary output appears once the handler is in place and preparation begins.
        let prefix = ".out.wav.partial-"
        let deadline = clock.now + .seconds(60)
        while clock.now < deadline, process.isRunning,
              !(try FileManager.default.contentsOfDirectory(atPath: dir.path)).contains(where: { $0.hasPrefix(prefix) }) {
            usleep(5_000)
        }
        let signalled = clock.now
        kill(process.processIdentifier, SIGTERM)
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let afterSignal = Self.seconds(clock.now - signalled)
        #expect(process.terminationStatus == 143, "\(said)")
        #expect(said == "\(out): interrupted; nothing written\n", "\(said)")
        #expect(afterSignal < whole / 2, "the render took \(afterSignal) s after the signal; a whole one takes \(whole) s")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") || $0 == "out.wav" }.isEmpty)
    }

    @Test("A batch's --timeout acts while a long song is prepared, not only once audio flows")
    func timeoutDuringPreparation() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        let song = try Self.longSong(in: input)
        let clock = ContinuousClock()
        let began = clock.now
        #expect(try CLI.run(["render", song, "-o", dir.appendingPathComponent("probe.wav").path, "--instrument", "builtin",
                             "--quiet", "--to", "2:1", "--tail", "0"]).status == 0)
        let whole = Self.seconds(clock.now - began)
        let limit = max(0.2, whole / 8)
        let started = clock.now
        let r = try CLI.run(["render", input.path, "-o", dir.appendingPathComponent("out").path, "--instrument", "builtin",
                             "--quiet", "--timeout", String(format: "%.2f", limit)])
        let took = Self.seconds(clock.now - started)
        #expect(r.status == 65, "\(r.stderr)")
        let manifest = try String(contentsOfFile: dir.appendingPathComponent("out/tactus-manifest.jsonl").path, encoding: .utf8)
        #expect(manifest.contains(#""status":"timed out""#), "\(manifest)")
        #expect(took < whole / 2, "the batch took \(took) s with --timeout \(limit); preparing the song takes \(whole) s")
    }
}
