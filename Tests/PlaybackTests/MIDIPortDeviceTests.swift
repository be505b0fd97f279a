import AudioTestSupport
import Foundation
import MIDI
import MIDIFile
import Sequencing
import Testing

/// `tactus play --port` against the real ALSA sequencer; runs inside the QEMU VM of
/// `Tests/VM/run-vm-tests.sh` (TACTUS_REAL_ALSA=1), where client 14 is "Midi Through":
/// what tactus sends to 14:0 comes out of 14:0, and `arecordmidi -p 14:0` records it.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["TACTUS_REAL_ALSA"] == "1", "runs inside the QEMU VM with the real ALSA drivers (Tests/VM/run-vm-tests.sh sets TACTUS_REAL_ALSA=1)"))
struct MIDIPortDeviceTests {
    let device = PlayerDeviceTests()

    /// Starts a program as `PlayerDeviceTests.spawn` does, but with no signal blocked and
    /// SIGINT and SIGTERM at their defaults, whatever the test runner's thread has: the
    /// tests stop tactus and arecordmidi with SIGINT.
    func spawn(_ path: String, _ arguments: [String], stdout: String, stderr: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL) }
        return pid
    }

    /// Waits at most `seconds` for `pid`, then kills it and records an issue; returns its
    /// exit status (128 + signal when killed).
    func waitForExit(_ pid: pid_t, seconds: Double, what: String) -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                Issue.record("\(what) did not exit within \(seconds) s")
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                break
            }
            usleep(20_000)
        }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// A note as heard: channel, key, velocity and onset in seconds.
    struct Heard: CustomStringConvertible {
        var channel: UInt8, key: UInt8, velocity: UInt8, seconds: Double
        var description: String { String(format: "ch%d key%d vel%d @%.4f", channel, key, velocity, seconds) }
    }

    /// The notes of a file, onsets converted to seconds through the file's own tempo map, in
    /// time order; also every other channel message.
    func heard(_ path: String) throws -> (notes: [Heard], messages: [MIDIMessage]) {
        let sequence = try SMFReader.read(contentsOf: path).makeSequence()
        let tempo = sequence.makeTempoMap()
        var notes: [Heard] = [], messages: [MIDIMessage] = []
        for track in sequence.tracks {
            for e in track.events {
                switch e.event {
                case .note(let n): notes.append(Heard(channel: n.channel, key: n.key, velocity: n.velocity, seconds: tempo.seconds(atTick: e.tick + track.offset)))
                case .message(let m): messages.append(m)
                default: break
                }
            }
        }
        notes.sort { ($0.seconds, $0.channel, $0.key) < ($1.seconds, $1.channel, $1.key) }
        return (notes, messages)
    }

    /// Records 14:0 with arecordmidi (960 ticks per beat at 120 BPM: 0.52 ms a tick) while
    /// `tactus play ARGS --port 14:0` runs; `interruptAfter` sends SIGINT to tactus then.
    func recordPlay(_ arguments: [String], interruptAfter: Double? = nil) throws -> (status: Int32, stdout: String, stderr: String, recording: String) {
        let dir = NSTemporaryDirectory() + "tactus-port-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let recording = dir + "/rec.mid"
        let recorder = try spawn("/usr/bin/arecordmidi", ["-p", "14:0", "-b", "120", "-t", "960", recording],
                                        stdout: dir + "/arecordmidi.out", stderr: dir + "/arecordmidi.err")
        #expect(SequencerClients.waitForSubscription(of: "arecordmidi", from: "14:0"), "arecordmidi never subscribed to 14:0")
        let binary = ProcessInfo.processInfo.environment["TACTUS_BINARY"] ?? device.cli.tactus
        let player = try spawn(binary, ["play"] + arguments + ["--port", "14:0"], stdout: dir + "/tactus.out", stderr: dir + "/tactus.err")
        if let interruptAfter {
            usleep(UInt32(interruptAfter * 1_000_000))
            kill(player, SIGINT)
        }
        let status = waitForExit(player, seconds: 60, what: "tactus play --port")
        // tactus leaves once the sequencer has delivered everything; arecordmidi stops on
        // SIGINT without reading what is still waiting for it, so it must have read it all.
        #expect(SequencerClients.waitUntilRead(byClientNamed: "arecordmidi"), "arecordmidi never read what it was sent")
        kill(recorder, SIGINT)
        _ = waitForExit(recorder, seconds: 10, what: "arecordmidi")
        let read = { (name: String) in (try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? "" }
        return (status, read("tactus.out"), read("tactus.err") + read("arecordmidi.err"), recording)
    }

    var songs: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Songs")
    }

    /// Every recorded note matches the original (channel, key, velocity), and each onset,
    /// after one common offset (when the recorder started), is within 2 ms of its time.
    func expectSameNotes(_ recorded: [Heard], _ original: [Heard], scale: Double = 1) {
        #expect(recorded.count == original.count, "recorded \(recorded.count) notes, expected \(original.count)")
        guard let r0 = recorded.first, let o0 = original.first else { return }
        let offset = r0.seconds - o0.seconds / scale
        var worst = 0.0
        for (r, o) in zip(recorded, original) {
            #expect(r.channel == o.channel && r.key == o.key && r.velocity == o.velocity, "\(r) vs \(o)")
            worst = max(worst, abs(r.seconds - offset - o.seconds / scale))
        }
        #expect(worst <= 0.002, "an onset is \(worst * 1000) ms off")
        print("onsets within \(String(format: "%.3f", worst * 1000)) ms over \(recorded.count) notes")
    }

    @Test func playToAPortIsRecordedWithTheSameNotesWithin2ms() throws {
        let song = songs.appendingPathComponent("click-track.mid").path
        let run = try recordPlay([song])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("played 0:17"), "\(run.stdout)")
        let original = try heard(song), recorded = try heard(run.recording)
        expectSameNotes(recorded.notes, original.notes)
        // At the end: all sound off and all notes off on the channel used.
        #expect(recorded.messages.contains(.controlChange(channel: 9, controller: 120, value: 0)))
        #expect(recorded.messages.contains(.controlChange(channel: 9, controller: 123, value: 0)))
    }

    @Test func rateFromAndToApply() throws {
        let song = songs.appendingPathComponent("click-track.mid").path
        // Bars 3 and 4 (90 BPM) at twice the speed: 8 beats in 2.67 s.
        let run = try recordPlay([song, "--from", "3:1", "--to", "5:1", "--rate", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        let sequence = try SMFReader.read(contentsOf: song).makeSequence()
        let tempo = sequence.makeTempoMap()
        let start = tempo.seconds(atTick: 3840), end = tempo.seconds(atTick: 7680)
        let original = try heard(song).notes.filter { $0.seconds >= start - 1e-9 && $0.seconds < end - 1e-9 }
            .map { Heard(channel: $0.channel, key: $0.key, velocity: $0.velocity, seconds: $0.seconds - start) }
        try #require(original.count == 8)
        expectSameNotes(try heard(run.recording).notes, original, scale: 2)
    }

    @Test func interruptStopsWithNoteOffsAndAllNotesOff() throws {
        let song = songs.appendingPathComponent("click-track.mid").path
        let run = try recordPlay([song], interruptAfter: 2)
        #expect(run.status == 130, "\(run.stderr)")
        #expect(run.stdout.contains("stopped"), "\(run.stdout)")
        let recorded = try heard(run.recording)
        #expect(recorded.notes.count >= 2 && recorded.notes.count < 10, "\(recorded.notes.count) notes")
        // Every note-on got its note-off (the reader pairs them), none is left unpaired.
        #expect(!recorded.messages.contains { $0.isNoteOn }, "\(recorded.messages)")
        #expect(recorded.messages.contains(.controlChange(channel: 9, controller: 123, value: 0)))
        #expect(recorded.messages.contains(.controlChange(channel: 9, controller: 120, value: 0)))
    }

    @Test func unknownPortListsThePortsAndExits69() throws {
        let r = try device.tactus(["play", songs.appendingPathComponent("click-track.mid").path, "--port", "NoSuchSynth"])
        #expect(r.status == 69)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("no MIDI port 'NoSuchSynth'") && lines[0].contains("14:0 Midi Through"), "\(r.stderr)")
    }
}
