import Foundation
import SFZ

/// The sfizz test files next to the repository (`../shared/sfz/sfizz-testfiles`), or
/// `$TACTUS_SHARED/sfz/sfizz-testfiles`.
enum SfizzTestFiles {
    static var root: URL? {
        let shared: URL
        if let env = ProcessInfo.processInfo.environment["TACTUS_SHARED"] {
            shared = URL(fileURLWithPath: env)
        } else {
            let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            shared = repo.deletingLastPathComponent().appendingPathComponent("shared")
        }
        let folder = shared.appendingPathComponent("sfz/sfizz-testfiles")
        return FileManager.default.fileExists(atPath: folder.path) ? folder : nil
    }

    static func path(_ relative: String) -> String { root!.appendingPathComponent(relative).path }

    /// Every `.sfz` file below the folder, as paths relative to it, sorted.
    static func all() -> [String] {
        guard let root, let walker = FileManager.default.enumerator(atPath: root.path) else { return [] }
        return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".sfz") }.sorted()
    }
}

/// Reads SFZ text held in memory as `/instrument/main.sfz`, with `others` beside it (paths
/// relative to `/instrument`).
func instrument(_ text: String, others: [String: String] = [:], options: SFZReadOptions = SFZReadOptions()) throws(SFZError) -> SFZInstrument {
    var files = ["/instrument/main.sfz": Array(text.utf8)]
    for (path, contents) in others { files["/instrument/" + path] = Array(contents.utf8) }
    return try SFZInstrument.load(contentsOf: "/instrument/main.sfz", from: SFZMemoryFiles(files), options: options)
}

/// The one region of `text` (a `<region>` header is prepended).
func region(_ opcodes: String) throws -> SFZRegion {
    let result = try instrument("<region> sample=a.wav " + opcodes)
    guard result.regions.count == 1 else { throw SFZTestFailure(reason: "\(result.regions.count) regions") }
    return result.regions[0]
}

struct SFZTestFailure: Error {
    var reason: String
}

/// A small deterministic generator (SplitMix64) for repeatable mutations.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
