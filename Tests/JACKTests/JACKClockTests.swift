import Foundation
import JACK
import Playback
import Sequencing
import Synchronization
import Testing

/// MIDI clock sent to JACK MIDI ports. Part of the one serialized JACK suite.
extension JACKClientTests {
    typealias CapturedMIDI = (frame: Int, status: UInt8, data1: UInt8, data2: UInt8)

    /// Eight quarters at 150 BPM, then 100 BPM from tick 4 * 480 + 250 (inside a clock's
    /// twentieth of a beat, so that clock's time needs the exact fraction): about 3 s.
    static func clockSong() -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 400_000)), at: 0)
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 600_000)), at: 4 * 480 + 250)
        var piano = MusicTrack()
        for beat in 0..<8 { piano.addNote(at: Int64(beat) * 480, channel: 0, key: 60, velocity: 90, duration: 400) }
        sequence.tracks = [piano]
        return sequence
    }

    /// Plays `sequence` on a JACK session sending MIDI clock to a probe; `during` runs once
    /// the session has started. Returns what the probe received, framed from its first period.
    /// An xrun shifts the captured frames, so a run that had one (a loaded machine) is played
    /// again, up to three times, instead of failing on the machine's load.
    static func captureClock(_ sequence: MusicSequence, server: JACKServer, rate: Double = 1,
                             during: (PlaybackSession) -> Void = { _ in }) async throws -> [CapturedMIDI] {
        try await withoutXruns { try await captureClockOnce(sequence, server: server, rate: rate, during: during) } ?? []
    }

    private static func captureClockOnce(_ sequence: MusicSequence, server: JACKServer, rate: Double,
                                         during: (PlaybackSession) -> Void) async throws -> ([CapturedMIDI], Int) {
        let probe = try JACKClient(name: "clockprobe", server: server.name, audioInput: true, midiInput: true)
        let capture = AudioAndMIDICapture(frames: probe.sampleRate * 8)
        capture.armed.store(true, ordering: .releasing)
        try probe.start(source: capture, connections: .none)
        let session = try PlaybackSession(sequence: sequence, options: PlaybackSession.Options(instrument: .builtIn, tailSeconds: 0.2))
        session.setRate(rate)
        let backend = JACKBackend(options: .init(clientName: "tactus-clock", server: server.name, connections: .none))
        backend.sendMIDIClock(for: sequence, to: [try #require(probe.midiInputPortName)])
        try session.start(on: backend)
        during(session)
        _ = try await session.finished()
        probe.waitForMorePeriods()
        probe.stop()
        return ((0..<capture.midiCount.load(ordering: .acquiring)).map { capture.midi[$0] }, backend.underrunCount)
    }

    /// The frame (from the song's start, at integer `rate`) of clock `k`, as the engine
    /// reaches it: the first frame at or after its exact time. At 480 ticks per quarter every
    /// clock is on a whole tick (20 apart), so the time is an exact fraction.
    static func clockFrame(_ k: Int, sequence: MusicSequence, rate: Int64) -> Int {
        let tempo = sequence.makeTempoMap()
        let numerator = tempo.timeNumerator(atTick: Int64(k) * 20) * 48_000
        let denominator = tempo.timeDenominator * rate
        return Int((numerator + denominator - 1) / denominator)
    }

    @Test("MIDI clock to a JACK port: Start, 24 clocks per quarter through a tempo change at their frames, Stop at the end; at rate 2 twice as fast")
    func clockThroughTempoChangeAndRate() async throws {
        let server = try JACKServer("clock", sampleRate: 48_000, period: 2048)
        defer { server.stop() }  // keeps the server alive to the end of the test
        let sequence = Self.clockSong()
        for rate: Int64 in [1, 2] {
            let received = try await Self.captureClock(sequence, server: server, rate: Double(rate))
            let statuses = received.map(\.status)
            #expect(statuses.first == 0xFA && statuses.last == 0xFC, "Start first, Stop last (rate \(rate))")
            #expect(!statuses.contains(0xF2) && !statuses.contains(0xFB), "no pointer or Continue in a plain play")
            let clocks = received.filter { $0.status == 0xF8 }
            // The song ends with the last note's release, at tick 3760: clocks on ticks 0, 20... 3740.
            let expectedCount = Int(sequence.length) / 20
            #expect(clocks.count == expectedCount, "24 per quarter to the song's end (rate \(rate)): \(clocks.count)")
            guard let start = received.first?.frame, clocks.count == expectedCount else { continue }
            var off: [String] = []
            for (k, clock) in clocks.enumerated() {
                let want = Self.clockFrame(k, sequence: sequence, rate: rate)
                if clock.frame - start != want { off.append("clock \(k) at \(clock.frame - start), not \(want)") }
            }
            #expect(off.isEmpty, "at rate \(rate): \(off.joined(separator: "; "))")
        }
    }

    @Test("MIDI clock after a locate: Stop, the Song Position Pointer naming the sixteenth, Continue, then clocks from there")
    func clockAfterLocate() async throws {
        let server = try JACKServer("clock-locate", sampleRate: 48_000, period: 2048)
        defer { server.stop() }  // keeps the server alive to the end of the test
        let sequence = Self.clockSong()
        let received = try await Self.captureClock(sequence, server: server) { session in
            // Locate once the clock is seen running (half a beat in), not after a fixed delay,
            // which a loaded machine can spend before the first period.
            let deadline = ContinuousClock.now + .seconds(30)
            while (session.position?.tick ?? 0) < 240 && ContinuousClock.now < deadline { usleep(5_000) }
            session.locate(toTick: 1000)  // between sixteenths 8 (960) and 9 (1080)
        }
        let pointer = try #require(received.firstIndex { $0.status == 0xF2 })
        #expect(received[pointer - 1].status == 0xFC, "Stop before the pointer")
        let sixteenth = Int(received[pointer].data1) | (Int(received[pointer].data2) << 7)
        #expect(sixteenth == 9, "the first sixteenth at or after tick 1000")
        #expect(received[pointer + 1].status == 0xFB, "Continue after the pointer")
        let after = received[(pointer + 2)...].filter { $0.status == 0xF8 }
        let remaining = Int(sequence.length) / 20 - 9 * 6
        #expect(after.count == remaining, "clocks from the ninth sixteenth to the end")
        // The first clock after Continue falls on tick 1080, 80 ticks after the locate point.
        let tempo = sequence.makeTempoMap()
        let expected = Int(((tempo.seconds(atTick: 1080) - tempo.seconds(atTick: 1000)) * 48_000).rounded(.up))
        if let first = after.first {
            let distance = first.frame - received[pointer].frame
            #expect(distance == expected, "first clock \(distance) frames after the pointer, not \(expected)")
        }
    }
}
