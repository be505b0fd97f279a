import Foundation

/// The outside tools and system libraries the test suites compare against (decoders,
/// encoders, reference readers): where a tool is installed, whether a library loads, and
/// running a tool quietly.
public enum ExternalTools {
    /// The path of an installed tool, or nil when none of the usual folders has it.
    public static func path(_ name: String) -> String? {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// True when the dynamic loader can load the library `soname` (as Tactus's run-time loading does).
    public static func libraryLoads(_ soname: String) -> Bool {
        guard let handle = dlopen(soname, RTLD_LAZY) else { return false }
        dlclose(handle)
        return true
    }

    /// Runs a tool with its output discarded and returns its exit status.
    @discardableResult
    public static func run(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
