#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Sequencing

/// The control side of a running ``PlaybackSession``: owns the ``Player`` (which belongs to
/// one thread) and runs the loop that services it, applies transport commands, publishes the
/// position and events, and ends playback.
final class SessionControl: @unchecked Sendable {
    let session: PlaybackSession
    let player: Player
    let backend: any AudioBackend
    let format: AudioStreamFormat
    let renderer: PlaybackRenderer
    private var seenEnds = 0
    private var seenLoopJumps = 0
    private var seenUnderruns = 0
    private var stopping: (drain: Bool, deadlineNanos: Int64)?
    private var endingDeadlineNanos: Int64?

    init(session: PlaybackSession, player: Player, backend: any AudioBackend, format: AudioStreamFormat) {
        self.session = session
        self.player = player
        self.backend = backend
        self.format = format
        let tail = session.options.tail ?? (backend.isRealTime ? .seconds(PlaybackSession.liveTailSeconds) : .automatic)
        renderer = PlaybackRenderer(engine: player.engine, tail: tail, sampleRate: format.sampleRate)
        seenEnds = player.timesEndReached
        player.userEventHandler = { [unowned self] event in self.broadcast(.userEvent(event)) }
        player.textEventHandler = { [unowned self] event in self.broadcast(.text(event)) }
    }

    /// Starts the control thread. The thread keeps the session alive until playback ends.
    /// Decodes the SoundFont 3 samples that live notes or program changes asked for (they are
    /// silent until then); the audio thread only flags them.
    private func decodeRequestedSamples() {
        guard case .sampler(let sampler)? = session.instrument, sampler.hasCompressedSamples else { return }
        do {
            for warning in try sampler.decodeRequestedSamples() {
                session.options.logHandler?(PlaybackLogEntry(level: .warning, message: "SoundFont: warning: \(warning)"))
            }
        } catch {
            session.options.logHandler?(PlaybackLogEntry(level: .error, message: "SoundFont: \(error)"))
        }
    }

    func run() {
        let box = Unmanaged.passRetained(self)
        var tid = pthread_t()
        let created = pthread_create(&tid, nil, { context in
            let control = Unmanaged<SessionControl>.fromOpaque(context!).takeRetainedValue()
            control.loop()
            return nil
        }, box.toOpaque())
        if created == 0 {
            pthread_detach(tid)
        } else {
            // No thread for the loop: run it on a task instead of failing the start.
            box.release()
            Task.detached { self.loop() }
        }
    }

    /// Applies the commands queued before the start (the transport set up ahead).
    func apply(_ commands: [SessionCommand]) {
        for command in commands { apply(command) }
        renderer.setSilenceMayEnd(after: player.silenceMayEndAfter())
    }

    private func apply(_ command: SessionCommand) {
        switch command {
        case .pause: player.stop()
        case .resume: player.start()
        case .locate(let tick): player.locate(toTick: max(0, tick))
        case .rate(let rate): player.playRate = rate
        case .loop(let from, let to, let count): player.setLoop(from: from, to: to ?? player.schedule.endTick, count: count)
        case .clearLoop: player.clearLoop()
        case .end(let tick): player.setEnd(tick: tick)
        case .mute(let track, let on):
            guard player.sequence.tracks.indices.contains(track) else { return }
            player.updateSequence { $0.tracks[track].isMuted = on }
        case .solo(let track, let on):
            guard player.sequence.tracks.indices.contains(track) else { return }
            player.updateSequence { $0.tracks[track].isSoloed = on }
        case .stop(let drain):
            guard stopping == nil else { return }
            player.stop()
            if drain {
                // The stop's releases are rendered in the next period; they and what the
                // device buffers play out before the backend drains.
                let end = renderer.renderedFrames + Int64(format.latencyFrames + format.periodFrames)
                renderer.endPerformance(atFrame: end)
                stopping = (true, monotonicNanoseconds() + 1_000_000_000 + framesToNanos(Int64(format.latencyFrames + format.periodFrames)))
            } else {
                renderer.endPerformance(atFrame: renderer.renderedFrames)
                stopping = (false, monotonicNanoseconds())
            }
        }
    }

    func currentPosition() -> PlaybackPosition {
        let tick = player.tick
        return PlaybackPosition(tick: tick, beats: player.beats, barBeatTick: player.barBeatTick, seconds: player.seconds,
                                isPlaying: player.isPlaying, rate: player.playRate, outputFrame: backend.framesConsumed,
                                underruns: backend.underrunCount, songBPM: player.tempoMap.bpm(atTick: tick),
                                monotonicNanos: monotonicNanoseconds())
    }

    private func loop() {
        // An offline backend waits for this loop when it is a second ahead: pass often.
        let pause: UInt32 = backend.isRealTime ? 20_000 : 1_000
        while true {
            let rendered = renderer.renderedFrames
            let commands = session.commands.withLock { queue -> [SessionCommand] in defer { queue = [] }; return queue }
            for command in commands { apply(command) }
            // Output frames no longer follow the song's from the start: only the end and the
            // silence after it end a tail until silence.
            if !commands.isEmpty { renderer.setSilenceMayEnd(after: nil) }
            player.service()
            decodeRequestedSamples()
            renderer.markServiced(through: rendered)
            session.observer?.sessionService(session, player: player)
            publishProgress()
            if let failure = backend.failure {
                broadcast(.deviceError(failure))
                session.options.logHandler?(PlaybackLogEntry(level: .error, message: failure.description))
                finish(.failure(.backend(failure)), drain: false)
                return
            }
            if let stopping, !stopping.drain {
                finish(.success(summary(.stopped)), drain: false)
                return
            }
            if renderer.isFinished, let total = renderer.performanceFrames {
                let now = monotonicNanoseconds()
                if endingDeadlineNanos == nil {
                    // A device plays 200 ms of silence after the end, so nothing is cut when it
                    // stops (some drop their last milliseconds), within a deadline.
                    let pad = backend.isRealTime ? Int64(format.sampleRate / 5) : 0
                    endingDeadlineNanos = now + framesToNanos(total + pad - backend.framesConsumed) + 5_000_000_000
                }
                let pad = backend.isRealTime ? Int64(format.sampleRate / 5) : 0
                let played = backend.isRealTime ? backend.framesConsumed >= total + pad : !backend.isRunning
                let late = now >= (stopping?.deadlineNanos ?? endingDeadlineNanos!)
                if played || late || !backend.isRunning {
                    finish(.success(summary(stopping == nil ? .reachedEnd : .stopped)), drain: true)
                    return
                }
            }
            usleep(pause)
        }
    }

    private func publishProgress() {
        let ends = player.timesEndReached
        if ends != seenEnds {
            seenEnds = ends
            broadcast(.endReached)
        }
        let jumps = player.loopJumps
        while seenLoopJumps < jumps {
            seenLoopJumps += 1
            broadcast(.loopPass(completedPasses: seenLoopJumps))
        }
        // One event per underrun, as for loop passes: two underruns between passes of the
        // control loop are still two events, so a listener counting them never misses one.
        let underruns = backend.underrunCount
        if underruns > seenUnderruns {
            session.options.logHandler?(PlaybackLogEntry(level: .warning, message: "\(backend.name): underrun (\(underruns) so far)"))
            while seenUnderruns < underruns {
                seenUnderruns += 1
                broadcast(.underrun(total: seenUnderruns))
            }
        }
        let position = currentPosition()
        let now = monotonicNanoseconds()
        session.shared.withLock { state in
            state.position = position
            for key in state.subscribers.keys {
                guard let interval = state.subscribers[key]!.intervalNanos, now - state.subscribers[key]!.lastPositionNanos >= interval else { continue }
                state.subscribers[key]!.lastPositionNanos = now
                state.subscribers[key]!.continuation.yield(.position(position))
            }
        }
    }

    private func summary(_ ending: PlaybackSummary.Ending) -> PlaybackSummary {
        PlaybackSummary(ending: ending, performanceFrames: renderer.performanceFrames ?? renderer.renderedFrames,
                        framesPlayed: backend.framesConsumed, sampleRate: format.sampleRate,
                        underruns: backend.underrunCount, format: format, graphLatencyFrames: player.engine.graph.latencyFrames)
    }

    private func finish(_ result: Result<PlaybackSummary, PlaybackSessionError>, drain: Bool) {
        session.observer?.sessionWillStopBackend(session, player: player)
        var outcome = result
        do {
            try backend.stop(drain: drain)
        } catch {
            if case .success = outcome { outcome = .failure(.backend(error)) }
        }
        player.service()
        if case .success(var summary) = outcome {
            summary.framesPlayed = backend.framesConsumed
            outcome = .success(summary)
            broadcast(.finished(summary))
        }
        let position = currentPosition()
        let (waiters, blocked, subscribers) = session.shared.withLock { state in
            state.position = position
            state.outcome = outcome
            defer { state.waiters = []; state.blockedWaiters = []; state.subscribers = [:] }
            return (state.waiters, state.blockedWaiters, Array(state.subscribers.values))
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
        for waiter in waiters { waiter.resume(returning: outcome) }
        for semaphore in blocked { semaphore.signal() }
    }

    func broadcast(_ event: PlaybackEvent) {
        session.shared.withLock { state in
            for subscriber in state.subscribers.values { subscriber.continuation.yield(event) }
        }
    }

    private func framesToNanos(_ frames: Int64) -> Int64 { max(0, frames) * 1_000_000_000 / Int64(format.sampleRate) }
}
