import Foundation
import JACK
import Synchronization
import Testing

/// Writes a known stream: sample n of the left channel is `(n % 4096) / 4096 + 2^-20`, never 0,
/// the right is its negative; MIDI note-ons at fixed offsets in the first periods.
private final class RampSource: JACKProcessSource, @unchecked Sendable {
    let written = Atomic<Int>(0)
    let midiOffsets: [Int]
    let midiPeriods: Int
    /// MIDI is written only once armed (after the test has connected the ports).
    let armed = Atomic<Bool>(false)
    private let midiPeriodsDone = Atomic<Int>(0)
    private let noteOn: UnsafeMutablePointer<UInt8> = {
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 3)
        bytes.initialize(from: [0x90, 60, 100], count: 3)
        return bytes
    }()

    init(midiOffsets: [Int] = [], midiPeriods: Int = 0) {
        self.midiOffsets = midiOffsets
        self.midiPeriods = midiPeriods
    }

    deinit { noteOn.deallocate() }

    static func value(_ n: Int) -> Float { Float(n % 4096) / 4096 + 1.0 / 1_048_576 }

    func process(_ cycle: JACKCycle) {
        let start = written.load(ordering: .relaxed)
        for i in 0..<cycle.frameCount {
            cycle.left[i] = Self.value(start + i)
            cycle.right[i] = -Self.value(start + i)
        }
        written.store(start + cycle.frameCount, ordering: .relaxed)
        let done = midiPeriodsDone.load(ordering: .relaxed)
        if done < midiPeriods && armed.load(ordering: .acquiring) {
            for offset in midiOffsets {
                noteOn[1] = UInt8(60 + done)
                cycle.writeMIDI(UnsafeBufferPointer(start: noteOn, count: 3), atFrame: offset)
            }
            midiPeriodsDone.store(done + 1, ordering: .relaxed)
        }
    }
}

/// Records what reaches its inputs into buffers allocated up front.
private final class CaptureSink: JACKProcessSource, @unchecked Sendable {
    let capacity: Int
    let left: UnsafeMutablePointer<Float>
    let right: UnsafeMutablePointer<Float>
    let captured = Atomic<Int>(0)
    // MIDI: (period, frame, note) packed into one Int each, up to 1,024.
    let midi = UnsafeMutablePointer<Int>.allocate(capacity: 1024)
    let midiCount = Atomic<Int>(0)
    private var period = 0

    init(frames: Int) {
        capacity = frames
        left = .allocate(capacity: frames)
        right = .allocate(capacity: frames)
    }

    deinit {
        left.deallocate()
        right.deallocate()
        midi.deallocate()
    }

    func process(_ cycle: JACKCycle) {
        let start = captured.load(ordering: .relaxed)
        let n = min(cycle.frameCount, capacity - start)
        if n > 0, let inLeft = cycle.inputLeft, let inRight = cycle.inputRight {
            (left + start).update(from: inLeft, count: n)
            (right + start).update(from: inRight, count: n)
            captured.store(start + n, ordering: .releasing)
        }
        var count = midiCount.load(ordering: .relaxed)
        for index in 0..<cycle.midiInputCount where count < 1024 {
            guard let event = cycle.midiInput(at: index), event.bytes.count == 3 else { continue }
            midi[count] = period << 32 | event.frame << 8 | Int(event.bytes[1])
            count += 1
        }
        midiCount.store(count, ordering: .releasing)
        period += 1
    }
}

/// A fixed 4/4 at 120 BPM timebase: two seconds a bar.
private final class FixedTimebase: JACKTimebaseProvider {
    func barBeatTick(atFrame frame: UInt32, sampleRate: UInt32) -> JACKBarBeatTick {
        let beats = Double(frame) / Double(sampleRate) * 2
        let bar = Int32(beats / 4)
        let beatInBar = beats - Double(bar) * 4
        return JACKBarBeatTick(bar: bar + 1, beat: Int32(beatInBar) + 1, tick: Int32((beatInBar - beatInBar.rounded(.down)) * 1920),
                               barStartTick: Double(bar) * 4 * 1920, beatsPerBar: 4, beatType: 4, ticksPerBeat: 1920,
                               beatsPerMinute: 120)
    }
}

@Suite("JACK against a real jackd", .serialized, .enabled(if: JACKServer.isInstalled, "\(JACKServer.missing)"))
struct JACKClientTests {
    @Test("a client of a server that is not running gets one clear error")
    func noServer() {
        #expect(throws: JACKError.self) { try JACKClient(name: "lonely", server: "tactus-no-such-server") }
        do {
            _ = try JACKClient(name: "lonely", server: "tactus-no-such-server")
        } catch {
            #expect(error.description.contains("no JACK server 'tactus-no-such-server' is running"))
        }
    }

    @Test("the server's rate and period are taken as they are")
    func rateAndPeriod() throws {
        let server = try JACKServer("rate", sampleRate: 44_100, period: 128)
        defer { server.stop() }  // keeps the server alive to the end of the test
        let client = try JACKClient(name: "rate", server: server.name)
        #expect(client.sampleRate == 44_100)
        #expect(client.bufferFrames == 128)
        #expect(client.outputPortNames == ["rate:out_left", "rate:out_right"])
    }

    @Test("audio one client writes reaches another's inputs sample for sample")
    func audioArrivesUnchanged() throws {
        // Long periods: under the load of the other suites a 5 ms period can be missed, and an
        // xrun drops frames the comparison below would count.
        let server = try JACKServer("audio", sampleRate: 48_000, period: 2048)
        defer { server.stop() }  // keeps the server alive to the end of the test
        let captured = try withoutXruns { () throws -> (CaptureSink, Int) in
            let sender = try JACKClient(name: "sender", server: server.name)
            let probe = try JACKClient(name: "probe", server: server.name, audioInput: true)
            let sink = CaptureSink(frames: 48_000)
            try probe.start(source: sink, connections: .none)
            let ramp = RampSource()
            try sender.start(source: ramp, connections: .ports(probe.inputPortNames))
            #expect(waitUntil { sink.captured.load(ordering: .acquiring) == sink.capacity })
            sender.stop()
            probe.stop()
            return (sink, sender.xrunCount + probe.xrunCount)
        }
        guard let sink = captured else { return }
        let first = (0..<sink.capacity).first { sink.left[$0] != 0 }
        let start = try #require(first, "nothing arrived")
        // The sender may have run a few periods before the connection was made: align on the
        // first value that arrived.
        let offset = (0..<4096).first { RampSource.value($0) == sink.left[start] }!
        var mismatches = 0
        for i in start..<sink.capacity where sink.left[i] != RampSource.value(offset + i - start) || sink.right[i] != -sink.left[i] {
            mismatches += 1
        }
        #expect(mismatches == 0, "\(mismatches) frames differ")
        #expect(sink.capacity - start > 30_000)
    }

    @Test("MIDI written at a frame of the period arrives at that frame")
    func midiAtExactFrames() throws {
        let server = try JACKServer("midi")
        defer { server.stop() }  // keeps the server alive to the end of the test
        let sender = try JACKClient(name: "midisender", server: server.name, midiOutput: true)
        let probe = try JACKClient(name: "midiprobe", server: server.name, midiInput: true)
        let sink = CaptureSink(frames: 1)
        try probe.start(source: sink, connections: .none)
        let offsets = [0, 1, 17, 100, 254, 255]
        let writer = RampSource(midiOffsets: offsets, midiPeriods: 8)
        try sender.start(source: writer, connections: .none)
        try sender.connect(sender.midiOutputPortName!, to: probe.midiInputPortName!)
        sender.waitForMorePeriods()
        writer.armed.store(true, ordering: .releasing)
        #expect(waitUntil { sink.midiCount.load(ordering: .acquiring) >= offsets.count * 8 })
        sender.stop()
        probe.stop()
        let received = (0..<sink.midiCount.load(ordering: .acquiring)).map { sink.midi[$0] }
        let byNote = Dictionary(grouping: received) { $0 & 0xFF }
        #expect(byNote.count == 8, "one note number per period")
        for (_, events) in byNote {
            #expect(events.map { ($0 >> 8) & 0xFF_FFFF } == offsets)
            #expect(Set(events.map { $0 >> 32 }).count == 1, "all in one period")
        }
    }

    @Test("transport started, moved and stopped by one client is seen by another; a timebase master's bar:beat is read")
    func transport() throws {
        let server = try JACKServer("transport")
        defer { server.stop() }  // keeps the server alive to the end of the test
        let follower = try JACKClient(name: "follower", server: server.name)
        let controller = try JACKClient(name: "controller", server: server.name)
        try follower.start(source: RampSource(), connections: .none)
        try controller.start(source: RampSource(), connections: .none)
        #expect(controller.becomeTimebaseMaster(FixedTimebase()))
        controller.locateTransport(frame: 48_000 * 5)
        #expect(waitUntil { follower.transport().frame == 48_000 * 5 })
        // 5 s at 120 BPM in 4/4 is bar 3, beat 3.
        #expect(waitUntil { follower.transport().barBeatTick?.bar == 3 && follower.transport().barBeatTick?.beat == 3 })
        #expect(follower.transport().beatsPerMinute == 120)
        controller.startTransport()
        #expect(waitUntil { follower.transport().isRolling })
        #expect(waitUntil { follower.transport().frame > 48_000 * 5 })
        controller.stopTransport()
        #expect(waitUntil { !follower.transport().isRolling })
        let stoppedAt = follower.transport().frame
        follower.waitForMorePeriods(8)
        #expect(follower.transport().frame == stoppedAt)
    }

    // A server killed under a running client: see cliServerKilled, which runs the client in
    // its own process. libjack keeps process-wide state, and a new client opened in a process
    // whose earlier server was killed can crash inside libjack, so the test suite kills
    // servers only under other processes.
}
