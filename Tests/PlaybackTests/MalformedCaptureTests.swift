import Foundation
import MIDI
import MIDIFile
import Recording
import Sequencing
import Testing

/// A take holds only what a MIDI file can hold (issue 24): a JACK client may send a
/// status-less message, an undefined status or a reset (FF, which a file reads as a meta
/// event); such takes were written, failed to read back, and the journal was gone.
@Suite struct MalformedCaptureTests {
    static let malformed: [[UInt8]] = [
        [0x3C, 0x64], [0xF4], [0xFF, 0x2F, 0x00], [0xF8], [0xF2, 0x10, 0x00], [0x90, 61], [0x90, 200, 1],
        [0xC0], [0xC0, 5, 6], [0xF0, 1, 2], [0xF0, 1, 0x90, 0xF7], [0xF7],
    ]

    @Test func messagesAFileCannotHoldAreDroppedCountedAndTheTakeReadsBack() throws {
        var recorder = MIDIRecorder(sequence: tempoChangeSequence())
        recorder.record([0x90, 60, 100], atSeconds: 0)
        for bytes in Self.malformed { recorder.record(bytes, atSeconds: 0.1) }
        recorder.record([0xC0, 5], atSeconds: 0.2)
        recorder.record([0xF0, 0x7E, 0x7F, 0xF7], atSeconds: 0.3)
        recorder.record([0x80, 60, 0], atSeconds: 0.5)
        #expect(recorder.malformedCount == Self.malformed.count)
        #expect(recorder.keptCount == 4)
        let merged = recorder.merged(into: tempoChangeSequence())
        let file = try SMFReader.read(SMFWriter.bytes(of: StandardMIDIFile(sequence: merged, layout: .format1)))
        let events = file.makeSequence().tracks.flatMap(\.events).map(\.event)
        #expect(events.contains { if case .note(let n) = $0 { n.key == 60 } else { false } })
        #expect(events.contains(.message(MIDIMessage(status: 0xC0, data1: 5, data2: 0))))
        #expect(events.contains(.sysex(SysexEvent(status: 0xF0, payload: [0x7E, 0x7F, 0xF7]))))
    }

    @Test func aJournalWithMalformedRecordsRecoversToATakeThatReadsBack() throws {
        let folder = NSTemporaryDirectory() + "tactus-malformed-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let journal = folder + "/take.mid.journal", take = folder + "/take.mid"
        let header = RecordingJournalHeader(sequence: tempoChangeSequence(), settings: RecordingSettings(), backingPath: nil)
        let writer = try RecordingJournalWriter(path: journal, header: header)
        writer.append(nanoseconds: 100_000_000, bytes: [0x90, 64, 90])
        for (i, bytes) in Self.malformed.enumerated() { writer.append(nanoseconds: 200_000_000 + Int64(i), bytes: bytes) }
        writer.append(nanoseconds: 600_000_000, bytes: [0x80, 64, 0])
        try writer.flush()
        let recovered = try RecordingSession.recover(journal: journal)
        try recovered.take.write(to: take)
        let file = try SMFReader.read(contentsOf: take)
        let notes = file.makeSequence().tracks.flatMap(\.events).filter { if case .note = $0.event { true } else { false } }
        #expect(notes.count == 1)
        #expect(FileManager.default.fileExists(atPath: journal), "recovery leaves its journal to the caller")
    }
}
