import Foundation
import MIDI
import MIDIFile
import Recording
import Sequencing
import Testing

/// `tactus record` as a user runs it, on a machine without a sound card: input through a FIFO
/// (a raw MIDI byte stream like /dev/snd/midiC1D0), no audio, and the error paths.
@Suite(.serialized) struct RecordCommandTests {
    let cli = RenderCommandTests()

    /// A directory with a FIFO to play into.
    func workspace() throws -> (dir: String, fifo: String) {
        let dir = NSTemporaryDirectory() + "tactus-record-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let fifo = dir + "/in.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        return (dir, fifo)
    }

    /// Starts `tactus record ARGS`; output goes to files in `dir`.
    func startRecording(_ arguments: [String], dir: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: cli.tactus)
        p.arguments = ["record"] + arguments
        #expect(FileManager.default.createFile(atPath: dir + "/stdout", contents: nil))
        #expect(FileManager.default.createFile(atPath: dir + "/stderr", contents: nil))
        p.standardOutput = FileHandle(forWritingAtPath: dir + "/stdout")
        p.standardError = FileHandle(forWritingAtPath: dir + "/stderr")
        try p.run()
        // Ready once it says where it records from. (Only a file with something in it is read:
        // Foundation leaks a buffer reading an empty one, which AddressSanitizer reports.)
        for _ in 0..<200 {
            let size = (try? FileManager.default.attributesOfItem(atPath: dir + "/stderr")[.size] as? Int) ?? 0
            if size > 0, let err = try? String(contentsOfFile: dir + "/stderr", encoding: .utf8), err.contains("recording into") { break }
            usleep(20_000)
        }
        return p
    }

    /// Writes `bytes` into the FIFO (opened and closed each time, as a sending program would).
    func send(_ bytes: [UInt8], to fifo: String) {
        let fd = open(fifo, O_WRONLY)
        guard fd >= 0 else { Issue.record("cannot open \(fifo)"); return }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }


    func finish(_ p: Process, dir: String) -> (status: Int32, stdout: String, stderr: String) {
        p.waitUntilExit()
        let read = { (name: String) in (try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? "" }
        return (p.terminationStatus, read("stdout"), read("stderr"))
    }

    @Test func aSecondRecordingToTheSameOutputRefusesInOneLineAndTheFirstTakeSurvives() throws {
        let (dir, fifo) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/take.mid"
        let first = try startRecording(["-o", out, "--input-device", fifo, "--no-audio", "--duration", "30"], dir: dir)
        defer { if first.isRunning { first.terminate() } }
        send([0x90, 60, 100], to: fifo)
        #expect(mkfifo(dir + "/other.fifo", 0o600) == 0)
        let second = try cli.run(["record", "-o", out, "--input-device", dir + "/other.fifo", "--no-audio", "--duration", "1"])
        #expect(second.status != 0)
        let lines = second.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("\(out).journal: another recording is writing this journal"), "\(second.stderr)")
        send([0x80, 60, 0], to: fifo)
        first.interrupt()  // Ctrl-C ends a take and writes it
        let r = finish(first, dir: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try notes(out).map { $0[2] } == [60], "the first take holds its note")
    }

    /// (track, tick, key, duration) of every note.
    func notes(_ path: String) throws -> [[Int64]] {
        let seq = try SMFReader.read(contentsOf: path).makeSequence()
        return seq.tracks.enumerated().flatMap { i, track in
            track.events.compactMap { e -> [Int64]? in
                guard case .note(let n) = e.event else { return nil }
                return [Int64(i), e.tick, Int64(n.key), n.duration]
            }
        }
    }

    @Test(.enabled(if: InstalledLibrary.alsa, "needs libasound.so.2 (Debian package libasound2)"))
    func withoutTheSequencerRecordSaysSoInOneLineAndExits69() throws {
        guard !FileManager.default.fileExists(atPath: "/dev/snd/seq") else { return }
        let (dir, fifo) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for extra in [[], ["--port", "14:0"], ["--port", "Midi Through", "--input-device", fifo]] {
            let r = try cli.run(["record", "-o", dir + "/out.mid", "--no-audio"] + extra)
            #expect(r.status == 69, "\(extra): \(r.stderr)")
            #expect(r.stderr == "tactus: no ALSA sequencer: /dev/snd/seq does not exist (load the kernel module: sudo modprobe snd-seq)\n", "\(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["in.fifo"], "nothing created")
    }

    @Test func anUnreadableInputDeviceIsNamedWithTheReason() throws {
        let (dir, _) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cases = [(dir + "/nope", "No such file or directory"), (dir, "is a directory")]
        for (path, reason) in cases {
            let r = try cli.run(["record", "-o", dir + "/out.mid", "--input-device", path, "--no-audio"])
            #expect(r.status == 69)
            #expect(r.stderr == "tactus: MIDI input device \(path): \(reason)\n", "\(r.stderr)")
        }
    }

    @Test func badOptionsAreUsageErrorsInOneLine() throws {
        let (dir, fifo) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = ["-o", dir + "/out.mid", "--input-device", fifo, "--no-audio"]
        let cases: [[String]] = [
            ["--input-device", fifo], base + ["--overdub", "--replace"], base + ["--replace"], base + ["--quantize", "1/7"],
            base + ["--timesig", "4/5"], base + ["--tempo", "0"], base + ["--punch-in", "3:1", "--punch-out", "2:1"],
            base + ["--loop-record", "3:1-2:1"], base + ["--duration=-4"], base + ["--count-in", "40"], base + ["--track", "1"],
            base + ["--from", "x"],
        ]
        for arguments in cases {
            let r = try cli.run(["record"] + arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(arguments): \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["in.fifo"])
    }

    @Test("record -o /dev/null keeps its journal in the temporary directory, never beside /dev/null, and /dev/null stays a device")
    func recordingToDevNullKeepsTheJournalElsewhere() throws {
        let (dir, fifo) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let p = try startRecording(["-o", "/dev/null", "--input-device", fifo, "--no-audio", "--duration", "1"], dir: dir)
        // Named by the process and random characters, so no other process can plant a file there.
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        let prefix = "tactus-record-\(p.processIdentifier)-"
        let journals = try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix(prefix) && $0.hasSuffix(".mid.journal") }
        #expect(journals.count == 1, "the journal is in the temporary directory while recording: \(journals)")
        #expect(journals.first.map { $0.count - prefix.count - ".mid.journal".count } == 12, "12 random characters")
        let journal = temporary + "/" + (journals.first ?? prefix + ".mid.journal")
        #expect(!FileManager.default.fileExists(atPath: "/dev/null.journal"))
        send([0x90, 60, 100, 0x80, 60, 0], to: fifo)
        let r = finish(p, dir: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: journal), "the journal goes once the take is written")
        var info = stat()
        #expect(stat("/dev/null", &info) == 0 && (info.st_mode & S_IFMT) == S_IFCHR, "/dev/null is still a character device")
    }

    @Test func anOutputThatCannotBeCreatedExits73() throws {
        let (dir, fifo) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.run(["record", "-o", dir + "/no/such/dir/out.mid", "--input-device", fifo, "--no-audio"])
        #expect(r.status == 73)
        #expect(r.stderr.hasPrefix("tactus: \(dir)/no/such/dir/out.mid.journal: cannot create (No such file or directory)"), "\(r.stderr)")
    }

    @Test func aFIFOIsRecordedUntilTheDurationWithTheBackingTracks() throws {
        let (dir, fifo) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A backing at 480 ticks per quarter, 120 BPM: two notes on track 1.
        var backing = MusicSequence(timeBase: .ticksPerQuarter(480))
        backing.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
        var bass = MusicTrack()
        bass.name = "Bass"
        bass.addNote(at: 0, channel: 1, key: 36, velocity: 90, duration: 400)
        bass.addNote(at: 3840, channel: 1, key: 38, velocity: 90, duration: 400)
        backing.tracks = [bass]
        let song = dir + "/backing.mid"
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: backing), to: song)
        let out = dir + "/take.mid"
        let p = try startRecording(["-o", out, "--input-device", fifo, "--no-audio", "--backing", song, "--duration", "2.5",
                                    "--quantize", "1/2"], dir: dir)
        send([0x90, 60, 100], to: fifo)
        usleep(300_000)
        send([0x80, 60, 0], to: fifo)
        usleep(700_000)
        // Running status, a clock byte in the middle, and a sysex.
        send([0x90, 0xF8, 64, 90, 0xF0, 0x7D, 0x01, 0xF7], to: fifo)
        usleep(300_000)
        send([0x80, 64, 0], to: fifo)
        let r = finish(p, dir: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("\(out): 3 events (2 notes) in 1 track, 0:02.5"), "\(r.stdout)")
        let file = try SMFReader.read(contentsOf: out)
        #expect(file.format == 1)
        let seq = file.makeSequence()
        #expect(seq.tracks.map(\.name) == ["Bass", "Recorded"])
        #expect(seq.tracks[0] == file.makeSequence().tracks[0])
        let recorded = try notes(out).filter { $0[0] == 1 }
        // Half-note quantize: the notes, sent about 0 s and 1 s in, land on beats 1 and 3. A
        // FIFO is stamped as its reader reads, so a reader thread starved for a quarter note
        // (under ThreadSanitizer on a loaded machine) must not move them.
        #expect(recorded.map { [$0[1], $0[2]] } == [[0, 60], [960, 64]], "\(recorded)")
        #expect(seq.tracks[1].events.contains { $0.event == .sysex(SysexEvent(status: 0xF0, payload: [0x7D, 0x01, 0xF7])) })
        #expect(!FileManager.default.fileExists(atPath: out + ".journal"), "the journal is removed once the file is written")
    }

    @Test func loopRecordingWritesOneTrackPerPass() throws {
        let (dir, fifo) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/loop.mid"
        // 120 BPM in 4/4: bar 1 lasts 2 s, and --loop-record repeats it; a note on beat 2 of
        // each of three passes (quantized to quarters, far more than the scheduling slack).
        let p = try startRecording(["-o", out, "--input-device", fifo, "--no-audio", "--loop-record", "1:1-2:1",
                                    "--duration", "4.8", "--quantize", "1/4"], dir: dir)
        let start = Date()
        for (pass, key) in [(0, UInt8(60)), (1, 62), (2, 64)] {
            let due = Double(pass) * 2 + 0.5
            let wait = due - Date().timeIntervalSince(start)
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            send([0x90, key, 100], to: fifo)
            usleep(100_000)
            send([0x80, key, 0], to: fifo)
        }
        let r = finish(p, dir: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("3 events (3 notes) in 3 tracks"), "\(r.stdout)")
        let seq = try SMFReader.read(contentsOf: out).makeSequence()
        #expect(seq.tracks.map(\.name) == ["Take 1", "Take 2", "Take 3"])
        #expect(try notes(out).map { [$0[1], $0[2]] } == [[960, 60], [960, 62], [960, 64]])
    }

    @Test func sigtermWritesTheFile() throws {
        let (dir, fifo) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/take.mid"
        let p = try startRecording(["-o", out, "--input-device", fifo, "--no-audio", "--tempo", "90", "--timesig", "3/4"], dir: dir)
        let sent = ContinuousClock.now
        send([0x93, 50, 70], to: fifo)
        // Stopped once the note is in the take (the journal holds it), however slowly the
        // recorder's reader runs, and has been held for 200 ms (the length checked below).
        #expect(waitForJournal(out + ".journal", messages: 1), "the note never reached the journal")
        let heldFor = ContinuousClock.now - sent
        if heldFor < .milliseconds(200) { usleep(UInt32((0.2 - Double(heldFor.components.attoseconds) * 1e-18) * 1_000_000)) }
        p.terminate()
        let r = finish(p, dir: dir)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("1 event (1 note)"), "\(r.stdout)")
        let seq = try SMFReader.read(contentsOf: out).makeSequence()
        #expect(abs((seq.tempoChanges.first?.bpm ?? 0) - 90) < 0.001)
        #expect(seq.timeSignatures.first?.signature == TimeSignature(3, 4))
        // The note still held at the stop ends there.
        let held = try notes(out)
        #expect(held.count == 1 && held[0][2] == 50 && held[0][3] > 100, "\(held)")
    }

    @Test func afterKill9RecoverRebuildsTheTakeFromTheJournal() throws {
        let (dir, fifo) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/take.mid"
        let p = try startRecording(["-o", out, "--input-device", fifo, "--no-audio", "--punch-in", "1:1"], dir: dir)
        var keys: [UInt8] = []
        for i in 0..<10 {
            let key = UInt8(48 + i)
            keys.append(key)
            send([0x90, key, 100], to: fifo)
            usleep(30_000)
            send([0x80, key, 0], to: fifo)
            usleep(20_000)
        }
        // Killed without warning once the journal holds all 20 messages (it is flushed
        // within 100 ms of each; waiting on a fixed delay failed under load).
        #expect(waitForJournal(out + ".journal", messages: 20), "the journal never held the 20 messages")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: out))
        let journal = out + ".journal"
        #expect(FileManager.default.fileExists(atPath: journal))
        let r = try cli.run(["record", "--recover", journal, "-o", dir + "/recovered.mid"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("recovered 10 events (10 notes)"), "\(r.stdout)")
        let recovered = try notes(dir + "/recovered.mid")
        #expect(recovered.map { UInt8($0[2]) } == keys)
        // About 50 ms apart, each note about 30 ms long: at 120 BPM and 960 per quarter, 96 and 58 ticks.
        for (a, b) in zip(recovered, recovered.dropFirst()) { #expect((60...160).contains(b[1] - a[1]), "\(recovered)") }
        // A torn tail (a record half written when the power went) loses only that record.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: journal)))
        bytes += [0xE1, 1, 2, 3]
        try Data(bytes).write(to: URL(fileURLWithPath: journal))
        let torn = try cli.run(["record", "--recover", journal, "-o", dir + "/torn.mid"])
        #expect(torn.status == 0 && torn.stdout.contains("torn last record of 4 bytes"), "\(torn.stdout)")
        #expect(try notes(dir + "/torn.mid") == recovered)
    }

    @Test func recoverRefusesMissingAndForeignJournals() throws {
        let (dir, _) = try workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try cli.run(["record", "--recover", dir + "/none.journal", "-o", dir + "/x.mid"]).status == 66)
        try Data("MThd".utf8).write(to: URL(fileURLWithPath: dir + "/bad.journal"))
        let r = try cli.run(["record", "--recover", dir + "/bad.journal", "-o", dir + "/x.mid"])
        #expect(r.status == 65 && r.stderr == "tactus: \(dir)/bad.journal: not a Tactus journal\n", "\(r.stderr)")
    }

    @Test(.enabled(if: InstalledLibrary.alsa, "needs libasound.so.2 (Debian package libasound2)"))
    func portTracksOptionsAreCheckedAndNeedTheSequencer() throws {
        let (dir, midi) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for options in [["--port-tracks", "1"], ["--port-tracks", "9=14:0"], ["--port-tracks", "0=14:0", "--port", "14:0"]] {
            let r = try cli.run(["play", "--instrument", "builtin", midi, "--device", "file:'\(dir)/x.raw',raw"] + options)
            #expect(r.status == 64, "\(options): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(options): \(r.stderr)")
        }
        guard !FileManager.default.fileExists(atPath: "/dev/snd/seq") else { return }
        let r = try cli.run(["play", "--instrument", "builtin", midi, "--device", "file:'\(dir)/x.raw',raw", "--port-tracks", "0=14:0"])
        #expect(r.status == 69)
        #expect(r.stderr == "tactus: no ALSA sequencer: /dev/snd/seq does not exist (load the kernel module: sudo modprobe snd-seq)\n", "\(r.stderr)")
    }
}

/// Waits (at most 60 s) until the take's journal at `path` holds `count` messages, as a user's
/// program would see its notes reach the disk; false if it never does.
func waitForJournal(_ path: String, messages count: Int) -> Bool {
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline {
        if let contents = try? RecordingJournal.read(contentsOf: path), contents.events.count >= count { return true }
        usleep(10_000)
    }
    return false
}
