import Playback
import Testing

/// MIDI out during audio playback: what is scheduled when, from the engine's anchors.
@Suite struct MIDIPortSchedulerTests {
    let unit = Int64(65_536)

    func scheduler(_ lookahead: Int64 = 100_000_000) -> MIDIPortScheduler {
        let s = MIDIPortScheduler(messages: [
            MIDIPortMessage(songFrame: 4_800, bytes: [0x90, 60, 100], destination: 0),
            MIDIPortMessage(songFrame: 9_600, bytes: [0x80, 60, 0], destination: 0),
            MIDIPortMessage(songFrame: 14_400, bytes: [0x91, 62, 90], destination: 1),
            MIDIPortMessage(songFrame: 48_000, bytes: [0x81, 62, 0], destination: 1),
        ], sampleRate: 48_000)
        s.lookaheadNanos = lookahead
        return s
    }

    func sends(_ actions: [MIDIPortAction]) -> [Int64] {
        actions.compactMap { if case .send(let host, _, _) = $0 { return host } else { return nil } }
    }

    @Test func messagesLeaveWhenTheirFrameIsHeard() {
        let s = scheduler()
        // Output frame 4800 is song frame 4800, asked for at 1 s; 480 frames (10 ms) of latency.
        let first = s.service(anchor: PlaybackAnchor(outputFrame: 4_800, songPosition: 4_800 * unit, rateStep: unit, hostNanos: 1_000_000_000),
                              latencyFrames: 480, nowNanos: 1_000_000_000)
        // Within 100 ms: the note-on at 4800 heard at 1.01 s, the note-off at 9600 at 1.11 s.
        #expect(sends(first) == [1_010_000_000, 1_110_000_000])
        // A driver 2 ms late moves nothing but the 200 ppm drift allowance (20 us in 0.1 s).
        let second = s.service(anchor: PlaybackAnchor(outputFrame: 9_600, songPosition: 9_600 * unit, rateStep: unit, hostNanos: 1_102_000_000),
                               latencyFrames: 480, nowNanos: 1_102_000_000)
        #expect(sends(second).count == 1 && abs(sends(second)[0] - 1_210_000_000) <= 20_400)
    }

    @Test func blocksAskedForWhileTheBufferFillsAreNotUsed() {
        let s = scheduler()
        // At the start the driver asks for block after block at once, long before they play:
        // nothing is scheduled from those until a block past the buffer's length comes.
        #expect(s.service(anchor: PlaybackAnchor(outputFrame: 0, songPosition: 0, rateStep: unit, hostNanos: 1_000_000_000),
                          latencyFrames: 480, nowNanos: 1_000_000_000).isEmpty)
        #expect(s.service(anchor: PlaybackAnchor(outputFrame: 240, songPosition: 240 * unit, rateStep: unit, hostNanos: 1_000_100_000),
                          latencyFrames: 480, nowNanos: 1_000_100_000).isEmpty)
        let steady = s.service(anchor: PlaybackAnchor(outputFrame: 960, songPosition: 960 * unit, rateStep: unit, hostNanos: 1_010_000_000),
                               latencyFrames: 480, nowNanos: 1_010_000_000)
        #expect(sends(steady) == [1_010_000_000 + 4_320 * 1_000_000_000 / 48_000])
    }

    @Test func theRateScalesTheTimes() {
        let s = scheduler(200_000_000)
        let actions = s.service(anchor: PlaybackAnchor(outputFrame: 1_000, songPosition: 0, rateStep: 2 * unit, hostNanos: 2_000_000_000),
                                latencyFrames: 0, nowNanos: 2_000_000_000)
        // Song frame 4800 is rendered 2400 output frames after the anchor: 50 ms.
        #expect(sends(actions) == [2_050_000_000, 2_100_000_000, 2_150_000_000])
    }

    @Test func aJumpDropsWhatIsScheduledAndSilencesWhatSounds() {
        let s = scheduler(1_000_000_000)
        _ = s.service(anchor: PlaybackAnchor(outputFrame: 0, songPosition: 0, rateStep: unit, hostNanos: 1_000_000_000),
                      latencyFrames: 0, nowNanos: 1_000_000_000)
        // A locate back to song frame 0 at output frame 7200 (1.15 s), after the first note-on
        // was heard and before its note-off.
        let actions = s.service(anchor: PlaybackAnchor(outputFrame: 7_200, songPosition: 0, rateStep: unit, hostNanos: 1_150_000_000),
                                latencyFrames: 0, nowNanos: 1_150_000_000)
        #expect(actions.first == .dropScheduled)
        let now = actions.compactMap { a -> [UInt8]? in if case .sendNow(let b, _) = a { return b } else { return nil } }
        // Note 60 sounded and its note-off was still to come; then CC 120 and 123 on the
        // channels of both ports.
        #expect(now == [[0x80, 60, 0], [0xB0, 120, 0], [0xB0, 123, 0], [0xB1, 120, 0], [0xB1, 123, 0]])
        // Scheduling restarts from the new position.
        #expect(sends(actions).first.map { abs($0 - 1_250_000_000) <= 1 } == true, "\(sends(actions))")
    }

    @Test func aStopSilencesOnceAndTheLoopEndIsRespected() {
        let s = scheduler(2_000_000_000)
        s.loopFrames = 0..<10_000
        let playing = s.service(anchor: PlaybackAnchor(outputFrame: 0, songPosition: 0, rateStep: unit, hostNanos: 1_000_000_000),
                                latencyFrames: 0, nowNanos: 1_000_000_000)
        #expect(sends(playing).count == 2, "nothing past the loop's end")
        let stop = s.service(anchor: PlaybackAnchor(outputFrame: 2_000, songPosition: 2_000 * unit, rateStep: 0, hostNanos: 1_050_000_000),
                             latencyFrames: 0, nowNanos: 1_050_000_000)
        #expect(stop.first == .dropScheduled && stop.count == 5)
        #expect(s.service(anchor: PlaybackAnchor(outputFrame: 3_000, songPosition: 2_000 * unit, rateStep: 0, hostNanos: 1_070_000_000),
                          latencyFrames: 0, nowNanos: 1_070_000_000).isEmpty)
    }
}
