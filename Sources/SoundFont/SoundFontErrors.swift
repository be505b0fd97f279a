/// Where in a SoundFont file something was found.
public struct SoundFontLocation: Hashable, Sendable, CustomStringConvertible {
    /// The chunk, as `LIST-type/id` ("pdta/phdr", "sdta/smpl", "INFO/ifil"), "RIFF" for the
    /// outer chunk, or nil for the file as a whole.
    public var chunk: String?
    /// The record index inside the chunk (terminal record included), when the chunk holds
    /// fixed-size records.
    public var record: Int?
    /// Byte offset from the start of the file.
    public var offset: Int

    /// Creates a location.
    public init(chunk: String?, record: Int? = nil, offset: Int) {
        self.chunk = chunk
        self.record = record
        self.offset = offset
    }

    public var description: String {
        switch (chunk, record) {
        case let (chunk?, record?): return "\(chunk) record \(record) (byte \(offset))"
        case let (chunk?, nil): return "\(chunk) at byte \(offset)"
        default: return "byte \(offset)"
        }
    }
}

/// Why a bank was refused.
public enum SoundFontErrorReason: Hashable, Sendable {
    /// The file could not be opened or mapped (missing, a directory, no permission...).
    case cannotOpen(String)
    /// The file has no bytes.
    case emptyFile
    /// The file does not start with a RIFF `sfbk` form.
    case notASoundFont(found: String)
    /// An `ifil` version this reader does not read (SoundFont 1, or 4 and later).
    case unsupportedVersion(major: Int, minor: Int)
    /// A chunk the specification requires is absent.
    case missingChunk(String)
    /// A chunk's size is not a whole number of its records.
    case badChunkSize(size: Int, recordSize: Int)
    /// A hydra chunk without even its terminal record.
    case missingTerminalRecord
    /// An index that must not decrease does (bag, generator or modulator indices).
    case indexNotMonotonic(field: String, previous: Int, value: Int)
    /// An index pointing past the records of the chunk it indexes.
    case indexOutOfRange(field: String, value: Int, count: Int)
    /// A limit of ``SoundFontReadOptions`` was exceeded.
    case limitExceeded(String)
    /// A warning promoted to an error by strict reading.
    case strict(SoundFontWarning)
    /// A system library the bank needs cannot be loaded (libvorbisfile for SoundFont 3
    /// samples): the shared object, the Debian package that provides it, the loader's words.
    case libraryUnavailable(library: String, package: String, detail: String)
    /// A DLS structure that cannot be read: what is wrong, in words.
    case malformed(what: String)
}

/// A bank Tactus refuses to read, with where and why.
public struct SoundFontError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file's path, when the bank was read from a file.
    public var path: String?
    /// Where the problem is.
    public var location: SoundFontLocation
    /// What is wrong.
    public var reason: SoundFontErrorReason

    /// Creates an error.
    public init(path: String? = nil, location: SoundFontLocation, reason: SoundFontErrorReason) {
        self.path = path
        self.location = location
        self.reason = reason
    }

    /// True when the file itself could not be reached (as opposed to content that was
    /// refused); the CLI exits 66 for these and 65 for the rest.
    public var isUnreadableInput: Bool {
        if case .cannotOpen = reason { return true }
        return false
    }

    /// True when a system library is missing (the CLI exits 69 for these).
    public var isUnavailableLibrary: Bool {
        if case .libraryUnavailable = reason { return true }
        return false
    }

    /// The reason in words.
    public var reasonText: String {
        switch reason {
        case .cannotOpen(let why): return "cannot open: \(why)"
        case .emptyFile: return "empty file (0 bytes), not a SoundFont"
        case .notASoundFont(let found): return "not a SoundFont 2 or DLS bank: expected a RIFF 'sfbk' or 'DLS ' form, found \(found)"
        case .unsupportedVersion(let major, let minor):
            return "SoundFont version \(major).\(minor) is not supported; 2.x and 3.x banks are read"
        case .missingChunk(let id): return "required chunk '\(id)' is missing"
        case .badChunkSize(let size, let recordSize):
            return "chunk size \(size) is not a multiple of the \(recordSize)-byte record size"
        case .missingTerminalRecord: return "chunk has no records, not even the terminal record"
        case .indexNotMonotonic(let field, let previous, let value):
            return "\(field) \(value) is below the previous record's \(previous) (indices must not decrease)"
        case .indexOutOfRange(let field, let value, let count):
            return "\(field) \(value) is past the \(count) records it indexes"
        case .limitExceeded(let what): return "limit exceeded: \(what)"
        case .malformed(let what): return what
        case .strict(let w): return "\(w.message) (strict mode)"
        case .libraryUnavailable(let library, let package, let detail):
            return "compressed (SoundFont 3) samples need \(library), which cannot be loaded (\(detail)); install the Debian package \(package)"
        }
    }

    public var description: String {
        let prefix = path.map { "\($0): " } ?? ""
        switch reason {
        case .cannotOpen, .libraryUnavailable: return "\(prefix)\(reasonText)"
        default: break
        }
        return "\(prefix)\(location): \(reasonText)"
    }
}

/// Something wrong in a bank that was read anyway, and what the reader did about it.
public struct SoundFontWarning: Hashable, Sendable, CustomStringConvertible {
    /// Where it was found.
    public var location: SoundFontLocation
    /// What was found and how it was repaired.
    public var message: String

    /// Creates a warning.
    public init(location: SoundFontLocation, message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { "\(location): \(message)" }
}
