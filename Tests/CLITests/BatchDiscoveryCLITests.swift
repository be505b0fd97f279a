import Foundation
import Testing

/// What a folder search takes and what it names as passed over (issue 24: symbolic links,
/// hidden files and names that are not UTF-8 were dropped without a word).
@Suite("tactus render: what a batch takes from its folders")
struct BatchDiscoveryCLITests {
    @Test("A link to a MIDI file is rendered; hidden paths, links to folders, broken links and non-UTF-8 names are each named")
    func skippedPathsAreNamed() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in"), elsewhere = dir.appendingPathComponent("elsewhere")
        for folder in [input, input.appendingPathComponent(".cache"), elsewhere] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        for path in ["in/plain.mid", "in/.hidden.mid", "in/.cache/inside.mid", "elsewhere/target.mid"] {
            try BatchRenderCLITests.writeSong(dir.appendingPathComponent(path).path, key: 50)
        }
        try FileManager.default.createSymbolicLink(atPath: input.appendingPathComponent("linked.mid").path, withDestinationPath: "../elsewhere/target.mid")
        try FileManager.default.createSymbolicLink(atPath: input.appendingPathComponent("folder-link").path, withDestinationPath: "../elsewhere")
        try FileManager.default.createSymbolicLink(atPath: input.appendingPathComponent("broken.mid").path, withDestinationPath: "nowhere.mid")
        // A Latin-1 "café.mid": a name Swift's String paths cannot carry.
        let rawName = Array(input.path.utf8) + Array("/caf".utf8) + [0xE9] + Array(".mid".utf8) + [0]
        let fd = rawName.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY, 0o644) }
        #expect(fd >= 0)
        close(fd)

        let out = dir.appendingPathComponent("out").path
        let r = try CLI.run(["render", input.path, "-o", out, "--instrument", "builtin", "--tail", "0"])
        #expect(r.status == 0, "\(r.stderr)")
        let rendered = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".wav") }.sorted()
        #expect(rendered == ["linked.wav", "plain.wav"])
        let warnings = r.stderr.split(separator: "\n").map(String.init)
        #expect(warnings == [
            "tactus: warning: \(input.path)/.cache: skipped, a hidden folder, not searched",
            "tactus: warning: \(input.path)/.hidden.mid: skipped, a hidden file",
            "tactus: warning: \(input.path)/broken.mid: skipped, a symbolic link to nothing",
            "tactus: warning: \(input.path)/caf\\xE9.mid: skipped, its name is not UTF-8; rename it to render it",
            "tactus: warning: \(input.path)/folder-link: skipped, a symbolic link to a folder, not followed",
        ], "\(r.stderr)")
        #expect(r.stdout.contains("2 of 2 rendered (0 failed), 0 skipped, 5 paths not taken"), "\(r.stdout)")
        let dry = try CLI.run(["render", input.path, "-o", out, "--dry-run", "--overwrite"])
        #expect(dry.stdout.split(separator: "\n").filter { $0.hasPrefix("not taken\t") }.count == 5, "\(dry.stdout)")
    }
}
