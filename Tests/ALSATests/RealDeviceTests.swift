import ALSA
import Foundation
import Testing

/// One second of a deterministic signal, then silence.
final class FiniteSource: PCMRenderSource, @unchecked Sendable {
    let length: Int
    var frame = 0
    init(length: Int) { self.length = length }

    static func sample(_ n: Int) -> (Float, Float) {
        (Float((n * 7919) % 2000) / 2000 - 0.5, Float((n * 104_729) % 1500) / 1500 - 0.5)
    }

    func renderPCM(frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        for i in 0..<frameCount {
            let n = frame + i
            if n < length {
                (left[i], right[i]) = Self.sample(n)
            } else {
                left[i] = 0
                right[i] = 0
            }
        }
        frame += frameCount
    }
}

/// Tests against the real ALSA kernel drivers; they run inside the QEMU VM of
/// `Tests/VM/run-vm-tests.sh`, which sets TACTUS_REAL_ALSA=1 (snd-aloop is card 0, snd-dummy card 2).
/// One at a time: each runs a device in real time on the VM's emulated processors.
@Suite("ALSA real devices", .serialized, .enabled(if: ProcessInfo.processInfo.environment["TACTUS_REAL_ALSA"] == "1", "runs inside the QEMU VM with the real ALSA drivers (Tests/VM/run-vm-tests.sh sets TACTUS_REAL_ALSA=1)"))
struct RealDeviceTests {
    @Test("snd-dummy plays at real-time pace without underruns")
    func realTimePace() throws {
        let output = try PCMOutput(PCMConfiguration(device: "hw:2,0", sampleRate: 48_000, periodFrames: 480, bufferFrames: 1920, format: .s16))
        let source = FiniteSource(length: 96_000)
        let start = Date()
        try output.start(source: source)
        while output.framesWritten < 96_000 + Int64(output.granted.bufferFrames) { usleep(2000) }
        let elapsed = Date().timeIntervalSince(start)
        output.stop()
        #expect(output.error == nil)
        #expect(output.xrunCount == 0)
        // 2 s of audio plus what fills the buffer first: real-time pace, not as fast as possible.
        #expect(elapsed > 1.9 && elapsed < 2.6, "took \(elapsed) s")
    }

    @Test("Through snd-aloop, the capture side receives exactly what was played")
    func loopbackBitExact() throws {
        // Under emulation a busy host can cost a period on either side (a playback underrun
        // the driver recovers from, a capture overrun arecord reports), which shifts the
        // capture by that period (seen: 47,520 of 48,000 frames off after the first 480). That
        // says nothing of the driver's samples, so a run that saw an xrun is played again, up
        // to three times; a mismatch without one fails at once.
        var xrunsSeen: [String] = []
        for _ in 1...3 {
            let run = try loopbackRun()
            if run.xrun == nil {
                #expect(run.mismatches == 0, "\(run.mismatches) of 48000 frames differ, with no xrun seen")
                return
            }
            if run.mismatches == 0 { return }
            xrunsSeen.append(run.xrun!)
        }
        Issue.record("an xrun spoiled each of 3 runs: \(xrunsSeen.joined(separator: "; "))")
    }

    /// Plays the signal into snd-aloop while arecord captures the other side; counts the frames
    /// that differ and names any xrun either side reported.
    private func loopbackRun() throws -> (mismatches: Int, xrun: String?) {
        let directory = FileManager.default.temporaryDirectory
        let id = UUID().uuidString
        let capture = directory.appendingPathComponent("capture-\(id).raw").path
        let messages = directory.appendingPathComponent("capture-\(id).log").path
        defer { try? FileManager.default.removeItem(atPath: capture); try? FileManager.default.removeItem(atPath: messages) }
        // posix_spawn, not Foundation's Process: in the VM, Process never reaps its children.
        // Not quiet: arecord's standard error (to a file) is where it reports an overrun.
        let arguments: [String] = ["/usr/bin/arecord", "-D", "hw:Loopback,1,0", "-f", "S16_LE", "-c", "2", "-r", "48000", "-t", "raw", "-d", "3", capture]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 2, messages, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var recorder: pid_t = 0
        try #require(posix_spawn(&recorder, "/usr/bin/arecord", &actions, nil, argv, environ) == 0)
        usleep(300_000)
        let output = try PCMOutput(PCMConfiguration(device: "hw:Loopback,0,0", sampleRate: 48_000, periodFrames: 480, bufferFrames: 1920, format: .s16))
        let source = FiniteSource(length: 48_000)
        try output.start(source: source)
        // The signal, then 200 ms of silence, which snd-aloop may cut when playback stops.
        while output.framesWritten < 48_000 + 9_600 + Int64(output.granted.bufferFrames) { usleep(2000) }
        output.stop(drain: true)
        var status: Int32 = 0
        while waitpid(recorder, &status, 0) < 0 && errno == EINTR {}
        let said = (try? String(contentsOfFile: messages, encoding: .utf8)) ?? ""
        var xruns: [String] = []
        if output.xrunCount > 0 { xruns.append("\(output.xrunCount) playback underrun(s)") }
        if let overrun = said.split(separator: "\n").first(where: { $0.contains("overrun") }) { xruns.append("arecord: \(overrun)") }
        let xrun = xruns.isEmpty ? nil : xruns.joined(separator: ", ")
        let data = try Data(contentsOf: URL(fileURLWithPath: capture))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        guard let first = stride(from: 0, to: samples.count, by: 2).first(where: { samples[$0] != 0 || samples[$0 + 1] != 0 }) else {
            Issue.record("capture is silent (\(samples.count / 2) frames)")
            return (48_000, xrun)
        }
        let frames = (samples.count - first) / 2
        guard frames >= 48_000 else {
            if xrun == nil { Issue.record("captured \(frames) frames after the start") }
            return (48_000 - frames, xrun)
        }
        var mismatches = 0
        for n in 0..<48_000 {
            let (l, r) = FiniteSource.sample(n)
            if samples[first + 2 * n] != Int16((l * 32767).rounded()) || samples[first + 2 * n + 1] != Int16((r * 32767).rounded()) { mismatches += 1 }
        }
        return (mismatches, xrun)
    }
}
