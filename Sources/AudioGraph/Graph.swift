/// Why a graph cannot be compiled.
public enum AudioGraphError: Error, Equatable, CustomStringConvertible {
    /// A connection names a node that is not in the graph.
    case unknownNode(UInt32)
    /// A connection targets an input bus the node does not have.
    case noSuchInput(node: UInt32, bus: Int)
    /// The graph has no output node, or more than one.
    case outputCount(Int)
    /// The connections form a cycle through the listed node.
    case cycle(UInt32)
    /// The node has no parameter with that name.
    case unknownParameter(node: UInt32, name: String)

    public var description: String {
        switch self {
        case .unknownNode(let id): return "no node with id \(id) in the graph"
        case .noSuchInput(let id, let bus): return "node \(id) has no input bus \(bus)"
        case .outputCount(let n): return "a graph needs exactly one output node, this one has \(n)"
        case .cycle(let id): return "the connections form a cycle through node \(id)"
        case .unknownParameter(let id, let name): return "node \(id) has no parameter named '\(name)'"
        }
    }
}

/// A graph under construction, like Apple's AUGraph before `AUGraphInitialize`: nodes and
/// connections are added on the control side, then ``compile(sampleRate:maximumFrameCount:)``
/// makes the immutable ``CompiledGraph`` that the audio thread renders.
public final class AudioGraph {
    /// A connection from one node's output to another node's input bus.
    public struct Connection: Hashable, Sendable {
        /// The node whose output is read.
        public var source: UInt32
        /// The node that reads it.
        public var destination: UInt32
        /// The destination's input bus.
        public var bus: Int
    }

    /// The nodes by identifier, in the order they were added.
    public private(set) var nodes: [(id: UInt32, node: any AudioNode)] = []
    /// The connections.
    public private(set) var connections: [Connection] = []
    private var nextID: UInt32 = 1

    /// An empty graph.
    public init() {}

    /// Adds a node and returns its identifier (parameter events address nodes by it).
    /// Identifiers count up from 1 unless `id` picks one.
    @discardableResult
    public func add(_ node: any AudioNode, id: UInt32? = nil) -> UInt32 {
        let chosen = id ?? nextID
        nodes.removeAll { $0.id == chosen }
        nodes.append((chosen, node))
        nextID = max(nextID, chosen &+ 1)
        return chosen
    }

    /// The node with identifier `id`.
    public func node(_ id: UInt32) -> (any AudioNode)? {
        nodes.first { $0.id == id }?.node
    }

    /// The identifier of the parameter called `name` (without regard to case) of node `node`:
    /// how automation addresses a parameter by name.
    public func parameterID(node: UInt32, named name: String) throws(AudioGraphError) -> UInt32 {
        guard let n = self.node(node) else { throw AudioGraphError.unknownNode(node) }
        guard let info = n.parameterInfo(named: name) else { throw AudioGraphError.unknownParameter(node: node, name: name) }
        return info.id
    }

    /// Feeds `source`'s output into `destination`'s input `bus`. Several sources on one bus
    /// are summed.
    public func connect(_ source: UInt32, to destination: UInt32, bus: Int = 0) throws(AudioGraphError) {
        guard node(source) != nil else { throw AudioGraphError.unknownNode(source) }
        guard let dest = node(destination) else { throw AudioGraphError.unknownNode(destination) }
        guard bus >= 0, bus < dest.inputBusCount else { throw AudioGraphError.noSuchInput(node: destination, bus: bus) }
        let c = Connection(source: source, destination: destination, bus: bus)
        if !connections.contains(c) { connections.append(c) }
    }

    /// A new graph with the same nodes (the same objects, not copies) and connections: what
    /// a player compiles, so that later changes to this graph do not reach it.
    public func copy() -> AudioGraph {
        let copy = AudioGraph()
        copy.nodes = nodes
        copy.connections = connections
        copy.nextID = nextID
        return copy
    }

    /// Removes every connection into `destination`'s `bus`.
    public func disconnect(_ destination: UInt32, bus: Int = 0) {
        connections.removeAll { $0.destination == destination && $0.bus == bus }
    }

    /// Prepares every node and freezes the graph for rendering. Nodes that do not lead to the
    /// output are still rendered (an instrument may be recorded or measured by a test), after
    /// the nodes feeding them.
    public func compile(sampleRate: Double, maximumFrameCount: Int) throws(AudioGraphError) -> CompiledGraph {
        let outputs = nodes.filter { $0.node is OutputNode }
        guard outputs.count == 1 else { throw AudioGraphError.outputCount(outputs.count) }
        // Depth-first topological order; a node is placed after everything feeding it.
        var order: [Int] = []
        var state = [UInt8](repeating: 0, count: nodes.count) // 0 new, 1 visiting, 2 done
        let indexOf = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { ($1.id, $0) })
        func visit(_ i: Int) throws(AudioGraphError) {
            if state[i] == 2 { return }
            if state[i] == 1 { throw AudioGraphError.cycle(nodes[i].id) }
            state[i] = 1
            for c in connections where c.destination == nodes[i].id {
                guard let s = indexOf[c.source] else { throw AudioGraphError.unknownNode(c.source) }
                try visit(s)
            }
            state[i] = 2
            order.append(i)
        }
        for i in nodes.indices { try visit(i) }
        let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        var specs: [CompiledGraph.NodeSpec] = []
        for i in order {
            let (id, node) = nodes[i]
            var buses: [[Int]] = Array(repeating: [], count: node.inputBusCount)
            for c in connections where c.destination == id {
                buses[c.bus].append(position[indexOf[c.source]!]!)
            }
            specs.append(.init(id: id, node: node, inputSources: buses))
        }
        let outputIndex = position[indexOf[outputs[0].id]!]!
        return CompiledGraph(specs: specs, outputIndex: outputIndex, sampleRate: sampleRate,
                             maximumFrameCount: maximumFrameCount)
    }
}

/// An immutable, prepared graph: the audio thread renders it with ``render(startFrame:frameCount:events:)``.
///
/// The structure (nodes, order, buffers) never changes after compilation; node state changes
/// only through rendering, events and parameters. This is what a player publishes to the audio
/// thread as one snapshot.
public final class CompiledGraph {
    struct NodeSpec {
        var id: UInt32
        var node: any AudioNode
        var inputSources: [[Int]]
    }

    /// The nodes in render order (every node after the nodes feeding it).
    public let nodes: [any AudioNode]
    /// The node identifiers, parallel to ``nodes``.
    public let nodeIDs: [UInt32]
    /// Index of the output node in ``nodes``.
    public let outputIndex: Int
    /// The sample rate the nodes were prepared for.
    public let sampleRate: Double
    /// The largest `frameCount` one render call may ask for.
    public let maximumFrameCount: Int
    /// Frames by which the output lags the instruments: the longest path's total latency.
    /// Shorter paths into a node are delayed to line up with its longest, so instruments with
    /// different latencies (an LV2 plugin beside a built-in instrument) are heard together.
    public let latencyFrames: Int

    // Per node: its output buffer, and per input bus either a source's buffer (one source),
    // a summing buffer (several) or a silent buffer (none).
    private let outputBuffers: [StereoBuffer]
    private let inputPlans: [[InputPlan]]
    private let inputScratch: UnsafeMutablePointer<StereoBuffer>
    private let inputScratchOffsets: [Int]
    private let nodeCount: Int
    private let storage: UnsafeMutablePointer<Float>
    private let silence: StereoBuffer
    private let compensationDelays: [CompensationDelay]

    enum InputPlan {
        case silent
        case single(Int)
        /// Several sources, or one whose path lags less than the node's longest, summed (and
        /// delayed) into the bus's own buffer.
        case summed([AlignedSource], StereoBuffer)
    }

    struct AlignedSource {
        var index: Int
        var delay: CompensationDelay?
    }

    init(specs: [NodeSpec], outputIndex: Int, sampleRate: Double, maximumFrameCount: Int) {
        let n = specs.count
        let frames = max(1, maximumFrameCount)
        // Prepared before their latency is read: a node may only know it once it has the
        // sample rate (the limiter's look-ahead is a time).
        for spec in specs { spec.node.prepare(sampleRate: sampleRate, maximumFrameCount: frames) }
        // Longest-latency path into each node, in render order; every source of a node whose
        // path lags less is delayed by the difference, so its inputs line up.
        var pathLatency = [Int](repeating: 0, count: n)
        var upstreamLatency = [Int](repeating: 0, count: n)
        for (i, spec) in specs.enumerated() {
            upstreamLatency[i] = spec.inputSources.joined().map { pathLatency[$0] }.max() ?? 0
            pathLatency[i] = upstreamLatency[i] + spec.node.latencyFrames
        }
        latencyFrames = pathLatency[outputIndex]
        func needsOwnBuffer(_ sources: [Int], node i: Int) -> Bool {
            sources.count > 1 || sources.contains { pathLatency[$0] < upstreamLatency[i] }
        }
        let ownBuffers = specs.enumerated().reduce(0) { total, spec in
            total + spec.element.inputSources.filter { needsOwnBuffer($0, node: spec.offset) }.count
        }
        let channelCount = 2 * (n + ownBuffers + 1)
        let store = UnsafeMutablePointer<Float>.allocate(capacity: channelCount * frames)
        store.initialize(repeating: 0, count: channelCount * frames)
        storage = store
        var nextChannel = 0
        func takeBuffer() -> StereoBuffer {
            defer { nextChannel += 2 }
            return StereoBuffer(left: store + nextChannel * frames, right: store + (nextChannel + 1) * frames)
        }
        silence = takeBuffer()
        outputBuffers = specs.map { _ in takeBuffer() }
        var plans: [[InputPlan]] = []
        var offsets: [Int] = []
        var delays: [CompensationDelay] = []
        var totalBuses = 0
        for (i, spec) in specs.enumerated() {
            offsets.append(totalBuses)
            totalBuses += spec.inputSources.count
            plans.append(spec.inputSources.map { sources in
                if sources.isEmpty { return .silent }
                if !needsOwnBuffer(sources, node: i) { return .single(sources[0]) }
                let aligned = sources.map { source in
                    let lag = upstreamLatency[i] - pathLatency[source]
                    let delay = lag > 0 ? CompensationDelay(frames: lag) : nil
                    if let delay { delays.append(delay) }
                    return AlignedSource(index: source, delay: delay)
                }
                return .summed(aligned, takeBuffer())
            })
        }
        inputPlans = plans
        inputScratchOffsets = offsets
        compensationDelays = delays
        inputScratch = .allocate(capacity: max(1, totalBuses))
        inputScratch.initialize(repeating: silence, count: max(1, totalBuses))
        nodes = specs.map(\.node)
        nodeIDs = specs.map(\.id)
        nodeCount = n
        self.outputIndex = outputIndex
        self.sampleRate = sampleRate
        self.maximumFrameCount = frames
    }

    deinit {
        storage.deallocate()
        inputScratch.deallocate()
    }

    /// The index in ``nodes`` of the node with identifier `id`.
    public func index(ofNode id: UInt32) -> Int? {
        nodeIDs.firstIndex(of: id)
    }

    /// The output of the last render call: frames `0 ..< frameCount` of the output node.
    public var output: StereoBuffer { outputBuffers[outputIndex] }

    /// Returns every node to silence.
    public func reset() {
        for node in nodes { node.reset() }
        for delay in compensationDelays { delay.clear() }
    }

    /// Renders `frameCount` frames (at most ``maximumFrameCount``) starting at absolute frame
    /// `startFrame`, delivering `events` (sorted by offset) at their exact offsets; the result is
    /// in ``output``.
    ///
    /// This is the one routine that splits a block: it renders every node up to the next event
    /// offset, delivers the events of that offset, and goes on. Events at or beyond
    /// `frameCount` are delivered before returning, at the end of the block.
    public func render(startFrame: Int64, frameCount: Int, events: UnsafeBufferPointer<GraphEvent>) {
        precondition(frameCount <= maximumFrameCount, "render call larger than the prepared maximum")
        var position = 0
        var next = 0
        while true {
            while next < events.count && events[next].offset <= position {
                deliver(events[next], atFrame: startFrame + Int64(position))
                next += 1
            }
            if position >= frameCount { break }
            let end = next < events.count ? min(frameCount, events[next].offset) : frameCount
            renderSegment(startFrame: startFrame + Int64(position), offset: position, frameCount: end - position)
            position = end
        }
        while next < events.count {
            deliver(events[next], atFrame: startFrame + Int64(frameCount))
            next += 1
        }
    }

    @inline(__always)
    private func deliver(_ e: GraphEvent, atFrame frame: Int64) {
        let node = nodes[e.nodeIndex]
        switch e.event {
        case .midi(let m): node.receive(m, atFrame: frame)
        case .systemExclusive(let s): node.receiveSystemExclusive(s.bytes, atFrame: frame)
        case .parameter(let id, let scope, let element, let value):
            node.setParameter(id, value: value, scope: scope, element: element)
        case .parameterRamp(let id, let scope, let element, let ramp):
            node.rampParameter(id, ramp: ramp, scope: scope, element: element)
        case .transport(let position):
            node.transportChanged(position, atFrame: frame)
        }
    }

    private func renderSegment(startFrame: Int64, offset: Int, frameCount: Int) {
        for i in 0..<nodeCount {
            let plans = inputPlans[i]
            let base = inputScratchOffsets[i]
            for b in 0..<plans.count {
                switch plans[b] {
                case .silent:
                    // Nothing ever writes the silent buffer, so it stays zero.
                    inputScratch[base + b] = silence.advanced(by: offset)
                case .single(let s):
                    inputScratch[base + b] = outputBuffers[s].advanced(by: offset)
                case .summed(let sources, let sum):
                    let dst = sum.advanced(by: offset)
                    // Index loops: iterating a slice (dropFirst) allocates in debug builds,
                    // and the audio thread must not allocate in any build.
                    var k = 0
                    while k < sources.count {
                        let src = outputBuffers[sources[k].index].advanced(by: offset)
                        if let delay = sources[k].delay {
                            delay.process(src, into: dst, frameCount: frameCount, adding: k > 0)
                        } else if k == 0 {
                            dst.left.update(from: src.left, count: frameCount)
                            dst.right.update(from: src.right, count: frameCount)
                        } else {
                            var f = 0
                            while f < frameCount {
                                dst.left[f] += src.left[f]
                                dst.right[f] += src.right[f]
                                f += 1
                            }
                        }
                        k += 1
                    }
                    inputScratch[base + b] = dst
                }
            }
            nodes[i].render(startFrame: startFrame, frameCount: frameCount,
                            inputs: UnsafeBufferPointer(start: inputScratch + base, count: plans.count),
                            output: outputBuffers[i].advanced(by: offset))
        }
    }
}

/// The graph's output: copies its input to the graph's output buffer. Exactly one per graph.
public final class OutputNode: AudioNode {
    public let name = "Output"
    public let inputBusCount = 1
    public let parameterInfos: [AudioParameterInfo] = []
    /// Creates the output node.
    public init() {}
    public func prepare(sampleRate: Double, maximumFrameCount: Int) {}
    public func reset() {}
    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    public func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.left.update(from: inputs[0].left, count: frameCount)
        output.right.update(from: inputs[0].right, count: frameCount)
    }
}
