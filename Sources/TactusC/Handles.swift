import Synchronization

/// The live handles of one kind. A handle is a number that is never reused, not an address:
/// a handle already freed, or one that was never made, is refused with
/// `TACTUS_ERROR_INVALID_HANDLE` instead of being dereferenced. A call holds its own strong
/// reference while it works, so freeing a handle on one thread while another thread still
/// uses it is safe (the object lives until that call returns).
final class HandleTable<Object: AnyObject & Sendable>: Sendable {
    private let state = Mutex<(next: UInt, objects: [UInt: Object])>((1, [:]))
    private let kind: String

    init(kind: String) {
        self.kind = kind
    }

    /// Registers `object` and returns its new handle.
    func insert(_ object: Object) -> OpaquePointer {
        let id = state.withLock { state in
            let id = state.next
            state.next += 1
            state.objects[id] = object
            return id
        }
        // Ids start at 1 and only grow, so the pointer is never null.
        return OpaquePointer(bitPattern: id)!
    }

    /// The object behind `handle`.
    func object(_ handle: OpaquePointer?) throws(CFailure) -> Object {
        guard let handle else { throw CFailure(.invalidArgument, "the \(kind) handle is NULL") }
        let id = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(handle)))
        guard let object = state.withLock({ $0.objects[id] }) else {
            throw CFailure(.invalidHandle, "not a live \(kind) handle (already freed, or never made)")
        }
        return object
    }

    /// Forgets `handle`; false when it was not live.
    func remove(_ handle: OpaquePointer?) -> Bool {
        guard let handle else { return false }
        let id = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(handle)))
        return state.withLock { $0.objects.removeValue(forKey: id) } != nil
    }
}

/// Writes a new handle through `out` after checking that `out` is usable.
func checkedOut(_ out: UnsafeMutablePointer<OpaquePointer?>?) throws(CFailure) -> UnsafeMutablePointer<OpaquePointer?> {
    guard let out else { throw CFailure(.invalidArgument, "the output handle pointer is NULL") }
    out.pointee = nil
    return out
}
