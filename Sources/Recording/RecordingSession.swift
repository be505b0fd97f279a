#if canImport(Glibc)
import Glibc
#endif
import Foundation
import MIDI
import MIDIFile
import Playback
import Sequencing
import Locking
import Synchronization

/// Records live MIDI into tracks of a sequence, with a backing, count-in, metronome, punch,
/// loop takes and a crash-proof journal: the Tactus way to record from code.
///
/// ```swift
/// let keyboard = InProcessMIDIInput()
/// let session = try RecordingSession(sequence: backing, options: .init(countInBars: 1, metronome: true))
/// try session.start(inputs: [keyboard], on: ALSAPCMBackend())
/// // ... keyboard.send(.noteOn(channel: 0, key: 60, velocity: 100)) ...
/// session.stop()
/// let take = await session.finished()
/// try take.write(to: "take.mid")
/// ```
///
/// With an audio backend, the session plays the backing (delayed by the count-in, with the
/// metronome's clicks) through a `PlaybackSession` and plays what comes in through the
/// instrument (thru); the take is timed by the audio device's clock, so it stays in step with
/// what was heard. Without one, the monotonic clock times the take and nothing sounds.
///
/// A control thread of the session's own takes what the inputs deliver, stamps it into the
/// take through the clock, appends it to the journal (on disk within 100 ms, so a crash loses
/// nothing: ``recover(journal:backing:)``), and ends the take: on ``stop()``, at the duration
/// or the backing's end, or when the device, an input or the journal fails. Every method may be
/// called from any thread.
public final class RecordingSession: @unchecked Sendable {
    /// How a session records.
    public struct Options {
        /// Where the take goes and which span counts: overdub or replace, punch, loop, quantize.
        public var settings: RecordingSettings
        /// Bars of clicks before recording starts (0...16).
        public var countInBars: Int
        /// Whether the metronome clicks on every beat while recording (the count-in always clicks).
        public var metronome: Bool
        /// Whether what comes in is played through the instrument.
        public var thru: Bool
        /// Seconds of recording after which the take ends by itself (nil: until stopped).
        public var durationSeconds: Double?
        /// Whether the take ends at the end of the backing (ignored with loop recording).
        public var endsWithBacking: Bool
        /// Where the journal goes (nil: no journal). It is created when recording starts and
        /// removed by ``RecordingTake/write(to:)``.
        public var journalPath: String?
        /// The backing's file, named in the journal so a recovery can rebuild the whole song.
        public var backingPath: String?
        /// How the backing plays: the instrument, sample rate, latency and log. The tail is 0:
        /// the take's end is the end.
        public var playback: PlaybackSession.Options

        /// Options; by default a new track, overdub, no count-in or clicks, thru on, no journal,
        /// recording until stopped, through the built-in synthesizer with 20 ms of latency.
        public init(settings: RecordingSettings = RecordingSettings(), countInBars: Int = 0, metronome: Bool = false,
                    thru: Bool = true, durationSeconds: Double? = nil, endsWithBacking: Bool = false,
                    journalPath: String? = nil, backingPath: String? = nil,
                    playback: PlaybackSession.Options = PlaybackSession.Options(instrument: .builtIn, latencySeconds: 0.02)) {
            self.settings = settings
            self.countInBars = countInBars
            self.metronome = metronome
            self.thru = thru
            self.durationSeconds = durationSeconds
            self.endsWithBacking = endsWithBacking
            self.journalPath = journalPath
            self.backingPath = backingPath
            self.playback = playback
        }
    }

    /// The sequence recorded over.
    public let sequence: MusicSequence
    /// The options.
    public let options: Options
    /// What the audio plays: the sequence delayed by the count-in, with the clicks.
    public let playedSequence: MusicSequence
    /// Length of the count-in in ticks of ``playedSequence``.
    public let countInTicks: Int64
    /// Seconds of the count-in.
    public let countInSeconds: Double
    /// Take time at which recording starts (the settings' start tick).
    public let startSeconds: Double
    /// Take time at which the take ends by itself, if it does.
    public let endSeconds: Double?

    let tempoMap: TempoMap
    let state = Locked<SharedState>(SharedState())
    let inbox = Locked<[MIDIInputEvent]>([])
    let stopRequested = Atomic<Bool>(false)

    struct SharedState {
        var started = false
        var position: RecordingPosition?
        var lastMessage: [UInt8] = []
        var take: RecordingTake?
        var waiters: [CheckedContinuation<RecordingTake, Never>] = []
        var blockedWaiters: [DispatchSemaphore] = []
        var subscribers: [Int: Subscriber] = [:]
        var nextSubscriber = 0
        var playback: PlaybackSession?
        /// Host time and take time of the monotonic clock's origin (nil with audio).
        var monotonicOrigin: (host: Int64, seconds: Double)?
    }

    struct Subscriber {
        var continuation: AsyncStream<RecordingEvent>.Continuation
        var intervalNanos: Int64?
        var lastPositionNanos: Int64 = 0
    }

    /// A session that records over `sequence`.
    /// - Throws: ``RecordingSessionError/invalidOptions(_:)`` naming what does not make a take.
    public init(sequence: MusicSequence, options: Options = Options()) throws(RecordingSessionError) {
        let settings = options.settings
        guard (0...16).contains(options.countInBars) else { throw .invalidOptions("count-in \(options.countInBars) is outside 0...16 bars") }
        if let a = settings.punchIn, let b = settings.punchOut, b <= a { throw .invalidOptions("the punch-out is not after the punch-in") }
        if let loop = settings.loop {
            guard loop.upperBound > loop.lowerBound, loop.lowerBound >= 0 else { throw .invalidOptions("the loop is empty") }
            if settings.targetTrack != nil { throw .invalidOptions("loop takes go to tracks of their own; leave out the target track") }
        }
        if let target = settings.targetTrack, !sequence.tracks.indices.contains(target) {
            throw .invalidOptions("track \(target) does not exist (the sequence has \(sequence.tracks.count))")
        }
        if settings.mode == .replace && settings.targetTrack == nil {
            throw .invalidOptions("replace needs a target track (the track whose events the take replaces)")
        }
        if let duration = options.durationSeconds, !(duration.isFinite && duration > 0) {
            throw .invalidOptions("the duration \(duration) is not a positive number of seconds")
        }
        guard settings.startTick >= 0 else { throw .invalidOptions("the start is before the song") }
        self.sequence = sequence
        self.options = options
        let map = sequence.makeTempoMap()
        tempoMap = map
        let start = map.seconds(atTick: settings.loop?.lowerBound ?? settings.startTick)
        startSeconds = start
        var end = options.durationSeconds.map { start + $0 }
        if options.endsWithBacking, settings.loop == nil {
            let songEnd = map.seconds(atTick: sequence.length)
            guard songEnd > start else { throw .invalidOptions("the backing ends before the start") }
            end = min(end ?? songEnd, songEnd)
        }
        endSeconds = end
        let count = sequence.countInTicks(bars: options.countInBars)
        countInTicks = count
        (playedSequence, countInSeconds) = Self.played(sequence, options: options, countInTicks: count, endSeconds: end)
    }

    /// A session over an empty song with `tempo` and `timeSignature` (no backing).
    public convenience init(tempo: Double = 120, timeSignature: TimeSignature = .common, ticksPerQuarter: Int = 960,
                            options: Options = Options()) throws(RecordingSessionError) {
        guard tempo.isFinite, (10...400).contains(tempo) else { throw .invalidOptions("tempo \(tempo) is outside 10...400 BPM") }
        var song = MusicSequence(timeBase: .ticksPerQuarter(ticksPerQuarter))
        song.tempoTrack.add(.meta(.tempo(bpm: tempo)), at: 0)
        song.tempoTrack.add(.meta(.timeSignature(timeSignature)), at: 0)
        try self.init(sequence: song, options: options)
    }

    /// The backing delayed by the count-in, with clicks from the start through the count-in,
    /// and on through the take with the metronome.
    private static func played(_ base: MusicSequence, options: Options, countInTicks: Int64,
                               endSeconds: Double?) -> (MusicSequence, Double) {
        var played = base.delayed(byTicks: countInTicks)
        let meter = played.makeMeterMap()
        let tempoMap = played.makeTempoMap()
        let countInSeconds = tempoMap.seconds(atTick: countInTicks)
        let start = options.settings.loop?.lowerBound ?? options.settings.startTick
        var clicksEnd = start + countInTicks
        if options.metronome {
            if let loop = options.settings.loop {
                clicksEnd = loop.upperBound + countInTicks
            } else if let endSeconds {
                clicksEnd = Int64(tempoMap.tick(atSeconds: endSeconds + countInSeconds).rounded(.up))
            } else {
                // Until stopped: three hours of clicks is a handful of kilobytes.
                clicksEnd = Int64(tempoMap.tick(atSeconds: tempoMap.seconds(atTick: start + countInTicks) + 3 * 3600).rounded(.up))
            }
        }
        if clicksEnd > start {
            played.tracks.append(Metronome.clickTrack(meter: meter, in: start..<clicksEnd))
        }
        return (played, countInSeconds)
    }

    // MARK: Recording

    /// Starts the audio on `backend` (nil: none), creates the journal, waits until the
    /// device's clock runs, and starts the inputs; returns once recording runs (the count-in
    /// may still be clicking). Await ``finished()`` for the take.
    /// - Throws: ``RecordingSessionError``; when the start fails nothing runs and no journal is left.
    public func start(inputs: [any RecordingInput], on backend: (any AudioBackend)?) throws(RecordingSessionError) {
        let first = state.withLock { s -> Bool in
            defer { s.started = true }
            return !s.started
        }
        guard first else { throw .alreadyStarted }
        let recording = ActiveRecording(session: self, inputs: inputs)
        do {
            try recording.begin(on: backend)
        } catch {
            state.withLock { $0.started = false }
            throw error
        }
        recording.run()
    }

    /// Ends the take: the inputs stop, what they delivered goes in, notes still held end now,
    /// the backing stops. Await ``finished()`` for the take. Idempotent.
    public func stop() { stopRequested.store(true, ordering: .relaxed) }

    /// Waits for the take to end and returns it (with the reason it ended).
    public func finished() async -> RecordingTake {
        await withCheckedContinuation { (continuation: CheckedContinuation<RecordingTake, Never>) in
            let ready = state.withLock { s -> RecordingTake? in
                if let take = s.take { return take }
                s.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Blocks the calling thread until the take ends and returns it: for programs without an
    /// async context (a command-line tool's main thread).
    public func waitUntilFinished() -> RecordingTake {
        let semaphore = DispatchSemaphore(value: 0)
        let ready = state.withLock { s -> RecordingTake? in
            if let take = s.take { return take }
            s.blockedWaiters.append(semaphore)
            return nil
        }
        if let ready { return ready }
        semaphore.wait()
        return state.withLock { $0.take! }
    }

    /// The take, once it ended.
    public var take: RecordingTake? { state.withLock { $0.take } }

    /// Where the recording is, as the control thread last saw it (nil before the start).
    public var position: RecordingPosition? { state.withLock { $0.position } }

    /// The bytes of the last message received (for a display).
    public var lastMessage: [UInt8] { state.withLock { $0.lastMessage } }

    /// The playback session that plays the backing, clicks and thru (nil without audio).
    public var playback: PlaybackSession? { state.withLock { $0.playback } }

    /// A stream of what happens while recording; `positionInterval` asks for ``RecordingEvent/position(_:)``
    /// events at that interval (nil: none). Events before the call are not replayed.
    public func events(positionInterval: Duration? = nil) -> AsyncStream<RecordingEvent> {
        let (stream, continuation) = AsyncStream<RecordingEvent>.makeStream(bufferingPolicy: .unbounded)
        let finishedAlready = state.withLock { s -> RecordingEnding? in
            if let take = s.take { return take.ending }
            let id = s.nextSubscriber
            s.nextSubscriber += 1
            let nanos = positionInterval.map { Int64($0.components.seconds) * 1_000_000_000 + $0.components.attoseconds / 1_000_000_000 }
            s.subscribers[id] = Subscriber(continuation: continuation, intervalNanos: nanos)
            return nil
        }
        if let finishedAlready {
            continuation.yield(.finished(finishedAlready))
            continuation.finish()
        }
        return stream
    }

    /// The monotonic host time at which take time `seconds` falls, for a take timed by the
    /// monotonic clock (recording without audio): where ``InProcessMIDIInput`` places a message
    /// at an exact time. Nil before the start and with audio (the device's clock only maps
    /// host times to take time).
    public func hostTime(atTakeSeconds seconds: Double) -> Int64? {
        state.withLock { $0.monotonicOrigin }.map { origin in
            origin.host + Int64(((seconds - origin.seconds) * 1e9).rounded())
        }
    }

    func publish(_ event: RecordingEvent) {
        state.withLock { s in
            for subscriber in s.subscribers.values { subscriber.continuation.yield(event) }
        }
    }

    func publishPosition(_ position: RecordingPosition, now: Int64) {
        state.withLock { s in
            s.position = position
            for (id, subscriber) in s.subscribers {
                guard let interval = subscriber.intervalNanos, now - subscriber.lastPositionNanos >= interval else { continue }
                subscriber.continuation.yield(.position(position))
                s.subscribers[id]?.lastPositionNanos = now
            }
        }
    }

    func complete(_ take: RecordingTake) {
        let (waiters, blocked, subscribers) = state.withLock { s in
            s.take = take
            defer {
                s.waiters = []
                s.blockedWaiters = []
                s.subscribers = [:]
            }
            return (s.waiters, s.blockedWaiters, s.subscribers)
        }
        for subscriber in subscribers.values {
            subscriber.continuation.yield(.finished(take.ending))
            subscriber.continuation.finish()
        }
        for waiter in waiters { waiter.resume(returning: take) }
        for semaphore in blocked { semaphore.signal() }
    }

    // MARK: Recovery

    /// Rebuilds the take a crashed recording left in its journal. `backing`, when given,
    /// replaces the journal's tempo map and meter with the whole backing song (its tracks come
    /// back in the merged sequence); by default the journal's own backing path is read when it
    /// can be, else the journal's tempo map alone is used.
    /// - Returns: the take, and a warning when the named backing could not be read.
    /// - Throws: ``RecordingJournalError`` when the journal cannot be read or is not one.
    public static func recover(journal path: String, backing: MusicSequence? = nil) throws(RecordingJournalError) -> (take: RecordingTake, warning: String?, discardedBytes: Int) {
        let contents = try RecordingJournal.read(contentsOf: path)
        let header = contents.header
        var base = backing ?? header.makeSequence()
        var warning: String?
        if backing == nil, let backingPath = header.backingPath {
            if let smf = try? SMFReader.read(contentsOf: backingPath), smf.timeBase.isUsable {
                base = smf.makeSequence()
            } else {
                warning = "the backing \(backingPath) cannot be read; the take is written with the journal's tempo map only"
            }
        }
        let recorder = RecordingJournal.recover(contents)
        let start = base.makeTempoMap().seconds(atTick: header.settings.loop?.lowerBound ?? header.settings.startTick)
        let end = contents.lastNanoseconds.map { Double($0) / 1e9 } ?? start
        let take = RecordingTake(recorder: recorder, base: base, ending: .stopped, recordedSeconds: max(0, end - start), journalPath: nil)
        return (take, warning, contents.discardedByteCount)
    }
}

func removeFile(_ path: String) { unlink(path) }
