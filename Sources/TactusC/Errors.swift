#if canImport(Glibc)
import Glibc
#endif

/// The result codes of the C interface (`TACTUS_*` in tactus.h); 0 is success.
enum ResultCode: Int32 {
    case ok = 0
    case invalidArgument = 1
    case invalidHandle = 2
    case notFound = 3
    case unreadable = 4
    case invalidFile = 5
    case bufferTooSmall = 6
    case renderFailed = 7
    case writeFailed = 8
}

/// A failure on its way to the C boundary: a code and the sentence stored for
/// `tactus_last_error_message`.
struct CFailure: Error {
    var code: ResultCode
    var message: String

    init(_ code: ResultCode, _ message: String) {
        self.code = code
        self.message = message
    }
}

// Each thread's last message is its own malloc'd copy, freed when replaced or when the thread
// exits, so a message read on one thread is never overwritten by a call on another.
private let messageKey: pthread_key_t = {
    var key = pthread_key_t()
    _ = pthread_key_create(&key) { pointer in free(pointer) }
    return key
}()

/// The message `tactus_last_error_message` returns before any call on this thread has failed.
private let noMessage: StaticString = ""

/// Replaces this thread's last message.
func setLastMessage(_ message: String) {
    let copy = message.withCString { strdup($0) }
    let old = pthread_getspecific(messageKey)
    _ = pthread_setspecific(messageKey, copy)
    free(old)
}

/// This thread's last message, owned by the library.
func lastMessage() -> UnsafePointer<CChar> {
    if let stored = pthread_getspecific(messageKey) {
        return UnsafePointer(stored.assumingMemoryBound(to: CChar.self))
    }
    return UnsafeRawPointer(noMessage.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// Runs the body of an exported function: a failure stores its message and becomes its code.
/// Success leaves the message alone, as errno is left: a binding that frees handles from a
/// garbage collector would otherwise wipe a message between a failure and its reading.
/// Nothing is thrown across the boundary.
func guarded(_ body: () throws(CFailure) -> Void) -> Int32 {
    do {
        try body()
        return ResultCode.ok.rawValue
    } catch {
        setLastMessage(error.message)
        return error.code.rawValue
    }
}

/// A count from C that must be 0 or more.
func checkedCount(_ count: Int64, _ name: String) throws(CFailure) -> Int {
    guard count >= 0, count <= Int64(Int.max) else { throw CFailure(.invalidArgument, "\(name) is \(count), not 0 or more") }
    return Int(count)
}

/// Why a path cannot be read as a file, or nil when it can: checked before reading so that
/// a missing file and an unreadable one are told apart from refused content.
func pathProblem(_ path: UnsafePointer<CChar>) -> CFailure? {
    let name = String(cString: path)
    var info = stat()
    if stat(path, &info) != 0 {
        let code = errno
        if code == ENOENT || code == ENOTDIR { return CFailure(.notFound, "\(name): no such file") }
        return CFailure(.unreadable, "\(name): \(String(cString: strerror(code)))")
    }
    if info.st_mode & S_IFMT == S_IFDIR { return CFailure(.unreadable, "\(name): is a directory, not a file") }
    if access(path, R_OK) != 0 { return CFailure(.unreadable, "\(name): permission denied") }
    return nil
}
