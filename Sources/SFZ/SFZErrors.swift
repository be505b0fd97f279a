/// Why an SFZ instrument could not be read.
public enum SFZErrorKind: String, Hashable, Sendable {
    /// A file (the instrument or an `#include`d file) is missing or cannot be read.
    case unreadableFile
    /// A file is larger than ``SFZReadOptions/maximumFileSize``.
    case fileTooLarge
    /// The files read, with every `#include`, add up to more than ``SFZReadOptions/maximumTotalSize``.
    case tooMuchText
    /// `#include` files nest deeper than ``SFZReadOptions/maximumIncludeDepth``.
    case includeTooDeep
    /// A file includes itself, directly or through other files, and
    /// ``SFZReadOptions/refusesIncludeCycles`` asks for that to be an error.
    case includeCycle
    /// The instrument has more than ``SFZReadOptions/maximumRegionCount`` regions.
    case tooManyRegions
    /// A `$NAME` expansion grows past ``SFZReadOptions/maximumExpandedLength`` characters or keeps
    /// expanding (a definition that refers to itself).
    case expansionTooLong
    /// A region's sample file does not exist (``SFZInstrument/locateSamples()``).
    case missingSample
}

/// An SFZ instrument that cannot be used, with the file, the line and what is wrong.
public struct SFZError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file the problem is in (the instrument, an included file, or a missing sample).
    public var path: String
    /// The 1-based line the problem is on, or nil when it concerns the whole file.
    public var line: Int?
    /// What kind of problem it is.
    public var kind: SFZErrorKind
    /// What is wrong, in words.
    public var reason: String

    /// Creates an error.
    public init(path: String, line: Int? = nil, kind: SFZErrorKind, reason: String) {
        self.path = path
        self.line = line
        self.kind = kind
        self.reason = reason
    }

    /// True when a file could not be found or read at all (the CLI exits 66 for these, 65 for
    /// content that was refused).
    public var isUnreadableInput: Bool { kind == .unreadableFile || kind == .missingSample }

    /// `path:line: reason`, the line left out when there is none.
    public var description: String {
        "\(path)" + (line.map { ":\($0)" } ?? "") + ": " + reason
    }
}

/// Something in an SFZ file that was skipped or repaired, with where it is.
public struct SFZWarning: Hashable, Sendable, CustomStringConvertible {
    /// The file the opcode, header or directive is in.
    public var path: String
    /// The 1-based line.
    public var line: Int
    /// The opcode concerned (its name as written, after `$` expansion), or nil for headers,
    /// directives and syntax.
    public var opcode: String?
    /// What was wrong and what was done about it.
    public var message: String

    /// `token` as a warning quotes it: at most 64 characters, then an ellipsis with the length,
    /// so a value 64 KB long is not echoed a thousand times.
    static func shortened(_ token: String) -> String {
        token.count <= 64 ? token : String(token.prefix(64)) + "… (\(token.utf8.count) bytes)"
    }

    /// Creates a warning.
    public init(path: String, line: Int, opcode: String? = nil, message: String) {
        self.path = path
        self.line = line
        self.opcode = opcode
        self.message = message
    }

    /// `path:line: message`.
    public var description: String { "\(path):\(line): \(message)" }
}

/// Caps that keep the time and memory an SFZ file can take bounded; going over one is an
/// ``SFZError`` that names it.
public struct SFZReadOptions: Hashable, Sendable {
    /// How deep `#include` files may nest below the instrument file (16).
    public var maximumIncludeDepth = 16
    /// The largest file, instrument or included, in bytes (16 MiB).
    public var maximumFileSize = 16 << 20
    /// The most text read in all, counting a file once for each time it is included (64 MiB):
    /// includes can repeat a file, so the sum is bounded apart from each file.
    public var maximumTotalSize = 64 << 20
    /// The most regions in the instrument (65,536).
    public var maximumRegionCount = 65_536
    /// The longest opcode name or value after `$` expansion, in bytes (65,536).
    public var maximumExpandedLength = 65_536
    /// The most bytes `$` expansion may produce in the whole instrument (64 MiB): each value is
    /// bounded by ``maximumExpandedLength``, but a small file repeating a long definition on
    /// every line would otherwise build gigabytes.
    public var maximumExpandedTotal = 64 << 20
    /// The most warnings kept (1,000); the rest are only counted.
    public var maximumWarningCount = 1_000
    /// When true, an `#include` that closes a loop is an ``SFZErrorKind/includeCycle`` error.
    /// By default (false) it is skipped with a warning, as sfizz's include guard does: sfizz's
    /// own test instruments with include loops load that way.
    public var refusesIncludeCycles = false

    /// The defaults above.
    public init() {}
}
