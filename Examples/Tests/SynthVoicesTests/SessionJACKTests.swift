import Foundation
import SynthVoices
import Tactus
import TactusTestSupport
import Testing

/// The subtractive-synth example's graph played through `PlaybackSession` to a JACK server
/// (`jackd -d dummy`: no sound card) while another client captures it: the capture is the
/// offline render, sample for sample, from the first sounding frame.
@Suite struct SessionJACKTests {
    static let jackd = "/usr/bin/jackd"
    static var hasJACK: Bool { FileManager.default.isExecutableFile(atPath: jackd) && JACKLibrary.isAvailable }

    @Test(.enabled(if: hasJACK, "needs jackd and libjack (Debian package jackd2)"))
    func theExampleGraphOnJACKGetsTheOfflineSamples() async throws {
        let offline = try SubtractiveSong().session(sampleRate: 48_000)
        let memory = OfflineBackend(destination: .memory)
        try offline.start(on: memory)
        _ = try await offline.finished()
        let rendered = memory.samples
        let first = try #require(rendered.left.indices.first { rendered.left[$0] != 0 || rendered.right[$0] != 0 })

        let server = Process()
        let name = "tactus-example-session"
        server.executableURL = URL(fileURLWithPath: Self.jackd)
        server.arguments = ["-n", name, "-d", "dummy", "-r", "48000", "-p", "1024"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        // Until the server takes clients (about 0.2 s here; far longer under load).
        var capturer: JACKClient?
        for _ in 0..<500 where capturer == nil {
            capturer = try? JACKClient(name: "capture", server: name, audioInput: true)
            if capturer == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let client = try #require(capturer, "the JACK server \(name) never took a client")

        // A missed period on a loaded machine shifts what was captured: such a run says nothing
        // about the session, so up to three are played.
        var compared = false
        for _ in 0..<3 where !compared {
            let capture = JACKCapture(frames: rendered.left.count + 48_000)
            try client.start(source: capture, connections: .none)
            let live = try SubtractiveSong().session(sampleRate: 48_000)
            try live.start(on: JACKBackend(options: .init(clientName: "Tactus", server: name,
                                                           connections: .ports(client.inputPortNames))))
            let played = try await live.finished()
            client.stop()
            #expect(played.ending == .reachedEnd)
            guard played.underruns == 0 else { continue }
            compared = true
            let got = capture.count.load(ordering: .acquiring)
            let expected = rendered.left.count - first
            #expect(got >= expected, "captured \(got) frames of \(expected)")
            var differing = 0, firstDifference: Int?
            for frame in 0..<min(got, expected)
            where capture.left[frame] != rendered.left[first + frame] || capture.right[frame] != rendered.right[first + frame] {
                differing += 1
                if firstDifference == nil { firstDifference = frame }
            }
            #expect(differing == 0, "\(differing) frames differ from the offline render, the first at \(firstDifference ?? -1)")
        }
        #expect(compared, "an xrun in each of three runs: nothing compared")
    }
}
