import AudioEffects
import AudioGraph
import Foundation
import MIDIFile
import Sampler
import Sequencing
import SoundFont
import Locking

/// Plays a sequence on an audio backend and runs itself: the Tactus way to play a MIDI file
/// from code.
///
/// ```swift
/// let session = try PlaybackSession(contentsOf: "Songs/morning-steps.mid")
/// try session.start(on: NullBackend())
/// let summary = try await session.finished()
/// ```
///
/// The session builds the default graph (a SoundFont sampler when a bank is found, else the
/// built-in synthesizer, then a limiter), opens the backend, and owns both sides of playback:
/// the backend's thread renders, and a control thread of the session's own services the
/// ``Player`` (user events, retired snapshots), watches the backend's clock, underruns and
/// failures, and ends playback cleanly: the song, its tail, and what the device still holds.
///
/// Every method may be called from any thread; transport changes reach the control thread
/// through a queue and take effect within one pass of its loop (about 20 ms on a device).
/// ``position`` is what the control thread last saw.
public final class PlaybackSession: @unchecked Sendable {
    /// How a session plays.
    public struct Options {
        /// What plays the tracks.
        public var instrument: SessionInstrument
        /// Gain in decibels before the limiter.
        public var gainDecibels: Float
        /// Effects the default graph plays the instrument through, in order, before the
        /// limiter (nodes with one input bus, such as hosted LV2 effects). A program's own
        /// graph (``PlaybackSession/init(sequence:graph:defaultNode:options:observer:)``) has
        /// its effects in it and ignores these.
        public var effects: [any AudioNode] = []
        /// Instruments of their own for some MIDI channels (0-15) in the default graph: those
        /// channels' notes and channel messages, from the song and played live, go to them
        /// instead of the instrument, into the same effects. A program's own graph ignores them.
        public var channelInstruments: [UInt8: any AudioNode] = [:]
        /// What plays after the end, for releases and reverb: a fixed time, or until the
        /// sound has died away. Nil (the default) leaves it to the backend: until silent
        /// (``RenderTail/automatic``, as `tactus render`) on a backend that renders as fast as
        /// it can, 2 seconds (as `tactus play`) on a device.
        public var tail: RenderTail?
        /// Seconds played after the end (the cap of a tail until silence; 2 while ``tail`` is
        /// nil); setting it makes the tail that fixed time.
        public var tailSeconds: Double {
            get {
                switch tail {
                case .seconds(let seconds)?: return seconds
                case .untilSilent(_, let cap)?: return cap
                case nil: return PlaybackSession.liveTailSeconds
                }
            }
            set { tail = .seconds(newValue) }
        }
        /// Frames per second asked of the backend.
        public var sampleRate: Int
        /// Output latency asked of a device, in seconds.
        public var latencySeconds: Double
        /// Whether the song starts when the backend starts; when false, a
        /// ``PlaybackSessionObserver`` or ``PlaybackSession/resume()`` starts it.
        public var startsPlaying: Bool
        /// Receives warnings about the files and facts about the chosen instrument and
        /// format, on the thread that caused them. The library never prints.
        public var logHandler: (@Sendable (PlaybackLogEntry) -> Void)?
        /// Asked now and then while ``PlaybackSession/start(on:)`` prepares the song (a
        /// sequence of millions of events takes seconds to schedule); when it returns true,
        /// the start stops and throws ``PlaybackSessionError/cancelled``. A signal handler's
        /// flag or a deadline goes here, so they act before any audio flows.
        public var shouldCancelPreparation: (@Sendable () -> Bool)?

        /// Options with the defaults of `tactus play` on a device and of `tactus render` on an
        /// ``OfflineBackend``; `tail`, when given, replaces `tailSeconds`, and neither leaves
        /// the tail to the backend.
        public init(instrument: SessionInstrument = .automatic(), gainDecibels: Float = 0, tailSeconds: Double? = nil,
                    tail: RenderTail? = nil, sampleRate: Int = 44_100, latencySeconds: Double = 0.05,
                    startsPlaying: Bool = true, logHandler: (@Sendable (PlaybackLogEntry) -> Void)? = nil) {
            self.instrument = instrument
            self.gainDecibels = gainDecibels
            self.tail = tail ?? tailSeconds.map { .seconds($0) }
            self.sampleRate = sampleRate
            self.latencySeconds = latencySeconds
            self.startsPlaying = startsPlaying
            self.logHandler = logHandler
        }
    }

    /// The sequence the session plays.
    public let sequence: MusicSequence
    /// What plays the tracks of the default graph, resolved when the session was created; nil
    /// when the session plays a graph the program built.
    public let instrument: DefaultInstrument?
    /// A few words naming the instrument ("built-in synthesizer", "SoundFont PATH", "the
    /// program's audio graph").
    public let instrumentDescription: String
    /// The graph a program handed to ``init(sequence:graph:defaultNode:options:observer:)``
    /// and the node its tracks without a destination play; nil for the default graph.
    let programGraph: (graph: AudioGraph, defaultNode: UInt32)?
    /// The tail of a device (`tactus play`'s), when the options leave it to the backend.
    static let liveTailSeconds: Double = 2
    let options: Options
    let observer: (any PlaybackSessionObserver)?

    let commands = Locked<[SessionCommand]>([])
    let shared = Locked<SharedState>(SharedState())

    struct SharedState {
        var started = false
        var position: PlaybackPosition?
        var outcome: Result<PlaybackSummary, PlaybackSessionError>?
        var waiters: [CheckedContinuation<Result<PlaybackSummary, PlaybackSessionError>, Never>] = []
        var blockedWaiters: [DispatchSemaphore] = []
        var subscribers: [Int: Subscriber] = [:]
        var nextSubscriber = 0
        var format: AudioStreamFormat?
    }

    struct Subscriber {
        var continuation: AsyncStream<PlaybackEvent>.Continuation
        var intervalNanos: Int64?
        var lastPositionNanos: Int64 = 0
    }

    /// A session for `sequence`.
    /// - Throws: ``PlaybackSessionError`` when the instrument's SoundFont cannot be loaded.
    public init(sequence: MusicSequence, options: Options = Options(), observer: (any PlaybackSessionObserver)? = nil) throws(PlaybackSessionError) {
        self.sequence = sequence
        self.options = options
        self.observer = observer
        programGraph = nil
        let (resolved, description) = try Self.resolve(options.instrument, log: options.logHandler)
        (instrument, instrumentDescription) = (resolved, description)
        if case .sampler(let sampler) = resolved, sampler.hasCompressedSamples {
            // A SoundFont 3 bank plays only what was decoded: decode the samples the song's
            // notes play before it starts (nothing to do for SoundFont 2 banks).
            do {
                let warnings = try sampler.prepareSamples(forNotes: sequence.samplerPlayedNotes())
                for warning in warnings { options.logHandler?(PlaybackLogEntry(level: .warning, message: "SoundFont: warning: \(warning)")) }
            } catch {
                throw .invalidFile(path: "SoundFont", reason: error.description)
            }
        }
    }

    /// A session that plays `sequence` through `graph`, a graph the program built: any nodes
    /// (instruments written in Swift, hosted plugins, effects) and exactly one `OutputNode`.
    /// Tracks without a destination play `defaultNode`; a track whose destination is a node
    /// plays that node. Everything else is as with the default graph: every backend, the
    /// transport, the events, the tail and the errors.
    ///
    /// ```swift
    /// let graph = AudioGraph()
    /// let synth = graph.add(PolyphonicInstrument(name: "Mine", parameters: []) { MyVoice() })
    /// let output = graph.add(OutputNode())
    /// try graph.connect(synth, to: output)
    /// let session = try PlaybackSession(sequence: song, graph: graph, defaultNode: synth)
    /// try session.start(on: OfflineBackend(wavFile: "mine.wav"))
    /// try await session.finished()
    /// ```
    ///
    /// The session keeps its own copy of the graph's structure (compiled when it starts, for
    /// the sample rate the backend grants), so adding nodes to `graph` afterwards changes nothing;
    /// the nodes themselves are shared (keep a reference to one to read it or set its
    /// parameters). The options' `instrument` and `gainDecibels` belong to the default graph
    /// and are not used: put a `LimiterNode` or `GainNode` in the graph for them. A node may
    /// play in one running session at a time.
    /// - Throws: ``PlaybackSessionError/missingNode(_:track:)`` when `defaultNode` is not in
    ///   the graph. A track routed to a missing node is found when the session starts.
    public init(sequence: MusicSequence, graph: AudioGraph, defaultNode: UInt32, options: Options = Options(),
                observer: (any PlaybackSessionObserver)? = nil) throws(PlaybackSessionError) {
        guard graph.node(defaultNode) != nil else { throw .missingNode(defaultNode, track: nil) }
        self.sequence = sequence
        self.options = options
        self.observer = observer
        programGraph = (graph.copy(), defaultNode)
        instrument = nil
        instrumentDescription = "the program's audio graph"
    }

    /// A session for the Standard MIDI File at `path`. An RMI file carrying a DLS bank plays
    /// with that bank when `options` leave the instrument automatic without naming a bank.
    /// - Throws: ``PlaybackSessionError/unreadableFile(path:reason:)`` when it is missing or
    ///   unreadable, ``PlaybackSessionError/invalidFile(path:reason:)`` when its content is
    ///   refused or it has no timing.
    public convenience init(contentsOf path: String, options: Options = Options(),
                            observer: (any PlaybackSessionObserver)? = nil) throws(PlaybackSessionError) {
        let file: StandardMIDIFile
        do {
            file = try SMFReader.read(contentsOf: path)
        } catch {
            if error.isUnreadableInput { throw .unreadableFile(path: path, reason: error.reasonText) }
            throw .invalidFile(path: path, reason: error.reasonText)
        }
        var options = options
        if case .automatic(nil) = options.instrument, DLSReader.hasEmbeddedBank(contentsOf: path) {
            // The bank the song was voiced for, as `tactus render` plays it.
            options.instrument = .automatic(soundFont: path)
        }
        try self.init(file: file, name: path, options: options, observer: observer)
    }

    /// A session for a Standard MIDI File in memory; `name` starts its messages.
    public convenience init(midiBytes: [UInt8], name: String = "MIDI data", options: Options = Options(),
                            observer: (any PlaybackSessionObserver)? = nil) throws(PlaybackSessionError) {
        let file: StandardMIDIFile
        do {
            file = try SMFReader.read(midiBytes)
        } catch {
            throw .invalidFile(path: name, reason: error.reasonText)
        }
        try self.init(file: file, name: name, options: options, observer: observer)
    }

    private convenience init(file: StandardMIDIFile, name: String, options: Options,
                             observer: (any PlaybackSessionObserver)?) throws(PlaybackSessionError) {
        guard file.timeBase.isUsable else {
            throw .invalidFile(path: name, reason: "division is 0, so the file has no timing and cannot be played")
        }
        for warning in file.warnings { options.logHandler?(PlaybackLogEntry(level: .warning, message: "\(name): warning: \(warning)")) }
        try self.init(sequence: file.makeSequence(), options: options, observer: observer)
    }

    private static func resolve(_ choice: SessionInstrument,
                                log: (@Sendable (PlaybackLogEntry) -> Void)?) throws(PlaybackSessionError) -> (DefaultInstrument, String) {
        switch choice {
        case .builtIn: return (.builtIn, "built-in synthesizer")
        case .custom(let instrument):
            if case .sampler = instrument { return (instrument, "SoundFont sampler") }
            return (instrument, "built-in synthesizer")
        case .automatic(let explicit):
            let found: SoundFontDiscovery.Choice?
            do {
                found = try SoundFontDiscovery.resolve(explicitPath: explicit)
            } catch {
                throw .unreadableFile(path: error.tried.first?.path ?? "SoundFont", reason: error.description)
            }
            guard let found else { return (.builtIn, "built-in synthesizer (no SoundFont found)") }
            let file: SoundFontFile
            do {
                file = try SoundFontReader.read(contentsOf: found.path)
            } catch {
                if error.isUnreadableInput { throw .unreadableFile(path: found.path, reason: error.description) }
                throw .invalidFile(path: found.path, reason: error.description)
            }
            // Warnings are about files the user named, not a bank found at a standard path.
            if found.origin != .standardLocation {
                for warning in file.warnings { log?(PlaybackLogEntry(level: .warning, message: "\(found.path): warning: \(warning)")) }
            }
            log?(PlaybackLogEntry(level: .info, message: "\(found.path): playing with this SoundFont (\(found.origin))"))
            return (.sampler(SamplerNode(bank: file.bank)), "SoundFont \(found.path) (\(found.origin))")
        }
    }

    // MARK: Playing

    /// Opens `backend`, builds the graph for the format it grants, and starts playing; returns
    /// once the backend runs. Await ``finished()`` for the end. When the start fails nothing
    /// has started, and the session may be started on another backend.
    /// - Throws: ``PlaybackSessionError/backend(_:)`` when the backend cannot open or start,
    ///   ``PlaybackSessionError/graph(reason:)``, ``PlaybackSessionError/alreadyStarted``.
    public func start(on backend: any AudioBackend) throws(PlaybackSessionError) {
        let first = shared.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { throw .alreadyStarted }
        do {
            try startPlaying(on: backend)
        } catch {
            // Nothing started: the program may try another backend (no device: a file).
            shared.withLock { $0.started = false }
            throw error
        }
    }

    private func startPlaying(on backend: any AudioBackend) throws(PlaybackSessionError) {
        let format: AudioStreamFormat
        do {
            format = try backend.open(AudioStreamRequest(sampleRate: options.sampleRate, latencySeconds: options.latencySeconds))
        } catch {
            throw .backend(error)
        }
        let player: Player
        let (played, taps) = Self.routePortTracks(sequence, to: backend)
        do throws(PlaybackSessionError) {
            let (graph, defaultNode, channelNodes) = try makeGraph(taps: taps)
            try Self.checkRoutes(of: played, in: graph, defaultNode: defaultNode)
            let compiled: CompiledGraph
            do {
                compiled = try graph.compile(sampleRate: Double(format.sampleRate),
                                             maximumFrameCount: min(max(format.periodFrames, 64), 4096))
            } catch {
                throw .graph(reason: "\(error)")
            }
            do {
                player = try Player(sequence: played, graph: compiled, defaultNode: defaultNode, channelNodes: channelNodes,
                                    cancelling: options.shouldCancelPreparation ?? { false })
            } catch {
                throw .cancelled
            }
        } catch {
            try? backend.stop(drain: false)
            throw error
        }
        if let midiBackend = backend as? any MIDIPortBackend, !taps.isEmpty {
            do {
                try midiBackend.attachMIDIPorts(taps.map(\.tap))
            } catch {
                try? backend.stop(drain: false)
                throw .backend(error)
            }
        }
        player.outputLatencyFrames = format.latencyFrames
        let control = SessionControl(session: self, player: player, backend: backend, format: format)
        let queued = commands.withLock { queue -> [SessionCommand] in defer { queue = [] }; return queue }
        control.apply(queued)
        observer?.sessionWillStartBackend(self, player: player)
        if options.startsPlaying { player.start() }
        control.renderer.prerollLatency()
        shared.withLock {
            $0.format = format
            $0.position = control.currentPosition()
        }
        do {
            try backend.start(control.renderer)
        } catch {
            try? backend.stop(drain: false)
            commands.withLock { $0 = queued + $0 }
            throw .backend(error)
        }
        options.logHandler?(PlaybackLogEntry(level: .info, message: "\(backend.name): playing at \(format.sampleRate) Hz, "
                                             + "\(format.periodFrames) frames per period, \(format.latencyFrames) frames of latency"))
        observer?.sessionDidStartBackend(self, player: player)
        control.run()
    }

    /// The graph to compile: the default graph around the instrument, or a copy of the
    /// program's, with the MIDI port taps added.
    private func makeGraph(taps: [(id: UInt32, tap: MIDIPortTap)]) throws(PlaybackSessionError) -> (AudioGraph, UInt32, [UInt8: UInt32]) {
        let graph: AudioGraph
        let defaultNode: UInt32
        var channelNodes: [UInt8: UInt32] = [:]
        if let programGraph {
            // A copy again: the port taps must not stay in the graph for a second start.
            graph = programGraph.graph.copy()
            defaultNode = programGraph.defaultNode
            if let taken = taps.first(where: { graph.node($0.id) != nil }) {
                throw .graph(reason: "node \(taken.id) is reserved for the MIDI port taps; number the graph's nodes below \(Self.firstPortTapID)")
            }
        } else {
            let defaults = DefaultGraph(instrument: instrument ?? .builtIn, channelInstruments: options.channelInstruments, effects: options.effects)
            defaults.limiter.setParameter(LimiterNode.Parameter.inputGain, value: options.gainDecibels)
            graph = defaults.graph
            defaultNode = DefaultGraph.instrumentID
            channelNodes = defaults.channelNodes
        }
        for tap in taps { graph.add(tap.tap, id: tap.id) }
        return (graph, defaultNode, channelNodes)
    }

    /// A track that names a node the graph lacks would play nothing: refused at the start
    /// rather than rendered as silence.
    static func checkRoutes(of sequence: MusicSequence, in graph: AudioGraph, defaultNode: UInt32) throws(PlaybackSessionError) {
        guard graph.node(defaultNode) != nil else { throw .missingNode(defaultNode, track: nil) }
        for (index, track) in sequence.tracks.enumerated() {
            if case .node(let id) = track.destination, graph.node(id) == nil { throw .missingNode(id, track: index) }
        }
    }

    /// Node identifiers of the MIDI port taps: well clear of the default graph's and of what a
    /// program's own graph would number from 1.
    static let firstPortTapID: UInt32 = 0x7000_0000

    /// For a backend that sends MIDI itself: a tap per port the song's tracks name, and the
    /// song with those tracks routed to their taps. Other backends leave port tracks alone
    /// (a program sends them, as `tactus play` does through an ALSA queue).
    static func routePortTracks(_ sequence: MusicSequence, to backend: any AudioBackend) -> (MusicSequence, [(id: UInt32, tap: MIDIPortTap)]) {
        guard backend is any MIDIPortBackend else { return (sequence, []) }
        var routed = sequence
        var taps: [(id: UInt32, tap: MIDIPortTap)] = []
        for index in routed.tracks.indices {
            guard case .midiPort(let name) = routed.tracks[index].destination else { continue }
            let id: UInt32
            if let existing = taps.first(where: { $0.tap.portName == name }) {
                id = existing.id
            } else {
                id = firstPortTapID + UInt32(taps.count)
                taps.append((id, MIDIPortTap(portName: name)))
            }
            routed.tracks[index].destination = .node(id)
        }
        return (routed, taps)
    }

    /// Waits for the end: the song and its tail played and drained from the device, or a stop.
    /// - Throws: ``PlaybackSessionError/backend(_:)`` when the backend failed while playing.
    @discardableResult
    public func finished() async throws(PlaybackSessionError) -> PlaybackSummary {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<PlaybackSummary, PlaybackSessionError>, Never>) in
            let ready = shared.withLock { state -> Result<PlaybackSummary, PlaybackSessionError>? in
                if let outcome = state.outcome { return outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        return try result.get()
    }

    /// Blocks the calling thread until the end, like ``finished()``: for synchronous programs
    /// (a command-line tool's `run()`). Never call it from an observer's callback, which runs
    /// on the session's own thread.
    /// - Throws: ``PlaybackSessionError/backend(_:)`` when the backend failed while playing.
    @discardableResult
    public func waitUntilFinished() throws(PlaybackSessionError) -> PlaybackSummary {
        let semaphore = DispatchSemaphore(value: 0)
        let ready = shared.withLock { state -> Result<PlaybackSummary, PlaybackSessionError>? in
            if let outcome = state.outcome { return outcome }
            state.blockedWaiters.append(semaphore)
            return nil
        }
        if let ready { return try ready.get() }
        semaphore.wait()
        return try shared.withLock { $0.outcome! }.get()
    }

    /// The outcome once the session has ended, else nil: for programs that poll (a terminal UI).
    public var outcome: Result<PlaybackSummary, PlaybackSessionError>? { shared.withLock { $0.outcome } }

    /// What the backend granted, once started.
    public var format: AudioStreamFormat? { shared.withLock { $0.format } }

    /// Where playback is (as of the control thread's last pass); nil before the start.
    public var position: PlaybackPosition? { shared.withLock { $0.position } }

    // MARK: Transport

    /// Pauses: notes are released, the position stays.
    public func pause() { enqueue(.pause) }

    /// Plays on from the current position.
    public func resume() { enqueue(.resume) }

    /// Ends the session. With `drain`, notes are released and what the device holds plays
    /// out (a WAV file is completed with what was played); without, the device drops it (and
    /// an offline backend leaves no file).
    public func stop(drain: Bool = true) { enqueue(.stop(drain: drain)) }

    /// Moves to `tick`; the instruments are chased to the song's state there.
    public func locate(toTick tick: Int64) { enqueue(.locate(tick: tick)) }

    /// Moves to `position` (bar:beat:tick, seconds or ticks).
    public func locate(to position: MusicPosition) { enqueue(.locate(tick: position.tick(in: sequence))) }

    /// Sets the play rate (0.05...20; 2 is twice as fast).
    public func setRate(_ rate: Double) { enqueue(.rate(rate)) }

    /// Loops `[fromTick, toTick)` (to the song's end when `toTick` is nil), played `count`
    /// times in all or forever.
    public func setLoop(fromTick: Int64, toTick: Int64?, count: LoopCount) { enqueue(.loop(from: fromTick, to: toTick, count: count)) }

    /// Removes the transport loop.
    public func clearLoop() { enqueue(.clearLoop) }

    /// Ends the song at `tick` (events there do not play); nil for the sequence's end.
    public func setEnd(tick: Int64?) { enqueue(.end(tick: tick)) }

    /// Mutes or unmutes `sequence.tracks[track]`, live (the track numbering of
    /// ``PlayedUserEvent/track``).
    /// - Throws: ``PlaybackSessionError/noSuchTrack(_:count:)`` when the sequence has no such track.
    public func setMuted(_ muted: Bool, track: Int) throws(PlaybackSessionError) {
        try checkTrack(track)
        enqueue(.mute(track: track, on: muted))
    }

    /// Solos or unsolos `sequence.tracks[track]`, live.
    /// - Throws: ``PlaybackSessionError/noSuchTrack(_:count:)`` when the sequence has no such track.
    public func setSoloed(_ soloed: Bool, track: Int) throws(PlaybackSessionError) {
        try checkTrack(track)
        enqueue(.solo(track: track, on: soloed))
    }

    private func checkTrack(_ track: Int) throws(PlaybackSessionError) {
        guard sequence.tracks.indices.contains(track) else { throw .noSuchTrack(track, count: sequence.tracks.count) }
    }

    private func enqueue(_ command: SessionCommand) { commands.withLock { $0.append(command) } }

    // MARK: Events

    /// A stream of what happens during playback, in order: user events, the song's lyric, text
    /// and marker events (``PlaybackEvent/text(_:)``), loop passes, the end,
    /// underruns, device errors, and the position every `positionInterval` (none when nil).
    /// It finishes after ``PlaybackEvent/finished(_:)`` or when the session ends with an error
    /// (after ``PlaybackEvent/deviceError(_:)``). Subscribe before ``start(on:)`` to miss nothing.
    public func events(positionInterval: Duration? = nil) -> AsyncStream<PlaybackEvent> {
        let (stream, continuation) = AsyncStream<PlaybackEvent>.makeStream()
        let nanos = positionInterval.map { Int64($0.components.seconds) * 1_000_000_000 + $0.components.attoseconds / 1_000_000_000 }
        let ended = shared.withLock { state -> Bool in
            if state.outcome != nil { return true }
            state.subscribers[state.nextSubscriber] = Subscriber(continuation: continuation, intervalNanos: nanos.map { max($0, 1_000_000) })
            state.nextSubscriber += 1
            return false
        }
        if ended { continuation.finish() }
        return stream
    }

    /// The user events alone, in order, with tick and track.
    public func userEvents() -> AsyncStream<PlayedUserEvent> {
        let events = self.events()
        return AsyncStream { continuation in
            let task = Task {
                for await event in events {
                    if case .userEvent(let user) = event { continuation.yield(user) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// A transport change on its way to the control thread.
enum SessionCommand: Sendable {
    case pause, resume, clearLoop
    case stop(drain: Bool)
    case locate(tick: Int64)
    case rate(Double)
    case loop(from: Int64, to: Int64?, count: LoopCount)
    case end(tick: Int64?)
    case mute(track: Int, on: Bool)
    case solo(track: Int, on: Bool)
}
