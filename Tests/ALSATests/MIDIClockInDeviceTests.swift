import ALSA
import AudioGraph
import Foundation
import Playback
import Sequencing
import Synchronization
import Testing

/// MIDI clock in through the real ALSA sequencer, inside the QEMU VM of
/// `Tests/VM/run-vm-tests.sh`: clock bytes written to /dev/snd/midiC1D1 at 100 and then 140 BPM
/// come out of VirMIDI 1-1 (client 21) into a follower, as `tactus play --transport-in 21:0
/// --follow-clock` takes them, while the player renders in real time.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["TACTUS_REAL_ALSA"] == "1",
                             "runs inside the QEMU VM with the real ALSA drivers (Tests/VM/run-vm-tests.sh sets TACTUS_REAL_ALSA=1)"))
struct MIDIClockInDeviceTests {
    /// What the input thread saw at one clock.
    struct Sample: Sendable {
        var nanos: Int64
        var clockBeats: Double
        var playerBeats: Double
    }

    /// The player for the input thread, which reads its position: an atomic the render
    /// publishes, through a tempo map nothing changes during the test.
    final class PlayerPosition: @unchecked Sendable {
        let player: Player
        init(_ player: Player) { self.player = player }
        var beats: Double { player.beats }
    }

    @Test("A clock at 100 then 140 BPM: two quarter notes after each change the song's tempo is within 1 % of the clock's and its position within one clock")
    func followsTheClocksTempo() throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        for beat in 0..<64 { track.addNote(at: Int64(beat) * 480, channel: 0, key: 60, velocity: 90, duration: 240) }
        sequence.tracks = [track]
        let graph = AudioGraph()
        graph.add(EventRecordingNode(), id: 1)
        graph.add(OutputNode(), id: 2)
        try graph.connect(1, to: 2)
        let player = Player(sequence: sequence, graph: try graph.compile(sampleRate: 48_000, maximumFrameCount: 512), defaultNode: 1)
        let follower = MIDITransportFollower(followingClockOf: player, ticksPerQuarter: 480)
        let samples = Mutex<[Sample]>([])
        let position = PlayerPosition(player)

        let client = try SequencerClient(name: "clock-in")
        try client.connectInput(from: "21:0")
        let input = try client.startInput(stamps: .realTime, timingClock: true) { nanos, bytes in
            follower.receive(bytes, atNanos: nanos)
            guard bytes == [0xF8], let clockBeats = follower.clockBeats else { return }
            let sample = Sample(nanos: nanos, clockBeats: clockBeats, playerBeats: position.beats)
            samples.withLock { $0.append(sample) }
        }
        defer { input.stop() }
        let fd = open("/dev/snd/midiC1D1", O_WRONLY)
        try #require(fd >= 0)
        defer { close(fd) }

        // The clock: Start, then 8 beats at 100 BPM and 8 at 140, each byte at its absolute time.
        let perPhase = 8 * 24
        let intervals = [Double](repeating: 60e9 / (100 * 24), count: perPhase) + [Double](repeating: 60e9 / (140 * 24), count: perPhase)
        let startDue = Double(monotonicNanoseconds() + 20_000_000)
        // When each clock was due: the clock counted as beat k/24 is the (k+1)th after Start.
        var clockDue: [Double] = []
        var due = startDue
        for interval in intervals {
            due += interval
            clockDue.append(due)
        }
        let schedule = clockDue
        let sender = Thread {
            func sleep(until nanos: Double) {
                var time = timespec(tv_sec: Int(nanos / 1e9), tv_nsec: Int(nanos.truncatingRemainder(dividingBy: 1e9)))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
            }
            sleep(until: startDue)
            _ = [UInt8(0xFA)].withUnsafeBytes { write(fd, $0.baseAddress, 1) }
            for due in schedule {
                sleep(until: due)
                _ = [UInt8(0xF8)].withUnsafeBytes { write(fd, $0.baseAddress, 1) }
            }
        }
        sender.start()

        // The audio thread's part: render what the wall clock says is due, in small blocks.
        // Where the song was at the end of each block is kept, so its position at any moment
        // of the audio's timeline can be read back, however late this loop got to run.
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 64), right = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        defer { left.deallocate(); right.deallocate() }
        let start = monotonicNanoseconds()
        let total = intervals.reduce(0, +) + 300_000_000
        var rendered: Int64 = 0
        var beatsAtBlockEnd: [Double] = [player.beats]
        beatsAtBlockEnd.reserveCapacity(Int(total * 48_000 / 1e9 / 64) + 64)
        while Double(monotonicNanoseconds() - start) < total {
            let due = (monotonicNanoseconds() - start) * 48_000 / 1_000_000_000
            while rendered < due {
                player.render(frameCount: 64, into: StereoBuffer(left: left, right: right))
                rendered += 64
                beatsAtBlockEnd.append(player.beats)
            }
            usleep(1_000)
        }
        /// Where the song's audio was at monotonic time `nanos`.
        func songBeats(atNanos nanos: Double) -> Double {
            let block = max(0, (nanos - Double(start)) * 48_000 / 1e9 / 64)
            let i = min(Int(block), beatsAtBlockEnd.count - 2)
            let fraction = min(block - Double(i), 1)
            return beatsAtBlockEnd[i] + (beatsAtBlockEnd[i + 1] - beatsAtBlockEnd[i]) * fraction
        }
        let seen = samples.withLock { $0 }
        try #require(seen.count >= 2 * perPhase - 4, "clocks received: \(seen.count)")

        // Settled: from two quarter notes after each change to the end of its phase. The tempo
        // is what the song's audio did there (beats over time). The position is checked at every
        // clock, against where the song's audio was when that clock was due: on a loaded host
        // the emulated machine stops now and then, and the clocks sent late after such a stop,
        // or a render loop running behind, say nothing of how well the song follows. What the
        // player published at the clock's arrival is printed beside it.
        for (phase, bpm) in [(0, 100.0), (1, 140.0)] {
            let settled = Array(seen[(phase * perPhase + 48)..<min(seen.count, (phase + 1) * perPhase)])
            try #require(settled.count > 24)
            let first = schedule[Int((settled.first!.clockBeats * 24).rounded())]
            let last = schedule[Int((settled.last!.clockBeats * 24).rounded())]
            let tempo = (songBeats(atNanos: last) - songBeats(atNanos: first)) / ((last - first) / 60e9)
            var worst = 0.0, worstAtArrival = 0.0, latestClock = 0.0
            for sample in settled {
                let clock = Int((sample.clockBeats * 24).rounded())
                try #require(clock < schedule.count)
                worst = max(worst, abs(sample.clockBeats - songBeats(atNanos: schedule[clock])) * 24)
                worstAtArrival = max(worstAtArrival, abs(sample.clockBeats - sample.playerBeats) * 24)
                latestClock = max(latestClock, (Double(sample.nanos) - schedule[clock]) / 1e6)
            }
            print("clock in at \(bpm) BPM: song tempo \(String(format: "%.2f", tempo)) BPM, worst distance \(String(format: "%.2f", worst)) clocks "
                  + "over \(settled.count) clocks (\(String(format: "%.2f", worstAtArrival)) by the position published at arrival; "
                  + "latest clock \(String(format: "%.1f", latestClock)) ms after its time)")
            #expect(abs(tempo / bpm - 1) < 0.01, "tempo \(tempo) against \(bpm)")
            #expect(worst <= 1, "\(worst) clocks from the count")
        }
    }
}
