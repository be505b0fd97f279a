import AudioGraph
#if canImport(Glibc)
import Glibc
#endif
import MIDI
import Sequencing
import Synchronization

/// Plays a `MusicSequence` through an audio graph, like Apple's MusicPlayer: start, stop,
/// position in ticks, beats, bar:beat:tick or seconds (also while playing), play rate, a
/// transport loop, live edits of the sequence, and user events handed to a callback.
///
/// The player is the control side of an ``Engine``. It never touches the engine's state
/// directly: it sends plain-value commands through a ring, publishes compiled schedules
/// through an atomic mailbox, and reads position and play state from atomics the audio thread
/// writes (DESIGN.md section 4). Whoever renders (``render(frameCount:into:)`` offline, or a
/// driver thread calling ``engine``'s `render`) may run on another thread; the player's own
/// methods belong to one control thread. Call ``service()`` regularly from that thread
/// (every few tens of milliseconds) while a driver renders: it delivers user events, frees
/// retired snapshots and extends forever-loops.
public final class Player {
    /// The engine a driver renders.
    public let engine: Engine
    /// Frames per second of the graph and schedule.
    public let sampleRate: Int
    /// The node that tracks without a destination play.
    public let defaultNode: UInt32
    /// Channels with an instrument of their own: their notes and channel messages from tracks
    /// without a destination, and live ones sent to ``defaultNode``, go to that node.
    public let channelNodes: [UInt8: UInt32]
    /// The sequence being played.
    public private(set) var sequence: MusicSequence
    /// Frames between rendering a frame and hearing it (the driver's buffer), used by the
    /// host-time conversions; the graph's own latency is added to it.
    public var outputLatencyFrames = 0
    /// Receives user events in order, on the thread that calls ``service()``.
    public var userEventHandler: ((PlayedUserEvent) -> Void)?
    /// Receives the song's text, lyric and marker events in order (interleaved with the user
    /// events as they play), on the thread that calls ``service()``. Events of muted tracks
    /// are not delivered.
    public var textEventHandler: ((PlayedTextEvent) -> Void)?

    private var snapshot: EngineSnapshot
    private(set) var tempoMap: TempoMap
    private var meterMap: MeterMap
    private(set) var loopSetting: (from: Int64, to: Int64, count: LoopCount)?
    private var endTick: Int64?
    private var requestedRate = 1.0
    private var lastEndCount = 0

    /// The play-rate range.
    public static let rateRange = 0.05...20.0

    /// A player for `sequence` through `graph`; tracks without a destination go to
    /// `defaultNode`. It starts stopped at tick 0.
    public convenience init(sequence: MusicSequence, graph: CompiledGraph, defaultNode: UInt32 = DefaultGraph.instrumentID,
                            channelNodes: [UInt8: UInt32] = [:]) {
        // Never cancelled, so it cannot throw.
        try! self.init(sequence: sequence, graph: graph, defaultNode: defaultNode, channelNodes: channelNodes, cancelling: { false })
    }

    /// As ``init(sequence:graph:defaultNode:channelNodes:)``, asking `shouldCancel` now and then while the
    /// schedule is built (seconds for a song of millions of events); throws
    /// ``ScheduleCancelled`` when it returns true.
    public init(sequence: MusicSequence, graph: CompiledGraph, defaultNode: UInt32 = DefaultGraph.instrumentID,
                channelNodes: [UInt8: UInt32] = [:], cancelling shouldCancel: () -> Bool) throws(ScheduleCancelled) {
        self.sequence = sequence
        self.defaultNode = defaultNode
        self.channelNodes = channelNodes
        sampleRate = Int(graph.sampleRate.rounded())
        tempoMap = sequence.makeTempoMap()
        meterMap = sequence.makeMeterMap()
        let schedule = try Schedule(sequence: sequence, sampleRate: sampleRate, defaultNode: defaultNode, channelNodes: channelNodes,
                                    cancelling: shouldCancel)
        engine = Engine(graph: graph, schedule: schedule)
        snapshot = EngineSnapshot(schedule: schedule, graph: graph)
        engine.resetForPlayer()
        sendEnd()
    }

    /// The compiled schedule currently published.
    public var schedule: Schedule { snapshot.schedule }

    // MARK: Sequence and live edits

    /// Replaces the sequence. While playing, the change takes effect at the next block: the
    /// cursor continues from the current position in the new schedule, notes of unchanged
    /// tracks keep sounding and end normally, notes of changed tracks are released.
    public func setSequence(_ newSequence: MusicSequence) {
        sequence = newSequence
        tempoMap = newSequence.makeTempoMap()
        meterMap = newSequence.makeMeterMap()
        republish(horizonTick: nil)
    }

    /// Edits the sequence in place (mute, solo, loop, offset, events...) and publishes it.
    public func updateSequence(_ edit: (inout MusicSequence) -> Void) {
        var copy = sequence
        edit(&copy)
        setSequence(copy)
    }

    private func republish(horizonTick: Int64?) {
        collectRetired()
        let schedule = Schedule(sequence: sequence, sampleRate: sampleRate, defaultNode: defaultNode, channelNodes: channelNodes,
                                horizonTick: horizonTick)
        snapshot = EngineSnapshot(schedule: schedule, graph: engine.graph)
        engine.publish(snapshot)
        sendEnd()
        if let loopSetting { sendLoop(loopSetting, continuingPrevious: true) }
    }

    // MARK: Transport

    /// Prepares playback from the current position: the schedule is compiled and the
    /// instruments are brought to the song's state there, so ``start()`` only flips a flag.
    public func preroll() {
        locate(toSongFrame: songFrame)
    }

    /// Starts playing from the current position.
    public func start() { send(.start) }

    /// Stops; every sounding note gets its note-off and held pedals are lifted.
    public func stop() { send(.stop) }

    /// True while playing (as of the last rendered block, or the last start/stop request).
    public var isPlaying: Bool { engine.publishedPlaying.load(ordering: .acquiring) }

    /// Incremented each time playback stops by reaching its end.
    public var timesEndReached: Int { engine.endCount.load(ordering: .acquiring) }

    /// Sends a note-off for every sounding note and lifts pedals, without stopping.
    public func allNotesOff() { send(.allNotesOff) }

    /// Plays a MIDI message on the node `node` at the start of the next block (on its channel's
    /// node when `node` is ``defaultNode`` and the channel has one).
    public func sendMIDI(_ message: MIDIMessage, toNode node: UInt32) {
        let routed = node == defaultNode && message.isChannelMessage ? channelNodes[message.channel] ?? node : node
        guard let index = engine.graph.index(ofNode: routed) else { return }
        send(.midi(nodeIndex: index, message: message))
    }

    /// The live MIDI path for one input thread (a port reader, a byte-stream reader): messages
    /// sent through it reach their node at the start of the next block without passing
    /// through this player's control thread. Every call returns the same object; hand it to
    /// exactly one thread.
    public private(set) lazy var liveInput = LiveMIDIInput(ring: engine.liveInput, graph: CompiledGraphIndex(ids: engine.graph.nodeIDs),
                                                           defaultNode: defaultNode, channelNodes: channelNodes)

    // MARK: Position

    /// The song position in frames at rate 1 (fractions dropped).
    public var songFrame: Int64 {
        floorDiv(engine.publishedSongPosition.load(ordering: .acquiring), Engine.positionUnitsPerFrame)
    }

    /// The position in ticks (the last tick at or before it).
    public var tick: Int64 {
        get { Int64(tempoMap.tick(atSeconds: Double(songFrame) / Double(sampleRate)).rounded(.down)) }
        set { locate(toTick: newValue) }
    }

    /// The position in beats (quarter notes).
    public var beats: Double {
        get { tempoMap.tick(atSeconds: Double(songFrame) / Double(sampleRate)) / Double(sequence.ticksPerQuarter) }
        set { locate(toTick: tempoMap.tick(atBeats: newValue)) }
    }

    /// The position as bar:beat:tick.
    public var barBeatTick: BarBeatTick {
        get { meterMap.barBeatTick(atTick: tick) }
        set { locate(toTick: meterMap.tick(at: newValue)) }
    }

    /// The position in seconds of the song (at rate 1).
    public var seconds: Double {
        get { Double(songFrame) / Double(sampleRate) }
        set { locate(toSongFrame: Int64((max(0, newValue) * Double(sampleRate)).rounded())) }
    }

    /// Moves to a position given as text-parsed `MusicPosition`.
    public func locate(to position: MusicPosition) {
        locate(toTick: position.tick(in: sequence))
    }

    /// Moves to `tick`: sounding notes are released, the instruments get the program, bank,
    /// controllers, pitch bend and parameter values the song has there, and events exactly
    /// at `tick` play. Works while playing.
    public func locate(toTick tick: Int64) {
        locate(toSongFrame: tempoMap.frame(atTick: max(0, tick), sampleRate: sampleRate))
    }

    /// Moves to a song frame (see ``locate(toTick:)``).
    public func locate(toSongFrame frame: Int64) {
        let target = max(0, frame)
        send(.locate(songFrame: target, chase: chase(beforeFrame: target)))
        // Reads of the position show the target at once; the audio thread confirms it.
        engine.publishedSongPosition.store(target * Engine.positionUnitsPerFrame, ordering: .releasing)
    }

    // MARK: Rate

    /// The play rate: 1 is normal speed, 2 twice as fast (0.05...20). Setting it while
    /// playing takes effect at the start of the next block.
    public var playRate: Double {
        get { requestedRate }
        set { setPlayRate(newValue, atOutputFrame: nil) }
    }

    /// Changes the rate exactly at output frame `frame` (nil: the next block).
    public func setPlayRate(_ rate: Double, atOutputFrame frame: Int64?) {
        requestedRate = min(max(rate, Player.rateRange.lowerBound), Player.rateRange.upperBound)
        send(.setRate(step: Player.rateStep(requestedRate), atOutputFrame: frame))
    }

    /// The integer step of the song position per output frame for `rate`.
    public static func rateStep(_ rate: Double) -> Int64 {
        Int64((rate * Double(Engine.positionUnitsPerFrame)).rounded())
    }

    // MARK: Loop and end

    /// Loops `[from, to)` (ticks): it plays `count` times in all (or forever), then playback
    /// goes on. At the loop's end sounding notes are released and playback continues at
    /// `from` in the same frame, with the instruments chased to the song's state there.
    public func setLoop(from: Int64, to: Int64, count: LoopCount) {
        guard to > from else { clearLoop(); return }
        loopSetting = (max(0, from), to, count)
        sendLoop(loopSetting!)
    }

    /// Removes the transport loop.
    public func clearLoop() {
        loopSetting = nil
        send(.setLoop(nil))
    }

    /// Where playback stops by itself: `tick` (events there do not play), or nil for the end
    /// of the sequence (its last events play).
    public func setEnd(tick: Int64?) {
        endTick = tick
        sendEnd()
    }

    private func sendLoop(_ setting: (from: Int64, to: Int64, count: LoopCount), continuingPrevious: Bool = false) {
        let start = tempoMap.frame(atTick: setting.from, sampleRate: sampleRate)
        let end = tempoMap.frame(atTick: setting.to, sampleRate: sampleRate)
        let jumps: Int
        switch setting.count {
        case .times(let n): jumps = max(0, n - 1)
        case .forever: jumps = -1
        }
        guard end > start else { send(.setLoop(nil)); return }
        send(.setLoop(TransportLoop(startFrame: start, endFrame: end, jumps: jumps, chase: chase(beforeFrame: start, clippingRampsAt: end),
                                    continuesPrevious: continuingPrevious)))
    }

    private func sendEnd() {
        if let endTick {
            send(.setEnd(songFrame: tempoMap.frame(atTick: endTick, sampleRate: sampleRate), inclusive: false))
        } else if snapshot.schedule.loopsForever {
            send(.setEnd(songFrame: .max, inclusive: true))
        } else {
            send(.setEnd(songFrame: snapshot.schedule.endFrame, inclusive: true))
        }
    }

    /// Output frames from song frame `from` to `to` at the current rate and loop settings:
    /// what a render of that span produces.
    public func outputFrames(fromSongFrame from: Int64, toSongFrame to: Int64) -> Int64 {
        let step = Player.rateStep(requestedRate)
        var span = max(0, to - from)
        if let loopSetting, case .times(let n) = loopSetting.count, n > 1 {
            let start = tempoMap.frame(atTick: loopSetting.from, sampleRate: sampleRate)
            let end = tempoMap.frame(atTick: loopSetting.to, sampleRate: sampleRate)
            if from < end && to >= end && end > start { span += Int64(n - 1) * (end - start) }
        }
        return ceilDiv(span * Engine.positionUnitsPerFrame, step)
    }

    /// The song frame of `tick`.
    public func songFrame(atTick tick: Int64) -> Int64 {
        tempoMap.frame(atTick: tick, sampleRate: sampleRate)
    }

    // MARK: Host time

    /// The monotonic host time (nanoseconds) at which the sound of `beats` reaches the output,
    /// counting the driver's and the graph's latency, if playback goes on at the current rate
    /// from the last rendered block. Nil while stopped.
    public func hostTime(forBeats beats: Double) -> Int64? {
        guard let anchor = readAnchor(), anchor.step > 0 else { return nil }
        let tick = tempoMap.tick(atBeats: beats)
        let songFrame = Double(tempoMap.frame(atTick: tick, sampleRate: sampleRate))
        let outputOffset = (songFrame * Double(Engine.positionUnitsPerFrame) - Double(anchor.position)) / Double(anchor.step)
        let heard = outputOffset + Double(outputLatencyFrames + engine.graph.latencyFrames)
        return anchor.hostNanos + Int64((heard * 1e9 / Double(sampleRate)).rounded())
    }

    /// The beats heard at monotonic host time `nanos` (the inverse of ``hostTime(forBeats:)``).
    public func beats(forHostTime nanos: Int64) -> Double? {
        guard let anchor = readAnchor() else { return nil }
        let framesSinceAnchor = Double(nanos - anchor.hostNanos) * Double(sampleRate) / 1e9
            - Double(outputLatencyFrames + engine.graph.latencyFrames)
        let position = Double(anchor.position) + framesSinceAnchor * Double(anchor.step)
        let seconds = max(0, position / Double(Engine.positionUnitsPerFrame) / Double(sampleRate))
        return tempoMap.tick(atSeconds: seconds) / Double(sequence.ticksPerQuarter)
    }

    /// Where the output stood at the start of the last rendered block: its output frame (which
    /// never jumps), song position and play-rate step, and the host time the driver gave the
    /// block (0 offline). Nil only if the audio thread kept rewriting it while it was read.
    public func outputAnchor() -> PlaybackAnchor? {
        guard let a = readAnchor() else { return nil }
        return PlaybackAnchor(outputFrame: a.outputFrame, songPosition: a.position, rateStep: a.step, hostNanos: a.hostNanos)
    }

    /// Frames between rendering a frame and hearing it: the driver's buffer plus the graph's
    /// own latency.
    public var heardLatencyFrames: Int { outputLatencyFrames + engine.graph.latencyFrames }

    private func readAnchor() -> (position: Int64, step: Int64, hostNanos: Int64, outputFrame: Int64)? {
        for _ in 0..<1000 {
            let before = engine.anchorSequence.load(ordering: .acquiring)
            if before & 1 != 0 { continue }
            let position = engine.anchorSongPosition.load(ordering: .relaxed)
            let step = engine.anchorRateStep.load(ordering: .relaxed)
            let host = engine.anchorHostNanos.load(ordering: .relaxed)
            let output = engine.anchorOutputFrame.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            if engine.anchorSequence.load(ordering: .relaxed) == before { return (position, step, host, output) }
        }
        return nil
    }

    // MARK: Control-side service

    /// Delivers pending user events to ``userEventHandler`` in order, frees snapshots the audio
    /// thread retired, and extends forever-looping tracks before playback reaches their
    /// unrolled horizon. Returns the number of user events delivered.
    @discardableResult
    public func service() -> Int {
        collectRetired()
        var delivered = 0
        while let record = engine.userEvents.pop() {
            // The schedule numbers the tempo track 0 (`allTracks`); users number `tracks`.
            let track = record.track == 0 ? nil : record.track - 1
            if let type = record.metaType {
                textEventHandler?(PlayedTextEvent(tick: record.tick, track: track, type: type, bytes: record.data))
                continue
            }
            userEventHandler?(PlayedUserEvent(tick: record.tick, track: track, data: record.data))
            delivered += 1
        }
        let schedule = snapshot.schedule
        if schedule.loopsForever {
            let horizonFrame = tempoMap.frame(atTick: schedule.horizonTick, sampleRate: sampleRate)
            let length = max(sequence.length, 1)
            if songFrame >= horizonFrame - (horizonFrame / 2) {
                republish(horizonTick: schedule.horizonTick + 2 * length)
            }
        }
        return delivered
    }

    /// Renders `frameCount` frames on the calling thread (offline playback, tests, render),
    /// then services the control side. A player rendered this way is driven by its control
    /// thread; do not also hand its engine to a driver.
    public func render(frameCount: Int, into output: StereoBuffer) {
        rendersOnControlThread = true
        engine.render(frameCount: frameCount, into: output)
        service()
    }

    private func collectRetired() {
        while let object = engine.retired.pop() { object.release() }
    }

    private func send(_ command: EngineCommand) {
        collectRetired()
        var waited = 0
        while !engine.commands.push(command) {
            // Full: only reached with hundreds of commands between two blocks.
            if rendersOnControlThread {
                // Nobody else renders: a zero-frame render drains the ring without audio.
                engine.render(frameCount: 0, into: StereoBuffer(left: scratch, right: scratch))
            } else {
                // A driver thread renders: it drains the ring at its next block. A driver
                // that has stopped for good would never do so; after two seconds the command
                // is dropped rather than hanging the control thread.
                if waited >= 2_000 { droppedCommands += 1; return }
                usleep(1_000)
                waited += 1
            }
            collectRetired()
        }
    }

    /// True once ``render(frameCount:into:)`` drove the engine from the control thread.
    private var rendersOnControlThread = false

    /// Commands dropped because a stalled driver left the command ring full.
    public private(set) var droppedCommands = 0

    private let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 1)

    deinit { scratch.deallocate() }

    // MARK: Chase

    /// The events that bring every instrument to the song's state just before `frame`:
    /// per node and channel used by the schedule, a reset of all controllers, then the last
    /// bank select, program, controllers, MPE configuration, tuning bank and program (RPN 6, 4 and 3), RPN selection
    /// and data entry, pitch bend and channel pressure before `frame`; then the last value of every automated parameter (a ramp still
    /// running there resumes at its frame within the ramp).
    ///
    /// For a loop jump, `clipEnd` is the loop's end: a ramp that starts inside the loop and
    /// runs past its end is clipped there. The jump sets the parameter to the ramp's value at
    /// the loop's end frame, at once, unless the song sets that parameter before the loop's
    /// start (then the chased value, the one the next pass starts from, applies). Without
    /// this, the ramp would go on running into the next pass, through music it does not
    /// belong to.
    func chase(beforeFrame frame: Int64, clippingRampsAt clipEnd: Int64? = nil) -> ChaseSnapshot {
        struct ChannelState {
            var used = false
            var program: UInt8?
            var controllers = [Int16](repeating: -1, count: 128)
            var controllerOrder: [UInt8] = []
            var pitchBend: MIDIMessage?
            var pressure: MIDIMessage?
            /// The tuning bank and program data entry chose through RPN 4 and 3.
            var tuningBank: UInt8?
            var tuningProgram: UInt8?
            /// The member count of the last MPE Configuration Message (RPN 6) on a manager
            /// channel, and whether the song selects RPN 6 there at all (then a locate before
            /// the first message removes the zone a later one may have left configured).
            var mpeMembers: UInt8?
            var configuresMPE = false
        }
        let schedule = snapshot.schedule
        let targets = snapshot.targets
        let nodes = engine.graph.nodes.count
        var channels = [ChannelState](repeating: ChannelState(), count: nodes * 16)
        struct ParameterKey: Hashable { var node: Int32; var id: UInt32; var scope: AudioParameterScope; var element: UInt32 }
        var parameters: [ParameterKey: NodeEvent] = [:]
        var parameterOrder: [ParameterKey] = []
        // The last parameter event inside the loop, per parameter, for clipping.
        var inLoop: [ParameterKey: (frame: Int64, event: NodeEvent)] = [:]
        var inLoopOrder: [ParameterKey] = []
        // Sysex before the frame, replayed first and in order; a system reset makes what its
        // node heard before it moot, so it starts the node's list and clears its channels.
        var sysex: [GraphEvent] = []
        for (i, e) in schedule.events.enumerated() {
            let node = targets[i]
            if node < 0 { continue }
            if let clipEnd, e.frame >= frame, e.frame < clipEnd {
                switch e.event {
                case .parameter(let id, let scope, let element, _), .parameterRamp(let id, let scope, let element, _):
                    let key = ParameterKey(node: node, id: id, scope: scope, element: element)
                    if inLoop.updateValue((e.frame, e.event), forKey: key) == nil { inLoopOrder.append(key) }
                    continue
                case .midi, .systemExclusive, .transport:
                    break
                }
            }
            switch e.event {
            case .systemExclusive(let message):
                guard e.frame < frame else { continue }
                if message.command?.isSystemReset == true {
                    sysex.removeAll { $0.nodeIndex == Int(node) }
                    for slot in Int(node) * 16..<Int(node) * 16 + 16 where channels[slot].used {
                        channels[slot] = ChannelState()
                        channels[slot].used = true
                        // A loop jump must not cut the tails ringing over it, as a reset
                        // would: it restores the channels' power-up values instead.
                        if clipEnd != nil {
                            channels[slot].program = 0
                            for (c, v) in [(0, 0), (32, 0), (7, 100), (10, 64)] { channels[slot].controllers[c] = Int16(v) }
                        }
                    }
                    if clipEnd != nil { continue }
                }
                sysex.append(GraphEvent(offset: 0, nodeIndex: Int(node), event: e.event))
            case .midi(let m):
                guard m.isChannelMessage else { continue }
                let slot = Int(node) * 16 + Int(m.channel)
                channels[slot].used = true
                if m.status & 0xF0 == 0xB0, m.data1 == MIDIController.rpnLSB, m.data2 == MPEZones.configurationRPN,
                   m.channel == UInt8(MPEZones.lowerManager) || m.channel == UInt8(MPEZones.upperManager) {
                    channels[slot].configuresMPE = true
                }
                if e.frame >= frame { continue }
                switch m.status & 0xF0 {
                case 0xB0:
                    if m.data1 == MIDIController.resetAllControllers {
                        for c in 0..<128 where c != 0 && c != 32 { channels[slot].controllers[c] = -1 }
                        channels[slot].pitchBend = nil
                        channels[slot].pressure = nil
                    } else if m.data1 < 120 {
                        channels[slot].controllers[Int(m.data1)] = Int16(m.data2)
                    }
                    if m.data1 == MIDIController.dataEntryMSB, channels[slot].controllers[Int(MIDIController.rpnMSB)] == 0 {
                        switch channels[slot].controllers[Int(MIDIController.rpnLSB)] {
                        case Int16(MIDITuningState.programSelectRPN): channels[slot].tuningProgram = m.data2
                        case Int16(MIDITuningState.bankSelectRPN): channels[slot].tuningBank = m.data2
                        case Int16(MPEZones.configurationRPN): channels[slot].mpeMembers = m.data2
                        default: break
                        }
                    }
                case 0xC0: channels[slot].program = m.data1
                case 0xE0: channels[slot].pitchBend = m
                case 0xD0: channels[slot].pressure = m
                default: break
                }
            case .parameter(let id, let scope, let element, _):
                guard e.frame < frame else { continue }
                let key = ParameterKey(node: node, id: id, scope: scope, element: element)
                if parameters.updateValue(e.event, forKey: key) == nil { parameterOrder.append(key) }
            case .parameterRamp(let id, let scope, let element, var ramp):
                guard e.frame < frame else { continue }
                let key = ParameterKey(node: node, id: id, scope: scope, element: element)
                // A ramp still running at the target resumes where it is, on its own values.
                let into = frame - e.frame
                let chased: NodeEvent
                if into < ramp.length {
                    ramp.elapsed = into
                    chased = .parameterRamp(id: id, scope: scope, element: element, ramp: ramp)
                } else {
                    chased = .parameter(id: id, scope: scope, element: element, value: ramp.end)
                }
                if parameters.updateValue(chased, forKey: key) == nil { parameterOrder.append(key) }
            case .transport:
                // The engine tells the transport's state at the jump itself.
                continue
            }
        }
        var out = sysex
        // The RPN group goes last and in this order, so data entry lands on the selected RPN.
        let rpnGroup: Set<UInt8> = [6, 38, 96, 97, 98, 99, 100, 101]
        for slot in channels.indices where channels[slot].used {
            let node = slot / 16, channel = UInt8(slot % 16)
            let state = channels[slot]
            func cc(_ controller: UInt8) {
                let v = state.controllers[Int(controller)]
                if v >= 0 {
                    out.append(GraphEvent(offset: 0, nodeIndex: node,
                                          event: .midi(.controlChange(channel: channel, controller: controller, value: UInt8(v)))))
                }
            }
            out.append(GraphEvent(offset: 0, nodeIndex: node,
                                  event: .midi(.controlChange(channel: channel, controller: MIDIController.resetAllControllers, value: 0))))
            cc(0)
            cc(32)
            if let program = state.program {
                out.append(GraphEvent(offset: 0, nodeIndex: node, event: .midi(.programChange(channel: channel, program: program))))
            }
            for c in UInt8(1)..<120 where c != 32 && !rpnGroup.contains(c) { cc(c) }
            // The RPN group restores only the last selection and its data entry, which later RPN
            // traffic (a bend range, say) would leave in place of a tuning bank and program: those
            // are selected on their own first, then the selection is nulled for the group.
            // So is the MPE configuration, first, so the zone exists before its members are chased.
            let mpeMembers = state.configuresMPE ? state.mpeMembers ?? 0 : nil
            if state.tuningBank != nil || state.tuningProgram != nil || mpeMembers != nil {
                func send(_ controller: UInt8, _ value: UInt8) {
                    out.append(GraphEvent(offset: 0, nodeIndex: node,
                                          event: .midi(.controlChange(channel: channel, controller: controller, value: value))))
                }
                for (parameter, value) in [(MPEZones.configurationRPN, mpeMembers), (MIDITuningState.bankSelectRPN, state.tuningBank),
                                           (MIDITuningState.programSelectRPN, state.tuningProgram)] {
                    guard let value else { continue }
                    send(MIDIController.rpnMSB, 0)
                    send(MIDIController.rpnLSB, parameter)
                    send(MIDIController.dataEntryMSB, value)
                }
                send(MIDIController.rpnMSB, 127)
                send(MIDIController.rpnLSB, 127)
            }
            for c: UInt8 in [99, 98, 101, 100, 6, 38] { cc(c) }
            if let bend = state.pitchBend { out.append(GraphEvent(offset: 0, nodeIndex: node, event: .midi(bend))) }
            if let pressure = state.pressure { out.append(GraphEvent(offset: 0, nodeIndex: node, event: .midi(pressure))) }
        }
        for key in inLoopOrder where parameters[key] == nil {
            guard let clipEnd, let last = inLoop[key], case .parameterRamp(let id, let scope, let element, let ramp) = last.event,
                  last.frame + ramp.length - ramp.elapsed > clipEnd else { continue }
            // A ramp of length 1 already at its end: the value at once, with no glide.
            let value = ramp.value(atElapsed: ramp.elapsed + clipEnd - last.frame)
            out.append(GraphEvent(offset: 0, nodeIndex: Int(key.node),
                                  event: .parameterRamp(id: id, scope: scope, element: element,
                                                        ramp: ParameterRamp(from: value, to: value, length: 1, elapsed: 1))))
        }
        for key in parameterOrder {
            out.append(GraphEvent(offset: 0, nodeIndex: Int(key.node), event: parameters[key]!))
        }
        return ChaseSnapshot(events: out, keepingAlive: schedule.systemExclusiveStore)
    }
}
