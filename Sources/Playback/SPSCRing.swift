import MIDI
import Synchronization

/// The index half of a bounded single-producer single-consumer queue: one thread writes
/// slots, one other thread reads them, neither ever waits, locks or allocates.
///
/// The typed rings below keep their slots themselves and are concrete classes on purpose:
/// generic code that the compiler does not specialize (debug builds) allocates when it
/// touches atomics of a generic class or iterates generic ranges, and the audio thread must
/// not allocate in any build.
final class RingIndices: @unchecked Sendable {
    let mask: Int
    /// Next slot to read; written only by the consumer.
    private let head = Atomic<Int>(0)
    /// Next slot to write; written only by the producer.
    private let tail = Atomic<Int>(0)

    /// Indices for at least `minimumCapacity` slots (rounded up to a power of two).
    init(minimumCapacity: Int) {
        var capacity = 1
        while capacity < max(2, minimumCapacity) { capacity <<= 1 }
        mask = capacity - 1
    }

    var capacity: Int { mask + 1 }

    /// Producer: the slot to fill next, or nil when full.
    @inline(__always) func writableSlot() -> Int? {
        let t = tail.load(ordering: .relaxed)
        return t &- head.load(ordering: .acquiring) > mask ? nil : t & mask
    }

    /// Producer: publishes the slot returned by ``writableSlot()``.
    @inline(__always) func commitWrite() {
        tail.store(tail.load(ordering: .relaxed) &+ 1, ordering: .releasing)
    }

    /// Consumer: the slot to read next, or nil when empty.
    @inline(__always) func readableSlot() -> Int? {
        let h = head.load(ordering: .relaxed)
        return h == tail.load(ordering: .acquiring) ? nil : h & mask
    }

    /// Consumer: frees the slot returned by ``readableSlot()``.
    @inline(__always) func commitRead() {
        head.store(head.load(ordering: .relaxed) &+ 1, ordering: .releasing)
    }
}

/// Control -> audio commands. Elements are moved in and out, so a reference a command
/// carries is released by whoever ends up holding it last, never by the ring.
final class CommandRing: @unchecked Sendable {
    private let indices: RingIndices
    private let slots: UnsafeMutablePointer<EngineCommand>

    init(minimumCapacity: Int) {
        indices = RingIndices(minimumCapacity: minimumCapacity)
        slots = .allocate(capacity: indices.capacity)
    }

    deinit {
        while pop() != nil {}
        slots.deallocate()
    }

    /// The most commands the ring holds at once.
    var capacity: Int { indices.capacity }

    /// Producer side: appends `element`, or returns false when full.
    func push(_ element: EngineCommand) -> Bool {
        guard let slot = indices.writableSlot() else { return false }
        (slots + slot).initialize(to: element)
        indices.commitWrite()
        return true
    }

    /// Consumer side: removes and returns the oldest element, or nil when empty.
    func pop() -> EngineCommand? {
        guard let slot = indices.readableSlot() else { return nil }
        let element = (slots + slot).move()
        indices.commitRead()
        return element
    }
}

/// Audio -> control: objects the audio thread no longer uses, each with the one strong
/// reference left, so their last release (and deallocation) happens on the control side,
/// which pops and releases them.
final class RetireRing: @unchecked Sendable {
    private let indices: RingIndices
    private let slots: UnsafeMutablePointer<Unmanaged<AnyObject>>

    init(minimumCapacity: Int) {
        indices = RingIndices(minimumCapacity: minimumCapacity)
        slots = .allocate(capacity: indices.capacity)
    }

    deinit {
        while let object = pop() { object.release() }
        slots.deallocate()
    }

    /// Producer side: appends `element` (a retained reference the ring now owns), or
    /// returns false when full.
    func push(_ element: Unmanaged<AnyObject>) -> Bool {
        guard let slot = indices.writableSlot() else { return false }
        slots[slot] = element
        indices.commitWrite()
        return true
    }

    /// Consumer side: removes the oldest element and hands over its reference (release it,
    /// or take it with `takeRetainedValue()`), or nil when empty.
    func pop() -> Unmanaged<AnyObject>? {
        guard let slot = indices.readableSlot() else { return nil }
        let element = slots[slot]
        indices.commitRead()
        return element
    }
}

/// Audio -> control: user events playback passed.
final class UserEventRing: @unchecked Sendable {
    private let indices: RingIndices
    private let slots: UnsafeMutablePointer<UserEventRecord>

    init(minimumCapacity: Int) {
        indices = RingIndices(minimumCapacity: minimumCapacity)
        slots = .allocate(capacity: indices.capacity)
    }

    deinit {
        while pop() != nil {}
        slots.deallocate()
    }

    /// Producer side: appends `element`, or returns false when full.
    func push(_ element: UserEventRecord) -> Bool {
        guard let slot = indices.writableSlot() else { return false }
        (slots + slot).initialize(to: element)
        indices.commitWrite()
        return true
    }

    /// Consumer side: removes and returns the oldest element, or nil when empty.
    func pop() -> UserEventRecord? {
        guard let slot = indices.readableSlot() else { return nil }
        let element = (slots + slot).move()
        indices.commitRead()
        return element
    }
}

/// A live MIDI message bound for one node of the graph.
struct LiveMIDIRecord {
    var nodeIndex: Int32
    var message: MIDIMessage
}

/// Input thread -> audio: live MIDI that does not pass through the control thread.
final class LiveMIDIRing: @unchecked Sendable {
    private let indices: RingIndices
    private let slots: UnsafeMutablePointer<LiveMIDIRecord>

    init(minimumCapacity: Int) {
        indices = RingIndices(minimumCapacity: minimumCapacity)
        slots = .allocate(capacity: indices.capacity)
    }

    deinit { slots.deallocate() }

    /// Producer side: appends `element`, or returns false when full.
    func push(_ element: LiveMIDIRecord) -> Bool {
        guard let slot = indices.writableSlot() else { return false }
        slots[slot] = element
        indices.commitWrite()
        return true
    }

    /// Consumer side: removes and returns the oldest element, or nil when empty.
    func pop() -> LiveMIDIRecord? {
        guard let slot = indices.readableSlot() else { return nil }
        let element = slots[slot]
        indices.commitRead()
        return element
    }
}
