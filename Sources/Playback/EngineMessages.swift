import AudioGraph
import MIDI

// What the control side hands the engine: the schedule it plays, the chase of a jump, the
// loop and the commands of its ring.

/// A schedule prepared for one graph: the schedule plus, per event, the index of its target
/// node. Built on the control side (resolving identifiers allocates) and handed to the audio
/// thread whole.
final class EngineSnapshot: @unchecked Sendable {
    let schedule: Schedule
    /// Per schedule event: index into the graph's nodes, or -1 when the graph has no such node.
    let targets: [Int32]

    init(schedule: Schedule, graph: CompiledGraph) {
        self.schedule = schedule
        var indexByID: [UInt32: Int32] = [:]
        for (i, id) in graph.nodeIDs.enumerated() { indexByID[id] = Int32(i) }
        targets = schedule.events.map { indexByID[$0.node] ?? -1 }
    }
}

/// What a locate or a loop jump replays so the instruments are in the state the song has at
/// the target: the last bank, program, controllers, pitch bend, pressure and parameter values
/// before it. Computed on the control side, delivered by the audio thread at the jump.
final class ChaseSnapshot: @unchecked Sendable {
    /// Events with offset 0, in delivery order.
    let events: [GraphEvent]
    /// The storage the events' sysex bytes live in: a chase can outlive its schedule.
    let store: SystemExclusiveStore?
    init(events: [GraphEvent], keepingAlive store: SystemExclusiveStore? = nil) {
        self.events = events
        self.store = store
    }
}

/// The transport loop: `[startFrame, endFrame)` of the song, played `remaining` more times
/// (negative: forever) before playback goes on past the end.
final class TransportLoop: @unchecked Sendable {
    let startFrame: Int64
    let endFrame: Int64
    let chase: ChaseSnapshot
    /// True when this loop only refreshes the previous one (a live edit recompiled the
    /// chase): the passes already played still count.
    let continuesPrevious: Bool
    /// Jumps left; only the audio thread changes it once published.
    var remainingJumps: Int

    init(startFrame: Int64, endFrame: Int64, jumps: Int, chase: ChaseSnapshot, continuesPrevious: Bool) {
        self.startFrame = startFrame
        self.endFrame = endFrame
        self.remainingJumps = jumps
        self.chase = chase
        self.continuesPrevious = continuesPrevious
    }
}

/// Control -> audio: plain values, drained at the top of every render call.
enum EngineCommand: @unchecked Sendable {
    case start
    case stop
    /// Moves to a song frame; the chase brings the instruments to the state there.
    case locate(songFrame: Int64, chase: ChaseSnapshot)
    /// A new play rate step (1/65536 song frames per output frame), from an exact output frame
    /// (nil: the start of the next block).
    case setRate(step: Int64, atOutputFrame: Int64?)
    /// A live MIDI message for a node, delivered at the start of the next block.
    case midi(nodeIndex: Int, message: MIDIMessage)
    /// Releases every sounding note and pedal.
    case allNotesOff
    /// Sets or clears the transport loop.
    case setLoop(TransportLoop?)
    /// Where playback stops by itself: a song frame, and whether events exactly there still
    /// play (the natural end of a song) or not (an explicit `to` position).
    case setEnd(songFrame: Int64, inclusive: Bool)
}
