import Foundation

/// LV2 plugins the tests compile from C source: a plugin with exactly the behaviour a test
/// needs (a crash, a reported latency, a control output) where no installed plugin has it.
public enum TestPlugins {
    /// A C compiler: the system's, or the Swift toolchain's clang on `PATH`; nil without one
    /// (the suites that need it say so and skip).
    public static let compiler: String? = ["/usr/bin/cc", "/usr/bin/clang", "/usr/bin/gcc"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    } ?? (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/clang" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why a test plugin did not build.
    public struct BuildFailure: Error, CustomStringConvertible {
        /// The compiler's message, or that there is no compiler.
        public var description: String
    }

    /// Builds the bundle `name`.lv2 in `folder`/plugins from the C `source` (its binary is
    /// `name`.so, which `manifest` must name) and returns the folder to search for it
    /// (`LV2_PATH`, or the catalogue's search path).
    public static func build(name: String, source: String, manifest: String, in folder: URL) throws -> String {
        guard let compiler else { throw BuildFailure(description: "no C compiler") }
        let plugins = folder.appendingPathComponent("plugins")
        let bundle = plugins.appendingPathComponent("\(name).lv2")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let sourceFile = folder.appendingPathComponent("\(name).c")
        try source.write(to: sourceFile, atomically: true, encoding: .utf8)
        try manifest.write(to: bundle.appendingPathComponent("manifest.ttl"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: compiler)
        process.arguments = ["-shared", "-fPIC", "-O1", "-o", bundle.appendingPathComponent("\(name).so").path, sourceFile.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BuildFailure(description: "\(name) did not build: \(String(decoding: message, as: UTF8.self))")
        }
        return plugins.path
    }

    /// The C declarations of LV2's ABI a test plugin needs (plugin descriptor, atoms), so it
    /// builds without LV2's headers.
    public static let abi = """
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>
    typedef struct { uint32_t size, type; } Atom;
    typedef struct {
        const char *URI;
        void *(*instantiate)(const void *, double, const char *, const void *const *);
        void (*connect_port)(void *, uint32_t, void *);
        void (*activate)(void *);
        void (*run)(void *, uint32_t);
        void (*deactivate)(void *);
        void (*cleanup)(void *);
        const void *(*extension_data)(const char *);
    } Descriptor;
    /* Calls `body` with the frame and the three bytes of each 3-byte MIDI event in an atom sequence. */
    #define FOR_EACH_MIDI_EVENT(sequenceBytes, frameName, messageName, body) \\
        for (uint32_t offset_ = 8; offset_ + 16 <= ((const Atom *)(sequenceBytes))->size;) { \\
            const uint8_t *event_ = (const uint8_t *)(sequenceBytes) + 8 + offset_; \\
            const Atom *atom_ = (const Atom *)(event_ + 8); \\
            int64_t frameName = *(const int64_t *)event_; \\
            const uint8_t *messageName = event_ + 16; \\
            if (atom_->size == 3) { body } \\
            offset_ += 16 + ((atom_->size + 7) & ~7u); \\
        }

    """
}
