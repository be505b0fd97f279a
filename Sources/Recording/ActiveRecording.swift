#if canImport(Glibc)
import Glibc
#endif
import Foundation
import MIDI
import Playback
import Sequencing
import Locking

/// One running take of a ``RecordingSession``: the audio, the journal, the clock, the inputs,
/// and the control thread that stamps what arrives into the recorder.
final class ActiveRecording: @unchecked Sendable {
    let session: RecordingSession
    let inputs: [any RecordingInput]
    private var playback: PlaybackSession?
    /// The name of the backend the backing plays on, for the message when it does not stop.
    private var backendName = ""
    private let catcher = PlayerCatcher()
    private var journal: RecordingJournalWriter?
    private var playerClock: PlayerRecordingClock?
    private var freeClock: MonotonicRecordingClock?
    private var recorder: MIDIRecorder
    private var startedInputs: [any RecordingInput] = []
    private var held: [MIDIInputEvent] = []
    private var takeNow: Double

    init(session: RecordingSession, inputs: [any RecordingInput]) {
        self.session = session
        self.inputs = inputs
        recorder = MIDIRecorder(sequence: session.sequence, settings: session.options.settings)
        takeNow = session.startSeconds - session.countInSeconds
    }

    // MARK: Starting

    func begin(on backend: (any AudioBackend)?) throws(RecordingSessionError) {
        // The journal first: a take that cannot be kept safe does not start the audio.
        if let path = session.options.journalPath {
            let header = RecordingJournalHeader(sequence: session.sequence, settings: session.options.settings,
                                                backingPath: session.options.backingPath)
            do {
                journal = try RecordingJournalWriter(path: path, header: header)
            } catch {
                throw .journal(error)
            }
        }
        if let backend {
            do {
                try startAudio(on: backend)
            } catch {
                if let journal { removeFile(journal.path) }
                throw error
            }
        }
        startClock()
        let live = session.options.thru ? catcher.player.map { SharedLiveInput($0.liveInput) } : nil
        let deliver: @Sendable (MIDIInputEvent) -> Void = { [session] event in
            // Thru first, straight into the engine's ring: the player hears it at the next block.
            if let live, event.bytes.count <= 3, let status = event.bytes.first, status >= 0x80, status < 0xF0 {
                let message = MIDIMessage(status: status, data1: event.bytes.count > 1 ? event.bytes[1] : 0,
                                          data2: event.bytes.count > 2 ? event.bytes[2] : 0)
                live.send(message, toNode: DefaultGraph.instrumentID)
            }
            session.inbox.withLock { $0.append(event) }
        }
        for input in inputs {
            do {
                try input.startDelivering(to: deliver)
                startedInputs.append(input)
            } catch {
                for started in startedInputs { started.stopDelivering() }
                stopAudio()
                if let journal { removeFile(journal.path) }
                throw .input(error)
            }
        }
    }

    private func startAudio(on backend: any AudioBackend) throws(RecordingSessionError) {
        var options = session.options.playback
        options.tail = .seconds(0)
        options.startsPlaying = true
        let played: PlaybackSession
        do {
            played = try PlaybackSession(sequence: session.playedSequence, options: options, observer: catcher)
        } catch {
            throw .audio(error)
        }
        let shift = session.countInTicks
        let settings = session.options.settings
        if let loop = settings.loop {
            played.setLoop(fromTick: loop.lowerBound + shift, toTick: loop.upperBound + shift, count: .forever)
        } else {
            // The transport runs on past the song's end (the take may), until the take stops.
            let map = session.playedSequence.makeTempoMap()
            let end = session.endSeconds.map { $0 + session.countInSeconds + 1 } ?? 48 * 3600
            played.setEnd(tick: Int64(map.tick(atSeconds: end).rounded(.up)))
        }
        let start = settings.loop?.lowerBound ?? settings.startTick
        if start > 0 { played.locate(toTick: start) }
        do {
            try played.start(on: backend)
        } catch {
            throw .audio(error)
        }
        playback = played
        backendName = backend.name
        session.state.withLock { $0.playback = played }
    }

    /// With audio the device's clock times the take: input is taken once it runs (within a few
    /// periods), so nothing played at the start is stamped before the clock can place it.
    /// Without audio the take starts now, the count-in being silent time before the start.
    private func startClock() {
        if let player = catcher.player {
            var clock = PlayerRecordingClock(sampleRate: player.sampleRate, offsetSeconds: session.countInSeconds)
            let deadline = monotonicNanoseconds() + 1_000_000_000
            repeat {
                clock.update(from: player)
                if clock.songSeconds(atHostTime: monotonicNanoseconds()) != nil { break }
                usleep(2_000)
            } while monotonicNanoseconds() < deadline
            playerClock = clock
        } else {
            let origin = (host: monotonicNanoseconds(), seconds: session.startSeconds - session.countInSeconds)
            freeClock = MonotonicRecordingClock(originHostNanos: origin.host, originSongSeconds: origin.seconds)
            session.state.withLock { $0.monotonicOrigin = origin }
        }
    }

    // MARK: The control thread

    func run() {
        let thread = Thread { [self] in loop() }
        thread.name = "tactus-record"
        thread.start()
    }

    private func clockSeconds(_ host: Int64) -> Double? {
        playerClock?.songSeconds(atHostTime: host) ?? freeClock?.songSeconds(atHostTime: host)
    }

    private func loop() {
        var ending = RecordingEnding.stopped
        var lastFlush = monotonicNanoseconds()
        var announcedStart = false
        var pass = 0
        while !session.stopRequested.load(ordering: .relaxed) {
            absorb(force: false)
            let now = monotonicNanoseconds()
            if let seconds = clockSeconds(now) { takeNow = seconds }
            if let journal, now - lastFlush >= 50_000_000 {
                journal.mark(nanoseconds: Int64((takeNow * 1e9).rounded()))
                do {
                    try journal.flush()
                } catch {
                    ending = .journalFailed(error)
                    self.journal = nil
                    break
                }
                lastFlush = now
            }
            if let end = session.endSeconds, takeNow >= end {
                ending = .reachedEnd
                break
            }
            if case .failure(let error)? = playback?.outcome {
                ending = .audioFailed(error)
                break
            }
            if let failed = startedInputs.first(where: { $0.inputFailure != nil }) {
                ending = .inputFailed(input: failed.inputDescription, reason: failed.inputFailure ?? "")
                break
            }
            let where_ = recorder.position(atSeconds: takeNow)
            if !announcedStart && takeNow >= session.startSeconds {
                announcedStart = true
                session.publish(.recordingStarted)
            }
            if let current = where_?.pass, current > pass {
                pass = current
                session.publish(.passStarted(current))
            }
            session.publishPosition(currentPosition(where_), now: now)
            usleep(5_000)
        }
        finish(ending)
    }

    private func currentPosition(_ where_: (pass: Int, tick: Int64)?) -> RecordingPosition {
        RecordingPosition(seconds: takeNow, countInRemaining: max(0, session.startSeconds - takeNow), pass: where_?.pass,
                          tick: where_?.tick, receivedCount: recorder.receivedCount)
    }

    /// Moves what the inputs delivered into the journal and the take; until the audio clock
    /// runs input waits, and at the stop it goes in regardless.
    private func absorb(force: Bool) {
        if let player = catcher.player { playerClock?.update(from: player) }
        held += session.inbox.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        guard !held.isEmpty, force || clockSeconds(held[0].hostNanos) != nil else { return }
        for event in held {
            let seconds = clockSeconds(event.hostNanos) ?? takeNow
            journal?.append(nanoseconds: Int64((seconds * 1e9).rounded()), bytes: event.bytes)
            let kept = recorder.keptCount
            recorder.record(event.bytes, atSeconds: seconds)
            let place = recorder.position(atSeconds: seconds)
            session.publish(.message(RecordedMessage(bytes: event.bytes, seconds: seconds, pass: place?.pass, tick: place?.tick,
                                                     kept: recorder.keptCount > kept)))
        }
        if let last = held.last?.bytes { session.state.withLock { $0.lastMessage = last } }
        held.removeAll()
    }

    private func finish(_ ending: RecordingEnding) {
        var ending = ending
        for input in startedInputs { input.stopDelivering() }
        absorb(force: true)
        if let seconds = clockSeconds(monotonicNanoseconds()) { takeNow = seconds }
        if let end = session.endSeconds { takeNow = min(takeNow, end) }
        recorder.finish(atSeconds: takeNow)
        if let journal {
            journal.mark(nanoseconds: Int64((takeNow * 1e9).rounded()))
            do {
                try journal.flush()
            } catch {
                if !ending.isFailure { ending = .journalFailed(error) }
            }
        }
        if !stopAudio() && !ending.isFailure {
            // A server or device that no longer answers (a JACK server stopped with SIGSTOP):
            // the take is whole, and the ending says what did not stop.
            let reason = "did not stop within \(Self.stopGraceSeconds) s; it no longer answers"
            ending = .audioFailed(.backend(AudioBackendError(.io, backend: backendName, reason: reason)))
        }
        session.publishPosition(currentPosition(recorder.position(atSeconds: takeNow)), now: .max)
        session.complete(RecordingTake(recorder: recorder, base: session.sequence, ending: ending,
                                       recordedSeconds: max(0, takeNow - session.startSeconds),
                                       journalPath: session.options.journalPath))
    }

    /// How long the backing has to stop once the take ends.
    static let stopGraceSeconds = 3

    /// Stops the backing and lets what the device holds play out (bounded: a device that
    /// failed may never say it drained); false when it did not stop in time.
    @discardableResult
    private func stopAudio() -> Bool {
        guard let playback else { return true }
        playback.stop(drain: true)
        let deadline = monotonicNanoseconds() + Int64(Self.stopGraceSeconds) * 1_000_000_000
        while playback.outcome == nil && monotonicNanoseconds() < deadline { usleep(5_000) }
        return playback.outcome != nil
    }
}

/// The player's live MIDI path (one producer) shared by several input threads, one at a time.
private final class SharedLiveInput: Sendable {
    private let input: LiveMIDIInput
    private let turn = Locked<Void>(())

    init(_ input: LiveMIDIInput) { self.input = input }

    func send(_ message: MIDIMessage, toNode node: UInt32) {
        turn.withLock { _ in _ = input.send(message, toNode: node) }
    }
}

/// Keeps the player a playback session creates, for the recording clock and the thru.
private final class PlayerCatcher: PlaybackSessionObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Player?
    var player: Player? { lock.withLock { stored } }
    func sessionWillStartBackend(_ session: PlaybackSession, player: Player) { lock.withLock { stored = player } }
}
