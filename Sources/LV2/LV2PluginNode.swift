import AudioGraph
import CLilv
import MIDI
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An LV2 plugin hosted as a graph node: an instrument (MIDI in, audio out) or an effect
/// (audio in and out), with its control inputs as the node's parameters.
///
/// ## The fixed grid
///
/// The plugin's `run` is always called for whole slices of ``gridFrames`` (64) frames that
/// start at multiples of 64 of the absolute frame, whatever block sizes the graph renders
/// with: plain hosts that pass each block to `run` get different samples from plugins that
/// update their state once per `run` (MDA JX10 and Piano differ between 64- and 65-frame
/// blocks), and this node must not. Each MIDI event reaches the plugin in the atom sequence of
/// the slice holding its frame, at its exact frame inside that slice.
///
/// A slice can only run once every event of its frames is known, which is when the graph has
/// asked for its last frame; the node therefore outputs slice `k` while it gathers slice
/// `k + 1`: its output at frame `f` is the plugin's output at frame `f - 64`. The node reports
/// this as ``latencyFrames`` (64), and offline renders drop the graph's latency before the
/// first frame they keep (`OfflineRenderer`, `Player.renderToEnd`, the offline session), so
/// an offline render has every note at its exact frame. Live, the grid costs 64 frames
/// (1.5 ms at 44.1 kHz) of latency, reported through the graph's latency.
///
/// ## Parameters and threads
///
/// Each control input is a parameter whose identifier is the port's index, named by the port's
/// name (``parameterID(for:)`` also takes the port's symbol), with the declared range and
/// default. Values, glides and ramps follow the node's absolute frames, and the plugin reads
/// them once per slice: the value the parameter has at the slice's last frame (grid
/// resolution: a ramp reaches the plugin as a staircase of 64-frame steps, each the ramp's
/// value at the step's last frame).
///
/// ## Latency
///
/// A plugin that reports a latency (a control output designated `lv2:latency`: a look-ahead
/// limiter, a linear-phase filter) has it read when the node is prepared, from a run of one
/// slice on silence with the parameters' current values, after which the plugin is reset; it is
/// added to ``latencyFrames``. The graph delays its other paths to line up with it, and offline
/// renders drop it with the grid's, so the plugin's output is at the song's frames; live, it is
/// part of the latency reported. A latency the plugin changes later (its controls moved while
/// playing) is not followed.
///
/// ## Control outputs and CV ports
///
/// The values a plugin writes to its control outputs after each slice are readable from any
/// thread with ``controlOutputValue(_:)``. CV inputs receive silence (0) and CV outputs are
/// connected and ignored.
///
/// Rendering takes no lock, allocates nothing and does no I/O in Tactus's code; the plugin's
/// `run` is the plugin's own. The work a plugin schedules (its worker extension: loading a
/// file) runs right after the slice's `run` on the same thread, so offline renders repeat
/// exactly, or with ``worksInBackground`` on a thread of its own, which live playback needs:
/// then the audio thread only passes requests and responses through lock-free rings. Log
/// lines written during rendering are buffered and handed to the log handler by
/// ``flushLog()``, or by `prepare` and `reset`.
public final class LV2PluginNode: ParameterizedNode {
    /// Frames per `run`: the grid every plugin runs on.
    public static let gridFrames = 64
    /// The smallest atom buffer a MIDI or message port gets, in bytes.
    public static let minimumAtomBufferSize = 8192

    /// The plugin's description.
    public let info: LV2PluginInfo
    /// The plugin's name.
    public var name: String { info.name }
    /// 1 for an effect (its audio inputs), 0 for an instrument.
    public let inputBusCount: Int
    /// One grid of frames and the plugin's own latency: see the type's discussion.
    public var latencyFrames: Int { Self.gridFrames + pluginLatencyFrames }
    /// The latency the plugin reported when the node was last prepared, in frames (0 for a
    /// plugin without a latency port).
    public private(set) var pluginLatencyFrames = 0
    /// The control inputs, by port index.
    public let parameters: NodeParameters

    // Internal, not private, here and below: the state's save and load (LV2PluginState.swift)
    // and the file parameters (LV2PluginFiles.swift) use them.
    let catalogue: LV2Catalogue
    let plugin: OpaquePointer
    private(set) var features: LV2HostFeatures
    private(set) var instance: UnsafeMutablePointer<LilvInstance>?
    private var sampleRate: Double
    let logHandler: LV2LogHandler?

    let grid = LV2PluginNode.gridFrames
    // Audio: what the plugin reads and writes in its run, and the last slice's output (what
    // the node plays while it gathers the next slice).
    let audioIn: [UnsafeMutablePointer<Float>]
    private let audioOut: [UnsafeMutablePointer<Float>]
    private let delayedLeft: UnsafeMutablePointer<Float>
    private let delayedRight: UnsafeMutablePointer<Float>
    // Control ports: one float each, connected for the instance's life.
    private let controls: UnsafeMutablePointer<Float>
    private let controlInputPorts: [(port: UInt32, slot: Int)]
    // Control outputs, parallel to `info.controlOutputs`: the slot each is written in, and a
    // copy of the values after each slice, readable from any thread.
    private let controlOutputSlots: [Int]
    let controlOutputValues: UnsafeMutablePointer<Atomic<UInt32>>
    private let latencySlot: Int?
    // CV ports, one slice each: inputs hold silence, outputs are written and ignored.
    private let cvBuffers: [UnsafeMutablePointer<Float>]
    // Atom ports: the MIDI input (if any), other inputs (an empty sequence), outputs.
    let midiBuffer: UnsafeMutableRawPointer?
    let midiCapacity: Int
    let atomInputs: [(buffer: UnsafeMutableRawPointer, capacity: Int)]
    private let atomOutputs: [(buffer: UnsafeMutableRawPointer, capacity: Int)]
    // The MIDI events, transport positions and messages for the slice being gathered.
    private let sliceEvents = LV2SliceEvents()
    /// MIDI events that were dropped: more than 4,096 in one slice, or more than its atom
    /// buffer holds.
    public var droppedEventCount: Int { sliceEvents.droppedEventCount }
    // The input transport positions go to (as `time:Position` objects), and the one messages
    // (`patch:Set` of a file) go to.
    private let positionTarget: AtomTarget
    private let messageTarget: AtomTarget
    private enum AtomTarget: Equatable {
        case none
        case midiPort
        case atomInput(Int)
    }
    // File parameters set on the control side: sent again to a new instance.
    var files: [(property: String, path: String)] = []
    // Messages sent while rendering (forged atom events at frame 0), control side to audio
    // thread, and where the audio thread gathers them for the slice.
    let messageRing = LV2MessageRing(capacity: 1 << 14)
    private let slicePrefix: UnsafeMutableRawPointer
    private var sliceStart: Int64 = 0
    private var filled = 0
    private var nextFrame: Int64 = -1

    /// Instantiates the plugin `uri` from `catalogue` at `sampleRate` with the features Tactus
    /// provides, and activates it.
    /// - Parameters:
    ///   - uri: the plugin's URI, as `lv2ls` and ``LV2Catalogue/plugins`` list it.
    ///   - catalogue: the installed plugins; the node keeps it alive.
    ///   - sampleRate: the rate to instantiate at; `prepare` re-instantiates at another.
    ///   - log: receives the plugin's log lines; nil discards them. Tactus never writes a
    ///     plugin's log to standard output.
    /// - Throws: ``LV2Error/unknownPlugin(uri:suggestions:)``; ``LV2Error/missingFeatures(plugin:features:)``
    ///   naming every required feature Tactus lacks (the plugin is not instantiated);
    ///   ``LV2Error/notHostable(plugin:reason:)`` for ports Tactus cannot connect;
    ///   ``LV2Error/instantiationFailed(plugin:)``.
    public init(uri: String, catalogue: LV2Catalogue, sampleRate: Double = 44_100, log: LV2LogHandler? = nil) throws(LV2Error) {
        let info = try catalogue.plugin(uri)
        let missing = info.missingFeatures
        if !missing.isEmpty { throw .missingFeatures(plugin: "\(info.name) (\(info.uri))", features: missing) }
        if let problem = info.hostingProblem { throw .notHostable(plugin: "\(info.name) (\(info.uri))", reason: problem) }
        guard let plugin = catalogue.handle(uri) else { throw .unknownPlugin(uri: uri, suggestions: []) }
        self.info = info
        self.catalogue = catalogue
        self.plugin = plugin
        self.sampleRate = sampleRate
        logHandler = log

        let audioInputs = info.ports.filter { $0.kind == .audio && $0.isInput }
        inputBusCount = audioInputs.isEmpty ? 0 : 1
        audioIn = audioInputs.map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 64) }
        audioOut = info.ports.filter { $0.kind == .audio && !$0.isInput }.map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 64) }
        delayedLeft = .allocate(capacity: 64)
        delayedRight = .allocate(capacity: 64)
        let controlPorts = info.ports.filter { $0.kind == .control }
        controls = .allocate(capacity: max(1, controlPorts.count))
        var inputs: [(UInt32, Int)] = []
        var infos: [AudioParameterInfo] = []
        var outputSlots: [Int] = []
        for (slot, port) in controlPorts.enumerated() {
            controls[slot] = port.defaultValue ?? port.minimum ?? 0
            guard port.isInput else { outputSlots.append(slot); continue }
            inputs.append((port.index, slot))
            infos.append(Self.parameterInfo(port, sampleRate: sampleRate))
        }
        controlInputPorts = inputs
        controlOutputSlots = outputSlots
        latencySlot = info.controlOutputs.firstIndex(where: \.reportsLatency).map { outputSlots[$0] }
        parameters = NodeParameters(infos)

        let midiPort = info.ports.first { $0.kind == .atom && $0.isInput && $0.supportsMIDI }
        func atomSize(_ port: LV2PortInfo) -> Int { max(Self.minimumAtomBufferSize, port.minimumSize ?? 0) }
        midiCapacity = midiPort.map(atomSize) ?? 0
        midiBuffer = midiPort.map { UnsafeMutableRawPointer.allocate(byteCount: atomSize($0), alignment: 8) }
        let otherAtomInputs = info.ports.filter { $0.kind == .atom && $0.isInput && $0.index != midiPort?.index }
        atomInputs = otherAtomInputs.map { (UnsafeMutableRawPointer.allocate(byteCount: atomSize($0), alignment: 8), atomSize($0)) }
        if midiPort?.supportsTimePosition == true {
            positionTarget = .midiPort
        } else if let index = otherAtomInputs.firstIndex(where: \.supportsTimePosition) {
            positionTarget = .atomInput(index)
        } else {
            positionTarget = .none
        }
        messageTarget = midiPort != nil ? .midiPort : otherAtomInputs.isEmpty ? .none : .atomInput(0)
        atomOutputs = info.ports.filter { $0.kind == .atom && !$0.isInput }
            .map { (UnsafeMutableRawPointer.allocate(byteCount: atomSize($0), alignment: 8), atomSize($0)) }
        slicePrefix = .allocate(byteCount: 1 << 14, alignment: 8)
        controlOutputValues = .allocate(capacity: max(1, outputSlots.count))
        for k in 0..<max(1, outputSlots.count) { (controlOutputValues + k).initialize(to: Atomic<UInt32>(0)) }
        cvBuffers = info.ports.filter { $0.kind == .cv }.map { _ in
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 64)
            buffer.initialize(repeating: 0, count: 64)
            return buffer
        }

        let sequenceSize = max(midiCapacity, atomInputs.map(\.capacity).max() ?? 0, atomOutputs.map(\.capacity).max() ?? 0,
                               Self.minimumAtomBufferSize)
        features = LV2HostFeatures(plugin: info.name, sampleRate: sampleRate, blockLength: grid, sequenceSize: sequenceSize,
                                   logHandler: log)
        try instantiate()
        clearBuffers()
    }

    deinit {
        release()
        audioIn.forEach { $0.deallocate() }
        audioOut.forEach { $0.deallocate() }
        delayedLeft.deallocate()
        delayedRight.deallocate()
        controls.deallocate()
        midiBuffer?.deallocate()
        atomInputs.forEach { $0.buffer.deallocate() }
        atomOutputs.forEach { $0.buffer.deallocate() }
        slicePrefix.deallocate()
        controlOutputValues.deinitialize(count: max(1, controlOutputSlots.count))
        controlOutputValues.deallocate()
        cvBuffers.forEach { $0.deallocate() }
    }

    /// The identifier of the parameter whose port symbol or name is `name` (the symbol first,
    /// names without regard to case).
    /// - Throws: ``LV2Error/unknownParameter(plugin:name:)``.
    public func parameterID(for name: String) throws(LV2Error) -> UInt32 {
        let controlInputs = info.controlInputs
        if let port = controlInputs.first(where: { $0.symbol == name }) ?? controlInputs.first(where: {
            $0.name.caseInsensitiveCompare(name) == .orderedSame
        }) {
            return port.index
        }
        throw .unknownParameter(plugin: info.name, name: name)
    }

    /// Re-instantiates the plugin when the sample rate changes (LV2 fixes it at
    /// instantiation); if that fails the node plays silence and the log handler is told.
    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        parameters.prepare(sampleRate: sampleRate)
        if sampleRate != self.sampleRate || instance == nil {
            release()
            self.sampleRate = sampleRate
            features = LV2HostFeatures(plugin: info.name, sampleRate: sampleRate, blockLength: grid,
                                       sequenceSize: max(midiCapacity, Self.minimumAtomBufferSize), logHandler: logHandler)
            do {
                try instantiate()
            } catch {
                logHandler?(info.name, .error, error.description)
            }
        }
        measureLatency()
        reset()
    }

    /// Reads the plugin's latency from a run of one slice on silence with the parameters'
    /// current values (as Ardour does); `reset` then drops what the run left.
    private func measureLatency() {
        guard let latencySlot, let instance else {
            pluginLatencyFrames = 0
            return
        }
        latchControls()
        for buffer in audioIn { buffer.update(repeating: 0, count: grid) }
        if let midiBuffer { writeEmptySequence(into: midiBuffer) }
        prepareAtomPorts(except: midiBuffer ?? slicePrefix)
        workingHere {
            instance.pointee.lv2_descriptor.pointee.run?(instance.pointee.lv2_handle, UInt32(grid))
            features.worker.perform(handle: instance.pointee.lv2_handle)
        }
        let reported = controls[latencySlot]
        pluginLatencyFrames = reported.isFinite ? max(0, min(Int(reported.rounded()), Int(sampleRate) * 10)) : 0
        publishControlOutputs()
    }

    /// Copies the control outputs' values where ``controlOutputValue(_:)`` reads them.
    private func publishControlOutputs() {
        for k in 0..<controlOutputSlots.count {
            controlOutputValues[k].store(controls[controlOutputSlots[k]].bitPattern, ordering: .relaxed)
        }
    }

    /// Deactivates and reactivates the plugin, which LV2 requires to drop all state that
    /// depends on what it played (sounding notes, tails), and empties the grid's buffers.
    public func reset() {
        flushLog()
        if let instance {
            instance.pointee.lv2_descriptor.pointee.deactivate?(instance.pointee.lv2_handle)
            instance.pointee.lv2_descriptor.pointee.activate?(instance.pointee.lv2_handle)
        }
        // Work still pending (a file to load, a sample to free) is done, not dropped.
        workingHere {
            if let instance { features.worker.drain(handle: instance.pointee.lv2_handle) } else { features.worker.clear() }
        }
        clearBuffers()
    }

    /// Hands the log lines the plugin wrote while rendering to the log handler (control side).
    public func flushLog() {
        features.logBuffer.drain()
    }

    /// Whether the plugin's work (what its worker extension schedules: loading a file) runs on
    /// a thread of its own while the node renders, as live playback needs: the audio thread
    /// never waits for it, and its result reaches the plugin some slices later. Off (the
    /// default), the work runs right after the slice that scheduled it, so offline renders are
    /// the same every time. Set it on the control side while the node is not rendering.
    public var worksInBackground = false {
        didSet {
            guard worksInBackground != oldValue, let instance else { return }
            if worksInBackground {
                features.worker.startBackground(handle: instance.pointee.lv2_handle)
            } else {
                features.worker.stopBackground()
            }
        }
    }

    /// Runs `body` with the worker in its synchronous mode (control side): the work a run on
    /// the control side schedules is done before `body` returns.
    func workingHere(_ body: () -> Void) {
        let background = features.worker.isInBackground
        features.worker.stopBackground()
        body()
        if background, let instance { features.worker.startBackground(handle: instance.pointee.lv2_handle) }
    }

    /// Queues `message` for the slice that holds `frame`; a program change is dropped when
    /// ``ignoresProgramChanges`` is on.
    public func receive(_ message: MIDIMessage, atFrame frame: Int64) {
        if ignoresProgramChanges && message.status & 0xF0 == 0xC0 { return }
        sliceEvents.add(message, atFrame: frame)
    }

    /// Whether program changes are kept from the plugin, so a preset or state chosen for it is
    /// what plays whatever program the song selects. ZynAddSubFX needs it: hosted as a plugin it
    /// has no bank, and a program change makes it load an empty part, the default sound, in
    /// place of the patch. Off by default, as a SoundFont player needs the song's programs. Set
    /// it on the control side while the node is not rendering.
    public var ignoresProgramChanges = false

    /// True when the plugin reads the transport's position (an atom input that supports
    /// `time:Position`, as metronomes, arpeggiators and tempo-synced delays have).
    public var followsTransport: Bool { positionTarget != .none }

    /// Queues the transport's state for the slice that holds `frame`; the plugin receives it
    /// as a `time:Position` object (frame, speed, bar, bar beat, beat unit, beats per bar,
    /// beats per minute) at its exact frame in the slice, before the MIDI events of that frame.
    public func transportChanged(_ position: TransportPosition, atFrame frame: Int64) {
        guard positionTarget != .none else { return }
        // Full (sixteen changes in one slice): the latest state replaces the last queued one.
        sliceEvents.add(position, atFrame: frame)
    }

    /// Plays the previous slice's output while gathering this call's frames (and input) into
    /// the current slice; runs the plugin each time a slice is complete.
    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        if startFrame != nextFrame { resynchronize(at: startFrame) }
        var done = 0
        while done < frameCount {
            let count = min(frameCount - done, grid - filled)
            if !audioIn.isEmpty, let input = inputs.first {
                if audioIn.count == 1 {
                    for i in 0..<count { audioIn[0][filled + i] = (input.left[done + i] + input.right[done + i]) * 0.5 }
                } else {
                    (audioIn[0] + filled).update(from: input.left + done, count: count)
                    (audioIn[1] + filled).update(from: input.right + done, count: count)
                }
            }
            (output.left + done).update(from: delayedLeft + filled, count: count)
            (output.right + done).update(from: delayedRight + filled, count: count)
            if filled + count == grid {
                // The plugin reads each control once per slice: its value at the slice's
                // last frame, before the step to the next slice's first.
                parameters.step(frames: count - 1)
                latchControls()
                parameters.step(frames: 1)
            } else {
                parameters.step(frames: count)
            }
            filled += count
            done += count
            if filled == grid {
                runSlice()
                sliceStart += Int64(grid)
                filled = 0
            }
        }
        nextFrame = startFrame + Int64(frameCount)
    }

    // MARK: Internals

    private static func parameterInfo(_ port: LV2PortInfo, sampleRate: Double) -> AudioParameterInfo {
        let scale: Float = port.isSampleRateRelative ? Float(sampleRate) : 1
        var low = (port.minimum ?? 0) * scale, high = (port.maximum ?? 1) * scale
        if port.isToggle { low = 0; high = 1 }
        if low > high { swap(&low, &high) }
        let value = min(max((port.defaultValue ?? low) * scale, low), high)
        let unit: AudioParameterUnit = port.isInteger ? .indexed : .generic
        return AudioParameterInfo(id: port.index, name: port.name, range: low...high, unit: unit, defaultValue: value)
    }

    private func instantiate() throws(LV2Error) {
        guard let created = lilv_plugin_instantiate(plugin, sampleRate, features.featureList) else {
            throw .instantiationFailed(plugin: "\(info.name) (\(info.uri))")
        }
        instance = created
        let descriptor = created.pointee.lv2_descriptor.pointee
        let handle = created.pointee.lv2_handle
        if let extensionData = descriptor.extension_data, let worker = extensionData(LV2URI.workerInterface) {
            features.worker.interface = worker.assumingMemoryBound(to: LV2_Worker_Interface.self)
        }
        var audioInIndex = 0, audioOutIndex = 0, controlSlot = 0, atomInIndex = 0, atomOutIndex = 0, cvIndex = 0
        let midiIndex = info.ports.first { $0.kind == .atom && $0.isInput && $0.supportsMIDI }?.index
        for port in info.ports {
            let location: UnsafeMutableRawPointer?
            switch port.kind {
            case .audio where port.isInput:
                location = UnsafeMutableRawPointer(audioIn[audioInIndex]); audioInIndex += 1
            case .audio:
                location = UnsafeMutableRawPointer(audioOut[audioOutIndex]); audioOutIndex += 1
            case .control:
                location = UnsafeMutableRawPointer(controls + controlSlot); controlSlot += 1
            case .atom where port.index == midiIndex:
                location = midiBuffer
            case .atom where port.isInput:
                location = atomInputs[atomInIndex].buffer; atomInIndex += 1
            case .atom:
                location = atomOutputs[atomOutIndex].buffer; atomOutIndex += 1
            case .cv:
                location = UnsafeMutableRawPointer(cvBuffers[cvIndex]); cvIndex += 1
            case .other:
                location = nil // optional ports only (see hostingProblem)
            }
            descriptor.connect_port?(handle, port.index, location)
        }
        if info.requiredFeatures.contains(LV2URI.loadDefaultState) { restoreDefaultState(created) }
        descriptor.activate?(handle)
        for file in files { deliverFile(file.path, forProperty: file.property, to: created) }
        if worksInBackground { features.worker.startBackground(handle: handle) }
        flushLog()
    }

    private func release() {
        guard let instance else { return }
        features.worker.stopBackground()
        // Pending work may free what the plugin's cleanup does not (a replaced sample).
        features.worker.drain(handle: instance.pointee.lv2_handle)
        instance.pointee.lv2_descriptor.pointee.deactivate?(instance.pointee.lv2_handle)
        lilv_instance_free(instance)
        self.instance = nil
        flushLog()
    }

    private func clearBuffers() {
        for buffer in audioIn { buffer.update(repeating: 0, count: grid) }
        delayedLeft.update(repeating: 0, count: grid)
        delayedRight.update(repeating: 0, count: grid)
        sliceEvents.discardEvents()
        sliceEvents.discardPositions()
        nextFrame = -1
    }

    /// Starts gathering at `frame` when the graph jumps (the first render, or after a reset):
    /// the slice holding `frame` starts empty, and what the node plays until it is complete
    /// is silence.
    private func resynchronize(at frame: Int64) {
        let phase = Int(((frame % Int64(grid)) + Int64(grid)) % Int64(grid))
        sliceStart = frame - Int64(phase)
        filled = phase
        for i in 0..<audioIn.count { audioIn[i].update(repeating: 0, count: grid) }
        delayedLeft.update(repeating: 0, count: grid)
        delayedRight.update(repeating: 0, count: grid)
    }

    /// Writes the slice's inputs: its MIDI events into the MIDI port's sequence; its transport
    /// positions into the port that takes them; the messages the control side sent while
    /// rendering (whole events at frame 0) into the input ``setFile(_:forProperty:)`` writes
    /// to; an empty sequence into every other atom input. Then forgets the slice's events.
    private func writeInputSequences() {
        var prefixBytes = 0
        if messageTarget != .none {
            while prefixBytes + 256 <= (1 << 14),
                  let size = messageRing.read(into: slicePrefix + prefixBytes, bufferCapacity: (1 << 14) - prefixBytes) {
                prefixBytes += Int(size)
            }
        }
        if let midiBuffer {
            sliceEvents.writeSequence(into: midiBuffer, capacity: midiCapacity, sliceStart: sliceStart, midi: true,
                                      positions: positionTarget == .midiPort, features: features, prefix: slicePrefix,
                                      prefixBytes: messageTarget == .midiPort ? prefixBytes : 0)
        }
        // Index loops: in unoptimized builds, iterating an array of tuples with for-in allocates.
        for i in 0..<atomInputs.count {
            let positions = positionTarget == .atomInput(i), messages = messageTarget == .atomInput(i)
            if positions || messages {
                sliceEvents.writeSequence(into: atomInputs[i].buffer, capacity: atomInputs[i].capacity, sliceStart: sliceStart, midi: false,
                                          positions: positions, features: features, prefix: slicePrefix, prefixBytes: messages ? prefixBytes : 0)
            } else {
                writeEmptySequence(into: atomInputs[i].buffer)
            }
        }
        sliceEvents.discardEvents()
        sliceEvents.discardPositions()
    }

    func writeEmptySequence(into buffer: UnsafeMutableRawPointer) {
        let sequence = buffer.assumingMemoryBound(to: LV2_Atom_Sequence.self)
        sequence.pointee.atom = LV2_Atom(size: UInt32(MemoryLayout<LV2_Atom_Sequence_Body>.size), type: features.atomSequence)
        sequence.pointee.body = LV2_Atom_Sequence_Body(unit: 0, pad: 0)
    }

    /// Empty sequences in every atom input but `kept` (the MIDI one included), and room in
    /// every output, for a run outside the render.
    func prepareAtomPorts(except kept: UnsafeMutableRawPointer) {
        if let midiBuffer, midiBuffer != kept { writeEmptySequence(into: midiBuffer) }
        for i in 0..<atomInputs.count where atomInputs[i].buffer != kept { writeEmptySequence(into: atomInputs[i].buffer) }
        prepareAtomOutputs()
    }

    private func prepareAtomOutputs() {
        for i in 0..<atomOutputs.count {
            // An output port's buffer tells the plugin how much room it has.
            atomOutputs[i].buffer.assumingMemoryBound(to: LV2_Atom.self).pointee =
                LV2_Atom(size: UInt32(atomOutputs[i].capacity - MemoryLayout<LV2_Atom>.size), type: features.atomChunk)
        }
    }

    /// Copies the parameters' current values into the control ports the plugin reads.
    private func latchControls() {
        for i in 0..<controlInputPorts.count {
            if let value = parameters.current(controlInputPorts[i].port) { controls[controlInputPorts[i].slot] = value }
        }
    }

    private func runSlice() {
        writeInputSequences()
        guard let instance else {
            delayedLeft.update(repeating: 0, count: grid)
            delayedRight.update(repeating: 0, count: grid)
            return
        }
        prepareAtomOutputs()
        let handle = instance.pointee.lv2_handle
        features.logBuffer.onAudioThread = true
        instance.pointee.lv2_descriptor.pointee.run?(handle, UInt32(grid))
        features.worker.perform(handle: handle)
        features.logBuffer.onAudioThread = false
        publishControlOutputs()
        delayedLeft.update(from: audioOut[0], count: grid)
        delayedRight.update(from: audioOut[audioOut.count > 1 ? 1 : 0], count: grid)
    }
}
