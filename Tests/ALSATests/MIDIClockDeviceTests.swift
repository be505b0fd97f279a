import ALSA
import AudioTestSupport
import Foundation
import MIDIFile
import Sequencing
import Locking
import Synchronization
import Testing

/// `tactus play --port 14:0 --midi-clock` against the real ALSA sequencer, inside the QEMU VM
/// of `Tests/VM/run-vm-tests.sh`: client 14 is "Midi Through", so what tactus sends to 14:0
/// comes out of 14:0, where this test's own client listens.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["TACTUS_REAL_ALSA"] == "1",
                             "runs inside the QEMU VM with the real ALSA drivers (Tests/VM/run-vm-tests.sh sets TACTUS_REAL_ALSA=1)"))
struct MIDIClockDeviceTests {
    /// Four bars of 4/4: 120 BPM, 90 from bar 2, 150 from bar 3; a note on every beat, the last
    /// ending with bar 4 (so the song is 16 quarters long).
    static func song() -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 500_000)), at: 0)
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 666_667)), at: 1920)
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 400_000)), at: 3840)
        var track = MusicTrack()
        for beat in 0..<16 { track.addNote(at: Int64(beat) * 480, channel: 9, key: 42, velocity: 90, duration: 480) }
        sequence.tracks = [track]
        return sequence
    }

    struct Received: Sendable { var nanos: Int64; var bytes: [UInt8] }

    /// Plays the song with `options` to 14:0 and returns what arrived there, in order.
    func playAndListen(_ options: [String]) throws -> [Received] {
        let binary = try #require(ProcessInfo.processInfo.environment["TACTUS_BINARY"], "TACTUS_BINARY names the tactus to run")
        let dir = NSTemporaryDirectory() + "tactus-clock-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/song.mid"
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: Self.song()), to: path)

        let client = try SequencerClient(name: "clock-probe")
        try client.connectInput(from: "14:0")
        let received = Locked<[Received]>([])
        // Queue-tick stamps, as arecordmidi records: the time each event was due on the sender's
        // queue, not how late the emulated CPU ran the timer interrupt that delivered it.
        let input = try client.startInput(stamps: .queueTicks, timingClock: true) { nanos, bytes in
            received.withLock { $0.append(Received(nanos: nanos, bytes: bytes)) }
        }
        // posix_spawn and waitpid with a deadline, not Foundation's Process, whose exit
        // monitoring does not work under the VM's minimal init.
        let argv = [binary, "play", path, "--port", "14:0", "--midi-clock", "--quiet"] + options
        var pid: pid_t = 0
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let spawned = posix_spawn(&pid, binary, &actions, nil, cArgs, environ)
        try #require(spawned == 0, "cannot start \(binary): \(spawned)")
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(30)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                Issue.record("tactus play did not end within 30 s")
                break
            }
            usleep(20_000)
        }
        #expect(status == 0, "exit status \(status)")
        // tactus leaves once the sequencer has delivered everything; once the probe's client has
        // read it all from the kernel, stopping its input delivers what it read first.
        #expect(SequencerClients.waitUntilRead(number: client.clientID), "the probe never read what it was sent")
        input.stop()
        return received.withLock { $0 }
    }

    /// The largest distance, in nanoseconds, between each received clock and its exact time
    /// relative to the first transport message.
    func worstClockError(_ events: [Received], timeline: MIDIClockTimeline, firstClock: Int64) -> (count: Int, worst: Int64) {
        guard let zero = events.first(where: { $0.bytes == [0xFA] || $0.bytes == [0xFB] })?.nanos else { return (0, .max) }
        let clocks = events.filter { $0.bytes == [0xF8] }
        var worst: Int64 = 0
        for (k, clock) in clocks.enumerated() {
            let exact = Int64(timeline.nanoseconds(ofClock: firstClock + Int64(k)))
            worst = max(worst, abs((clock.nanos - zero) - exact))
        }
        return (clocks.count, worst)
    }

    @Test("24 clocks per quarter through tempo changes and --rate, each at its exact time (2 ms under emulation); Start first, Stop last")
    func clockThroughTempoChangesAndRate() throws {
        for rate in [1.0, 1.25] {
            let events = try playAndListen(["--rate", "\(rate)"])
            let transport = events.filter { $0.bytes.first! >= 0xF2 && $0.bytes != [0xF8] }.map(\.bytes)
            #expect(transport == [[0xFA], [0xFC]], "rate \(rate): \(transport)")
            let timeline = MIDIClockTimeline(tempo: Self.song().makeTempoMap(), fromTick: 0, endTick: 7680, rate: rate)
            let (count, worst) = worstClockError(events, timeline: timeline, firstClock: 0)
            #expect(count == 16 * 24, "rate \(rate)")
            // 1 ms is the aim; the emulated CPU (TCG) delays timer interrupts, so the VM allows
            // 2 ms like its other timing checks, and prints the figure.
            #expect(worst <= 2_000_000, "rate \(rate): worst clock \(Double(worst) / 1e6) ms from its time")
            print("rate \(rate): \(count) clocks, worst \(String(format: "%.3f", Double(worst) / 1e6)) ms from exact")
        }
    }

    @Test("from bar 2:2, Song Position Pointer names sixteenth 20, then Continue, then the clocks from there")
    func songPositionAfterALocate() throws {
        let events = try playAndListen(["--from", "2:2"])
        let transport = events.filter { $0.bytes.first! >= 0xF2 && $0.bytes != [0xF8] }.map(\.bytes)
        #expect(transport == [[0xF2, 20, 0], [0xFB], [0xFC]], "\(transport)")
        let timeline = MIDIClockTimeline(tempo: Self.song().makeTempoMap(), fromTick: 2400, endTick: 7680, rate: 1)
        let (count, worst) = worstClockError(events, timeline: timeline, firstClock: 20 * 6)
        #expect(count == 16 * 24 - 20 * 6)
        #expect(worst <= 2_000_000, "worst clock \(Double(worst) / 1e6) ms from its time")
        print("from 2:2: \(count) clocks, worst \(String(format: "%.3f", Double(worst) / 1e6)) ms from exact")
    }
}
