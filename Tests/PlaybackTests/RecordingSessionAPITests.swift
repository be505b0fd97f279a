import Foundation
import MIDI
import MIDIFile
import Playback
import Recording
import Sequencing
import Synchronization
import Testing

/// The recording session as a program uses it: in-process input, with and without audio,
/// count-in, loop takes, the journal, the events stream and every way a take ends.
@Suite struct RecordingSessionAPITests {
    /// An empty 4/4 song at 240 BPM, 480 ticks per quarter: a bar lasts one second, and a
    /// second is 1,920 ticks.
    static func song() -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 240)), at: 0)
        sequence.tempoTrack.add(.meta(.timeSignature(.common)), at: 0)
        return sequence
    }

    /// (tick, key, duration) of every note of `track`.
    static func notes(_ track: MusicTrack) -> [[Int64]] {
        track.events.compactMap { e -> [Int64]? in
            guard case .note(let n) = e.event else { return nil }
            return [e.tick, Int64(n.key), n.duration]
        }
    }

    static func temporaryDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "tactus-recording-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func withoutAudioMessagesLandAtTheirTicksTheCountInIsDroppedAndTheTakeEndsAtItsDuration() async throws {
        let session = try RecordingSession(sequence: Self.song(), options: .init(countInBars: 1, durationSeconds: 1))
        #expect(session.countInSeconds == 1)
        let events = session.events(positionInterval: .milliseconds(50))
        let keyboard = InProcessMIDIInput(name: "test keyboard")
        #expect(!keyboard.send(.noteOn(channel: 0, key: 59, velocity: 90)), "nothing is taken before the start")
        try session.start(inputs: [keyboard], on: nil)
        let at = { (seconds: Double) in session.hostTime(atTakeSeconds: seconds)! }
        keyboard.send(.noteOn(channel: 0, key: 59, velocity: 90), atHostTime: at(-0.5))
        keyboard.send(.noteOff(channel: 0, key: 59), atHostTime: at(-0.25))
        keyboard.send(.noteOn(channel: 0, key: 60, velocity: 100), atHostTime: at(0.25))
        keyboard.send(.noteOff(channel: 0, key: 60), atHostTime: at(0.5))
        keyboard.send(.noteOn(channel: 2, key: 64, velocity: 80), atHostTime: at(0.75))
        keyboard.send(.noteOff(channel: 2, key: 64), atHostTime: at(0.875))
        let take = await session.finished()
        #expect(take.ending == .reachedEnd)
        #expect(take.recordedSeconds == 1)
        #expect(take.tracks.count == 1)
        #expect(Self.notes(take.tracks[0]) == [[480, 60, 480], [1440, 64, 240]])
        #expect(take.merged().tracks.count == 1, "a new track in the empty song")
        #expect(!keyboard.send(.noteOn(channel: 0, key: 60, velocity: 1)), "nothing is taken after the end")

        var messages: [RecordedMessage] = []
        var positions: [RecordingPosition] = []
        var startedBeforeEnd = false
        var last: RecordingEvent?
        for await event in events {
            switch event {
            case .message(let m): messages.append(m)
            case .position(let p): positions.append(p)
            case .recordingStarted: startedBeforeEnd = true
            default: break
            }
            last = event
        }
        #expect(last == .finished(.reachedEnd))
        #expect(startedBeforeEnd)
        #expect(messages.map(\.tick) == [nil, nil, 480, 960, 1440, 1680], "every message once, in order, with its tick")
        #expect(messages.map(\.kept) == [false, false, true, true, true, true])
        #expect(messages[2].bytes == [0x90, 60, 100] && messages[2].seconds == 0.25)
        #expect(positions.count >= 5, "about 20 positions in 2 s at 50 ms")
        #expect(positions.first!.countInRemaining > 0.5 && positions.last!.countInRemaining == 0)
        #expect(positions.map(\.seconds) == positions.map(\.seconds).sorted())
    }

    @Test func loopRecordingMakesATrackPerPassAndAnnouncesEachPass() async throws {
        var settings = RecordingSettings()
        settings.loop = 0..<1920
        let session = try RecordingSession(sequence: Self.song(), options: .init(settings: settings, durationSeconds: 2.5))
        let events = session.events()
        let keyboard = InProcessMIDIInput()
        try session.start(inputs: [keyboard], on: nil)
        for (pass, key) in [(0.0, 60), (1.0, 62), (2.0, 64)] {
            keyboard.send(.noteOn(channel: 0, key: UInt8(key), velocity: 100), atHostTime: session.hostTime(atTakeSeconds: pass + 0.25)!)
            keyboard.send(.noteOff(channel: 0, key: UInt8(key)), atHostTime: session.hostTime(atTakeSeconds: pass + 0.5)!)
        }
        let take = await session.finished()
        #expect(take.ending == .reachedEnd)
        #expect(take.recorder.takes.map(\.pass) == [0, 1, 2])
        #expect(take.tracks.map(Self.notes) == [[[480, 60, 480]], [[480, 62, 480]], [[480, 64, 480]]])
        var passes: [Int] = []
        for await event in events { if case .passStarted(let n) = event { passes.append(n) } }
        #expect(passes == [1, 2])
    }

    @Test func withAudioTheBackingPlaysTheTakeFollowsTheDeviceClockAndTheJournalGoesWhenWritten() async throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var backing = Self.song()
        var track = MusicTrack()
        for i in 0..<16 { track.addNote(at: Int64(i * 480), channel: 1, key: 48, velocity: 100, duration: 240) }
        backing.tracks = [track]
        let journal = dir + "/take.mid.journal"
        let options = RecordingSession.Options(countInBars: 1, metronome: true, journalPath: journal,
                                               playback: .init(instrument: .builtIn, tailSeconds: 0, latencySeconds: 0.02))
        let session = try RecordingSession(sequence: backing, options: options)
        #expect(session.playedSequence.tracks.count == 2, "the backing and the clicks")
        let events = session.events()
        let keyboard = InProcessMIDIInput()
        try session.start(inputs: [keyboard], on: NullBackend(realTime: true, periodFrames: 256, latencyFrames: 1024))
        #expect(FileManager.default.fileExists(atPath: journal))
        #expect(session.hostTime(atTakeSeconds: 0) == nil, "the device's clock maps host times one way only")
        for await event in events where event == .recordingStarted { break }
        try await Task.sleep(for: .milliseconds(250))
        let sentAt = session.position!.seconds
        keyboard.send(.noteOn(channel: 0, key: 72, velocity: 100))
        try await Task.sleep(for: .milliseconds(150))
        let releasedAt = session.position!.seconds
        keyboard.send(.noteOff(channel: 0, key: 72))
        try await Task.sleep(for: .milliseconds(100))
        #expect(session.playback!.position!.tick > 1920, "the backing plays past the count-in")
        session.stop()
        let take = await session.finished()
        #expect(take.ending == .stopped)
        let notes = Self.notes(take.tracks[0])
        #expect(notes.count == 1 && notes[0][1] == 72)
        // The position seen before sending trails the clock by at most a pass of the loop.
        let expected = Int64(sentAt * 1920)
        #expect(abs(notes[0][0] - expected) < 200, "played at \(notes[0][0]), sent near tick \(expected)")
        let held = Int64((releasedAt - sentAt) * 1920)
        #expect(abs(notes[0][2] - held) < 100, "held \(notes[0][2]) ticks, released near \(held) ticks after the start")

        let recovered = try RecordingSession.recover(journal: journal, backing: backing)
        #expect(recovered.take.tracks.map(Self.notes) == take.tracks.map(Self.notes), "the journal holds the same take")
        try take.write(to: dir + "/take.mid")
        #expect(!FileManager.default.fileExists(atPath: journal), "the journal goes once the take is written")
        let written = try SMFReader.read(contentsOf: dir + "/take.mid").makeSequence()
        #expect(written.tracks.count == 2, "the backing's track and the take; no clicks")
        #expect(Self.notes(written.tracks[1]) == notes)
    }

    @Test func aDeviceThatFailsEndsTheTakeWithTheErrorAndKeepsWhatWasPlayed() async throws {
        let session = try RecordingSession(sequence: Self.song())
        let keyboard = InProcessMIDIInput()
        try session.start(inputs: [keyboard], on: NullBackend(realTime: true, periodFrames: 256, failAtFrame: 22_050))
        keyboard.send(.noteOn(channel: 0, key: 60, velocity: 100))
        let take = await session.finished()
        #expect(take.ending == .audioFailed(.backend(AudioBackendError(.io, backend: "null", reason: "write failed (injected at frame 22050)"))))
        #expect(take.ending.isFailure)
        #expect(Self.notes(take.tracks[0]).map { $0[1] } == [60], "the held note is in the take, ended at the failure")
    }

    /// An input whose device goes away after a while.
    final class FailingInput: RecordingInput, @unchecked Sendable {
        let failed = Atomic<Bool>(false)
        var inputDescription: String { "flaky device" }
        func startDelivering(to deliver: @escaping @Sendable (MIDIInputEvent) -> Void) throws(RecordingInputError) {
            deliver(MIDIInputEvent(hostNanos: monotonicNanoseconds(), bytes: [0x90, 61, 100]))
            failed.store(true, ordering: .relaxed)
        }
        func stopDelivering() {}
        var inputFailure: String? { failed.load(ordering: .relaxed) ? "read failed (No such device)" : nil }
    }

    @Test func anInputThatFailsEndsTheTakeNamingIt() async throws {
        let session = try RecordingSession(sequence: Self.song())
        try session.start(inputs: [FailingInput()], on: nil)
        let take = await session.finished()
        #expect(take.ending == .inputFailed(input: "flaky device", reason: "read failed (No such device)"))
        #expect(Self.notes(take.tracks[0]).map { $0[1] } == [61])
    }

    /// An input that cannot start.
    final class RefusingInput: RecordingInput, @unchecked Sendable {
        var inputDescription: String { "busy port" }
        func startDelivering(to deliver: @escaping @Sendable (MIDIInputEvent) -> Void) throws(RecordingInputError) {
            throw RecordingInputError(input: "busy port", reason: "Device or resource busy")
        }
        func stopDelivering() {}
        var inputFailure: String? { nil }
    }

    @Test func startFailuresAreTypedAndLeaveNothingBehind() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let badJournal = try RecordingSession(sequence: Self.song(), options: .init(journalPath: dir + "/no/such/dir/take.journal"))
        #expect(throws: RecordingSessionError.journal(RecordingJournalError(path: dir + "/no/such/dir/take.journal",
                                                                             reason: "cannot create (No such file or directory)"))) {
            try badJournal.start(inputs: [InProcessMIDIInput()], on: nil)
        }
        let journal = dir + "/take.journal"
        let refused = try RecordingSession(sequence: Self.song(), options: .init(journalPath: journal))
        let keyboard = InProcessMIDIInput()
        #expect(throws: RecordingSessionError.input(RecordingInputError(input: "busy port", reason: "Device or resource busy"))) {
            try refused.start(inputs: [keyboard, RefusingInput()], on: nil)
        }
        #expect(!keyboard.send([0x90, 60, 1]), "the input that did start was stopped again")
        #expect(!FileManager.default.fileExists(atPath: journal), "no journal is left by a start that failed")
        // Started once, a second start is refused.
        let once = try RecordingSession(sequence: Self.song(), options: .init(durationSeconds: 0.1))
        try once.start(inputs: [], on: nil)
        #expect(throws: RecordingSessionError.alreadyStarted) { try once.start(inputs: [], on: nil) }
        #expect(once.waitUntilFinished().ending == .reachedEnd)
    }

    @Test func optionsThatMakeNoTakeAreRefusedWithTheReason() {
        let song = Self.song()
        func reason(_ settings: RecordingSettings = RecordingSettings(), countIn: Int = 0, duration: Double? = nil,
                    endsWithBacking: Bool = false) -> String? {
            do {
                _ = try RecordingSession(sequence: song, options: .init(settings: settings, countInBars: countIn, durationSeconds: duration,
                                                                         endsWithBacking: endsWithBacking))
                return nil
            } catch {
                if case .invalidOptions(let text) = error { return text }
                return "\(error)"
            }
        }
        #expect(reason(countIn: 17) == "count-in 17 is outside 0...16 bars")
        #expect(reason(RecordingSettings(punchIn: 960, punchOut: 480)) == "the punch-out is not after the punch-in")
        #expect(reason(RecordingSettings(loop: 960..<960)) == "the loop is empty")
        #expect(reason(RecordingSettings(targetTrack: 0)) == "track 0 does not exist (the sequence has 0)")
        #expect(reason(RecordingSettings(mode: .replace)) == "replace needs a target track (the track whose events the take replaces)")
        #expect(reason(duration: 0) == "the duration 0.0 is not a positive number of seconds")
        #expect(reason(endsWithBacking: true) == "the backing ends before the start")
        #expect(reason() == nil)
        #expect(throws: RecordingSessionError.invalidOptions("tempo 0.0 is outside 10...400 BPM")) { try RecordingSession(tempo: 0) }
    }
}
