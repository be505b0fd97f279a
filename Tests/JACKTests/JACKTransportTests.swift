import Foundation
import JACK
import Playback
import Sequencing
import TactusTestSupport
import Testing

/// JACK transport with sessions; part of the one serialized JACK suite.
extension JACKClientTests {
    /// Two bars of 4/4 at 120 BPM (4 s), then 3/4 at 60 BPM: bar 3 starts at 4 s, bar 4 at 7 s.
    static func meterSong() -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 500_000)), at: 0)
        sequence.tempoTrack.add(.meta(.timeSignature(TimeSignature(4, 4))), at: 0)
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 1_000_000)), at: 3840)
        sequence.tempoTrack.add(.meta(.timeSignature(TimeSignature(3, 4))), at: 3840)
        var track = MusicTrack()
        for beat in 0..<20 { track.addNote(at: Int64(beat) * 480, channel: 0, key: 60, velocity: 80, duration: 240) }
        sequence.tracks = [track]
        return sequence
    }

    @Test("as timebase master, Tactus publishes the song's bar:beat and tempo, which other clients read through tempo and meter changes")
    func timebaseMaster() async throws {
        let server = try JACKServer("timebase")
        defer { server.stop() }  // keeps the server alive to the end of the test
        let reader = try JACKClient(name: "reader", server: server.name)
        try reader.start(source: JACKCapture(frames: 1), connections: .none)
        var options = PlaybackSession.Options(instrument: .builtIn)
        options.startsPlaying = false
        let session = try PlaybackSession(sequence: Self.meterSong(), options: options)
        let backend = JACKBackend(options: .init(clientName: "master", server: server.name, connections: .none))
        try session.start(on: backend)
        let client = try #require(backend.jackClient)
        #expect(client.becomeTimebaseMaster(SequenceTimebase(sequence: Self.meterSong())))
        let rate = UInt32(server.sampleRate)
        // (seconds, bar, beat, quarter-note BPM, beats per bar)
        let expected: [(Double, Int32, Int32, Double, Float)] = [
            (0, 1, 1, 120, 4), (1.0, 1, 3, 120, 4), (2.0, 2, 1, 120, 4), (3.0, 2, 3, 120, 4),
            (4.0, 3, 1, 60, 3), (5.0, 3, 2, 60, 3), (7.0, 4, 1, 60, 3), (8.5, 4, 2, 60, 3),
        ]
        for (seconds, bar, beat, bpm, beatsPerBar) in expected {
            reader.locateTransport(frame: UInt32(seconds * Double(rate)))
            let arrived = waitUntil { reader.transport().barBeatTick?.bar == bar && reader.transport().barBeatTick?.beat == beat }
            #expect(arrived, "at \(seconds) s: read \(String(describing: reader.transport().barBeatTick)), expected \(bar):\(beat)")
            #expect(reader.transport().beatsPerMinute == bpm, "at \(seconds) s")
            _ = beatsPerBar
        }
        // Halfway through beat 2 of bar 4 (8.5 s): 240 of 480 ticks.
        #expect(reader.transport().barBeatTick?.tick == 240)
        session.stop(drain: false)
        _ = try? await session.finished()
    }

    @Test("following the transport: another client's start, stop and locate move the session to the same time in the song")
    func followsTheTransport() async throws {
        let server = try JACKServer("follow")
        defer { server.stop() }  // keeps the server alive to the end of the test
        let controller = try JACKClient(name: "controller", server: server.name)
        try controller.start(source: JACKCapture(frames: 1), connections: .none)
        controller.stopTransport()
        controller.locateTransport(frame: 0)
        var options = PlaybackSession.Options(instrument: .builtIn)
        options.startsPlaying = false
        let session = try PlaybackSession(sequence: Self.meterSong(), options: options)
        let backend = JACKBackend(options: .init(clientName: "follower", server: server.name, connections: .none))
        try session.start(on: backend)
        let follower = JACKTransportFollower(client: try #require(backend.jackClient), session: session)
        func follow(until condition: () -> Bool) -> Bool {
            waitUntil {
                follower.update()
                return condition()
            }
        }
        // Located while stopped to 5 s: bar 3, beat 2 (tick 4320).
        controller.locateTransport(frame: UInt32(5 * server.sampleRate))
        #expect(follow { session.position?.tick == 4320 }, "tick \(String(describing: session.position?.tick))")
        #expect(session.position?.isPlaying == false)
        #expect(session.position?.barBeatTick == BarBeatTick(bar: 3, beat: 2, tick: 0))

        controller.startTransport()
        #expect(follow { session.position?.isPlaying == true && (session.position?.tick ?? 0) > 4320 })
        // Relocated while rolling to 2 s: bar 2.
        controller.locateTransport(frame: UInt32(2 * server.sampleRate))
        #expect(follow { (session.position?.barBeatTick.bar ?? 0) == 2 })
        controller.stopTransport()
        #expect(follow { session.position?.isPlaying == false })
        let stoppedAt = session.position?.tick
        controller.waitForMorePeriods(16)
        follower.update()
        #expect(session.position?.tick == stoppedAt)
        session.stop(drain: false)
        _ = try? await session.finished()
    }
}
