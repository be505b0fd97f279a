import MIDI

/// A system exclusive message lent to the audio thread: a view of bytes (F0 to F7) that
/// storage prepared on the control side owns, so an event can carry a message of any length
/// and still be copied, queued and delivered without allocating or reference counting.
///
/// The view is valid while its ``SystemExclusiveStore`` lives; whoever schedules the event
/// keeps the store alive until the event has been delivered. A node must not keep the pointer
/// past ``AudioNode/receiveSystemExclusive(_:atFrame:)``.
@frozen
public struct SystemExclusiveMessage: @unchecked Sendable, Hashable {
    /// The message's bytes, from F0 to F7.
    public let bytes: UnsafeBufferPointer<UInt8>

    /// Wraps bytes whose storage outlives every use of the message.
    @inlinable
    public init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Two messages are equal when their bytes are, wherever they are stored.
    public static func == (a: SystemExclusiveMessage, b: SystemExclusiveMessage) -> Bool {
        a.bytes.elementsEqual(b.bytes)
    }

    /// Hashes the bytes, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.count)
        for b in bytes { hasher.combine(b) }
    }

    /// The message decoded as one a General MIDI instrument acts on, if it is one.
    @inlinable
    public var command: SystemExclusiveCommand? { SystemExclusiveCommand(bytes) }
}

/// Immutable, contiguous storage of system exclusive messages, filled on the control side and
/// read by the audio thread through ``SystemExclusiveMessage`` views; freed when the last
/// reference (a schedule, a chase, a test renderer) goes, which is never on the audio thread.
public final class SystemExclusiveStore: @unchecked Sendable {
    /// One view per message, in the order given.
    public let messages: [SystemExclusiveMessage]
    private let storage: UnsafeMutableBufferPointer<UInt8>

    /// Copies `messages` (each from F0 to F7) into one block.
    public init(_ messages: [[UInt8]]) {
        let total = messages.reduce(0) { $0 + $1.count }
        storage = .allocate(capacity: max(1, total))
        var views: [SystemExclusiveMessage] = []
        views.reserveCapacity(messages.count)
        var offset = 0
        for m in messages {
            let start = storage.baseAddress! + offset
            start.initialize(from: m, count: m.count)
            views.append(SystemExclusiveMessage(bytes: UnsafeBufferPointer(start: start, count: m.count)))
            offset += m.count
        }
        self.messages = views
    }

    deinit {
        storage.deallocate()
    }
}
