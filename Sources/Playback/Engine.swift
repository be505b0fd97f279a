import AudioGraph

/// The render entry: one object that owns a compiled graph and a schedule and turns
/// `render(frameCount:into:)` calls into audio, delivering every scheduled event at its exact
/// frame offset. Offline rendering and (later) the real-time driver call the same method.
///
/// Per call it advances a cursor, an index into the sorted schedule, over the events of the
/// block, copies them with their offsets into a buffer reserved up front, and lets the graph's
/// one splitting routine render. Nothing here allocates during rendering; the control-side
/// operations (`load`, `seek`) are the hooks a player's command ring will call at the top of a
/// block.
public final class Engine {
    /// The graph being rendered.
    public let graph: CompiledGraph
    /// The schedule being played.
    public private(set) var schedule: Schedule
    /// The absolute frame the next render call starts at.
    public private(set) var frame: Int64 = 0
    /// Index of the next schedule event to deliver.
    public private(set) var cursor = 0

    private var targets: [Int]
    private let eventBuffer: UnsafeMutablePointer<GraphEvent>
    private let eventCapacity: Int

    /// Creates an engine; `eventCapacity` bounds the events delivered per graph call (a block
    /// with more is rendered in several calls, with the same result).
    public init(graph: CompiledGraph, schedule: Schedule, eventCapacity: Int = 4096) {
        self.graph = graph
        self.schedule = schedule
        self.eventCapacity = max(1, eventCapacity)
        eventBuffer = .allocate(capacity: self.eventCapacity)
        targets = Engine.resolveTargets(schedule, graph)
    }

    deinit { eventBuffer.deallocate() }

    private static func resolveTargets(_ schedule: Schedule, _ graph: CompiledGraph) -> [Int] {
        var indexByID: [UInt32: Int] = [:]
        for (i, id) in graph.nodeIDs.enumerated() { indexByID[id] = i }
        return schedule.events.map { indexByID[$0.node] ?? -1 }
    }

    /// Replaces the schedule and keeps playing from the current frame (control side: it
    /// resolves node identifiers, which allocates).
    public func load(_ schedule: Schedule) {
        self.schedule = schedule
        targets = Engine.resolveTargets(schedule, graph)
        cursor = schedule.firstIndex(atOrAfterFrame: frame)
    }

    /// Moves to `frame`: the next event delivered is the first one at or after it.
    public func seek(toFrame frame: Int64) {
        self.frame = frame
        cursor = schedule.firstIndex(atOrAfterFrame: frame)
    }

    /// Renders `frameCount` frames from ``frame`` into `output` and advances.
    public func render(frameCount: Int, into output: StereoBuffer) {
        var done = 0
        let events = schedule.events
        while done < frameCount {
            var length = min(frameCount - done, graph.maximumFrameCount)
            let start = frame
            let end = start + Int64(length)
            var count = 0
            while cursor < events.count && events[cursor].frame < end {
                if count == eventCapacity {
                    // Buffer full: end this graph call at the event that did not fit (possibly
                    // after zero frames, when more events than fit share one frame).
                    length = Int(events[cursor].frame - start)
                    break
                }
                let target = targets[cursor]
                if target >= 0 {
                    eventBuffer[count] = GraphEvent(offset: Int(events[cursor].frame - start), nodeIndex: target,
                                                    event: events[cursor].event)
                    count += 1
                }
                cursor += 1
            }
            graph.render(startFrame: start, frameCount: length, events: UnsafeBufferPointer(start: eventBuffer, count: count))
            let out = graph.output
            (output.left + done).update(from: out.left, count: length)
            (output.right + done).update(from: out.right, count: length)
            done += length
            frame = start + Int64(length)
        }
    }
}
