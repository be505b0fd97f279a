import Foundation
import JACK
import Playback
import Sequencing
import Synchronization
import TactusTestSupport
import Testing

/// Playback sessions on JACK. Part of the one serialized JACK suite: libjack serves one
/// server per process, so the tests never run two servers at once.
extension JACKClientTests {
    /// Two bars of piano chords and a bass line at 132 BPM: about 3.6 s.
    static func sessionSong() -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 454_545)), at: 0)
        var piano = MusicTrack()
        for (beat, key) in [60, 64, 67, 72, 65, 69, 72, 77].enumerated() {
            piano.addNote(at: Int64(beat) * 480, channel: 0, key: UInt8(key), velocity: 90, duration: 400)
        }
        var bass = MusicTrack()
        bass.add(.message(.programChange(channel: 1, program: 33)), at: 0)
        for beat in 0..<8 { bass.addNote(at: Int64(beat) * 480, channel: 1, key: 36, velocity: 100, duration: 240) }
        sequence.tracks = [piano, bass]
        return sequence
    }

    static func offlineRender(sampleRate: Int) async throws -> (left: [Float], right: [Float]) {
        var options = PlaybackSession.Options(instrument: .builtIn, tailSeconds: 1)
        options.sampleRate = sampleRate
        let session = try PlaybackSession(sequence: sessionSong(), options: options)
        let backend = OfflineBackend()
        try session.start(on: backend)
        _ = try await session.finished()
        return backend.samples
    }

    @Test("a song played through JACK reaches another client exactly as the offline render makes it, at the server's rate")
    func playsExactlyTheRender() async throws {
        // Long periods: a debug build on a loaded machine must not miss one (an xrun drops frames).
        let server = try JACKServer("session", sampleRate: 44_100, period: 2048)
        defer { server.stop() }  // keeps the server alive to the end of the test
        try await Self.playAndCompare(server: server.name, expectedRate: 44_100)
    }

    /// Plays the song through a session on `server` into a capture client and compares what
    /// arrived with the offline render at the server's rate.
    static func playAndCompare(server: String?, expectedRate: Int?) async throws {
        guard let (recorder, sampleRate) = try await withoutXruns({ try await playIntoRecorder(server: server, expectedRate: expectedRate) }) else { return }
        let reference = try await Self.offlineRender(sampleRate: sampleRate)
        let firstSound = try #require(reference.left.indices.first { reference.left[$0] != 0 || reference.right[$0] != 0 })
        let expectedLeft = Array(reference.left[firstSound...]), expectedRight = Array(reference.right[firstSound...])
        let got = recorder.count.load(ordering: .acquiring)
        #expect(got >= expectedLeft.count, "captured \(got) of \(expectedLeft.count) frames")
        var mismatches = 0
        for i in 0..<min(got, expectedLeft.count) where recorder.left[i] != expectedLeft[i] || recorder.right[i] != expectedRight[i] {
            mismatches += 1
        }
        let firstMismatch = (0..<min(got, expectedLeft.count)).first { recorder.left[$0] != expectedLeft[$0] }
        var detail = ""
        if let i = firstMismatch {
            let tail = min(i + 4, expectedLeft.count)
            detail = "the first at frame \(i): \(Array(UnsafeBufferPointer(start: recorder.left + i, count: tail - i))) vs \(Array(expectedLeft[i..<tail]))"
        }
        #expect(mismatches == 0, "\(mismatches) frames differ from the offline render; \(detail)")
    }

    /// One play of the session song into a capture client: what it recorded, the server's rate
    /// and the xruns the session and the capture client saw.
    private static func playIntoRecorder(server: String?, expectedRate: Int?) async throws -> ((JACKCapture, Int), Int) {
        let probe = try JACKClient(name: "capture", server: server, audioInput: true)
        let recorder = JACKCapture(frames: probe.sampleRate * 6)
        try probe.start(source: recorder, connections: .none)

        var options = PlaybackSession.Options(instrument: .builtIn, tailSeconds: 1)
        options.sampleRate = probe.sampleRate == 48_000 ? 44_100 : 48_000  // asked for; the server's rate wins
        let session = try PlaybackSession(sequence: Self.sessionSong(), options: options)
        let backend = JACKBackend(options: .init(clientName: "tactus-test", server: server, connections: .ports(probe.inputPortNames)))
        try session.start(on: backend)
        #expect(session.format?.sampleRate == probe.sampleRate)
        if let expectedRate { #expect(probe.sampleRate == expectedRate) }
        let summary = try await session.finished()
        #expect(summary.ending == .reachedEnd)
        probe.waitForMorePeriods()
        probe.stop()
        // Either side's xrun drops or repeats a period of what arrives (seen under PipeWire:
        // everything after frame 77,824, 38 periods in, one period off), so both count.
        return ((recorder, probe.sampleRate), backend.underrunCount + probe.xrunCount)
    }

    @Test("no server: opening the backend fails as unavailable, in one line")
    func sessionWithoutServer() throws {
        let session = try PlaybackSession(sequence: Self.sessionSong(), options: PlaybackSession.Options(instrument: .builtIn))
        let backend = JACKBackend(options: .init(server: "tactus-absent-server"))
        #expect(throws: PlaybackSessionError.self) { try session.start(on: backend) }
    }
}

/// The same session test under PipeWire's libjack (`pw-jack`) with a bare `pipewire` daemon:
/// run by Tests/JACK/pipewire.sh, which sets TACTUS_PIPEWIRE_JACK=1.
@Suite("JACK under PipeWire", .enabled(if: ProcessInfo.processInfo.environment["TACTUS_PIPEWIRE_JACK"] == "1",
                                      "runs under pw-jack with a pipewire daemon (Tests/JACK/pipewire.sh sets TACTUS_PIPEWIRE_JACK=1)"))
struct JACKPipeWireTests {
    @Test("a song played through PipeWire's JACK reaches another client exactly as the offline render makes it")
    func playsExactlyTheRender() async throws {
        try await JACKClientTests.playAndCompare(server: nil, expectedRate: nil)
    }
}
