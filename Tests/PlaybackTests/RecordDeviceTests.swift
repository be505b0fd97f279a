import ALSA
import AudioTestSupport
import Foundation
import MIDI
import MIDIFile
import Recording
import Sequencing
import Synchronization
import Testing

/// `tactus record` against the real ALSA sequencer and snd-virmidi; runs inside the QEMU VM of
/// `Tests/VM/run-vm-tests.sh` (TACTUS_REAL_ALSA=1). snd-virmidi is card 1: bytes written to
/// `/dev/snd/midiC1DN` come out of sequencer client 20+N, and what is sent to that client can
/// be read from the raw device.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["TACTUS_REAL_ALSA"] == "1", "runs inside the QEMU VM with the real ALSA drivers (Tests/VM/run-vm-tests.sh sets TACTUS_REAL_ALSA=1)"))
struct RecordDeviceTests {
    let ports = MIDIPortDeviceTests()

    var binary: String { ProcessInfo.processInfo.environment["TACTUS_BINARY"] ?? ports.device.cli.tactus }

    func workspace() throws -> String {
        let dir = NSTemporaryDirectory() + "tactus-rec-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Starts `tactus record ARGS` and waits until it records; returns its pid and the
    /// address of its input port (when it opened one).
    func startRecording(_ arguments: [String], dir: String) throws -> (pid: pid_t, port: String?) {
        let pid = try ports.spawn(binary, ["record"] + arguments, stdout: dir + "/record.out", stderr: dir + "/record.err")
        for _ in 0..<500 {
            let err = read(dir + "/record.err")
            if let line = err.split(separator: "\n").first(where: { $0.contains("recording into") }) {
                let port = line.firstMatch(of: /port (\d+:\d+)/).map { String($0.1) }
                return (pid, port)
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                Issue.record("tactus record exited early: \(err)")
                return (pid, nil)
            }
            usleep(20_000)
        }
        Issue.record("tactus record did not start: \(read(dir + "/record.err"))")
        return (pid, nil)
    }

    /// A message as recorded: its time and its bytes, note-offs written `8n kk` whatever
    /// their encoding and velocity.
    struct Timed: CustomStringConvertible, Sendable {
        var seconds: Double
        var bytes: [UInt8]
        var description: String { String(format: "%.4f ", seconds) + bytes.map { String(format: "%02x", $0) }.joined(separator: " ") }
    }

    /// Every channel message and sysex of a file, notes as their on and off, in time order.
    func events(_ path: String) throws -> [Timed] {
        let sequence = try SMFReader.read(contentsOf: path).makeSequence()
        let tempo = sequence.makeTempoMap()
        var result: [Timed] = []
        for track in sequence.tracks {
            for e in track.events {
                let at = tempo.seconds(atTick: e.tick + track.offset)
                switch e.event {
                case .note(let n):
                    result.append(Timed(seconds: at, bytes: n.onMessage.bytes))
                    result.append(Timed(seconds: tempo.seconds(atTick: e.tick + n.duration + track.offset), bytes: [0x80 | n.channel, n.key]))
                case .message(let m) where m.isChannelMessage:
                    result.append(Timed(seconds: at, bytes: m.isNoteOff ? [0x80 | m.channel, m.data1] : m.bytes))
                case .sysex(let s):
                    result.append(Timed(seconds: at, bytes: [s.status] + s.payload))
                default: continue
                }
            }
        }
        return result.sorted { $0.seconds < $1.seconds }
    }

    /// Pairs each original message with the recorded one of the same bytes (messages at nearly
    /// the same time may swap places; within one kind of message the order is the order
    /// played): the recorded time beside each original, and the originals the recording lacks.
    func matched(_ recorded: [Timed], _ original: [Timed]) -> (pairs: [(recordedSeconds: Double, original: Timed)], missing: [Timed]) {
        var byBytes: [[UInt8]: [Double]] = [:]
        for r in recorded { byBytes[r.bytes, default: []].append(r.seconds) }
        var used: [[UInt8]: Int] = [:]
        var pairs: [(recordedSeconds: Double, original: Timed)] = []
        var missing: [Timed] = []
        for o in original {
            let i = used[o.bytes, default: 0]
            used[o.bytes] = i + 1
            guard let times = byBytes[o.bytes], i < times.count else {
                missing.append(o)
                continue
            }
            pairs.append((times[i], o))
        }
        return (pairs, missing)
    }

    /// How far each recorded message is from its original time, after one common offset (when
    /// the first arrived): the worst distance, and the originals the recording lacks.
    func deviation(_ recorded: [Timed], _ original: [Timed]) -> (worst: Double, largest: [(Double, Timed)], missing: [Timed]) {
        guard let r0 = recorded.first, let o0 = original.first else { return (.infinity, [], original) }
        let offset = r0.seconds - o0.seconds
        let (pairs, missing) = matched(recorded, original)
        let deviations = pairs.map { ($0.recordedSeconds - offset - $0.original.seconds, $0.original) }
        let largest = Array(deviations.sorted { abs($0.0) > abs($1.0) }.prefix(5))
        return (abs(largest.first?.0 ?? 0), largest, missing)
    }

    /// The same messages, each at its original time (after one common offset: when the
    /// first arrived) within `tolerance`; returns the worst deviation.
    @discardableResult
    func expectSame(_ recorded: [Timed], _ original: [Timed], tolerance: Double = 0.002) -> Double {
        #expect(recorded.count == original.count, "recorded \(recorded.count) messages, expected \(original.count)")
        let (worst, largest, missing) = deviation(recorded, original)
        for m in missing { Issue.record("missing \(m)") }
        #expect(worst <= tolerance, "a message is \(worst * 1000) ms off")
        if worst > tolerance {
            // Which messages, for whoever reads the failure.
            for d in largest { print(String(format: "  %+.3f ms at ", d.0 * 1000) + "\(d.1)") }
        }
        print("recorded \(recorded.count) messages, each within \(String(format: "%.3f", worst * 1000)) ms of its time")
        return worst
    }

    /// The recorded times against a witness's (``RawDeviceWitness``), matched message by message
    /// and aligned by their median offset: half of them within `tolerance`. The kernel stamps the
    /// two raw devices one after the other in one dispatch, which the emulated machine now and
    /// then stretches (seen on a quiet host: 0.04 ms usually, 1.2 ms for one message in twenty,
    /// 4.8 ms at worst), so only the median tells a recording at the driver's stamps from one
    /// stamped on reading, whose reading thread wakes 0.5 to 7 ms late here. Returns the median,
    /// the 95th percentile and the worst distance, which are printed.
    @discardableResult
    func expectWitnessTimes(_ recorded: [Timed], _ witnessed: [Timed], tolerance: Double = 0.0005) -> (median: Double, p95: Double, worst: Double) {
        #expect(recorded.count == witnessed.count, "recorded \(recorded.count) messages, the witness saw \(witnessed.count)")
        let (pairs, missing) = matched(recorded, witnessed)
        for w in missing { Issue.record("not recorded: \(w)") }
        let differences = pairs.map { $0.recordedSeconds - $0.original.seconds }
        guard !differences.isEmpty else { return (.infinity, .infinity, .infinity) }
        let offset = differences.sorted()[differences.count / 2]
        let distances = differences.map { abs($0 - offset) }.sorted()
        let p95 = distances[min(distances.count - 1, Int((Double(distances.count) * 0.95).rounded(.up)) - 1)]
        let result = (median: distances[distances.count / 2], p95: p95, worst: distances.last!)
        #expect(result.median <= tolerance, "half the messages are more than \(result.median * 1000) ms from the witness's stamps")
        print(String(format: "recorded %d messages at the driver's stamps: median %.3f ms, 95 %% within %.3f ms, worst %.3f ms from the witness's",
                     recorded.count, result.median * 1000, result.p95 * 1000, result.worst * 1000))
        return result
    }

    /// Reads a second VirMIDI raw device fed by the same sequencer port as the one a recording
    /// reads, with the driver's own stamps: the kernel stamps both devices' bytes in the same
    /// dispatch, so the witness's times are the times a recording must show, however late the
    /// emulated machine delivered the messages (on a loaded host, by tens of milliseconds now
    /// and then). The sequencer's own stamps cannot serve: each queue keeps its time by its own
    /// timer's interrupts, and two queues were seen 3 to 5 ms apart here.
    final class RawDeviceWitness: Sendable {
        private final class Seen: Sendable {
            let state = Mutex<(parser: MIDIByteStreamParser, messages: [Timed])>((MIDIByteStreamParser(), []))
        }
        private let input: RawMIDIInput
        private let seen = Seen()

        init(device path: String) throws {
            input = try #require(RawMIDIInput(path: path), "\(path) cannot be read with the driver's stamps")
            input.start { [seen] nanos, bytes in
                seen.state.withLock { state in
                    state.parser.feed(bytes) { event in
                        let message: [UInt8]
                        switch event {
                        case .message(let m) where m.isChannelMessage:
                            message = m.isNoteOff ? [0x80 | m.channel, m.data1] : m.bytes
                        case .systemExclusive(let bytes, true):
                            message = bytes
                        default:
                            return
                        }
                        state.messages.append(Timed(seconds: Double(nanos) / 1e9, bytes: message))
                    }
                }
            }
        }

        /// Stops reading; what arrived, in order.
        func stop() -> [Timed] {
            input.stop()
            return seen.state.withLock { $0.messages }
        }
    }

    /// Runs `aconnect ARGS` (a subscription between two other clients' ports).
    func aconnect(_ arguments: [String], dir: String) throws {
        let pid = try ports.spawn("/usr/bin/aconnect", arguments, stdout: dir + "/aconnect.out", stderr: dir + "/aconnect.err")
        #expect(ports.waitForExit(pid, seconds: 10, what: "aconnect") == 0, "aconnect \(arguments): \(read(dir + "/aconnect.err"))")
    }

    /// The raw devices of the recording tests: the recording reads VirMIDI 1-0's
    /// (/dev/snd/midiC1D0, client 20), the witness VirMIDI 1-2's (client 22).
    static let recordedDevice = (path: "/dev/snd/midiC1D0", client: "20:0")
    static let witnessDevice = (path: "/dev/snd/midiC1D2", client: "22:0")

    /// Subscribes both raw devices to `port` and starts a witness on the second; undo the
    /// subscriptions with ``unsubscribeRecordedDevice(from:dir:)``.
    func witnessRecordedDevice(fedFrom port: String, dir: String) throws -> RawDeviceWitness {
        let witness = try RawDeviceWitness(device: Self.witnessDevice.path)
        try aconnect([port, Self.recordedDevice.client], dir: dir)
        try aconnect([port, Self.witnessDevice.client], dir: dir)
        return witness
    }

    func unsubscribeRecordedDevice(from port: String, dir: String) {
        try? aconnect(["-d", port, Self.recordedDevice.client], dir: dir)
        try? aconnect(["-d", port, Self.witnessDevice.client], dir: dir)
    }

    /// The first `seconds` of a song of the repository (notes cut there), written to `dir`:
    /// what aplaymidi plays.
    func excerpt(_ name: String, seconds: Double, dir: String) throws -> String {
        let sequence = try SMFReader.read(contentsOf: ports.songs.appendingPathComponent(name).path).makeSequence()
        let cut = Int64(sequence.makeTempoMap().tick(atSeconds: seconds))
        var short = sequence
        for i in short.tracks.indices {
            short.tracks[i].removeAll { $0.tick >= cut }
            short.tracks[i].mapEvents { e in
                if case .note(var n) = e.event, e.tick + n.duration > cut {
                    n.duration = cut - e.tick
                    e.event = .note(n)
                }
            }
            short.tracks[i].explicitLength = nil
        }
        short.tempoTrack.removeAll { $0.tick >= cut }
        // The tempo track's end of track too, or aplaymidi plays on to the whole song's end.
        short.tempoTrack.explicitLength = nil
        // Half a second of silence first: aplaymidi starts its queue before it has queued the
        // first events, so events at 0 would leave late; what is measured here is the recording.
        let lead = Int64(Double(sequence.ticksPerQuarter) * 2 * 0.5 * (sequence.makeTempoMap().bpm(atTick: 0) / 120))
        short = short.delayed(byTicks: lead)
        let path = dir + "/" + name
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: short), to: path)
        return path
    }

    /// Plays `song` with aplaymidi to `port` while `tactus record ARGS` records, then stops
    /// the recording with SIGINT.
    func recordAplaymidi(_ song: String, port: String?, recordArguments: [String], dir: String) throws -> (status: Int32, out: String, err: String) {
        let recording = try startRecording(recordArguments, dir: dir)
        guard let target = port ?? recording.port else {
            kill(recording.pid, SIGKILL)
            _ = ports.waitForExit(recording.pid, seconds: 5, what: "tactus record")
            return (-1, "", read(dir + "/record.err"))
        }
        let player = try ports.spawn("/usr/bin/aplaymidi", ["-p", target, song], stdout: dir + "/aplaymidi.out", stderr: dir + "/aplaymidi.err")
        let played = ports.waitForExit(player, seconds: 60, what: "aplaymidi")
        #expect(played == 0, "\(read(dir + "/aplaymidi.err"))")
        // Stopped once the take's journal holds every message the song sent, however late the
        // emulated machine runs the recorder.
        if let output = recordArguments.firstIndex(of: "-o").map({ recordArguments[$0 + 1] }) {
            let sent = try events(song).count
            #expect(waitForJournal(output + ".journal", messages: sent), "the journal never held the song's \(sent) messages")
        }
        kill(recording.pid, SIGINT)
        let status = ports.waitForExit(recording.pid, seconds: 20, what: "tactus record")
        return (status, read(dir + "/record.out"), read(dir + "/record.err"))
    }

    @Test func aplaymidiIntoTheTactusPortIsRecordedWithin2ms() throws {
        let dir = try workspace()
        let song = try excerpt("seven-eight.mid", seconds: 8, dir: dir)
        let run = try recordAplaymidi(song, port: nil, recordArguments: ["-o", dir + "/rec.mid", "--no-audio"], dir: dir)
        #expect(run.status == 0, "\(run.err)")
        #expect(run.out.hasPrefix(dir + "/rec.mid: "), "\(run.out)")
        expectSame(try events(dir + "/rec.mid"), try events(song))
    }

    @Test func aplaymidiIntoTheTactusPortWhileAudioPlaysOnSndDummy() throws {
        let dir = try workspace()
        let song = try excerpt("seven-eight.mid", seconds: 8, dir: dir)
        // The take's clock is the audio device's; input is heard through the synthesizer.
        let run = try recordAplaymidi(song, port: nil, recordArguments: ["-o", dir + "/rec.mid", "--device", "hw:2,0", "--latency", "50", "--metronome", "--instrument", "builtin"],
                                      dir: dir)
        #expect(run.status == 0, "\(run.err)")
        // The take's clock is snd-dummy's, a timer-driven card whose periods the emulated CPU
        // serves late now and then: a looser bound than for the sequencer's own clock.
        expectSame(try events(dir + "/rec.mid"), try events(song), tolerance: 0.005)
    }

    @Test func theVirmidiRawDeviceIsRecordedWithTheSameEvents() throws {
        let dir = try workspace()
        let song = try excerpt("morning-steps.mid", seconds: 6, dir: dir)
        // aplaymidi sends to Midi Through (14:0), which passes every message on at once to
        // VirMIDI 1-0 (client 20), whose raw side /dev/snd/midiC1D0 is recorded, and to VirMIDI
        // 1-2 (client 22), whose raw side the witness reads.
        let witness = try witnessRecordedDevice(fedFrom: "14:0", dir: dir)
        defer { unsubscribeRecordedDevice(from: "14:0", dir: dir) }
        let run = try recordAplaymidi(song, port: "14:0", recordArguments: ["-o", dir + "/rec.mid", "--no-audio", "--input-device", Self.recordedDevice.path],
                                      dir: dir)
        let delivered = witness.stop()
        #expect(run.status == 0, "\(run.err)")
        // The same messages as the song, at the times the driver stamped them on arrival. How late
        // the emulated machine delivered them (aplaymidi's queue timer's interrupts) is printed,
        // and is not the recording's error.
        let recorded = try events(dir + "/rec.mid")
        let original = try events(song)
        #expect(delivered.count == original.count, "the witness saw \(delivered.count) messages, the song has \(original.count)")
        expectWitnessTimes(recorded, delivered)
        let late = deviation(delivered, original)
        print(String(format: "the sequencer delivered them within %.3f ms of the song's times", late.worst * 1000))
    }

    /// Writes raw bytes into /dev/snd/midiC1D1, which VirMIDI 1-1 (client 21) sends on.
    func writeRaw(_ bytes: [UInt8], fd: Int32) {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        #expect(n == bytes.count)
    }

    @Test func rawBytesWrittenToVirmidiReachARecordingPort() throws {
        let dir = try workspace()
        let recording = try startRecording(["-o", dir + "/rec.mid", "--no-audio", "--port", "21:0"], dir: dir)
        let fd = open("/dev/snd/midiC1D1", O_WRONLY)
        try #require(fd >= 0)
        // Running status, a clock byte inside a message, sysex, program change, pitch bend.
        writeRaw([0xC2, 19, 0x92, 60, 100, 64, 0xF8, 90], fd: fd)
        usleep(100_000)
        writeRaw([0x92, 60, 0, 64, 0, 0xF0, 0x7D, 0x10, 0x20, 0xF7, 0xE2, 0x00, 0x50, 0xB2, 7, 99], fd: fd)
        #expect(waitForJournal(dir + "/rec.mid.journal", messages: 8), "the journal never held the 8 messages")
        close(fd)
        kill(recording.pid, SIGINT)
        #expect(ports.waitForExit(recording.pid, seconds: 20, what: "tactus record") == 0, "\(read(dir + "/record.err"))")
        let got = try events(dir + "/rec.mid").map(\.bytes)
        let expected: [[UInt8]] = [[0xC2, 19], [0x92, 60, 100], [0x92, 64, 90], [0x82, 60], [0x82, 64], [0xF0, 0x7D, 0x10, 0x20, 0xF7],
                                   [0xE2, 0x00, 0x50], [0xB2, 7, 99]]
        #expect(Set(got) == Set(expected) && got.count == expected.count, "\(got)")
    }

    @Test func afterKill9RecoverBringsBackEveryEventOlderThan100ms() throws {
        let dir = try workspace()
        let out = dir + "/rec.mid"
        // The bytes this test writes to /dev/snd/midiC1D1 come out of VirMIDI 1-1 (client 21),
        // which passes them to VirMIDI 1-0 and 1-2: the recording reads the raw side of the one,
        // the witness that of the other.
        let witness = try witnessRecordedDevice(fedFrom: "21:0", dir: dir)
        defer { unsubscribeRecordedDevice(from: "21:0", dir: dir) }
        let recording = try startRecording(["-o", out, "--no-audio", "--input-device", Self.recordedDevice.path], dir: dir)
        let fd = open("/dev/snd/midiC1D1", O_WRONLY)
        try #require(fd >= 0)
        var sent: [(seconds: Double, key: UInt8, on: Bool)] = []
        func now() -> Double {
            var t = timespec()
            clock_gettime(CLOCK_MONOTONIC, &t)
            return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
        }
        // A note every 25 ms, 12 ms long, for 2.5 s; then kill -9 with notes in flight.
        var killedAt = 0.0
        for i in 0..<100 {
            let key = UInt8(36 + i % 60)
            writeRaw([0x90, key, 100], fd: fd)
            sent.append((now(), key, true))
            usleep(12_000)
            writeRaw([0x80, key, 0], fd: fd)
            sent.append((now(), key, false))
            usleep(13_000)
        }
        writeRaw([0x90, 100, 100], fd: fd)
        sent.append((now(), 100, true))
        killedAt = now()
        kill(recording.pid, SIGKILL)
        _ = ports.waitForExit(recording.pid, seconds: 10, what: "tactus record")
        close(fd)
        #expect(!FileManager.default.fileExists(atPath: out))
        let recover = try ports.device.tactus(["record", "--recover", out + ".journal", "-o", dir + "/recovered.mid"])
        #expect(recover.status == 0, "\(recover.stderr)")
        print(recover.stdout.trimmingCharacters(in: .newlines))
        let recovered = try events(dir + "/recovered.mid").filter { $0.bytes[0] & 0xF0 == 0x90 }
        let old = sent.filter { $0.on && $0.seconds < killedAt - 0.1 }
        #expect(recovered.count >= old.count, "recovered \(recovered.count) notes, \(old.count) were sent more than 100 ms before the kill")
        let ons = sent.filter(\.on)
        #expect(recovered.map { $0.bytes[1] } == Array(ons.prefix(recovered.count).map(\.key)))
        // And at the times the driver stamped them, held to the witness's stamps: how late the
        // emulated machine got round to this process's writes is no error of the recording, and is
        // printed.
        let stamped = witness.stop().filter { $0.bytes[0] & 0xF0 == 0x90 }
        try #require(stamped.count >= recovered.count, "the witness saw \(stamped.count) notes")
        let atStamps = expectWitnessTimes(recovered, Array(stamped.prefix(recovered.count)))
        let offset = (recovered.first?.seconds ?? 0) - ons[0].seconds
        let fromWrites = zip(recovered, ons).map { abs($0.seconds - offset - $1.seconds) }.max() ?? 0
        print("recovered \(recovered.count) of \(ons.count) notes (\(old.count) sent more than 100 ms before the kill), onsets within "
              + String(format: "%.3f ms at worst of the driver's stamps (%.3f ms of when they were written)", atStamps.worst * 1000, fromWrites * 1000))
    }

    @Test func anUnknownSourcePortListsThePortsAndExits69() throws {
        let dir = try workspace()
        let r = try ports.device.tactus(["record", "-o", dir + "/x.mid", "--no-audio", "--port", "NoSuchKeyboard"])
        #expect(r.status == 69)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("no MIDI port 'NoSuchKeyboard'") && lines[0].contains("14:0 Midi Through"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/x.mid.journal"))
    }

    @Test func portTracksLeaveInStepWithTheAudioWithin2ms() throws {
        let dir = try workspace()
        let song = ports.songs.appendingPathComponent("click-track.mid").path
        let recording = dir + "/rec.mid"
        let recorder = try ports.spawn("/usr/bin/arecordmidi", ["-p", "14:0", "-b", "120", "-t", "960", recording],
                                       stdout: dir + "/arecordmidi.out", stderr: dir + "/arecordmidi.err")
        #expect(SequencerClients.waitForSubscription(of: "arecordmidi", from: "14:0"), "arecordmidi never subscribed to 14:0")
        // The click track goes to Midi Through while the (empty) rest plays on snd-dummy.
        let r = try ports.device.tactus(["play", "--instrument", "builtin", song, "--device", "hw:2,0", "--latency", "50", "--to", "5:1", "--tail", "0.2",
                                         "--quiet", "--port-tracks", "1=14:0"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(SequencerClients.waitUntilRead(byClientNamed: "arecordmidi"), "arecordmidi never read what it was sent")
        kill(recorder, SIGINT)
        _ = ports.waitForExit(recorder, seconds: 10, what: "arecordmidi")
        let original = try ports.heard(song).notes.filter { $0.seconds < 9.3 }
        let got = try ports.heard(recording)
        // In step: one offset (the median; the first note can leave only once the device has
        // started, so it is the one most likely late) brings every note within 2 ms.
        #expect(got.notes.count == original.count, "\(got.notes.count) notes, expected \(original.count)")
        let differences = zip(got.notes, original).map { $0.seconds - $1.seconds }.sorted()
        let offset = differences.isEmpty ? 0 : differences[differences.count / 2]
        let worst = differences.map { abs($0 - offset) }.max() ?? .infinity
        #expect(zip(got.notes, original).allSatisfy { $0.key == $1.key && $0.channel == $1.channel && $0.velocity == $1.velocity })
        #expect(worst <= 0.002, "a note is \(worst * 1000) ms out of step")
        print(String(format: "port track notes in step within %.3f ms (first note %.3f ms from the common offset)", worst * 1000,
                     ((got.notes.first?.seconds ?? 0) - (original.first?.seconds ?? 0) - offset) * 1000))
        // At the end the port's channel is silenced.
        #expect(got.messages.contains(.controlChange(channel: 9, controller: 123, value: 0)))
    }
}
