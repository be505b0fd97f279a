import AudioTestSupport
import Foundation
import Testing

/// `tactus play` against the real ALSA kernel drivers; runs inside the QEMU VM of
/// `Tests/VM/run-vm-tests.sh`, which sets TACTUS_REAL_ALSA=1 (snd-aloop is card 0, snd-dummy
/// card 2) and TACTUS_BINARY to a release build of tactus: a debug build under the VM's
/// emulated CPU renders slower than real time. Serialized: each test needs the CPU to itself.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["TACTUS_REAL_ALSA"] == "1", "runs inside the QEMU VM with the real ALSA drivers (Tests/VM/run-vm-tests.sh sets TACTUS_REAL_ALSA=1)"))
struct PlayerDeviceTests {
    let cli = RenderCommandTests()

    /// Runs the tactus binary the harness names (or the one beside the test bundle).
    func tactus(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let binary = ProcessInfo.processInfo.environment["TACTUS_BINARY"] ?? cli.tactus
        let dir = NSTemporaryDirectory()
        let out = dir + "tactus-\(UUID().uuidString).out", err = dir + "tactus-\(UUID().uuidString).err"
        defer { try? FileManager.default.removeItem(atPath: out); try? FileManager.default.removeItem(atPath: err) }
        let status = try waitForExit(spawn(binary, arguments, stdout: out, stderr: err))
        return (status, (try? String(contentsOfFile: out, encoding: .utf8)) ?? "", (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// Starts a program with posix_spawn, output to files. Foundation's Process is not used
    /// here: in the VM it cannot create its monitoring socket pair and never reaps children.
    func spawn(_ path: String, _ arguments: [String], stdout: String, stderr: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL) }
        return pid
    }

    /// Waits for `pid` and returns its exit status (128 + signal when killed).
    func waitForExit(_ pid: pid_t) throws -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EINVAL) }
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    var song: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Songs/little-waltz.mid").path
    }
    /// Three bars and a short tail: long enough to mean something, short for an emulated CPU.
    let options = ["--sample-rate", "48000", "--to", "4:1", "--tail", "0.3", "--quiet"]

    @Test func playThroughTheLoopbackIsCapturedBitExactAgainstRender() throws {
        let (dir, _) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wav = dir + "/expected.wav", capture = dir + "/capture.raw"
        let rendered = try tactus(["render", "--instrument", "builtin", song, "-o", wav, "--format", "s16"] + options)
        try #require(rendered.status == 0, "\(rendered.stderr)")
        let expected = try wavSampleData(wav).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }

        let seconds = Int((Double(expected.count / 2) / 48_000).rounded(.up)) + 3
        let recorder = try spawn("/usr/bin/arecord",
                                 ["-q", "-D", "hw:Loopback,1,0", "-f", "S16_LE", "-c", "2", "-r", "48000", "-t", "raw", "-d", "\(seconds)", capture],
                                 stdout: dir + "/arecord.out", stderr: dir + "/arecord.err")
        #expect(PCMStatus.waitUntilRunning(card: "Loopback", device: 1, subdevice: 0, capture: true), "arecord never started capturing")
        let played = try tactus(["play", "--instrument", "builtin", song, "--device", "hw:Loopback,0,0", "--latency", "100"] + options)
        #expect(try waitForExit(recorder) == 0)
        #expect(played.status == 0, "\(played.stderr)")
        #expect(played.stdout.hasSuffix(", 0 underruns\n"), "\(played.stdout)")
        let captured = try Data(contentsOf: URL(fileURLWithPath: capture)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        // Align both on their first non-silent frame.
        func firstSound(_ s: [Int16]) -> Int? { stride(from: 0, to: s.count - 1, by: 2).first { s[$0] != 0 || s[$0 + 1] != 0 } }
        let e0 = try #require(firstSound(expected)), c0 = try #require(firstSound(captured), "the capture is silent")
        let length = expected.count - e0
        try #require(captured.count - c0 >= length, "captured \((captured.count - c0) / 2) frames after the start, expected \(length / 2)")
        let mismatches = (0..<length).filter { captured[c0 + $0] != expected[e0 + $0] }.count
        #expect(mismatches == 0, "\(mismatches) of \(length) samples differ")
    }

    @Test func playOnSndDummyRunsAtRealTimePaceWithoutUnderruns() throws {
        let (dir, _) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wav = dir + "/length.wav"
        let rendered = try tactus(["render", "--instrument", "builtin", song, "-o", wav, "--format", "s16"] + options)
        try #require(rendered.status == 0, "\(rendered.stderr)")
        let audioSeconds = Double(try wavSampleData(wav).count / 4) / 48_000
        let start = Date()
        let played = try tactus(["play", "--instrument", "builtin", song, "--device", "hw:2,0", "--latency", "100"] + options)
        let elapsed = Date().timeIntervalSince(start)
        #expect(played.status == 0, "\(played.stderr)")
        #expect(played.stdout.hasSuffix(", 0 underruns\n"), "\(played.stdout)")
        // The audio, 200 ms of padding and the buffer drained at the end, paced by the device;
        // the upper bound leaves room for loading the file and starting on an emulated CPU.
        let minimum = audioSeconds + 0.2
        #expect(elapsed > minimum - 0.05 && elapsed < minimum + 1.5, "took \(elapsed) s for \(audioSeconds) s of audio")
    }
}
