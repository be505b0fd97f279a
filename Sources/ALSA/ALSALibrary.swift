import CALSA

/// The ALSA library (`libasound.so.2`), loaded when live audio or MIDI first needs it.
///
/// Tactus does not link libasound: rendering, reading and editing files work on machines
/// without it (containers, render farms), and only the drivers ask for it.
public enum ALSALibrary {
    /// The shared object Tactus loads.
    public static let soname = "libasound.so.2"
    /// The Debian package that provides it.
    public static let debianPackage = "libasound2"

    /// Loads the library once per process; later calls return at once.
    public static func load() throws(ALSALibraryUnavailable) {
        if tactus_alsa_load() == 0 {
            throw ALSALibraryUnavailable(reason: tactus_alsa_load_error().map { String(cString: $0) } ?? "cannot be loaded")
        }
    }

    /// True when the library is installed and loads.
    public static var isAvailable: Bool { tactus_alsa_load() != 0 }
}

/// The ALSA library could not be loaded.
public struct ALSALibraryUnavailable: Error, Sendable, CustomStringConvertible, Equatable {
    /// What the dynamic loader said.
    public var reason: String

    public var description: String {
        "ALSA library unavailable (\(reason)); install the package \(ALSALibrary.debianPackage)"
    }
}
