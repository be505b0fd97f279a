import Synchronization

/// A bounded single-producer single-consumer queue: one thread pushes, one other thread pops,
/// neither ever waits, locks or allocates.
///
/// Elements are moved in and out of preallocated slots: a reference pushed by one thread is
/// released by whoever pops it, which is how the audio thread hands objects back to the
/// control side so they are freed there.
final class SPSCRing<Element>: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<Element>
    private let mask: Int
    /// Next slot to read; written only by the consumer.
    private let head = Atomic<Int>(0)
    /// Next slot to write; written only by the producer.
    private let tail = Atomic<Int>(0)

    /// A ring holding at least `minimumCapacity` elements (rounded up to a power of two).
    init(minimumCapacity: Int) {
        var capacity = 1
        while capacity < max(2, minimumCapacity) { capacity <<= 1 }
        slots = .allocate(capacity: capacity)
        mask = capacity - 1
    }

    deinit {
        var h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .relaxed)
        while h != t {
            (slots + (h & mask)).deinitialize(count: 1)
            h &+= 1
        }
        slots.deallocate()
    }

    /// Producer side: appends `element`, or returns false (keeping nothing) when full.
    func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        if t &- head.load(ordering: .acquiring) > mask { return false }
        (slots + (t & mask)).initialize(to: element)
        tail.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer side: removes and returns the oldest element, or nil when empty.
    func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        if h == tail.load(ordering: .acquiring) { return nil }
        let element = (slots + (h & mask)).move()
        head.store(h &+ 1, ordering: .releasing)
        return element
    }

    /// Free slots, as seen by the producer.
    var freeCount: Int { mask + 1 - (tail.load(ordering: .relaxed) &- head.load(ordering: .acquiring)) }
}
