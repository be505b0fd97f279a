import AudioGraph
import Foundation
import MIDI

/// An event for a node at an absolute frame, for ``NodeRenderer``.
public struct FramedNodeEvent: Sendable, Hashable {
    /// Absolute frame the event takes effect at.
    public var frame: Int64
    /// What to deliver.
    public var event: NodeEvent

    /// Creates an event.
    public init(frame: Int64, event: NodeEvent) {
        self.frame = frame
        self.event = event
    }

    /// A MIDI message at `frame`.
    public static func midi(_ message: MIDIMessage, at frame: Int64) -> FramedNodeEvent {
        FramedNodeEvent(frame: frame, event: .midi(message))
    }
}

/// Renders one node offline, alone in a graph (effects are fed a 220 Hz test tone on every
/// input bus), with events at exact frames and any block sizes: the harness for proving a
/// custom node block-size independent and allocation-free.
///
/// Everything the render loop needs is allocated in `init`; ``renderAllocations()`` counts
/// what the node's render calls allocate.
public final class NodeRenderer {
    /// The node under test.
    public let node: any AudioNode
    /// The compiled graph (test tone sources, the node, the output).
    public let graph: CompiledGraph
    /// Frames rendered per pass.
    public let frameCount: Int
    private let events: [FramedNodeEvent]
    private let nodeIndex: Int
    private let blockSizes: [Int]
    private let eventBuffer: UnsafeMutablePointer<GraphEvent>
    private let left: UnsafeMutablePointer<Float>
    private let right: UnsafeMutablePointer<Float>

    /// Prepares `node` at `sampleRate` to render `frameCount` frames in blocks whose sizes
    /// cycle through `blockSizes` (each at least 1), delivering `events` (any order; same-frame
    /// events keep their order).
    public init(node: any AudioNode, events: [FramedNodeEvent] = [], frameCount: Int,
                blockSizes: [Int] = [512], sampleRate: Double = 44_100) throws(AudioGraphError) {
        self.node = node
        self.frameCount = max(0, frameCount)
        self.events = events.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }.map(\.element)
        self.blockSizes = blockSizes.isEmpty ? [512] : blockSizes.map { max(1, $0) }
        let g = AudioGraph()
        let output = g.add(OutputNode())
        let id = g.add(node)
        for bus in 0..<node.inputBusCount {
            let tone = g.add(TestToneNode(frequency: 220))
            try g.connect(tone, to: id, bus: bus)
        }
        try g.connect(id, to: output)
        graph = try g.compile(sampleRate: sampleRate, maximumFrameCount: self.blockSizes.max()!)
        nodeIndex = graph.index(ofNode: id)!
        eventBuffer = .allocate(capacity: max(1, events.count))
        left = .allocate(capacity: max(1, self.frameCount))
        right = .allocate(capacity: max(1, self.frameCount))
    }

    deinit {
        eventBuffer.deallocate()
        left.deallocate()
        right.deallocate()
    }

    /// Renders one pass from frame 0 after resetting the graph; returns left and right.
    /// A reset keeps parameter values, so compare first passes of fresh nodes.
    public func render() -> (left: [Float], right: [Float]) {
        renderPass()
        return (Array(UnsafeBufferPointer(start: left, count: frameCount)),
                Array(UnsafeBufferPointer(start: right, count: frameCount)))
    }

    /// Renders a warm-up pass (a first call may instantiate runtime metadata), resets (on the
    /// control side, uncounted), then counts what a second pass's render calls and event
    /// deliveries allocate and free.
    public func renderAllocations() -> AllocationCount {
        renderPass()
        graph.reset()
        return AllocationCounter.count { renderFrames() }
    }

    private func renderPass() {
        graph.reset()
        renderFrames()
    }

    private func renderFrames() {
        var position = 0, next = 0, sizeIndex = 0
        while position < frameCount {
            let n = min(frameCount - position, blockSizes[sizeIndex % blockSizes.count])
            sizeIndex += 1
            var count = 0
            while next < events.count && events[next].frame < Int64(position + n) {
                eventBuffer[count] = GraphEvent(offset: max(0, Int(events[next].frame) - position), nodeIndex: nodeIndex,
                                                event: events[next].event)
                count += 1
                next += 1
            }
            graph.render(startFrame: Int64(position), frameCount: n, events: UnsafeBufferPointer(start: eventBuffer, count: count))
            (left + position).update(from: graph.output.left, count: n)
            (right + position).update(from: graph.output.right, count: n)
            position += n
        }
    }
}

/// Block sizes from 1 to `maximum`, drawn by a fixed generator from `seed`: the same list on
/// every run.
public func randomBlockSizes(count: Int, maximum: Int, seed: UInt64) -> [Int] {
    var s = seed
    return (0..<max(1, count)).map { _ in
        s = s &* 6364136223846793005 &+ 1442695040888963407
        return Int((s >> 33) % UInt64(max(1, maximum))) + 1
    }
}

/// A sine test tone at a fixed frequency, computed from the absolute frame.
final class TestToneNode: AudioNode {
    let name = "Test tone"
    let inputBusCount = 0
    let parameterInfos: [AudioParameterInfo] = []
    let frequency: Double
    private var sampleRate = 44_100.0
    init(frequency: Double) { self.frequency = frequency }
    func prepare(sampleRate: Double, maximumFrameCount: Int) { self.sampleRate = sampleRate }
    func reset() {}
    func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        for i in 0..<frameCount {
            let phase = (Double(startFrame + Int64(i)) * frequency / sampleRate).truncatingRemainder(dividingBy: 1)
            let v = Float(0.5 * sin(2 * Double.pi * phase))
            output.left[i] = v
            output.right[i] = v
        }
    }
}
