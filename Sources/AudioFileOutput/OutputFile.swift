import Foundation
import MIDIFile

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
/// A regular file (or a new name) is written to a hidden temporary file beside it, created
/// exclusively under a random name, which ``commit()`` renames over the destination once
/// complete, so no half-written file ever carries the final name; a symbolic link to a file
/// stays a link (the file it names is replaced). A path that is or resolves to anything else
/// (`/dev/null`, a FIFO, a terminal, `/dev/stdout`, `/proc/self/fd/N`) is written in place and
/// never replaced, and the path `-` is standard output (see `OutputDestination`).
public final class OutputFile {
    /// The path `-`: standard output.
    public static let standardOutputPath = "-"
    /// The destination as given.
    public let path: String
    /// The temporary file written until ``commit()``; nil when the output is written in place.
    public let temporaryPath: String?
    /// The regular file the temporary replaces: ``path`` at the end of its symbolic links.
    private let finalPath: String?
    /// The open descriptor (owned: ``commit()`` and ``abandon()`` close it).
    public private(set) var descriptor: Int32
    /// True when the descriptor can seek (a file or `/dev/null`), so headers can be completed
    /// at the end; false for pipes and terminals, which need streaming headers.
    public let isSeekable: Bool

    /// The infix of temporary names: `.NAME.partial-PID-RANDOM` next to `NAME`.
    public static let temporaryInfix = OutputDestination.temporaryInfix

    /// Opens the output. Throws ``OutputFileError/cannotCreate(_:_:)`` for a directory, a
    /// missing parent directory or a permission problem.
    public init(path: String) throws(OutputFileError) {
        self.path = path
        let destination: OutputDestination
        do {
            destination = try OutputDestination.resolve(path)
        } catch {
            throw .cannotCreate(path, error.reason)
        }
        switch destination {
        case .descriptor(let number):
            let fd = fcntl(number, F_DUPFD_CLOEXEC, 0)
            guard fd >= 0 else { throw .cannotCreate(path, String(cString: strerror(errno))) }
            descriptor = fd
            temporaryPath = nil
            finalPath = nil
            isSeekable = lseek(fd, 0, SEEK_CUR) >= 0
        case .inPlace(let target):
            // A device, FIFO or socket: write into it, never rename over it.
            let fd = open(target, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw .cannotCreate(path, String(cString: strerror(errno))) }
            descriptor = fd
            temporaryPath = nil
            finalPath = nil
            isSeekable = lseek(fd, 0, SEEK_CUR) >= 0
        case .replace(let target):
            let temporary: (descriptor: Int32, path: String)
            do {
                temporary = try OutputDestination.createTemporary(beside: target)
            } catch {
                throw .cannotCreate(path, error.reason)
            }
            descriptor = temporary.descriptor
            temporaryPath = temporary.path
            finalPath = target
            isSeekable = true
        }
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
            if rename(temporaryPath, finalPath ?? path) != 0 {
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
        let prefix = "." + url.lastPathComponent + temporaryInfix
        return removeStaleTemporaries(in: url.deletingLastPathComponent().path) { $0.hasPrefix(prefix) }
    }

    /// Removes every temporary file (or temporary folder, with what it holds) in `directory`
    /// left by a process that died while writing it, whatever its output's name; those of live
    /// processes are kept. Returns the paths removed.
    @discardableResult
    public static func removeStaleTemporaries(inDirectory directory: String) -> [String] {
        removeStaleTemporaries(in: directory) { $0.hasPrefix(".") }
    }

    /// The temporaries (`.NAME.partial-PID-RANDOM`) in `directory` whose name `matches` and
    /// whose process is gone, removed.
    private static func removeStaleTemporaries(in directory: String, matching matches: (String) -> Bool) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var removed: [String] = []
        for name in names where matches(name) {
            guard let infix = name.range(of: temporaryInfix, options: .backwards),
                  let pid = name[infix.upperBound...].split(separator: "-").first.flatMap({ Int32($0) }), pid > 0 else { continue }
            if pid == getpid() { continue }
            if kill(pid, 0) == 0 || errno == EPERM { continue }
            let stale = directory + "/" + name
            // A folder is a dataset folder that was being filled (BatchRender's DatasetStaging).
            if unlink(stale) == 0 || (errno == EISDIR && (try? FileManager.default.removeItem(atPath: stale)) != nil) {
                removed.append(stale)
            }
        }
        return removed
    }
}
