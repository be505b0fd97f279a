import Foundation
import Testing
import MIDIFile

/// How an output path resolves before anything is written (issue 24).
@Suite("OutputDestination")
struct OutputDestinationTests {
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-dest-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("- and links to this process's descriptors are descriptors; devices are written in place")
    func descriptorsAndDevices() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try OutputDestination.resolve("-") == .descriptor(1))
        #expect(try OutputDestination.resolve("/dev/stdout") == .descriptor(1))
        #expect(try OutputDestination.resolve("/dev/stderr") == .descriptor(2))
        try FileManager.default.createSymbolicLink(atPath: dir + "/err", withDestinationPath: "/proc/self/fd/2")
        #expect(try OutputDestination.resolve(dir + "/err") == .descriptor(2))
        #expect(try OutputDestination.resolve("/dev/null") == .inPlace("/dev/null"))
        try FileManager.default.createSymbolicLink(atPath: dir + "/null", withDestinationPath: "/dev/null")
        #expect(try OutputDestination.resolve(dir + "/null") == .inPlace("/dev/null"))
        #expect(OutputDestination.isStandardOutput("/dev/stdout") && !OutputDestination.isStandardOutput("/dev/null"))
    }

    @Test("A file, a new name and a link to a file are replaced at the end of the links; folders and loops are refused")
    func filesAndRefusals() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try OutputDestination.resolve(dir + "/new.mid") == .replace(dir + "/new.mid"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/file.mid"))
        try FileManager.default.createSymbolicLink(atPath: dir + "/link.mid", withDestinationPath: "file.mid")
        #expect(try OutputDestination.resolve(dir + "/link.mid") == .replace(dir + "/file.mid"))
        #expect(throws: OutputPathError.self) { try OutputDestination.resolve(dir) }
        try FileManager.default.createSymbolicLink(atPath: dir + "/a", withDestinationPath: "b")
        try FileManager.default.createSymbolicLink(atPath: dir + "/b", withDestinationPath: "a")
        #expect(throws: OutputPathError(path: dir + "/a", reason: "too many levels of symbolic links")) { try OutputDestination.resolve(dir + "/a") }
    }

    @Test("Temporaries get random names beside the output; a missing folder is an error")
    func temporaries() throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try OutputDestination.createTemporary(beside: dir + "/out.wav")
        let second = try OutputDestination.createTemporary(beside: dir + "/out.wav")
        close(first.descriptor)
        close(second.descriptor)
        #expect(first.path != second.path)
        #expect(first.path.hasPrefix(dir + "/.out.wav.partial-\(getpid())-"))
        #expect(throws: OutputPathError.self) { try OutputDestination.createTemporary(beside: dir + "/missing/out.wav") }
    }
}
