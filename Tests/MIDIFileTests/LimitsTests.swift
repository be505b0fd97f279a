import Foundation
import MIDI
import Synchronization
import Testing
@testable import MIDIFile

/// The documented caps (README, "Limits") keep memory bounded on hostile input; each one,
/// when exceeded, is a clear error naming the limit, never a partial or silent result.
@Suite("Limits")
struct LimitsTests {
    static func limitText(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as SMFError {
            guard case .limitExceeded(let what) = error.reason else { return "other error: \(error)" }
            return what
        } catch {
            return "other error: \(error)"
        }
    }

    @Test func tooManyEventsInAllTracks() {
        let file = SMFBytes.header(format: 1, tracks: 2) + SMFBytes.track(SMFBytes.fourNotes) + SMFBytes.track(SMFBytes.fourNotes)
        let total = (try? SMFReader.read(file))?.tracks.reduce(0) { $0 + $1.events.count } ?? 0
        #expect(total >= 8)
        var options = SMFReadOptions()
        options.maximumEventCount = total - 1
        #expect(Self.limitText { _ = try SMFReader.read(file, options: options) } == "more than \(total - 1) events")
        options.maximumEventCount = total
        #expect(Self.limitText { _ = try SMFReader.read(file, options: options) } == nil, "exactly at the limit is fine")
    }

    @Test func tooManyTracks() {
        let file = SMFBytes.header(format: 1, tracks: 3) + [UInt8](repeating: 0, count: 0)
            + SMFBytes.track(SMFBytes.fourNotes) + SMFBytes.track(SMFBytes.fourNotes) + SMFBytes.track(SMFBytes.fourNotes)
        var options = SMFReadOptions()
        options.maximumTrackCount = 2
        #expect(Self.limitText { _ = try SMFReader.read(file, options: options) } == "more than 2 tracks")
    }

    @Test func aSysexLongerThanTheEventLimit() {
        let payload = [UInt8](repeating: 0x11, count: 300)
        // F0, a two-byte length (300), the data, F7; then end of track.
        let body: [UInt8] = [0x00, 0xF0, 0x82, 0x2D] + payload + [0xF7, 0x00, 0xFF, 0x2F, 0x00]
        let file = SMFBytes.header() + SMFBytes.track(body)
        var options = SMFReadOptions()
        options.maximumEventLength = 256
        #expect(Self.limitText { _ = try SMFReader.read(file, options: options) } == "sysex event of 301 bytes, more than 256")
        options.maximumEventLength = 301
        #expect(Self.limitText { _ = try SMFReader.read(file, options: options) } == nil)
    }

    @Test func aFileLargerThanTheSizeLimit() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-limit-\(getpid()).mid").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = SMFBytes.header() + SMFBytes.track(SMFBytes.fourNotes)
        try Data(file).write(to: URL(fileURLWithPath: path))
        var options = SMFReadOptions()
        options.maximumFileSize = file.count - 1
        let what = Self.limitText { _ = try SMFReader.read(contentsOf: path, options: options) }
        #expect(what == "file is \(file.count) bytes, more than the \(file.count - 1) allowed")
    }

    @Test func aFileReadFromItsPathEqualsTheSameBytesReadFromMemory() throws {
        // Many tracks of many pages each, so the reader drops the pages of parsed chunks as it
        // goes; one chunk's length is too long, so scanning goes back into a dropped page.
        var body: [UInt8] = []
        for i in 0..<3_000 { body += [0x00, 0x90, UInt8(40 + i % 40), 100, 0x60, 0x80, UInt8(40 + i % 40), 0] }
        let track = SMFBytes.track(body + SMFBytes.eot)
        let tooLong = SMFBytes.track(SMFBytes.fourNotes, declaredLength: SMFBytes.fourNotes.count + 4)
        let bytes = SMFBytes.header(format: 1, tracks: 5) + track + track + tooLong + track + track
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-path-\(getpid()).mid").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fromPath = try SMFReader.read(contentsOf: path)
        #expect(fromPath == (try SMFReader.read(bytes)))
        #expect(fromPath.tracks.count == 5 && fromPath.tracks[4].count == 3_000)

        try Data().write(to: URL(fileURLWithPath: path))
        #expect(throws: SMFError(path: path, location: SMFLocation(chunk: nil, offset: 0), reason: .emptyFile)) {
            _ = try SMFReader.read(contentsOf: path)
        }
        try? FileManager.default.removeItem(atPath: path)
        // A missing file is the reader's own typed error too, not a Foundation one.
        #expect(throws: SMFError(path: path, location: SMFLocation(chunk: nil, offset: 0), reason: .cannotRead("no such file"))) {
            _ = try SMFReader.read(contentsOf: path)
        }
    }

    @Test func aJSONDocumentLargerThanTheLimitIsRefusedBeforeParsing() {
        let document = Data(repeating: 0x20, count: 2_000)
        #expect(throws: JSONImportError.self) { _ = try JSONImport.file(from: document, maximumSize: 1_000) }
        do {
            _ = try JSONImport.file(from: document, maximumSize: 1_000)
        } catch {
            #expect(error.description.contains("2000 bytes, more than the 1000 allowed"))
        }
    }

    @Test func aRunawaySysexOnAByteStreamIsCutAtTheBound() {
        var parser = MIDIByteStreamParser(maximumSysexLength: 64)
        var events: [MIDIStreamEvent] = []
        let bytes: [UInt8] = [0xF0] + [UInt8](repeating: 0x22, count: 200) + [0x90, 60, 100]
        for b in bytes { parser.feed(b) { events.append($0) } }
        guard case .systemExclusive(let sysex, let complete) = events.first else {
            Issue.record("no sysex reported: \(events)")
            return
        }
        #expect(!complete && sysex.count == 64, "the sysex is reported incomplete at the bound")
        #expect(events.last == .message(.noteOn(channel: 0, key: 60, velocity: 100)), "the stream recovers at the next status byte")
    }
}

/// A caller with a deadline (a batch's `--timeout`) stops a long read part way
/// (`SMFReadOptions.shouldCancel`), and asking costs the result nothing.
@Suite("Cancelling a read")
struct CancelledReadTests {
    /// One track of `notes` notes, a tick apart, in running status (3 bytes an event after the first).
    static func longFile(notes: Int) -> [UInt8] {
        var body: [UInt8] = [0x00, 0x90, 60, 100]
        for index in 0..<notes {
            if index > 0 { body += [0x01, 60, 100] }
            body += [0x01, 60, 0]
        }
        return SMFBytes.header() + SMFBytes.track(body + [0x00, 0xFF, 0x2F, 0x00])
    }

    @Test("a single long track is asked often enough to stop within a stride, and stops at the first yes")
    func stopsPartWay() throws {
        let file = Self.longFile(notes: 400_000)
        let asked = Atomic<Int>(0)
        var options = SMFReadOptions()
        options.shouldCancel = { asked.add(1, ordering: .relaxed).newValue >= 3 }
        do {
            _ = try SMFReader.read(file, options: options)
            Issue.record("the read was not cancelled")
        } catch {
            #expect(error.reason == .cancelled)
            #expect(error.description.contains("reading was cancelled"), "\(error)")
            // Asked for the third time (once before the track, twice in it) within two
            // strides of the track's start.
            #expect(error.location.offset <= 2 * SMFReadOptions.cancellationStride + 64, "stopped at byte \(error.location.offset)")
        }
        #expect(asked.load(ordering: .relaxed) == 3)
    }

    @Test("a closure that never cancels reads the same file, and is asked about once a stride")
    func neverCancellingReadsTheSame() throws {
        let file = Self.longFile(notes: 400_000)
        let asked = Atomic<Int>(0)
        var options = SMFReadOptions()
        options.shouldCancel = { asked.add(1, ordering: .relaxed); return false }
        let read = try SMFReader.read(file, options: options)
        #expect(read == (try SMFReader.read(file)))
        #expect(read.tracks[0].events.count == 400_000)
        let strides = file.count / SMFReadOptions.cancellationStride
        #expect(asked.load(ordering: .relaxed) >= strides && asked.load(ordering: .relaxed) <= strides + 3,
                "asked \(asked.load(ordering: .relaxed)) times over \(file.count) bytes")
    }
}
