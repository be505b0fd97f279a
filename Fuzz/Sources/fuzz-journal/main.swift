import MIDIFile
import Recording
import Sequencing

/// Any bytes as the journal `tactus record --recover` rebuilds a take from. The first byte picks
/// how the rest is used: even, the rest is the journal as it is (a torn or scribbled record ends
/// the events); odd, the binary records after the header get their FNV-1a checksums written in,
/// so the events reach the recorder instead of stopping at the first checksum the fuzzer cannot
/// guess, and every record so sealed must be decoded. A journal is refused with an error, or
/// it becomes a take as `record --recover` makes it (the header's sequence, the journal replayed
/// through the recorder, merged), which the SMF writer writes as format 1 (or refuses with its
/// tick limit error) and the SMF reader reads back with the same division and note count.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJournal(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    var bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let sealed = data[0] & 1 == 1 ? seal(&bytes) : nil
    let contents: RecordingJournal.Contents
    do {
        contents = try RecordingJournal.decode(bytes, path: "/fuzz/take.mid.journal")
    } catch {
        return 0  // refused with a RecordingJournalError (the only error decode throws)
    }
    if let sealed, contents.events.count != sealed.events {
        fatalError("\(sealed.events) sealed event records, \(contents.events.count) decoded")
    }
    if contents.discardedByteCount < 0 || contents.discardedByteCount > bytes.count {
        fatalError("discarded \(contents.discardedByteCount) of \(bytes.count) bytes")
    }
    // As RecordingSession.recover(journal:backing:) does, without reading the backing file.
    let header = contents.header
    let base = header.makeSequence()
    let recorder = RecordingJournal.recover(contents)
    let start = base.makeTempoMap().seconds(atTick: header.settings.loop?.lowerBound ?? header.settings.startTick)
    let end = contents.lastNanoseconds.map { Double($0) / 1e9 } ?? start
    let take = RecordingTake(recorder: recorder, base: base, ending: .stopped, recordedSeconds: max(0, end - start), journalPath: nil)
    let merged = take.merged()
    let written: [UInt8]
    do {
        written = try SMFWriter.checkedBytes(of: merged, layout: .format1)
    } catch {
        return 0  // past the SMF tick limit: `record --recover` refuses it with this error
    }
    let file: StandardMIDIFile
    do {
        file = try SMFReader.read(written)
    } catch {
        fatalError("a recovered take's SMF does not read back: \(error) (division \(header.ticksPerQuarter))")
    }
    let again = file.makeSequence()
    if again.ticksPerQuarter != merged.ticksPerQuarter {
        fatalError("division \(merged.ticksPerQuarter) written, \(again.ticksPerQuarter) read back")
    }
    if noteCount(again) != noteCount(merged) {
        fatalError("\(noteCount(merged)) notes written, \(noteCount(again)) read back")
    }
    return 0
}

private func noteCount(_ sequence: MusicSequence) -> Int {
    sequence.tracks.reduce(0) { n, track in
        n + track.events.filter { if case .note = $0.event { return true } else { return false } }.count
    }
}

/// Rewrites the checksums of the records after the header (which ends at the first empty
/// line) in place, as the journal writer computes them; stops at a byte that starts no record
/// or a record cut short. Returns where the header ended and how many event records it sealed.
private func seal(_ data: inout [UInt8]) -> (headerEnd: Int?, events: Int) {
    var i = 0
    while i + 1 < data.count, !(data[i] == 0x0A && data[i + 1] == 0x0A) { i += 1 }
    guard i + 1 < data.count else { return (nil, 0) }
    var p = i + 2, events = 0
    func put(_ value: UInt32, at offset: Int) {
        for k in 0..<4 { data[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(k))) }
    }
    while p < data.count {
        if data[p] == 0xE1 {
            guard p + 11 <= data.count else { break }
            let count = Int(data[p + 9]) | Int(data[p + 10]) << 8
            let sumAt = p + 11 + count
            guard sumAt + 4 <= data.count else { break }
            put(fnv1a(data[p..<sumAt]), at: sumAt)
            events += 1
            p = sumAt + 4
        } else if data[p] == 0xE2 {
            guard p + 13 <= data.count else { break }
            put(fnv1a(data[p..<(p + 9)]), at: p + 9)
            p += 13
        } else {
            break
        }
    }
    return (i, events)
}

private func fnv1a(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    var h: UInt32 = 0x811C_9DC5
    for b in bytes {
        h ^= UInt32(b)
        h = h &* 0x0100_0193
    }
    return h
}
