import Playback
import Sequencing
import Testing

@Suite("MIDI clock in: the song plays at the clock's tempo and stays on its count")
struct MIDIClockFollowTests {
    /// Deterministic jitter of up to `amplitude` nanoseconds either way.
    struct Jitter {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        mutating func next(amplitude: Int64) -> Int64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int64((state >> 33) % UInt64(2 * amplitude + 1)) - amplitude
        }
    }

    /// Arrival times of clocks at `bpm`, each moved by up to 1 ms.
    static func clocks(count: Int, bpm: Double, from start: Int64, jitter: inout Jitter) -> [Int64] {
        let interval = 60e9 / (bpm * 24)
        return (0..<count).map { start + Int64((Double($0) * interval).rounded()) + jitter.next(amplitude: 1_000_000) }
    }

    @Test("The estimate is within 1 % one quarter note (24 clocks) after the tempo changes, with 1 ms of jitter on every clock")
    func estimateSettlesWithinAQuarterNote() {
        var jitter = Jitter()
        var estimator = MIDIClockTempoEstimator()
        #expect(estimator.settlingClocks == 24)
        let slow = Self.clocks(count: 48, bpm: 100, from: 1_000_000_000, jitter: &jitter)
        for (i, t) in slow.enumerated() {
            let bpm = estimator.receiveClock(atNanos: t)
            #expect((bpm == nil) == (i < 2))
            if i >= 24 { #expect(abs(bpm! / 100 - 1) < 0.01, "clock \(i): \(bpm!)") }
        }
        let fast = Self.clocks(count: 48, bpm: 140, from: slow.last! + Int64(60e9 / (140 * 24)), jitter: &jitter)
        var worstAfterSettling = 0.0
        for (i, t) in fast.enumerated() {
            let bpm = estimator.receiveClock(atNanos: t)!
            if i == 0 { #expect(bpm < 110, "one clock does not swing it") }
            if i >= estimator.settlingClocks - 1 { worstAfterSettling = max(worstAfterSettling, abs(bpm / 140 - 1)) }
        }
        #expect(worstAfterSettling < 0.01, "worst \(worstAfterSettling * 100) %")
        // A paused clock starts again from its first clock, not from an interval of seconds.
        let resumed = Self.clocks(count: 24, bpm: 90, from: fast.last! + 5_000_000_000, jitter: &jitter)
        #expect(estimator.receiveClock(atNanos: resumed[0]) == nil)
        #expect(estimator.receiveClock(atNanos: resumed[1]) == nil)
        for t in resumed.dropFirst() { estimator.receiveClock(atNanos: t) }
        #expect(abs(estimator.bpm! / 90 - 1) < 0.01)
    }

    @Test("Clocks held up for 150 ms and then delivered together move the estimate by less than 25 % and it is within 1 % a quarter note later")
    func aBurstAfterAStallIsNoJump() {
        var jitter = Jitter()
        var estimator = MIDIClockTempoEstimator()
        var arrivals = Self.clocks(count: 96, bpm: 100, from: 1_000_000_000, jitter: &jitter)
        // Clocks 48 to 53 (150 ms at 100 BPM is six clocks) arrive together at the seventh's time.
        for i in 48..<54 { arrivals[i] = arrivals[54] - Int64(54 - i) * 100_000 }
        var worst = 0.0
        for (i, t) in arrivals.enumerated() {
            guard let bpm = estimator.receiveClock(atNanos: t) else { continue }
            worst = max(worst, abs(bpm / 100 - 1))
            if i >= 54 + 24 { #expect(abs(bpm / 100 - 1) < 0.01, "clock \(i): \(bpm)") }
        }
        #expect(worst < 0.25, "worst \(worst * 100) %")
    }

    @Test("A 120 BPM song follows a clock at 100 then 140 BPM: its tempo within 1 % and its position within one clock once settled")
    func playerFollowsTheClock() throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        for beat in 0..<64 { track.addNote(at: Int64(beat) * 480, channel: 0, key: 60, velocity: 100, duration: 240) }
        sequence.tracks = [track]
        let (player, _, _) = try recorderPlayer(sequence)
        let follower = MIDITransportFollower(followingClockOf: player, ticksPerQuarter: 480)
        var jitter = Jitter()
        let start: Int64 = 1_000_000_000
        let slow = Self.clocks(count: 8 * 24, bpm: 100, from: start, jitter: &jitter)
        let fast = Self.clocks(count: 8 * 24, bpm: 140, from: slow.last! + Int64(60e9 / (140 * 24)), jitter: &jitter)
        let arrivals = slow + fast

        // The player renders in real time: each clock, the frames of the time since the last.
        var rendered: Int64 = 0
        func renderUntil(_ nanos: Int64) {
            let due = (nanos - start) * 48_000 / 1_000_000_000
            if due > rendered { play(player, frames: Int(due - rendered), sizes: [64]) }
            rendered = max(rendered, due)
        }
        follower.receive([0xFA], atNanos: start - 1_000_000)
        var worstTempo = [0.0, 0.0], worstClocks = [0.0, 0.0]
        for (i, t) in arrivals.enumerated() {
            renderUntil(t)
            follower.receive([0xF8], atNanos: t)
            let phase = i < slow.count ? 0 : 1
            let clockInPhase = phase == 0 ? i : i - slow.count
            // Settled: a quarter note for the tempo, two for the position.
            let tempo = player.playRate * 120
            if clockInPhase >= 2 * 24 {
                worstTempo[phase] = max(worstTempo[phase], abs(tempo / (phase == 0 ? 100 : 140) - 1))
                worstClocks[phase] = max(worstClocks[phase], abs(follower.clockBeats! - player.beats) * 24)
            }
        }
        #expect(worstTempo.allSatisfy { $0 < 0.01 }, "worst tempo error \(worstTempo.map { $0 * 100 }) %")
        #expect(worstClocks.allSatisfy { $0 <= 1 }, "worst distance \(worstClocks) clocks")
        print("clock follow: worst tempo error \(worstTempo.map { $0 * 100 }) %, worst distance \(worstClocks) clocks")
    }
}
