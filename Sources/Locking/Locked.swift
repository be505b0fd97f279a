#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value that threads share through a POSIX mutex.
///
/// The standard library's `Synchronization.Mutex` locks with raw futex calls on Linux, which
/// ThreadSanitizer cannot see: every value it guards is reported as a data race, so the TSan
/// stage could not tell a real race from a guarded one. `pthread_mutex_lock` is intercepted by
/// TSan, so guarded accesses are ordered and a report means a real race. Only control threads
/// use it; the render thread never locks.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // The value lives outside the object so `withLock` needs no dynamic exclusivity check.
    private let storage: UnsafeMutablePointer<Value>

    package init(_ initialValue: consuming Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        storage = .allocate(capacity: 1)
        storage.initialize(to: initialValue)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock, and returns what it returns.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.pointee)
    }
}
