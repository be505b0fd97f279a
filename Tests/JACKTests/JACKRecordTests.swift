import Foundation
import JACK
import MIDIFile
import Recording
import Sequencing
import TactusTestSupport
import Testing

/// `tactus record --driver jack`, fed by `tactus play --driver jack --port-tracks` through JACK
/// MIDI: both ends as a user runs them. Part of the one serialized JACK suite.
extension JACKClientTests {
    /// Waits (at most 60 s) until the journal at `path` holds `noteOns` note-ons; false if it never does.
    static func waitForJournal(_ path: String, noteOns: Int) -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let contents = try? RecordingJournal.read(contentsOf: path),
               contents.events.count(where: { $0.bytes.count == 3 && $0.bytes[0] & 0xF0 == 0x90 && $0.bytes[2] > 0 }) >= noteOns {
                return true
            }
            usleep(20_000)
        }
        return false
    }

    /// Note-on times in seconds of `sequence`'s notes before `seconds`.
    static func noteOnSeconds(_ sequence: MusicSequence, before seconds: Double) -> [Double] {
        let tempo = sequence.makeTempoMap()
        var times: [Double] = []
        for track in sequence.tracks {
            for event in track.events {
                guard case .note = event.event else { continue }
                let time = tempo.seconds(atTick: event.tick)
                if time < seconds { times.append(time) }
            }
        }
        return times.sorted()
    }

    /// Starts `tactus record` into `take` on `server` (its MIDI input is `Tactus:midi_in`) and
    /// waits until it says it is recording; without `connections` it plays nothing (no thru),
    /// with them its audio goes to those ports.
    static func startRecording(_ take: String, server: String, extra: [String] = [], thruTo connections: [String]? = nil,
                               announcing announcement: String = "") throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tactus)
        let audio = connections.map { ["--connect", $0.joined(separator: ",")] } ?? ["--connect", "none", "--no-thru"]
        process.arguments = ["record", "-o", take, "--driver", "jack", "--jack-server", server] + audio + extra
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var seen = Data()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !String(decoding: seen, as: UTF8.self).contains("recording into") {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        let said = String(decoding: seen, as: UTF8.self)
        #expect(said.contains("from JACK port Tactus:midi_in") && (announcement.isEmpty || said.contains(announcement)), "\(said)")
        return (process, err)
    }

    /// The take's input is heard through the LV2 instrument chosen as for play: nothing is
    /// heard before the first note comes in, and the piano is heard after it.
    @Test("tactus record --driver jack --instrument lv2:URI plays what comes in through the plugin",
          .enabled(if: hasLV2Fixtures, "needs lilv and the MDA plugins (Debian packages liblilv-0-0, mda-lv2)"))
    func cliRecordThruPlugin() throws {
        let server = try JACKServer("cli-record-lv2", sampleRate: 48_000, period: 1024)
        defer { server.stop() }  // keeps the server alive to the end of the test
        let probe = try JACKClient(name: "capture", server: server.name, audioInput: true)
        let capture = JACKCapture(frames: 48_000 * 12)
        try probe.start(source: capture, connections: .none)
        defer { probe.stop() }
        let path = NSTemporaryDirectory() + "tactus-jack-take-\(UUID().uuidString).mid"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (recorder, errors) = try Self.startRecording(path, server: server.name, extra: ["--instrument", "lv2:http://drobilla.net/plugins/mda/Piano"],
                                                         thruTo: probe.inputPortNames, announcing: "playing through LV2 instrument MDA Piano")
        // The probe keeps what it hears from the first sound on: nothing yet, as no note came in.
        #expect(capture.count.load(ordering: .acquiring) == 0, "sound before any note came in")
        let played = try Self.run(["play", Self.song, "--instrument", "builtin", "--to", "3:1", "--tail", "0", "--driver", "jack",
                                   "--jack-server", server.name, "--connect", "none", "--port-tracks", "0=Tactus:midi_in"])
        #expect(played.status == 0, "\(played.stderr)")
        // Stopped once everything was sent, as a user would, rather than after a fixed time.
        kill(recorder.processIdentifier, SIGINT)
        recorder.waitUntilExit()
        #expect(recorder.terminationStatus == 0, "\(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
        let captured = min(capture.count.load(ordering: .acquiring), capture.capacity)
        let loudest = (0..<captured).map { max(abs(capture.left[$0]), abs(capture.right[$0])) }.max() ?? 0
        #expect(loudest > 0.01, "the notes played in were not heard (loudest sample \(loudest))")
    }

    @Test("tactus record --driver jack takes what tactus play sends it as JACK MIDI, every note within one period of its time")
    func cliRecordFromJACKMIDI() throws {
        let server = try JACKServer("cli-record", sampleRate: 48_000, period: 1024)
        defer { server.stop() }  // keeps the server alive to the end of the test
        let song = try SMFReader.read(contentsOf: Self.song).makeSequence()
        let songEnd = song.makeTempoMap().seconds(atTick: MusicPosition.barBeatTick(BarBeatTick(bar: 5, beat: 1, tick: 0)).tick(in: song))
        let sent = Self.noteOnSeconds(song, before: songEnd)
        // An xrun in either process shifts every later note by a period (seen in CI: notes 5 on,
        // 21.9 ms late): the server tells every client of one, so a client of the test's own
        // counts them, and a take with one is played again.
        let take = try withoutXruns { () throws -> (([Double], Double), Int) in
            let watcher = try JACKClient(name: "xrun-watch", server: server.name)
            try watcher.start(source: SilentSource(), connections: .none)
            defer { watcher.stop() }
            let path = NSTemporaryDirectory() + "tactus-jack-take-\(UUID().uuidString).mid"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let (recorder, _) = try Self.startRecording(path, server: server.name, extra: ["--duration", "6"])
            let played = try Self.run(["play", Self.song, "--instrument", "builtin", "--to", "5:1", "--tail", "0", "--driver", "jack",
                                       "--jack-server", server.name, "--connect", "none", "--port-tracks", "0=Tactus:midi_in"])
            #expect(played.status == 0, "\(played.stderr)")
            recorder.waitUntilExit()
            #expect(recorder.terminationStatus == 0)
            let sequence = try SMFReader.read(contentsOf: path).makeSequence()
            // The take stores ticks: a time read back is within half a tick of the one recorded.
            let tick = sequence.makeTempoMap().seconds(atTick: 1) - sequence.makeTempoMap().seconds(atTick: 0)
            return ((Self.noteOnSeconds(sequence, before: .infinity), tick), watcher.xrunCount)
        }
        guard let (recorded, tick) = take else { return }
        #expect(recorded.count == sent.count, "recorded \(recorded.count) notes of \(sent.count)")
        guard let firstSent = sent.first, let firstRecorded = recorded.first else { return }
        let period = 1024.0 / 48_000
        var late: [String] = []
        for (index, (want, got)) in zip(sent, recorded).enumerated() where abs((got - firstRecorded) - (want - firstSent)) > period + tick {
            late.append("note \(index): \(((got - firstRecorded) - (want - firstSent)) * 1000) ms")
        }
        #expect(late.isEmpty, "notes off by more than one period (\(period * 1000) ms) and the take's tick (\(tick * 1000) ms): \(late.joined(separator: ", "))")
    }

    @Test("tactus record --driver jack: a server killed mid-take is one line and exit 74, and the take so far is written")
    func cliRecordServerKilled() throws {
        let server = try JACKServer("cli-record-killed", sampleRate: 48_000, period: 512)
        defer { server.stop() }  // keeps the server alive to the end of the test
        let take = NSTemporaryDirectory() + "tactus-jack-killed-\(UUID().uuidString).mid"
        defer { try? FileManager.default.removeItem(atPath: take) }
        let (recorder, err) = try Self.startRecording(take, server: server.name)
        // The player sends the song's notes into the take until the server goes.
        let recorderPorts = server.portNames(matching: "^Tactus")
        let played = try Self.run(["play", Self.song, "--instrument", "builtin", "--driver", "jack", "--jack-server", server.name,
                                   "--connect", "none", "--port-tracks", "0=Tactus:midi_in"]) { _ in
            #expect(server.waitForClient(matching: "^Tactus", besides: recorderPorts), "tactus play never joined the server")
            // The server dies once the take's journal holds more than three notes, however slowly
            // the machine runs (a fixed delay failed under load).
            #expect(Self.waitForJournal(take + ".journal", noteOns: 4), "the take's journal never held 4 notes")
            server.kill()
        }
        #expect(played.status == 74)
        recorder.waitUntilExit()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(recorder.terminationStatus == 74, "\(stderr)")
        let lines = stderr.split(separator: "\n").filter { !$0.hasPrefix("tactus: recording into") }
        #expect(lines.count == 1 && lines[0].contains("the JACK server stopped the client") && lines[0].contains("the take so far is kept"), "\(stderr)")
        let recorded = Self.noteOnSeconds(try SMFReader.read(contentsOf: take).makeSequence(), before: .infinity)
        #expect(recorded.count > 3, "the notes played before the kill are in the take (\(recorded.count))")
        #expect(!FileManager.default.fileExists(atPath: take + ".journal"), "the journal goes once the take is written")
    }

    @Test("tactus record --driver jack: stopped while the server is frozen, the take is written, one line says the server did not stop, exit 74")
    func cliRecordServerFrozen() throws {
        let server = try JACKServer("cli-record-frozen", sampleRate: 48_000, period: 512)
        defer {
            server.thaw()
            server.stop()
        }
        let take = NSTemporaryDirectory() + "tactus-jack-frozen-\(UUID().uuidString).mid"
        defer { try? FileManager.default.removeItem(atPath: take) }
        let (recorder, err) = try Self.startRecording(take, server: server.name)
        server.freeze()
        kill(recorder.processIdentifier, SIGTERM)
        // Only a guard against hanging the suite if the grace regresses: the expectations below
        // then fail on the status.
        let pid = recorder.processIdentifier
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 60)
            if recorder.isRunning { kill(pid, SIGKILL) }
        }
        recorder.waitUntilExit()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(recorder.terminationStatus == 74, "\(stderr)")
        let lines = stderr.split(separator: "\n").filter { !$0.hasPrefix("tactus: recording into") }
        #expect(lines.count == 1 && lines[0].contains("did not stop within 3 s") && lines[0].contains("the take so far is kept"), "\(stderr)")
        #expect((try? SMFReader.read(contentsOf: take)) != nil, "the take is a MIDI file")
        #expect(!FileManager.default.fileExists(atPath: take + ".journal"), "the journal goes once the take is written")
    }
}

/// Writes silence: a client that only listens for the server's notifications (xruns).
final class SilentSource: JACKProcessSource, @unchecked Sendable {
    func process(_ cycle: JACKCycle) {
        cycle.left.update(repeating: 0, count: cycle.frameCount)
        cycle.right.update(repeating: 0, count: cycle.frameCount)
    }
}
