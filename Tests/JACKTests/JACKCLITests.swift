import AudioTestSupport
import Foundation
import JACK
import TactusTestSupport
import Testing

/// `tactus play --driver jack` as a user runs it; part of the one serialized JACK suite.
extension JACKClientTests {
    static var tactus: String {
        var candidates: [URL] = []
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var dir = start
            for _ in 0..<3 {
                dir = dir.deletingLastPathComponent()
                candidates.append(dir.appendingPathComponent("tactus"))
            }
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }?.path ?? "tactus"
    }

    static let song = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Songs/little-waltz.mid").path

    /// Runs tactus; returns its exit status and standard error.
    static func run(_ arguments: [String], whileRunning: ((Process) -> Void)? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tactus)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        whileRunning?(process)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    /// The interleaved samples of a 32-bit float WAV file.
    static func floatSamples(_ path: String) throws -> [Float] {
        let bytes = [UInt8](try WAVChunks.samples(atPath: path))
        return stride(from: 0, to: bytes.count - 3, by: 4).map { i in
            Float(bitPattern: UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24)
        }
    }

    @Test("tactus play --driver jack: what another client captures equals tactus render at the server's rate")
    func cliPlayEqualsRender() throws {
        // The summary names the graph's latency: the limiter's 1.5 ms look-ahead, 66 frames, less one.
        try expectPlayEqualsRender(server: "cli", instrument: ["--instrument", "builtin"], graphLatency: 65)
    }

    static let hasLV2Fixtures = FileManager.default.fileExists(atPath: "/usr/lib/lv2/mda.lv2/manifest.ttl")

    /// A hosted plugin plays live as it renders: its 64-frame grid is laid on the same frames
    /// from the song's start, so only the latency differs, which the alignment takes out.
    @Test("tactus play --driver jack through an LV2 instrument and effect: what another client captures equals tactus render",
          .enabled(if: hasLV2Fixtures, "needs lilv and the MDA plugins (Debian packages liblilv-0-0, mda-lv2)"))
    func cliPlayThroughPluginsEqualsRender() throws {
        try expectPlayEqualsRender(server: "cli-lv2", instrument: [
            "--instrument", "lv2:http://drobilla.net/plugins/mda/Piano",
            "--effect", "lv2:http://drobilla.net/plugins/mda/Delay,l_delay=0.2,feedback=0.3",
        ], graphLatency: 65 + 64 + 64)  // the limiter's look-ahead, and each plugin's 64-frame grid
    }

    /// eg-sampler given a sample loads it through its worker (in `play`, on a thread of its
    /// own), and plays it live as it renders.
    @Test("tactus play --driver jack through eg-sampler given a sample: what another client captures equals tactus render",
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/lib/lv2/eg-sampler.lv2/manifest.ttl"),
                   "needs lilv and lv2-examples (Debian packages liblilv-0-0, lv2-examples)"))
    func cliPlayThroughSamplerEqualsRender() throws {
        let sine = URL(fileURLWithPath: NSTemporaryDirectory() + "tactus-jack-sine-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: sine) }
        try writeSineWAV(frequency: 660, frames: 22_050, to: sine)
        try expectPlayEqualsRender(server: "cli-sampler", instrument: ["--instrument", "lv2:http://lv2plug.in/plugins/eg-sampler,sample=\(sine.path)"])
    }

    /// Plays the first two bars of the song on a private server while another client
    /// captures them, renders the same offline, and compares the two from the first sounding
    /// frame on, sample for sample.
    func expectPlayEqualsRender(server label: String, instrument: [String], graphLatency: Int? = nil) throws {
        let server = try JACKServer(label, sampleRate: 44_100, period: 2048)
        defer { server.stop() }  // keeps the server alive to the end of the test
        let captured = try withoutXruns { () throws -> (JACKCapture, Int) in
            let probe = try JACKClient(name: "capture", server: server.name, audioInput: true)
            let recorder = JACKCapture(frames: 44_100 * 6)
            try probe.start(source: recorder, connections: .none)
            let played = try Self.run(["play", Self.song] + instrument + ["--to", "3:1", "--tail", "1", "--driver", "jack",
                                       "--jack-server", server.name, "--connect", probe.inputPortNames.joined(separator: ",")])
            probe.stop()
            #expect(played.status == 0, "\(played.stderr)")
            #expect(played.stdout.contains("on JACK as 'Tactus' at 44100 Hz"), "\(played.stdout)")
            if let graphLatency { #expect(played.stdout.contains("2048 frames of buffer and \(graphLatency) in the graph,"), "\(played.stdout)") }
            // The summary's last words count the xruns ("…, N underruns").
            let underruns = played.stdout.split(separator: ",").last.flatMap { Int($0.split(separator: " ").first ?? "") }
            #expect(underruns != nil, "no underrun count in the summary: \(played.stdout)")
            return (recorder, underruns ?? 0)
        }
        guard let recorder = captured else { return }

        let wav = NSTemporaryDirectory() + "tactus-jack-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: wav) }
        let rendered = try Self.run(["render", Self.song, "-o", wav] + instrument + ["--to", "3:1", "--tail", "1",
                                     "--sample-rate", "44100", "--format", "f32", "--quiet"])
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let samples = try Self.floatSamples(wav)
        let first = try #require(stride(from: 0, to: samples.count, by: 2).first { samples[$0] != 0 || samples[$0 + 1] != 0 })
        let expected = Array(samples[first...])
        let got = recorder.count.load(ordering: .acquiring)
        #expect(got * 2 >= expected.count, "captured \(got) frames of \(expected.count / 2)")
        var mismatches = 0, firstMismatch: Int?
        for frame in 0..<min(got, expected.count / 2)
        where recorder.left[frame] != expected[2 * frame] || recorder.right[frame] != expected[2 * frame + 1] {
            mismatches += 1
            if firstMismatch == nil { firstMismatch = frame }
        }
        #expect(mismatches == 0, "\(mismatches) frames differ from tactus render, the first at \(firstMismatch ?? -1)")
    }

    @Test("tactus play --driver jack: a server killed mid-play is one line and exit 74; none running is one line and exit 69")
    func cliServerKilled() throws {
        let missing = try Self.run(["play", Self.song, "--instrument", "builtin", "--driver", "jack", "--jack-server", "tactus-absent"])
        #expect(missing.status == 69)
        #expect(missing.stderr.split(separator: "\n").count == 1 && missing.stderr.contains("no JACK server 'tactus-absent' is running"), "\(missing.stderr)")

        let server = try JACKServer("cli-killed")

        defer { server.stop() }  // keeps the server alive to the end of the test
        let killed = try Self.run(["play", Self.song, "--instrument", "builtin", "--driver", "jack", "--jack-server", server.name,
                                   "--connect", "none"]) { _ in
            #expect(server.waitForClient(matching: "^Tactus"), "tactus play never joined the server")
            server.kill()
        }
        #expect(killed.status == 74, "\(killed.stderr)")
        let lines = killed.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("the JACK server stopped the client"), "\(killed.stderr)")
    }

    @Test("tactus play --driver jack: SIGTERM ends it even while the server is frozen, one line and exit 143")
    func cliServerFrozen() throws {
        let server = try JACKServer("cli-frozen")
        defer {
            server.thaw()
            server.stop()
        }
        let frozen = try Self.run(["play", Self.song, "--instrument", "builtin", "--driver", "jack", "--jack-server", server.name,
                                   "--connect", "none"]) { process in
            #expect(server.waitForClient(matching: "^Tactus"), "tactus play never joined the server")
            server.freeze()
            kill(process.processIdentifier, SIGTERM)
            // Only a guard against hanging the suite if the fix regresses: the expectations
            // below then fail on the status.
            let pid = process.processIdentifier
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: 60)
                if process.isRunning { kill(pid, SIGKILL) }
            }
        }
        #expect(frozen.status == 143, "\(frozen.stderr)")
        let lines = frozen.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("did not stop within 2 s of the signal"), "\(frozen.stderr)")
    }

    @Test("tactus play --driver jack --transport-in: an unknown JACK port is one line and exit 69; 'any' waits for Start on Tactus's JACK MIDI input")
    func cliTransportInOverJACK() throws {
        let server = try JACKServer("cli-transport-in")
        defer { server.stop() }  // keeps the server alive to the end of the test
        let common = ["play", Self.song, "--instrument", "builtin", "--driver", "jack", "--jack-server", server.name, "--connect", "none"]
        let unknown = try Self.run(common + ["--transport-in", "nobody:midi_out", "--follow-clock"])
        #expect(unknown.status == 69, "\(unknown.stderr)")
        #expect(unknown.stderr.split(separator: "\n").count == 1 && unknown.stderr.contains("nobody:midi_out"), "\(unknown.stderr)")
        // Stopped once it says it waits (its signal handlers are in place by then).
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.tactus)
        process.arguments = common + ["--transport-in", "any", "--follow-clock"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        // Only a guard against hanging the suite: the expectation below then fails.
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 60)
            if process.isRunning { kill(pid, SIGKILL) }
        }
        var said = ""
        while !said.contains("\n") {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said += String(decoding: chunk, as: UTF8.self)
        }
        kill(pid, SIGTERM)
        process.waitUntilExit()
        #expect(said.contains("waiting for MIDI Start or Continue on JACK port Tactus:midi_in"), "\(said)")
        #expect(process.terminationStatus == 143, "SIGTERM while waiting: exit \(process.terminationStatus)")
    }
}
