import MIDI

/// A path for live MIDI (a keyboard, a port, a byte stream) from one input thread straight to
/// the audio thread, without passing through the player's control thread.
///
/// Messages go through a lock-free single-producer ring that the engine drains at the top of
/// every block, so a message sent now sounds at the start of the next block. Only one thread
/// may call ``send(_:toNode:)`` (the input thread); it never blocks. The engine tracks live
/// notes like played ones, so stop, seek and all-notes-off release them too.
public final class LiveMIDIInput: @unchecked Sendable {
    private let ring: LiveMIDIRing
    private let graph: CompiledGraphIndex
    private let defaultNode: UInt32
    private let channelNodes: [UInt8: UInt32]

    init(ring: LiveMIDIRing, graph: CompiledGraphIndex, defaultNode: UInt32, channelNodes: [UInt8: UInt32]) {
        self.ring = ring
        self.graph = graph
        self.defaultNode = defaultNode
        self.channelNodes = channelNodes
    }

    /// Queues `message` for the node with identifier `node` (for the player's default node, the
    /// node of the message's channel when it has one). Returns false when the node does not
    /// exist or when the ring is full (the audio thread has not run for a while); the caller
    /// decides whether to retry or drop.
    @discardableResult
    public func send(_ message: MIDIMessage, toNode node: UInt32) -> Bool {
        let routed = node == defaultNode && message.isChannelMessage ? channelNodes[message.channel] ?? node : node
        guard let index = graph.index(of: routed) else { return false }
        return ring.push(LiveMIDIRecord(nodeIndex: Int32(index), message: message))
    }
}

/// Node identifier -> node index of a compiled graph, readable from any thread.
struct CompiledGraphIndex: Sendable {
    let ids: [UInt32]
    func index(of node: UInt32) -> Int? { ids.firstIndex(of: node) }
}
