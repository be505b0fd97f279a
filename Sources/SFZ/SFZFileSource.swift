#if canImport(Glibc)
import Glibc
#endif

/// Where the parser reads the instrument file and its `#include`s from.
///
/// ``SFZDiskFiles`` reads the file system; ``SFZMemoryFiles`` serves files held in memory (tests,
/// fuzzing, instruments unpacked from an archive).
public protocol SFZFileSource {
    /// The bytes of the file at `path`; throws ``SFZErrorKind/unreadableFile`` when it is missing
    /// or unreadable and ``SFZErrorKind/fileTooLarge`` when it holds more than `maximumSize` bytes
    /// (checked before reading it).
    func contents(of path: String, maximumSize: Int) throws(SFZError) -> [UInt8]
    /// True when `path` names a file this source can read.
    func fileExists(_ path: String) -> Bool
}

/// The file system.
public struct SFZDiskFiles: SFZFileSource, Sendable {
    /// Reads files from the file system.
    public init() {}

    /// Reads the whole regular file at `path`.
    public func contents(of path: String, maximumSize: Int) throws(SFZError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let reason = errno == ENOENT ? "no such file" : "cannot open: \(String(cString: strerror(errno)))"
            throw SFZError(path: path, kind: .unreadableFile, reason: reason)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw SFZError(path: path, kind: .unreadableFile, reason: "not a regular file")
        }
        guard info.st_size <= maximumSize else {
            throw SFZError(path: path, kind: .fileTooLarge,
                           reason: "file is \(info.st_size) bytes, more than the \(maximumSize) allowed (SFZReadOptions.maximumFileSize)")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                if n == 0 { break }
                throw SFZError(path: path, kind: .unreadableFile, reason: "cannot read: \(String(cString: strerror(errno)))")
            }
            filled += n
        }
        return Array(bytes[0..<filled])
    }

    /// True when `path` is a regular file (or a link to one).
    public func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }
}

/// Files held in memory, by path: what a test or a fuzzer hands the parser.
public struct SFZMemoryFiles: SFZFileSource, Sendable {
    /// The files, by the path the parser asks for (normalized: `a/./b/../c` is `a/c`).
    public var files: [String: [UInt8]]

    /// Serves `files`; their paths are normalized as the parser normalizes include paths.
    public init(_ files: [String: [UInt8]]) {
        var normalized: [String: [UInt8]] = [:]
        for (path, bytes) in files { normalized[SFZPath.normalize(path)] = bytes }
        self.files = normalized
    }

    /// The bytes held for `path`.
    public func contents(of path: String, maximumSize: Int) throws(SFZError) -> [UInt8] {
        guard let bytes = files[SFZPath.normalize(path)] else {
            throw SFZError(path: path, kind: .unreadableFile, reason: "no such file")
        }
        guard bytes.count <= maximumSize else {
            throw SFZError(path: path, kind: .fileTooLarge,
                           reason: "file is \(bytes.count) bytes, more than the \(maximumSize) allowed (SFZReadOptions.maximumFileSize)")
        }
        return bytes
    }

    /// True when a file is held for `path`.
    public func fileExists(_ path: String) -> Bool { files[SFZPath.normalize(path)] != nil }
}

/// Lexical path handling: SFZ files written on Windows use `\`, and include cycles are found by
/// comparing normalized paths.
enum SFZPath {
    /// `a/./b//../c` becomes `a/c`; a leading `/` and leading `..` are kept.
    static func normalize(_ path: String) -> String {
        let isAbsolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
                continue
            }
            if part == "..", isAbsolute { continue }
            parts.append(part)
        }
        let joined = parts.joined(separator: "/")
        if isAbsolute { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }

    /// The folder part of `path` (`.` when there is none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// `relative` resolved against `directory`, normalized; an absolute `relative` stands alone.
    static func join(_ directory: String, _ relative: String) -> String {
        if relative.hasPrefix("/") { return normalize(relative) }
        return normalize(directory + "/" + relative)
    }
}
