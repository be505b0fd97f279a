import Foundation
import Recording
import Sequencing
import Testing

/// A recording's journal never overwrites what is at its path: another recording's journal,
/// the journal of a take that was never written, or a planted link.
@Suite struct JournalSafetyTests {
    static func workspace() throws -> String {
        let dir = NSTemporaryDirectory() + "tactus-journal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static let header = RecordingJournalHeader(sequence: MusicSequence(), settings: RecordingSettings(), backingPath: nil)

    static func bytes(_ path: String) -> [UInt8] { [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()) }

    @Test func aSecondWriterOfTheSameJournalIsRefusedAndTheFirstKeepsItsTake() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/take.mid.journal"
        let first = try RecordingJournalWriter(path: path, header: Self.header)
        first.append(nanoseconds: 1_000, bytes: [0x90, 60, 100])
        try first.flush()
        do {
            _ = try RecordingJournalWriter(path: path, header: Self.header)
            Issue.record("a second writer opened the journal")
        } catch {
            #expect(error.description == "\(path): another recording is writing this journal; record to another file")
        }
        first.append(nanoseconds: 2_000, bytes: [0x80, 60, 0])
        try first.flush()
        let contents = try RecordingJournal.read(contentsOf: path)
        #expect(contents.events.map(\.bytes) == [[0x90, 60, 100], [0x80, 60, 0]], "the first take is whole")
    }

    @Test func theJournalOfATakeNeverWrittenIsKeptAndNamedInTheError() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/take.mid.journal"
        do {
            let crashed = try RecordingJournalWriter(path: path, header: Self.header)
            crashed.append(nanoseconds: 1_000, bytes: [0x90, 64, 90])
            try crashed.flush()
        }  // the writer is gone, as after a crash: the journal stays, unlocked
        let before = Self.bytes(path)
        #expect(throws: RecordingJournalError.self) { _ = try RecordingJournalWriter(path: path, header: Self.header) }
        do {
            _ = try RecordingJournalWriter(path: path, header: Self.header)
        } catch {
            #expect(error.reason.contains("--recover"))
        }
        #expect(Self.bytes(path) == before, "the earlier take's journal is untouched")
    }

    @Test func aLinkPlantedAtTheJournalsPathIsNotFollowed() throws {
        let dir = try Self.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = dir + "/precious.txt", path = dir + "/take.mid.journal"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: victim)
        do {
            _ = try RecordingJournalWriter(path: path, header: Self.header)
            Issue.record("the journal was opened through a link")
        } catch {
            #expect(error.reason.contains("symbolic link"))
        }
        #expect(String(decoding: Self.bytes(victim), as: UTF8.self) == "keep me")
        // A dangling link is not followed either (it would create the file it names).
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: dir + "/created-by-link")
        #expect(throws: RecordingJournalError.self) { _ = try RecordingJournalWriter(path: path, header: Self.header) }
        #expect(!FileManager.default.fileExists(atPath: dir + "/created-by-link"))
    }
}
