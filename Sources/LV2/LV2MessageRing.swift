import Synchronization

/// A single-producer, single-consumer ring of sized messages (a `UInt32` size, then that many
/// bytes), lock-free, with its memory allocated once: how the audio thread and the worker
/// thread hand each other work requests and responses without waiting for each other.
final class LV2MessageRing: @unchecked Sendable {
    private let capacity: Int
    private let bytes: UnsafeMutablePointer<UInt8>
    // Counters of bytes ever written and read; their difference is what the ring holds.
    private let writtenCount = Atomic<Int>(0)
    private let readCount = Atomic<Int>(0)

    /// A ring of `capacity` bytes (a power of two).
    init(capacity: Int) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "a power of two")
        self.capacity = capacity
        bytes = .allocate(capacity: capacity)
    }

    deinit { bytes.deallocate() }

    /// Appends a message (producer side); false when it does not fit now.
    func write(size: UInt32, data: UnsafeRawPointer?) -> Bool {
        let head = writtenCount.load(ordering: .relaxed)
        let total = 4 + Int(size)
        guard capacity - (head - readCount.load(ordering: .acquiring)) >= total else { return false }
        withUnsafeBytes(of: size) { copyIn($0.baseAddress!, count: 4, at: head) }
        if let data, size > 0 { copyIn(data, count: Int(size), at: head + 4) }
        writtenCount.store(head + total, ordering: .releasing)
        return true
    }

    /// Takes the oldest message into `buffer` (consumer side), returning its size; nil when
    /// the ring is empty. A message larger than `bufferCapacity` is dropped (and its size
    /// returned as 0), which `write` makes impossible when both sides use the same capacity.
    func read(into buffer: UnsafeMutableRawPointer, bufferCapacity: Int) -> UInt32? {
        let tail = readCount.load(ordering: .relaxed)
        guard writtenCount.load(ordering: .acquiring) - tail >= 4 else { return nil }
        var size: UInt32 = 0
        withUnsafeMutableBytes(of: &size) { copyOut($0.baseAddress!, count: 4, at: tail) }
        let fits = Int(size) <= bufferCapacity
        if fits && size > 0 { copyOut(buffer, count: Int(size), at: tail + 4) }
        readCount.store(tail + 4 + Int(size), ordering: .releasing)
        return fits ? size : 0
    }

    /// True when nothing is waiting.
    var isEmpty: Bool { writtenCount.load(ordering: .acquiring) == readCount.load(ordering: .acquiring) }

    private func copyIn(_ source: UnsafeRawPointer, count: Int, at position: Int) {
        let start = position & (capacity - 1)
        let first = min(count, capacity - start)
        (bytes + start).update(from: source.assumingMemoryBound(to: UInt8.self), count: first)
        if first < count { bytes.update(from: source.assumingMemoryBound(to: UInt8.self) + first, count: count - first) }
    }

    private func copyOut(_ destination: UnsafeMutableRawPointer, count: Int, at position: Int) {
        let start = position & (capacity - 1)
        let first = min(count, capacity - start)
        destination.copyMemory(from: bytes + start, byteCount: first)
        if first < count { (destination + first).copyMemory(from: bytes, byteCount: count - first) }
    }
}
