#if canImport(Glibc)
import Glibc
#endif

/// Finds the SoundFont bank a command should play with.
///
/// The order: an explicit path (a `--soundfont` option) first, then the `TACTUS_SOUNDFONT`
/// environment variable, then the first existing file of ``standardPaths`` (where Debian's
/// `fluid-soundfont-gm` and `timgm6mb-soundfont` packages install, `default-GM.sf2` being the
/// system's chosen default; then the SoundFont 3 banks of `musescore-general-soundfont` and
/// `musescore-general-soundfont-small`, whose samples need libvorbisfile). A path given explicitly or through the environment must exist:
/// a typo there is an error, not a silent fall back to another bank. The option and the
/// environment may name a DLS bank as well (``SoundFontReader`` reads both); Debian installs
/// no DLS bank, so no standard path names one.
public enum SoundFontDiscovery {
    /// The environment variable naming a bank.
    public static let environmentVariable = "TACTUS_SOUNDFONT"

    /// Banks looked for when neither an option nor the environment names one, in order.
    public static let standardPaths = [
        "/usr/share/sounds/sf2/default-GM.sf2",
        "/usr/share/sounds/sf2/FluidR3_GM.sf2",
        "/usr/share/sounds/sf2/TimGM6mb.sf2",
        "/usr/share/sounds/sf3/default-GM.sf3",
        "/usr/share/sounds/sf3/MuseScore_General.sf3",
        "/usr/share/sounds/sf3/MuseScore_General_Lite.sf3",
    ]

    /// Where a chosen bank's path came from.
    public enum Origin: Hashable, Sendable, CustomStringConvertible {
        /// Given on the command line.
        case option
        /// Taken from ``SoundFontDiscovery/environmentVariable``.
        case environment
        /// Found at one of ``SoundFontDiscovery/standardPaths``.
        case standardLocation

        public var description: String {
            switch self {
            case .option: return "--soundfont"
            case .environment: return SoundFontDiscovery.environmentVariable
            case .standardLocation: return "standard location"
            }
        }
    }

    /// A bank's path and where it came from: the bank chosen, or one looked for.
    public struct Choice: Hashable, Sendable {
        /// The bank's path.
        public var path: String
        /// Where the path came from.
        public var origin: Origin

        /// Creates a choice.
        public init(path: String, origin: Origin) {
            self.path = path
            self.origin = origin
        }
    }

    /// A bank that was asked for by name but is not there.
    public struct NotFound: Error, Hashable, Sendable, CustomStringConvertible {
        /// Every path looked at, with where it came from, in order.
        public var tried: [Choice]

        /// Why the one path named (by the option or the environment) is there but cannot be a
        /// bank: "is a FIFO", "is a directory", "cannot be read (Permission denied)"; nil when
        /// nothing is there.
        public var problem: String?

        /// Creates the error.
        public init(tried: [Choice], problem: String? = nil) {
            self.tried = tried
            self.problem = problem
        }

        public var description: String {
            if let problem, let named = tried.first {
                return "\(named.path) (from \(named.origin)): \(problem), not a SoundFont file"
            }
            let list = tried.map { "\($0.path) (from \($0.origin))" }.joined(separator: ", ")
            return "\(tried.first?.path ?? "SoundFont"): no such SoundFont file; tried \(list)"
        }
    }

    /// The bank to use: `explicitPath` when given, else the path in `environment`'s
    /// ``environmentVariable`` (an empty value counts as unset), else the first of
    /// ``standardPaths`` that exists; nil when none does, and the caller falls back to the
    /// built-in synthesizer.
    ///
    /// - Parameters:
    ///   - explicitPath: the path given with `--soundfont`, if any.
    ///   - environment: the process environment (injectable for tests).
    ///   - fileExists: whether a path names a readable regular file, symbolic links followed
    ///     (injectable for tests).
    /// - Throws: ``NotFound`` naming every path tried when the explicit or environment path
    ///   does not exist.
    public static func resolve(explicitPath: String?,
                               environment: [String: String] = currentEnvironment(),
                               fileExists: (String) -> Bool = isRegularFile) throws(NotFound) -> Choice? {
        if let explicitPath {
            guard fileExists(explicitPath) else {
                throw NotFound(tried: [Choice(path: explicitPath, origin: .option)], problem: problem(with: explicitPath))
            }
            return Choice(path: explicitPath, origin: .option)
        }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty {
            guard fileExists(fromEnvironment) else {
                throw NotFound(tried: [Choice(path: fromEnvironment, origin: .environment)], problem: problem(with: fromEnvironment))
            }
            return Choice(path: fromEnvironment, origin: .environment)
        }
        return standardPaths.first(where: fileExists).map { Choice(path: $0, origin: .standardLocation) }
    }

    /// The process environment.
    public static func currentEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let pair = String(cString: pointer)
            if let equals = pair.firstIndex(of: "=") {
                result[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// Why something at `path` cannot be read as a bank, or nil when nothing is there (or it
    /// can be): stat(2) only, so a FIFO is never opened and cannot block.
    static func problem(with path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            return access(path, R_OK) == 0 ? nil : "cannot be read (\(String(cString: strerror(errno))))"
        case S_IFDIR: return "is a directory"
        case S_IFIFO: return "is a FIFO"
        case S_IFSOCK: return "is a socket"
        default: return "is a device"
        }
    }

    /// True when `path` names a regular file (after following symbolic links) that can be read.
    public static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return access(path, R_OK) == 0
    }
}
