import Foundation

/// Why an output could not be opened or completed.
public enum OutputFileError: Error, Equatable, CustomStringConvertible {
    /// The output could not be created (path, reason).
    case cannotCreate(String, String)
    /// Writing or completing it failed (path, reason).
    case writeFailed(String, String)

    public var description: String {
        switch self {
        case .cannotCreate(let path, let reason): return "\(path): cannot create: \(reason)"
        case .writeFailed(let path, let reason): return "\(path): write failed: \(reason)"
        }
    }
}

/// Where an encoder's bytes go, and how they reach their final name.
///
/// A regular file (or a new name) is written to a hidden temporary file beside it, which
/// ``commit()`` renames over the destination once complete, so no half-written file ever
/// carries the final name. An existing output that is not a regular file (`/dev/null`, a
/// FIFO, a terminal) is written in place and never replaced, and the path `-` is standard
/// output.
public final class OutputFile {
    /// The path `-`: standard output.
    public static let standardOutputPath = "-"
    /// The destination as given.
    public let path: String
    /// The temporary file written until ``commit()``; nil when the output is written in place.
    public let temporaryPath: String?
    /// The open descriptor (owned: ``commit()`` and ``abandon()`` close it).
    public private(set) var descriptor: Int32
    /// True when the descriptor can seek (a file or `/dev/null`), so headers can be completed
    /// at the end; false for pipes and terminals, which need streaming headers.
    public let isSeekable: Bool

    /// The infix of temporary names: `.NAME.partial-PID-N` next to `NAME`.
    public static let temporaryInfix = ".partial-"
    nonisolated(unsafe) private static var counter = 0
    private static let counterLock = NSLock()

    /// Opens the output. Throws ``OutputFileError/cannotCreate(_:_:)`` for a directory, a
    /// missing parent directory or a permission problem.
    public init(path: String) throws(OutputFileError) {
        self.path = path
        if path == Self.standardOutputPath {
            let fd = dup(STDOUT_FILENO)
            guard fd >= 0 else { throw .cannotCreate(path, String(cString: strerror(errno))) }
            descriptor = fd
            temporaryPath = nil
            isSeekable = lseek(fd, 0, SEEK_CUR) >= 0
            return
        }
        var info = stat()
        if stat(path, &info) == 0 {
            let kind = info.st_mode & S_IFMT
            if kind == S_IFDIR { throw .cannotCreate(path, "is a directory") }
            if kind != S_IFREG {
                // A device, FIFO or socket: write into it, never rename over it.
                let fd = open(path, O_WRONLY | O_CLOEXEC)
                guard fd >= 0 else { throw .cannotCreate(path, String(cString: strerror(errno))) }
                descriptor = fd
                temporaryPath = nil
                isSeekable = lseek(fd, 0, SEEK_CUR) >= 0
                return
            }
        }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let number = Self.counterLock.withLock { () -> Int in
            Self.counter += 1
            return Self.counter
        }
        let temporary = directory + "/." + url.lastPathComponent + Self.temporaryInfix + "\(getpid())-\(number)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotCreate(path, String(cString: strerror(errno))) }
        descriptor = fd
        temporaryPath = temporary
        isSeekable = true
    }

    deinit {
        if descriptor >= 0 { abandon() }
    }

    /// Writes all of `bytes` at the current offset.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(OutputFileError) {
        var offset = 0
        while offset < bytes.count {
            let n = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw .writeFailed(path, String(cString: strerror(errno)))
            }
            offset += n
        }
    }

    /// Flushes a regular file to disk, closes the descriptor and, for a temporary file,
    /// renames it to ``path``. On failure the temporary file is removed.
    public func commit() throws(OutputFileError) {
        guard descriptor >= 0 else { throw .writeFailed(path, "already closed") }
        if let temporaryPath {
            if fsync(descriptor) != 0 {
                let reason = String(cString: strerror(errno))
                abandon()
                throw .writeFailed(path, reason)
            }
            close(descriptor)
            descriptor = -1
            if rename(temporaryPath, path) != 0 {
                let reason = String(cString: strerror(errno))
                unlink(temporaryPath)
                throw .cannotCreate(path, reason)
            }
        } else {
            close(descriptor)
            descriptor = -1
        }
    }

    /// Closes the descriptor and removes the temporary file; the destination is untouched.
    public func abandon() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        if let temporaryPath { unlink(temporaryPath) }
    }

    /// Removes temporary files left next to `path` by processes that died while writing it
    /// (a `kill -9`); those of live processes are kept. Returns the paths removed.
    @discardableResult
    public static func removeStaleTemporaries(of path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let prefix = "." + url.lastPathComponent + temporaryInfix
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard let pid = rest.split(separator: "-").first.flatMap({ Int32($0) }) else { continue }
            if pid == getpid() { continue }
            if kill(pid, 0) == 0 || errno == EPERM { continue }
            let stale = directory + "/" + name
            if unlink(stale) == 0 { removed.append(stale) }
        }
        return removed
    }
}

/// Something that takes rendered audio and turns it into a complete output.
public protocol AudioSink: AnyObject {
    /// Appends `count` frames of the two channels.
    func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws
    /// Completes the output under its final name.
    func finish() throws
    /// Abandons the output: nothing appears under the final name.
    func cancel()
}
