#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Why an output path cannot be written.
public struct OutputPathError: Error, Equatable, CustomStringConvertible {
    /// The path as given.
    public var path: String
    /// What went wrong, for the message after the path.
    public var reason: String

    /// An error about `path`.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

/// Where the bytes of an output path really go, decided before anything is written.
///
/// Writers replace a regular file through a temporary file and a rename. That is only safe
/// for a file: a path that is, or resolves through symbolic links to, a device, a FIFO, a
/// socket or a file descriptor (`/dev/stdout`, `/dev/null`, `/proc/self/fd/3`) must be
/// written in place, or the rename would put a regular file where the link or device was.
/// A descriptor link resolves to the file behind the descriptor, so looking only at the
/// final `stat` is not enough: the chain of links is followed one by one, and any link that
/// lives in `/proc` ends the chain as a descriptor.
public enum OutputDestination: Equatable, Sendable {
    /// A descriptor of this process (`-`, `/dev/stdout`, `/proc/self/fd/N`): written through a
    /// duplicate of it, keeping the caller's offset and append mode.
    case descriptor(Int32)
    /// A device, FIFO, socket or another process's descriptor: opened and written in place.
    case inPlace(String)
    /// A regular file or a new name, at the end of any symbolic links: written to an exclusive
    /// temporary file beside it, then renamed over it, so the links stay links.
    case replace(String)

    /// The path `-`: standard output.
    public static let standardOutputPath = "-"

    /// Links followed before a path counts as a loop (Linux's own limit).
    static let maximumLinks = 40

    /// Resolves `path`. Throws for a directory, a chain of links too long or a link that
    /// cannot be read.
    public static func resolve(_ path: String) throws(OutputPathError) -> OutputDestination {
        if path == standardOutputPath { return .descriptor(STDOUT_FILENO) }
        var current = path
        for _ in 0..<maximumLinks {
            var info = stat()
            guard lstat(current, &info) == 0 else {
                // A new name (or a dangling link's target): created by the rename.
                return .replace(current)
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                let parent = canonicalParent(of: current)
                if parent.hasPrefix("/proc/") {
                    // A descriptor link: its target text ("pipe:[…]", a file's path) is not a
                    // place to rename over.
                    let name = URL(fileURLWithPath: current).lastPathComponent
                    if parent == "/proc/\(getpid())/fd", let fd = Int32(name) { return .descriptor(fd) }
                    return .inPlace(current)
                }
                guard let target = readLink(current) else {
                    throw OutputPathError(path: path, reason: "cannot read the link \(current) (\(String(cString: strerror(errno))))")
                }
                current = target.hasPrefix("/") ? target : parent + "/" + target
            case S_IFREG:
                return .replace(current)
            case S_IFDIR:
                throw OutputPathError(path: path, reason: "is a directory")
            default:
                return .inPlace(current)
            }
        }
        throw OutputPathError(path: path, reason: "too many levels of symbolic links")
    }

    /// True when `path` names this process's standard output (`-`, `/dev/stdout`, a link to
    /// it): messages must then go to standard error so they do not mix into the output.
    public static func isStandardOutput(_ path: String) -> Bool {
        (try? resolve(path)) == .descriptor(STDOUT_FILENO)
    }

    /// The directory holding `path`, with its own links resolved (`/dev/fd` is `/proc/PID/fd`).
    private static func canonicalParent(of path: String) -> String {
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard let resolved = realpath(parent, nil) else { return parent }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, Int(PATH_MAX))
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The infix of temporary names: `.NAME.partial-PID-RANDOM` beside `NAME`.
    public static let temporaryInfix = ".partial-"

    /// Creates a temporary file beside `path` for writing, under a name with random characters,
    /// exclusively and without following links (`O_CREAT|O_EXCL|O_NOFOLLOW`), so nothing
    /// planted at a guessable name can redirect the write. Returns the descriptor and name;
    /// the error's reason is the system's (`Permission denied`) or a missing directory.
    public static func createTemporary(beside path: String) throws(OutputPathError) -> (descriptor: Int32, path: String) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw OutputPathError(path: path, reason: "directory \(directory) does not exist")
        }
        let prefix = directory + "/." + url.lastPathComponent + temporaryInfix + "\(getpid())-"
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let suffix = String((0..<12).map { _ in letters[Int(generator.next(upperBound: UInt(letters.count)))] })
            let candidate = prefix + suffix
            let fd = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 { return (fd, candidate) }
            if errno != EEXIST { throw OutputPathError(path: path, reason: String(cString: strerror(errno))) }
        }
        throw OutputPathError(path: path, reason: "no free temporary name")
    }
}
