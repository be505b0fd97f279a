import AudioGraph
import MallocCounter

/// Heap allocations and frees counted on one thread.
public struct AllocationCount: Sendable, Hashable, CustomStringConvertible {
    /// Blocks allocated (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign).
    public var allocations: Int
    /// Blocks freed.
    public var frees: Int

    /// Creates a count.
    public init(allocations: Int, frees: Int) {
        self.allocations = allocations
        self.frees = frees
    }

    /// True when nothing was allocated or freed.
    public var isZero: Bool { allocations == 0 && frees == 0 }

    public var description: String { "\(allocations) allocations, \(frees) frees" }
}

/// Counts the heap allocations the calling thread makes: the proof that a render path keeps
/// the real-time contract.
///
/// Linking this product replaces the C library's allocator entry points for the whole process
/// with counting ones that forward to glibc (under AddressSanitizer or ThreadSanitizer the
/// sanitizer's hooks count instead). Link it into test targets only.
public enum AllocationCounter {
    /// Counts what `body` allocates and frees on this thread.
    public static func count(_ body: () throws -> Void) rethrows -> AllocationCount {
        malloc_counter_start()
        do {
            try body()
        } catch {
            _ = malloc_counter_stop()
            throw error
        }
        let allocations = malloc_counter_stop()
        return AllocationCount(allocations: allocations, frees: malloc_counter_frees())
    }

    /// True when the counter sees allocations at all in this process (it does unless another
    /// allocator was linked in front of it): check this before trusting a zero.
    public static var isWorking: Bool {
        let seen = count {
            let probe = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
            probe.deallocate()
        }
        return seen.allocations > 0
    }
}
