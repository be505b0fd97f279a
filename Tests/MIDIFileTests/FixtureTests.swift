import Foundation
import MIDI
import Testing
@testable import MIDIFile
@testable import Sequencing

/// The project's own fixtures for every case of the corpus's malformed and synthetic sets, so
/// the reader's behaviour is pinned without `../shared`.
@Suite("SMF reader fixtures")
struct FixtureTests {
    func read(_ bytes: [UInt8], strict: Bool = false) throws -> StandardMIDIFile {
        var options = SMFReadOptions()
        options.strict = strict
        return try SMFReader.read(bytes, options: options)
    }

    func noteCount(_ file: StandardMIDIFile) -> Int {
        FileDump.notes(of: file).matched.count
    }

    func refusal(_ bytes: [UInt8]) -> SMFError? {
        do {
            _ = try read(bytes)
            return nil
        } catch let error as SMFError {
            return error
        } catch {
            return nil
        }
    }

    @Test("A valid format 0 file")
    func valid() throws {
        let file = try read(SMFBytes.header() + SMFBytes.track(SMFBytes.fourNotes))
        #expect(file.warnings.isEmpty)
        #expect(file.tracks.count == 1)
        #expect(noteCount(file) == 4)
        #expect(file.tracks[0].explicitLength == 384)
    }

    @Test("Refused: empty, truncated header, not MIDI, MIDI 2.0 clip")
    func refusedHeaders() {
        #expect(refusal([])?.reason == .emptyFile)
        #expect(refusal(Array("MThd".utf8) + [0, 0, 0, 6, 0, 1])?.reason == .truncatedHeader(bytesPresent: 2))
        if case .notAStandardMIDIFile = refusal(Array("hello world, not midi".utf8))?.reason {} else { Issue.record("text accepted") }
        #expect(refusal(Array("SMF2CLIP".utf8) + [0, 0, 0, 0])?.reason == .midi2ClipFile)
        let error = refusal(Array("MThd".utf8) + [0, 0, 0, 6, 0, 1])
        #expect(error?.location.chunk == "MThd")
        #expect(error?.description.contains("header chunk truncated") == true)
    }

    @Test("Refused: running status at track start, 5-byte VLQ, huge meta length, undefined status, data byte > 127")
    func refusedTracks() {
        let runningAtStart = SMFBytes.header() + SMFBytes.track([0x00, 0x3C, 0x64] + SMFBytes.eot)
        #expect(refusal(runningAtStart)?.reason == .runningStatusWithoutStatus(byte: 0x3C))
        #expect(refusal(runningAtStart)?.location.offset == 23)

        let vlq5 = SMFBytes.header() + SMFBytes.track([0x81, 0x80, 0x80, 0x80, 0x00, 0x90, 60, 100] + SMFBytes.eot)
        #expect(refusal(vlq5)?.reason == .variableLengthQuantityTooLong)

        let hugeMeta = SMFBytes.header() + SMFBytes.track([0x00, 0x90, 60, 100, 0x00, 0xFF, 0x01, 0xFF, 0xFF, 0xFF, 0x7F, 0x41, 0x42] + SMFBytes.eot)
        #expect(refusal(hugeMeta)?.reason == .eventLengthExceedsChunk(kind: "meta", declared: 0x0FFF_FFFF, available: 6))

        let undefined = SMFBytes.header() + SMFBytes.track([0x00, 0xF4] + SMFBytes.eot)
        #expect(refusal(undefined)?.reason == .undefinedStatus(0xF4))

        let dataOver127 = SMFBytes.header() + SMFBytes.track([0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0xC0] + SMFBytes.eot)
        #expect(refusal(dataOver127)?.reason == .dataByteOutOfRange(status: 0x80, byte: 0xC0))
    }

    /// Channel messages in a run are read by their own loop until 8 bytes before the chunk's
    /// end, the rest by the general one: a damaged event must be refused with the same reason
    /// and byte offset wherever it falls, and good events read the same on both sides.
    @Test("Refusals and readings do not depend on where in the chunk an event falls")
    func positionInChunk() throws {
        // Good messages of every shape: 1 to 4-byte deltas, running status, a one-data-byte
        // program change, note-on velocity 0 as a release, overlapping notes of one key.
        let good: [[UInt8]] = [
            [0x00, 0x90, 60, 100], [0x81, 0x00, 62, 90], [0x00, 0xC0, 5], [0x83, 0x80, 0x00, 0x80, 60, 64],
            [0x10, 0x90, 62, 0], [0x00, 0x90, 64, 70], [0x00, 0x90, 64, 71], [0xC0, 0x80, 0x80, 0x00, 0x80, 64, 0],
            [0x05, 0xB3, 7, 100], [0x00, 0x80, 64, 1], [0x01, 0xE0, 0, 64],
        ]
        let damaged: [(bytes: [UInt8], badByteAt: Int, reason: SMFErrorReason)] = [
            ([0x81, 0x80, 0x80, 0x80, 0x00, 0x90, 60, 100], 0, .variableLengthQuantityTooLong),
            ([0x00, 0x90, 0x80, 100], 2, .dataByteOutOfRange(status: 0x90, byte: 0x80)),
            ([0x00, 0x90, 60, 0xC0], 3, .dataByteOutOfRange(status: 0x90, byte: 0xC0)),
            ([0x00, 0xC0, 0x90, 60, 0x00], 2, .dataByteOutOfRange(status: 0xC0, byte: 0x90)),
            ([0x00, 0xF4], 1, .undefinedStatus(0xF4)),
        ]
        let firstTrackByte = 22  // 14-byte header, 8-byte chunk header
        for prefixCount in 0...good.count {
            let prefix = good.prefix(prefixCount).flatMap { $0 }
            for suffixCount in 0...3 {
                let suffix = good.suffix(suffixCount).flatMap { $0 }
                // Good events only. Without an end of track, the last events fall in the
                // chunk's last 8 bytes (the general loop); with one, the run loop reads them.
                if suffixCount == 0 {
                    let cut = try read(SMFBytes.header() + SMFBytes.track(prefix))
                    let ended = try read(SMFBytes.header() + SMFBytes.track(prefix + SMFBytes.eot))
                    let ne = ended.tracks[0].events.filter { if case .meta = $0.event { false } else { true } }
                    #expect(cut.tracks[0].events == ne, "prefix \(prefixCount)")
                    #expect(ne.count >= (prefixCount + 1) / 2)
                }
                for bad in damaged {
                    let bytes = SMFBytes.header() + SMFBytes.track(prefix + bad.bytes + suffix + SMFBytes.eot)
                    let error = refusal(bytes)
                    #expect(error?.reason == bad.reason, "prefix \(prefixCount) suffix \(suffixCount) \(bad.bytes)")
                    if case .variableLengthQuantityTooLong = bad.reason {
                        // Reported at the delta's first byte.
                        #expect(error?.location.offset == firstTrackByte + prefix.count, "prefix \(prefixCount) suffix \(suffixCount)")
                    } else {
                        #expect(error?.location.offset == firstTrackByte + prefix.count + bad.badByteAt,
                                "prefix \(prefixCount) suffix \(suffixCount) \(bad.bytes)")
                    }
                }
            }
        }
    }

    /// A chunk that could hold more than `TrackParser.directLimit` events is read into storage
    /// sized for three bytes an event, which grows by copying when the events are shorter: the
    /// buffers move while notes are still pending.
    @Test("A track of more than 4 MB (growing storage) pairs every note as a small one does")
    func trackLargerThanDirectStorage() throws {
        // Each tick: a note-on, the release of the note-on three ticks back (a zero-velocity
        // note-on), then 20 channel pressures, 19 of them in 2 bytes (running status).
        let ticks = 100_000
        let pressures = 20
        var body: [UInt8] = []
        body.reserveCapacity(48 * ticks + 8)
        for i in 0..<ticks {
            body += [i == 0 ? 0x00 : 0x01, 0x90, UInt8(i % 100), UInt8(1 + i % 127)]
            if i >= 3 { body += [0x00, UInt8((i - 3) % 100), 0] }
            body += [0x00, 0xD0, UInt8(i % 128)]
            for _ in 1..<pressures { body += [0x00, UInt8(i % 128)] }
        }
        body += SMFBytes.eot
        #expect(body.count / 2 + 1 > TrackParser.directLimit, "the chunk must be too large for the direct array")
        let file = try read(SMFBytes.header() + SMFBytes.track(body))
        let events = file.tracks[0].events
        #expect(events.count > body.count / 3, "more events than the first allocation holds, so the storage grew")
        var notes = 0, pressureCount = 0
        var wrong: String?
        for event in events {
            let i = Int(event.tick)
            switch event.event {
            case .note(let note):
                if wrong == nil && (note.duration != 3 || Int(note.key) != i % 100 || Int(note.velocity) != 1 + i % 127
                                    || !note.releasedByZeroVelocityNoteOn) {
                    wrong = "tick \(i): key \(note.key), velocity \(note.velocity), duration \(note.duration)"
                }
                notes += 1
            case .message(let m) where m.status == 0xD0:
                if wrong == nil && Int(m.data1) != i % 128 { wrong = "tick \(i): pressure \(m.data1)" }
                pressureCount += 1
            default: break
            }
        }
        #expect(wrong == nil)
        #expect(notes == ticks - 3)
        #expect(pressureCount == pressures * ticks)
        // The last three note-ons have no release and stay messages.
        let unreleased = events.filter { if case .message(let m) = $0.event { m.status == 0x90 } else { false } }
        #expect(unreleased.map(\.tick) == [Int64(ticks - 3), Int64(ticks - 2), Int64(ticks - 1)])
    }

    @Test("Tolerated with warnings: missing end of track, chunk length past EOF, truncated track")
    func toleratedTrackDamage() throws {
        let missingEOT = try read(SMFBytes.header() + SMFBytes.track(Array(SMFBytes.fourNotes.dropLast(4))))
        #expect(noteCount(missingEOT) == 4)
        #expect(missingEOT.tracks[0].explicitLength == nil)
        #expect(missingEOT.tracks[0].length == 384)
        #expect(missingEOT.warnings.contains { $0.message.contains("no end-of-track") })

        let pastEOF = try read(SMFBytes.header() + SMFBytes.track(SMFBytes.fourNotes, declaredLength: SMFBytes.fourNotes.count + 100))
        #expect(noteCount(pastEOF) == 4)
        #expect(pastEOF.tracks[0].explicitLength == 384)
        #expect(pastEOF.warnings.count == 1)

        // Cut in the middle of the 3rd note-off.
        let body = SMFBytes.fourNotes
        let truncated = SMFBytes.header() + SMFBytes.track(Array(body[0..<22]), declaredLength: body.count)
        let t = try read(truncated)
        let pairing = FileDump.notes(of: t)
        #expect(pairing.matched.count == 2)
        #expect(pairing.unterminated.count == 1)
        #expect(t.tracks[0].explicitLength == nil)
        #expect(t.warnings.contains { $0.message.contains("file ends") })

        // Strict mode refuses the same file.
        #expect(throws: SMFError.self) { try read(truncated, strict: true) }
    }

    @Test("Chunk length too long: track 0 ends at its end of track, track 1 is found again")
    func chunkTooLong() throws {
        let t0 = SMFBytes.fourNotes
        let t1: [UInt8] = [0x00, 0x91, 48, 90, 0x60, 0x81, 48, 0] + SMFBytes.eot
        let bytes = SMFBytes.header(format: 1, tracks: 2) + SMFBytes.track(t0, declaredLength: t0.count + 14) + SMFBytes.track(t1)
        let file = try read(bytes)
        #expect(file.tracks.count == 2)
        #expect(noteCount(file) == 5)
        #expect(file.warnings.contains { $0.message.contains("re-synchronizing") })
    }

    @Test("Chunk length too short: the cut event is not read across the chunk end")
    func chunkTooShort() throws {
        let t0 = SMFBytes.fourNotes
        let t1: [UInt8] = [0x00, 0x91, 48, 90, 0x60, 0x81, 48, 0] + SMFBytes.eot
        let bytes = SMFBytes.header(format: 1, tracks: 2) + SMFBytes.track(t0, declaredLength: t0.count - 10) + SMFBytes.track(t1)
        let file = try read(bytes)
        let notes0 = FileDump.notes(of: StandardMIDIFile(format: 1, divisionWord: 96, tracks: [file.tracks[0]]))
        #expect(notes0.matched.count == 3)
        #expect(file.tracks.count == 2)
        #expect(file.warnings.contains { $0.message.contains("chunk ends inside") })
    }

    @Test("Delta VLQ cut by the chunk end keeps what came before")
    func deltaCut() throws {
        let file = try read(SMFBytes.header() + SMFBytes.track([0x00, 0x90, 60, 100, 0x81, 0x80]))
        #expect(FileDump.notes(of: file).unterminated.count == 1)
        #expect(file.warnings.contains { $0.message.contains("delta time") })
    }

    @Test("Largest legal delta: 268435455 ticks without overflow")
    func largestDelta() throws {
        let file = try read(SMFBytes.header() + SMFBytes.track([0x00, 0x90, 60, 100, 0xFF, 0xFF, 0xFF, 0x7F, 0x80, 60, 0] + SMFBytes.eot))
        if case .note(let n) = file.tracks[0].events[0].event { #expect(n.duration == 268_435_455) } else { Issue.record("no note") }
        let sequence = file.makeSequence()
        #expect(sequence.makeTempoMap().seconds(atTick: 268_435_455) == 268_435_455.0 / 96.0 * 0.5)
    }

    @Test("A release further away than a note's longest duration stays a message pair, written back byte for byte")
    func releaseBeyondMaximumDuration() throws {
        // Two largest deltas between the note-on and its note-off: 536,870,910 ticks.
        let bytes = SMFBytes.header() + SMFBytes.track([0x00, 0x90, 60, 100, 0xFF, 0xFF, 0xFF, 0x7F, 0xB0, 7, 90,
                                                         0xFF, 0xFF, 0xFF, 0x7F, 0x80, 60, 33] + SMFBytes.eot)
        let file = try read(bytes)
        let kinds = file.tracks[0].events.map { e -> String in
            if case .message(let m) = e.event { return "\(m.status)@\(e.tick)" }
            return "other"
        }
        #expect(kinds == ["144@0", "176@268435455", "128@536870910"])
        #expect(SMFWriter.bytes(of: file) == bytes)
        let notes = FileDump.notes(of: file)
        #expect(notes.matched.map(\.end) == [536_870_910] && notes.unterminated.isEmpty && notes.orphans == 0)
    }

    @Test("Unknown chunks are skipped and do not count as tracks")
    func unknownChunks() throws {
        let bytes = SMFBytes.header(format: 1, tracks: 2) + SMFBytes.chunk("XFIH", [1, 2, 3, 4, 5, 6, 7])
            + SMFBytes.track(SMFBytes.fourNotes) + SMFBytes.chunk("junk", []) + SMFBytes.track(SMFBytes.fourNotes) + SMFBytes.chunk("ABCD", [9, 9])
        let file = try read(bytes)
        #expect(file.tracks.count == 2)
        #expect(noteCount(file) == 8)
        #expect(file.warnings.filter { $0.message.contains("unknown chunk") }.count == 3)
    }

    @Test("Header cases: zero tracks, declared tracks missing, extra header bytes, unknown format, division 0")
    func headerCases() throws {
        let zero = try read(SMFBytes.header(format: 1, tracks: 0))
        #expect(zero.tracks.isEmpty && zero.warnings.isEmpty)

        let missing = try read(SMFBytes.header(format: 1, tracks: 2))
        #expect(missing.tracks.isEmpty)
        #expect(missing.warnings.contains { $0.message.contains("declares 2 track(s), 0 found") })

        let extra = try read(SMFBytes.header(length: 10) + SMFBytes.track(SMFBytes.fourNotes))
        #expect(noteCount(extra) == 4)
        #expect(extra.warnings.count == 1)

        let division0 = try read(SMFBytes.header(division: 0) + SMFBytes.track(SMFBytes.fourNotes))
        #expect(noteCount(division0) == 4)
        #expect(!division0.timeBase.isUsable)
        let doc = OracleCompare.parse(FileDump.document(of: division0))
        #expect(doc["length_seconds"] is NSNull)

        let unknownFormat = try read(SMFBytes.header(format: 28673) + SMFBytes.track(SMFBytes.fourNotes))
        #expect(unknownFormat.format == 28673)
        #expect(unknownFormat.warnings.contains { $0.message.contains("unknown format") })
    }

    @Test("Extra track chunks are read when complete, ignored when they claim bytes past the end")
    func extraTracks() throws {
        let extra = try read(SMFBytes.header(format: 1, tracks: 0) + SMFBytes.track(SMFBytes.fourNotes))
        #expect(extra.tracks.count == 1)
        let chunkLike = try read(SMFBytes.header(tracks: 1) + SMFBytes.track(SMFBytes.fourNotes) + Array("MTrk".utf8) + [0xFF, 0xFF, 0xFF, 0xF0, 1, 2, 3, 4, 5])
        #expect(chunkLike.tracks.count == 1)
        #expect(chunkLike.warnings.contains { $0.message.contains("ignored") })
    }

    @Test("Garbage after the last track is ignored")
    func garbageAfterEnd() throws {
        let file = try read(SMFBytes.header() + SMFBytes.track(SMFBytes.fourNotes) + (7...106).map { UInt8($0) })
        #expect(file.tracks.count == 1)
        #expect(noteCount(file) == 4)
        #expect(file.warnings.count == 1)
    }

    @Test("RIFF RMID files are unwrapped")
    func riff() throws {
        let smf = SMFBytes.header() + SMFBytes.track(SMFBytes.fourNotes)
        func le(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)] }
        let dataChunk = Array("data".utf8) + le(smf.count) + smf
        let riff = Array("RIFF".utf8) + le(4 + dataChunk.count) + Array("RMID".utf8) + dataChunk
        let file = try read(riff)
        #expect(noteCount(file) == 4)
        #expect(file.warnings.contains { $0.message.contains("RIFF") })
    }

    @Test("SMPTE divisions convert to seconds by frames")
    func smpteDivisions() throws {
        for (word, ticksPerSecond) in [(0xE804, 96.0), (0xE728, 1000.0), (0xE264, 3000.0)] {
            let bytes = SMFBytes.header(division: word) + SMFBytes.track([0x00, 0x90, 60, 100, 0x83, 0x60, 0x80, 60, 0] + SMFBytes.eot)
            let file = try read(bytes)
            let doc = OracleCompare.parse(FileDump.document(of: file))
            let seconds = (doc["length_seconds"] as? NSNumber)?.doubleValue ?? -1
            #expect(abs(seconds - 480.0 / ticksPerSecond) < 1e-9)
        }
        let drop = try read(SMFBytes.header(division: 0xE350) + SMFBytes.track([0x00, 0x90, 60, 100, 0x92, 0x10, 0x80, 60, 0] + SMFBytes.eot))
        #expect(drop.timeBase == .smpte(framesPerSecond: 29, ticksPerFrame: 80))
        let seconds = drop.makeSequence().makeTempoMap().seconds(atTick: 2320)
        #expect(abs(seconds - 2320.0 * 1001.0 / 30000.0 / 80.0) < 1e-12)
    }

    @Test("Sysex F0 packets, F7 continuations and escapes are kept apart, byte for byte")
    func sysexPackets() throws {
        let body: [UInt8] = [0x00, 0xF0, 0x03, 0x43, 0x12, 0x00,
                             0x10, 0xF7, 0x03, 0x43, 0x12, 0xF7,
                             0x10, 0xF7, 0x02, 0xF8, 0xFA] + SMFBytes.eot
        let file = try read(SMFBytes.header() + SMFBytes.track(body))
        var seen: [SysexEvent] = []
        file.tracks[0].forEachFileEvent { _, e in if case .sysex(let s) = e { seen.append(s) } }
        #expect(seen == [SysexEvent(status: 0xF0, payload: [0x43, 0x12, 0x00]),
                         SysexEvent(status: 0xF7, payload: [0x43, 0x12, 0xF7]),
                         SysexEvent(status: 0xF7, payload: [0xF8, 0xFA])])
        #expect(seen[0].isPacketStart)
        let written = SMFWriter.bytes(of: file)
        #expect(Array(written[22...]) == body)
    }

    @Test("Running status continues across meta events; padded VLQs are read")
    func runningStatusAcrossMeta() throws {
        let body: [UInt8] = [0x00, 0x90, 60, 100, 0x00, 0xFF, 0x01, 0x00, 0x80, 0x80, 0x80, 0x60, 60, 0] + SMFBytes.eot
        let file = try read(SMFBytes.header() + SMFBytes.track(body))
        let notes = FileDump.notes(of: file)
        #expect(notes.matched.count == 1)
        #expect(notes.matched.first?.end == 96)
    }

    @Test("Notes pair first in, first out; unterminated and orphan notes are kept as messages")
    func notePairing() throws {
        let body: [UInt8] = [
            0x00, 0x90, 60, 101, 0x60, 0x90, 60, 102, 0x60, 0x80, 60, 0, 0x60, 0x80, 60, 0,
            0x00, 0x90, 62, 90, 0x00, 0x80, 62, 0,
            0x00, 0x90, 64, 90, 0x10, 0x90, 64, 0,
            0x00, 0x90, 65, 90, 0x00, 0x80, 67, 0,
        ] + SMFBytes.eot
        let file = try read(SMFBytes.header() + SMFBytes.track(body))
        let pairing = FileDump.notes(of: file)
        #expect(pairing.matched.map { [$0.start, $0.end ?? -1, Int64($0.velocity)] } == [[0, 192, 101], [96, 288, 102], [288, 288, 90], [288, 304, 90]])
        #expect(pairing.unterminated.map(\.pitch) == [65])
        #expect(pairing.orphans == 1)
        // Written back with the same events in the same order (running status wherever possible).
        let written = try read(SMFWriter.bytes(of: file))
        #expect(FileDump.document(of: written) == FileDump.document(of: file))
        #expect(SMFWriter.bytes(of: file).count < SMFBytes.header().count + 8 + body.count)
    }

    @Test("The writer uses running status and re-states status after meta and sysex")
    func writerRunningStatus() throws {
        var track = MusicTrack()
        track.addNote(at: 0, channel: 0, key: 60, velocity: 100, duration: 96)
        track.addNote(at: 0, channel: 0, key: 64, velocity: 100, duration: 96)
        track.add(.meta(.text(MetaType.marker, "x")), at: 96)
        track.addNote(at: 96, channel: 0, key: 67, velocity: 100, duration: 96)
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(96))
        sequence.tracks = [track]
        let bytes = SMFWriter.bytes(of: sequence)
        let body = Array(bytes[22...])
        #expect(body == [0x00, 0x90, 60, 100, 0x00, 64, 100,
                         0x60, 0x80, 60, 0, 0x00, 64, 0,
                         0x00, 0xFF, 0x06, 0x01, 0x78,
                         0x00, 0x90, 67, 100,
                         0x60, 0x80, 67, 0,
                         0x00, 0xFF, 0x2F, 0x00])
    }

    @Test("Format 1 conductor becomes the tempo track and comes back in place")
    func conductor() throws {
        let conductor: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20, 0x00, 0xFF, 0x58, 0x04, 3, 3, 24, 8] + SMFBytes.eot
        let bytes = SMFBytes.header(format: 1, tracks: 2) + SMFBytes.track(conductor) + SMFBytes.track(SMFBytes.fourNotes)
        let file = try read(bytes)
        let sequence = file.makeSequence()
        #expect(sequence.tempoTrack.count == 2)
        #expect(sequence.tracks.count == 1)
        #expect(sequence.timeSignatures.first?.signature.description == "3/8")
        #expect(SMFWriter.bytes(of: sequence) == bytes)
    }

    @Test("Format 0 output merges tracks in time order")
    func formatZero() throws {
        var a = MusicTrack()
        a.add(.meta(.tempo(bpm: 100)), at: 0)
        var b = MusicTrack()
        b.addNote(at: 0, channel: 1, key: 50, velocity: 70, duration: 100)
        var c = MusicTrack()
        c.addNote(at: 50, channel: 2, key: 55, velocity: 70, duration: 100)
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(96), tempoTrack: a, tracks: [b, c])
        sequence.sourceFormat = 1
        let bytes = SMFWriter.bytes(of: sequence, layout: .format0)
        let file = try read(bytes)
        #expect(file.format == 0)
        #expect(file.tracks.count == 1)
        #expect(FileDump.notes(of: file).matched.map(\.start) == [0, 50])
        #expect(file.tracks[0].explicitLength == 150)
    }
}
