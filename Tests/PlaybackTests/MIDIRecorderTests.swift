import AudioGraph
import Foundation
import MallocCounter
import MIDI
import MIDIFile
import Playback
import Recording
import Sequencing
import Testing

/// A manual input source: messages at chosen take times, as a MIDI keyboard would send them.
struct ManualInput {
    var recorder: MIDIRecorder

    init(sequence: MusicSequence, _ settings: RecordingSettings = RecordingSettings()) {
        recorder = MIDIRecorder(sequence: sequence, settings: settings)
    }

    mutating func note(_ key: UInt8, at seconds: Double, for length: Double, velocity: UInt8 = 100, channel: UInt8 = 0) {
        recorder.record([0x90 | channel, key, velocity], atSeconds: seconds)
        recorder.record([0x80 | channel, key, 64], atSeconds: seconds + length)
    }

    /// (tick, key, duration) of every note of every take, by pass.
    var notes: [[Int64]] {
        recorder.takes.flatMap { take in
            take.track.events.compactMap { e -> [Int64]? in
                guard case .note(let n) = e.event else { return nil }
                return [Int64(take.pass), e.tick, Int64(n.key), n.duration]
            }
        }
    }
}

/// 960 ticks per quarter; 120 BPM (0.5 s a beat) to tick 3840, then 60 BPM (1 s a beat).
func tempoChangeSequence() -> MusicSequence {
    var seq = MusicSequence(timeBase: .ticksPerQuarter(960))
    seq.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
    seq.tempoTrack.add(.meta(.tempo(bpm: 60)), at: 3840)
    return seq
}

@Suite struct MIDIByteStreamInputTests {
    /// Running status, a real-time clock byte inside a note, active sensing, a sysex with a
    /// real-time byte inside it, a program change and pitch bend under running status.
    let stream: [UInt8] = [0x90, 60, 100, 62, 0xF8, 101, 0x80, 60, 0, 0xFE, 62, 0,
                           0xF0, 0x7E, 0x7F, 0xF8, 0x09, 0x01, 0xF7, 0xC3, 5, 6, 0xE0, 0, 0x40, 0x10, 0x40]
    let expected: [[UInt8]] = [[0x90, 60, 100], [0x90, 62, 101], [0x80, 60, 0], [0x80, 62, 0],
                               [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7], [0xC3, 5], [0xC3, 6], [0xE0, 0, 0x40], [0xE0, 0x10, 0x40]]

    @Test func splitAtEveryPositionGivesTheSameMessages() {
        for split in 0...stream.count {
            var input = MIDIByteStreamInput()
            let first = input.receive(stream[..<split], atHostTime: 1_000)
            let second = input.receive(stream[split...], atHostTime: 2_000)
            #expect((first + second).map(\.bytes) == expected, "split at \(split)")
            // Each message carries the arrival time of the piece that completed it.
            #expect(first.allSatisfy { $0.hostNanos == 1_000 } && second.allSatisfy { $0.hostNanos == 2_000 })
        }
    }

    @Test func byteByByteGivesTheSameMessages() {
        var input = MIDIByteStreamInput()
        var got: [[UInt8]] = []
        for (i, b) in stream.enumerated() { got += input.receive([b], atHostTime: Int64(i)).map(\.bytes) }
        #expect(got == expected)
    }

    @Test func aSysexCutShortIsClosed() {
        var input = MIDIByteStreamInput()
        let got = input.receive([0xF0, 1, 2, 0x90, 60, 1], atHostTime: 0).map(\.bytes)
        #expect(got == [[0xF0, 1, 2, 0xF7], [0x90, 60, 1]])
    }
}

@Suite struct MIDIRecorderTests {
    /// What a journal may hold but a file track cannot (found by Fuzz/run.sh fuzz-journal:
    /// a stray `67 6E 63` became a message whose file did not read back) is dropped; the rest
    /// of the take is written and reads back.
    @Test func onlyWhatAFileTrackHoldsIsKeptSoTheTakeReadsBack() throws {
        var input = ManualInput(sequence: MusicSequence())
        for bytes: [UInt8] in [[0x67, 0x6E, 0x63], [0x90, 60], [0xB0, 0x80, 1], [0xF8], [0xFF], [0xF2, 1, 2], [0xF7, 1]] {
            input.recorder.record(bytes, atSeconds: 0.1)
        }
        input.note(60, at: 0.2, for: 0.1)
        input.recorder.record([0xC0, 5], atSeconds: 0.3)
        input.recorder.record([0xF0, 0x7E, 0x7F, 0xF7], atSeconds: 0.4)
        input.recorder.finish(atSeconds: 1)
        #expect(input.recorder.droppedCount == 7 && input.recorder.keptCount == 4)
        let bytes = try SMFWriter.checkedBytes(of: input.recorder.merged(into: MusicSequence()), layout: .format1)
        let back = try SMFReader.read(bytes).makeSequence()
        #expect(back.tracks.flatMap(\.events).filter { if case .note = $0.event { return true } else { return false } }.count == 1)
    }

    /// A journal's time far past the start (found by Fuzz/run.sh fuzz-journal: 7.7e9 s into a
    /// 2 s loop) lands in its pass without making room for the 3.8 billion passes before it,
    /// which ran out of memory; a time whose tick or pass no Int64 holds is dropped instead of
    /// trapping.
    @Test func aTimeFarPastTheStartLandsInItsPassOrIsDropped() throws {
        var settings = RecordingSettings()
        settings.loop = 0..<1920
        // 480 ticks a quarter at 120 BPM: 2 s a pass.
        var loop = MIDIRecorder(sequence: MusicSequence(timeBase: .ticksPerQuarter(480)), settings: settings)
        loop.record([0x90, 36, 100], atSeconds: 7.7e9 + 0.5)
        loop.record([0x80, 36, 0], atSeconds: 7.7e9 + 0.75)
        loop.finish(atSeconds: 7.7e9 + 1)
        #expect(loop.takes.map(\.pass) == [3_850_000_000] && loop.keptCount == 2)
        let fast = TempoMap(timeBase: .ticksPerQuarter(1 << 40), changes: [TempoChange(tick: 0, microsecondsPerQuarter: 1)])
        var plain = MIDIRecorder(tempoMap: fast, ticksPerQuarter: 1 << 40)
        plain.record([0x90, 60, 100], atSeconds: 100)  // 1.1e20 ticks
        var looped = MIDIRecorder(tempoMap: fast, ticksPerQuarter: 1 << 40, settings: settings)
        looped.record([0x90, 60, 100], atSeconds: 1e9)  // 1e33 passes
        #expect(plain.droppedCount == 1 && looped.droppedCount == 1)
    }

    @Test func ticksFollowTheTempoMap() {
        var input = ManualInput(sequence: tempoChangeSequence())
        input.note(60, at: 0.5, for: 0.25)   // beat 2 at 120 BPM: tick 960, 480 long
        input.note(62, at: 2.0, for: 1.5)    // tick 3840, across nothing: 1.5 s at 60 BPM = 1440 ticks
        input.note(64, at: 1.75, for: 0.5)   // 3360, ends at 2.25 s = 3840 + 240
        input.note(65, at: 3.0, for: 0.001)  // 4800, about a tick
        #expect(input.notes == [[0, 960, 60, 480], [0, 3360, 64, 720], [0, 3840, 62, 1440], [0, 4800, 65, 1]])
    }

    @Test func theMonotonicClockAppliesThePlayRate() {
        let seq = tempoChangeSequence()
        let clock = MonotonicRecordingClock(originHostNanos: 5_000_000_000, originSongSeconds: 0, rate: 2)
        var recorder = MIDIRecorder(sequence: seq)
        // At rate 2, 1.5 s of host time is 3 s of song: 2 s at 120 BPM then 1 s at 60 BPM.
        for (host, key) in [(Int64(5_250_000_000), UInt8(60)), (6_500_000_000, 61)] {
            recorder.record([0x90, key, 90], atSeconds: clock.songSeconds(atHostTime: host)!)
        }
        recorder.finish(atSeconds: clock.songSeconds(atHostTime: 7_000_000_000)!)
        let events = recorder.takes[0].track.events
        #expect(events.map(\.tick) == [960, 3840 + 960])
        // Held to the stop (4 s of song: tick 5760).
        if case .note(let n) = events[1].event { #expect(n.duration == 5760 - 4800) }
    }

    @Test func thePlayerClockCountsOutputFramesAcrossLoopJumpsAndRate() {
        // 48 kHz, rate 1.5, 480 frames of output latency (10 ms), count-in of 1 s in front.
        var clock = PlayerRecordingClock(sampleRate: 48_000, offsetSeconds: 1)
        let unit = Int64(65_536)
        #expect(clock.songSeconds(atHostTime: 1) == nil)
        // Blocks rendered before the driver ran carry host time 0, and blocks asked for while it
        // fills the buffer (before the latency's worth of frames) come long before they play:
        // neither is used.
        clock.update(anchor: PlaybackAnchor(outputFrame: 0, songPosition: 0, rateStep: unit * 3 / 2, hostNanos: 0), latencyFrames: 480)
        clock.update(anchor: PlaybackAnchor(outputFrame: 240, songPosition: 360 * unit, rateStep: unit * 3 / 2, hostNanos: 1_000_000_000),
                     latencyFrames: 480)
        #expect(clock.songSeconds(atHostTime: 1) == nil)
        clock.update(anchor: PlaybackAnchor(outputFrame: 4_800, songPosition: 7_200 * unit, rateStep: unit * 3 / 2, hostNanos: 2_000_000_000),
                     latencyFrames: 480)
        // Heard at 2.01 s: output frame 4800, song frame 7200 = 0.15 s, minus the count-in.
        #expect(abs(clock.songSeconds(atHostTime: 2_010_000_000)! - (0.15 - 1)) < 1e-9)
        // A loop jump moved the song position back; output frames did not jump, so the
        // clock goes on: 2 s later is 3 s of song later.
        clock.update(anchor: PlaybackAnchor(outputFrame: 4_800 + 96_000, songPosition: 100 * unit, rateStep: unit * 3 / 2, hostNanos: 4_000_000_000),
                     latencyFrames: 480)
        #expect(abs(clock.songSeconds(atHostTime: 4_010_000_000)! - (3.15 - 1)) < 1e-9)
        // A driver that woke 3 ms late moves the clock by no more than the drift allowance
        // (200 ppm of the 0.1 s since the last block: 20 us, 30 us of song at rate 1.5).
        clock.update(anchor: PlaybackAnchor(outputFrame: 4_800 + 96_000 + 4_800, songPosition: 100 * unit, rateStep: unit * 3 / 2,
                                            hostNanos: 4_103_000_000), latencyFrames: 480)
        #expect(abs(clock.songSeconds(atHostTime: 4_010_000_000)! - (3.15 - 1)) < 31e-6)
        // A device that runs slow against the host (1 ms in 10 s) is followed.
        clock.update(anchor: PlaybackAnchor(outputFrame: 4_800 + 576_000, songPosition: 100 * unit, rateStep: unit * 3 / 2,
                                            hostNanos: 14_001_000_000), latencyFrames: 480)
        #expect(abs(clock.songSeconds(atHostTime: 14_011_000_000)! - (0.15 + 18 - 1)) < 1e-6)
    }

    @Test func theCountInIsDropped() {
        var input = ManualInput(sequence: tempoChangeSequence())
        input.note(60, at: -0.3, for: 0.5)
        input.note(61, at: 0.25, for: 0.25)
        #expect(input.notes == [[0, 480, 61, 480]])
        #expect(input.recorder.droppedCount == 2)
    }

    @Test func punchInAndOutBoundaries() {
        var input = ManualInput(sequence: tempoChangeSequence(), RecordingSettings(punchIn: 960, punchOut: 1920))
        input.note(60, at: 0.4999, for: 0.2)  // tick 960 after rounding: in
        input.note(61, at: 0.45, for: 0.3)    // starts before the punch-in: dropped, and its note-off
        input.note(62, at: 0.75, for: 1.0)    // tick 1440, held past the punch-out: ends at 1920
        input.note(63, at: 1.0, for: 0.1)     // tick 1920: the punch-out itself is out
        input.recorder.record([0xB0, 1, 64], atSeconds: 0.6)  // a controller inside stays
        input.recorder.record([0xB0, 1, 0], atSeconds: 1.2)   // outside goes
        #expect(input.notes == [[0, 960, 60, 384], [0, 1440, 62, 480]])
        let events = input.recorder.takes[0].track.events
        #expect(events.contains { $0.tick == 1152 && $0.event == .message(.controlChange(channel: 0, controller: 1, value: 64)) })
        #expect(events.count == 3)
    }

    @Test func loopRecordingMakesOneTakePerPass() {
        // Loop bars 1-2 of 4/4 at 120 BPM: ticks 0..<7680, 4 s a pass.
        var input = ManualInput(sequence: tempoChangeSequence(), RecordingSettings(loop: 0..<3840))
        input.note(60, at: 0.5, for: 0.5)     // pass 1, tick 960
        input.note(61, at: 2.5, for: 0.25)    // pass 2, tick 960
        input.note(62, at: 5.75, for: 1.0)    // pass 3, tick 3360, held past the loop's end: ends at 3840
        input.note(63, at: 1.9999, for: 0.1)  // rounds onto the loop's end: the start of pass 2
        let notes = input.notes
        #expect(notes.contains([0, 960, 60, 960]))
        #expect(notes.contains([1, 960, 61, 480]))
        #expect(notes.contains([2, 3360, 62, 480]))
        #expect(notes.contains([1, 0, 63, 192]))
        let merged = input.recorder.merged(into: tempoChangeSequence())
        #expect(merged.tracks.map(\.name) == ["Take 1", "Take 2", "Take 3"])
    }

    @Test func recordingBeforeTheLoopStartIsPreRoll() {
        var input = ManualInput(sequence: tempoChangeSequence(), RecordingSettings(loop: 1920..<3840, startTick: 1920))
        input.note(60, at: 0.5, for: 0.1)     // tick 960: before the loop, dropped
        input.note(61, at: 1.5, for: 0.1)     // tick 2880, pass 1
        input.note(62, at: 2.5, for: 0.1)     // 1 s past the loop start, 1 s a pass: pass 2, tick 1920 + 960
        #expect(input.notes == [[0, 2880, 61, 192], [1, 2880, 62, 192]])
    }

    @Test func inputQuantizeMovesStartsAndKeepsLengths() {
        var input = ManualInput(sequence: tempoChangeSequence(), RecordingSettings(quantize: QuantizeGrid(noteValue: 16)))
        input.note(60, at: 0.13, for: 0.2)    // tick 249.6 -> 250 -> grid 240, 384 long
        input.note(61, at: 0.19, for: 0.1)    // 365 -> 480 (nearest of 240 and 480)
        input.note(62, at: 0.5, for: 0.1)     // 960 stays
        #expect(input.notes == [[0, 240, 60, 384], [0, 480, 61, 192], [0, 960, 62, 192]])
        var looped = ManualInput(sequence: tempoChangeSequence(), RecordingSettings(loop: 0..<1920, quantize: QuantizeGrid(noteValue: 4)))
        looped.note(64, at: 0.9, for: 0.05)   // tick 1728, nearest quarter is the loop's end: kept in the pass
        #expect(looped.notes == [[0, 960, 64, 96]])
        // The bend and timbre played for a note's start go to the grid with it; a bend during the note stays.
        var expressive = ManualInput(sequence: tempoChangeSequence(), RecordingSettings(quantize: QuantizeGrid(noteValue: 16)))
        expressive.recorder.record([0xE0, 0, 80], atSeconds: 0.13)
        expressive.recorder.record([0xB0, 74, 20], atSeconds: 0.13)
        expressive.note(60, at: 0.13, for: 0.2)
        expressive.recorder.record([0xE0, 0, 90], atSeconds: 0.2)
        let events = expressive.recorder.takes[0].track.events
        #expect(expressive.notes == [[0, 240, 60, 384]])
        #expect(events.contains { $0.tick == 240 && $0.event == .message(MIDIMessage(status: 0xE0, data1: 0, data2: 80)) })
        #expect(events.contains { $0.tick == 240 && $0.event == .message(.controlChange(channel: 0, controller: 74, value: 20)) })
        #expect(events.contains { $0.tick == 384 && $0.event == .message(MIDIMessage(status: 0xE0, data1: 0, data2: 90)) })
    }

    @Test func overdubAndReplaceIntoATrack() {
        var seq = tempoChangeSequence()
        var existing = MusicTrack()
        existing.addNote(at: 0, channel: 0, key: 40, velocity: 80, duration: 100)
        existing.addNote(at: 1000, channel: 0, key: 41, velocity: 80, duration: 100)
        existing.addNote(at: 3000, channel: 0, key: 42, velocity: 80, duration: 100)
        existing.name = "Bass"
        seq.tracks = [existing]
        for mode in [RecordingMode.overdub, .replace] {
            var input = ManualInput(sequence: seq, RecordingSettings(mode: mode, punchIn: 960, punchOut: 2880, targetTrack: 0))
            input.note(50, at: 0.75, for: 0.1)
            let track = input.recorder.merged(into: seq).tracks[0]
            let keys = track.events.compactMap { e -> UInt8? in if case .note(let n) = e.event { return n.key } else { return nil } }
            #expect(keys == (mode == .overdub ? [40, 41, 50, 42] : [40, 50, 42]), "\(mode)")
            #expect(track.name == "Bass")
        }
        var fresh = ManualInput(sequence: seq)
        fresh.note(50, at: 0.75, for: 0.1)
        let merged = fresh.recorder.merged(into: seq)
        #expect(merged.tracks.count == 2 && merged.tracks[1].name == "Recorded")
    }

    @Test func sysexAndZeroVelocityNoteOffsKeepTheirBytes() {
        var recorder = MIDIRecorder(sequence: tempoChangeSequence())
        recorder.record([0x91, 60, 100], atSeconds: 0)
        recorder.record([0x91, 60, 0], atSeconds: 0.5)
        recorder.record([0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7], atSeconds: 0.25)
        let events = recorder.takes[0].track.events
        guard case .note(let n) = events[0].event else { Issue.record("no note"); return }
        #expect(n.releasedByZeroVelocityNoteOn && n.offMessage == .noteOn(channel: 1, key: 60, velocity: 0) && n.duration == 960)
        #expect(events[1].event == .sysex(SysexEvent(status: 0xF0, payload: [0x7E, 0x7F, 0x09, 0x01, 0xF7])) && events[1].tick == 480)
    }
}

@Suite struct RecordingJournalTests {
    func temporaryPath() -> String { NSTemporaryDirectory() + "tactus-journal-\(UUID().uuidString).journal" }

    let settings = RecordingSettings(mode: .replace, punchIn: 480, punchOut: 100_000, loop: nil,
                                     quantize: QuantizeGrid(noteValue: 8, triplet: true), targetTrack: 0, startTick: 0)

    func header() -> RecordingJournalHeader {
        var seq = tempoChangeSequence()
        seq.tempoTrack.add(.meta(.timeSignature(TimeSignature(3, 4))), at: 0)
        return RecordingJournalHeader(sequence: seq, settings: settings, backingPath: "/songs/backing track.mid")
    }

    @Test func writtenEventsComeBackWithTheHeader() throws {
        let path = temporaryPath()
        defer { unlink(path) }
        let writer = try RecordingJournalWriter(path: path, header: header())
        let events: [(Int64, [UInt8])] = [(-100_000_000, [0x90, 1, 1]), (250_000_000, [0x90, 60, 100]), (500_000_000, [0xF0, 1, 2, 0xF7]),
                                          (700_000_000, [0x80, 60, 0])]
        for (t, bytes) in events { writer.append(nanoseconds: t, bytes: bytes) }
        writer.mark(nanoseconds: 900_000_000)
        try writer.flush()
        let contents = try RecordingJournal.read(contentsOf: path)
        #expect(contents.header == header())
        #expect(contents.events.map(\.nanoseconds) == events.map(\.0) && contents.events.map(\.bytes) == events.map(\.1))
        #expect(contents.lastNanoseconds == 900_000_000 && contents.discardedByteCount == 0)
    }

    @Test func aTornTailLosesOnlyTheLastRecord() throws {
        let path = temporaryPath()
        defer { unlink(path) }
        let writer = try RecordingJournalWriter(path: path, header: header())
        var direct = MIDIRecorder(sequence: tempoChangeSequence(), settings: settings)
        for i in 0..<50 {
            let t = Int64(i) * 100_000_000
            let bytes: [UInt8] = i % 2 == 0 ? [0x90, UInt8(40 + i), 100] : [0x80, UInt8(39 + i), 0]
            writer.append(nanoseconds: t, bytes: bytes)
            direct.record(bytes, atSeconds: Double(t) / 1e9)
        }
        try writer.flush()
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let record = 1 + 8 + 2 + 3 + 4
        // Cut the last record at every byte inside it, and scribble over it: 49 events remain.
        for cut in 1..<record {
            let torn = Array(whole[..<(whole.count - cut)])
            let contents = try RecordingJournal.decode(torn, path: path)
            #expect(contents.events.count == 49 && contents.discardedByteCount == record - cut, "cut \(cut)")
        }
        var scribbled = whole
        scribbled[whole.count - 6] ^= 0x55
        #expect(try RecordingJournal.decode(scribbled, path: path).events.count == 49)
        // The whole journal replays into the same take as recording directly.
        direct.finish(atSeconds: 4.9)
        let recovered = RecordingJournal.recover(try RecordingJournal.decode(whole, path: path))
        #expect(recovered.takes.map(\.track) == direct.takes.map(\.track))
        let tempoOnly = header().makeSequence()
        #expect(recovered.merged(into: tempoOnly).tracks.count == 1)
    }

    @Test func anyDamageToTheRecordsKeepsTheIntactPrefix() throws {
        // A journal of 40 events, then 2,000 seeded corruptions: flipped bytes, cut lengths,
        // garbage appended. Decoding never fails past the header, never reads outside the
        // data, and what it returns is always the events written, in order, up to the damage.
        let path = temporaryPath()
        defer { unlink(path) }
        let writer = try RecordingJournalWriter(path: path, header: header())
        var written: [[UInt8]] = []
        for i in 0..<40 {
            let bytes: [UInt8] = i % 7 == 3 ? [0xF0] + [UInt8](repeating: UInt8(i), count: i) + [0xF7] : [0x90, UInt8(i), 100]
            written.append(bytes)
            writer.append(nanoseconds: Int64(i) * 10_000_000, bytes: bytes)
            if i % 5 == 0 { writer.mark(nanoseconds: Int64(i) * 10_000_000 + 5) }
        }
        try writer.flush()
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let headerEnd = (0..<whole.count - 1).first { whole[$0] == 0x0A && whole[$0 + 1] == 0x0A }! + 2
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
            return seed
        }
        for round in 0..<2_000 {
            var bytes = whole
            switch round % 3 {
            case 0:
                let at = headerEnd + Int(next() % UInt64(bytes.count - headerEnd))
                bytes[at] ^= UInt8(1 + next() % 255)
            case 1:
                bytes.removeLast(Int(next() % UInt64(bytes.count - headerEnd)))
            default:
                bytes += (0..<Int(next() % 64)).map { _ in UInt8(truncatingIfNeeded: next()) }
            }
            let contents = try RecordingJournal.decode(bytes, path: path)
            #expect(contents.events.count <= written.count + (round % 3 == 2 ? 64 : 0))
            for (got, want) in zip(contents.events.map(\.bytes), written) where got != want {
                Issue.record("round \(round): a damaged record came back as an event")
                break
            }
            _ = RecordingJournal.recover(contents)
        }
    }

    @Test func notAJournalIsRefusedWithItsPath() {
        #expect(throws: RecordingJournalError.self) { try RecordingJournal.decode(Array("MThd".utf8), path: "x.journal") }
        do {
            _ = try RecordingJournal.decode(Array("tactus-journal 1\ndivision 9".utf8), path: "x.journal")
        } catch {
            #expect(error.description == "x.journal: the journal's header is incomplete")
        }
        #expect(throws: RecordingJournalError.self) { try RecordingJournal.read(contentsOf: "/nonexistent/x.journal") }
    }

    /// A division no Standard MIDI File holds (found by Fuzz/run.sh fuzz-journal: 4800000 was
    /// recovered into a file written with 32767, every tick of the take at the wrong time).
    @Test func aDivisionNoFileHoldsIsRefused() throws {
        for division in [0, -480, 32_768, 4_800_000] {
            do {
                _ = try RecordingJournal.decode(Array("tactus-journal 1\ndivision \(division)\n\n".utf8), path: "x.journal")
                Issue.record("division \(division) was read")
            } catch {
                #expect(error.reason.hasPrefix("not a Tactus journal"))
            }
        }
        #expect(try RecordingJournal.decode(Array("tactus-journal 1\ndivision 32767\n\n".utf8), path: "x.journal").header.ticksPerQuarter == 32_767)
    }
}

@Suite struct RecordingSessionTests {
    @Test func theMetronomeClicksEveryBeatAccentingBarStarts() {
        var seq = MusicSequence(timeBase: .ticksPerQuarter(480))
        seq.tempoTrack.add(.meta(.timeSignature(TimeSignature(3, 4))), at: 0)
        seq.tempoTrack.add(.meta(.timeSignature(TimeSignature(6, 8))), at: 2880)
        let clicks = Metronome.clickTrack(meter: seq.makeMeterMap(), in: 480..<4320)
        let notes = clicks.events.compactMap { e -> (Int64, UInt8)? in if case .note(let n) = e.event { return (e.tick, n.key) } else { return nil } }
        // 3/4: beats 480, 960 then bar 2 at 1440; 6/8 from 2880: eighths (240), accent each 6.
        let eighths: [Int64] = (0..<6).map { 2880 + Int64($0) * 240 }
        let expected: [Int64] = [480, 960, 1440, 1920, 2400] + eighths
        #expect(notes.map(\.0) == expected)
        #expect(notes.filter { $0.1 == Metronome.accentKey }.map(\.0) == [1440, 2880])
    }

    @Test func aCountInDelaysTheSongButNotItsOpeningTempo() {
        var seq = tempoChangeSequence()
        var t = MusicTrack()
        t.addNote(at: 0, channel: 0, key: 60, velocity: 1, duration: 10)
        t.add(.meta(.tempo(bpm: 90)), at: 0)
        seq.tracks = [t]
        let gap = seq.countInTicks(bars: 2)
        #expect(gap == 7680)
        let delayed = seq.delayed(byTicks: gap)
        #expect(delayed.tracks[0].events.first { if case .note = $0.event { return true } else { return false } }?.tick == gap)
        #expect(delayed.tempoChanges.map(\.tick) == [0, 0, 3840 + gap])
        let before = seq.makeTempoMap(), after = delayed.makeTempoMap()
        #expect(abs(after.seconds(atTick: gap + 5000) - after.seconds(atTick: gap) - before.seconds(atTick: 5000)) < 1e-12)
    }

    @Test func liveInputReachesTheInstrumentAtTheNextBlockWithoutAllocating() throws {
        let (player, recorder, _) = try recorderPlayer(MusicSequence(timeBase: .ticksPerQuarter(480)))
        let live = player.liveInput
        #expect(!live.send(.noteOn(channel: 2, key: 64, velocity: 99), toNode: 77), "no such node")
        player.start()
        play(player, frames: 1024)
        live.send(.noteOn(channel: 2, key: 64, velocity: 99), toNode: 1)
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 512), r = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { l.deallocate(); r.deallocate() }
        malloc_counter_start()
        player.engine.render(frameCount: 512, into: StereoBuffer(left: l, right: r))
        let allocations = malloc_counter_stop()
        #expect(allocations == 0)
        #expect(heard(recorder).contains(Heard(frame: 1024, message: .noteOn(channel: 2, key: 64, velocity: 99))))
        // All notes off releases live notes too (an empty song has already reached its end,
        // so a stop would have nothing to stop).
        player.allNotesOff()
        play(player, frames: 512)
        #expect(heard(recorder).contains(Heard(frame: 1536, message: .noteOff(channel: 2, key: 64))))
    }
}
