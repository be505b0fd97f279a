#if canImport(Glibc)
import Glibc
#endif
import Locking

/// The render thread of a backend that renders on a thread of its own (the null and offline
/// backends): started once, joined when the backend stops.
final class RenderThread: @unchecked Sendable {
    private let thread = Locked<pthread_t?>(nil)

    /// Starts a thread running `body`; `body` keeps what it captures alive until it returns.
    /// - Throws: ``AudioBackendError/Kind/io`` naming `backend` when no thread can be created.
    func start(backend: String, _ body: @escaping () -> Void) throws(AudioBackendError) {
        final class Box {
            let body: () -> Void
            init(_ body: @escaping () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body))
        var tid = pthread_t()
        let created = pthread_create(&tid, nil, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, box.toOpaque())
        if created != 0 {
            box.release()
            throw AudioBackendError(.io, backend: backend, reason: "cannot start the render thread (error \(created))")
        }
        thread.withLock { $0 = tid }
    }

    /// Waits for the thread to end (the caller has asked it to); does nothing when it was
    /// never started or has been joined already.
    func join() {
        if let tid = thread.withLock({ value -> pthread_t? in defer { value = nil }; return value }) {
            pthread_join(tid, nil)
        }
    }
}
