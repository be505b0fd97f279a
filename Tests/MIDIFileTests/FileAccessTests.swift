import Foundation
import MIDIFile
import Testing

/// `SMFReader.read(contentsOf:)` throws its own typed error for every way a path can fail,
/// naming the path once and no Foundation error, and reads pipes as well as files.
@Suite struct FileAccessTests {
    static func workspace() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-smf-access-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A format 0 file with one note.
    static let smallFile: [UInt8] = [
        0x4D, 0x54, 0x68, 0x64, 0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0,
        0x4D, 0x54, 0x72, 0x6B, 0, 0, 0, 12, 0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0, 0x00, 0xFF, 0x2F, 0x00,
    ]

    @Test func aMissingFileADirectoryAndAnEmptyFileAreTypedErrorsNamingThePathOnce() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cases: [(path: String, text: String, unreadable: Bool)] = [
            (dir + "/missing.mid", "\(dir)/missing.mid: no such file", true),
            (dir, "\(dir): is a directory, not a MIDI file", true),
        ]
        for (path, text, unreadable) in cases {
            do {
                _ = try SMFReader.read(contentsOf: path)
                Issue.record("\(path) was read")
            } catch {
                #expect(error.description == text)
                #expect(error.isUnreadableInput == unreadable)
                #expect(error.path == path)
            }
        }
        #expect(FileManager.default.createFile(atPath: dir + "/empty.mid", contents: Data()))
        #expect(throws: SMFError.self) { try SMFReader.read(contentsOf: dir + "/empty.mid") }
    }

    @Test func aPipeIsReadToItsEnd() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/song.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let bytes = Self.smallFile
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            bytes.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        writer.start()
        let file = try SMFReader.read(contentsOf: fifo)
        let direct = try SMFReader.read(bytes)
        #expect(file.tracks.count == 1)
        #expect(file.makeSequence() == direct.makeSequence())
    }
}
