import MIDI
import MIDIFile
import Sequencing

extension ScoreBox {
    /// A new score from this one's sequence after `edit`, laid out as the file was read: the
    /// path `tactus edit` takes, so an edit here writes the bytes the command writes.
    func edited(_ edit: (inout MusicSequence) -> Void) -> ScoreBox {
        var sequence = file.makeSequence()
        edit(&sequence)
        return ScoreBox(file: StandardMIDIFile(sequence: sequence, layout: .asRead), name: name, augmentation: augmentation)
    }

    /// The file as Standard MIDI File bytes, or a failure naming the event past the tick limit.
    func smfBytes() throws(CFailure) -> [UInt8] {
        do throws(SMFTickLimitError) {
            return try SMFWriter.checkedBytes(of: file)
        } catch {
            throw CFailure(.invalidFile, "\(name): \(error)")
        }
    }
}

/// How `tactus_score_transpose` treats a note moved outside 0...127 (`TACTUS_OVERFLOW_*`).
private func overflowPolicy(_ value: Int32) throws(CFailure) -> TransposeOverflowPolicy {
    switch value {
    case 0: return .clamp
    case 1: return .drop
    case 2: return .foldOctave
    default: throw CFailure(.invalidArgument, "the overflow policy is \(value), not 0 (clamp), 1 (drop) or 2 (fold by octaves)")
    }
}

/// A new score with every note and key message moved by `semitones` (-127...127), as
/// `tactus edit --transpose N --overflow P` moves them: channel 10 (drums) stays unless MPE
/// makes it a member channel; `overflow` 0 clamps to 0...127, 1 drops the note, 2 folds it
/// back by octaves.
@_cdecl("tactus_score_transpose")
public func tactus_score_transpose(_ score: OpaquePointer?, _ semitones: Int32, _ overflow: Int32,
                                   _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(CFailure) in
        let out = try checkedOut(out)
        let box = try scores.object(score)
        guard (-127...127).contains(semitones) else { throw CFailure(.invalidArgument, "the transposition is \(semitones) semitones, not -127...127") }
        let policy = try overflowPolicy(overflow)
        out.pointee = scores.insert(box.edited { sequence in
            sequence.transpose(by: Int(semitones), policy: policy)
        })
    }
}

/// A new score with every event of the event tracks moved by `ticks` (negative is earlier;
/// nothing goes before tick 0), as `tactus edit --move N` moves them; the tempo track stays.
@_cdecl("tactus_score_shift")
public func tactus_score_shift(_ score: OpaquePointer?, _ ticks: Int64, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(CFailure) in
        let out = try checkedOut(out)
        let box = try scores.object(score)
        let limit = SMFWriter.maximumTick
        guard (-limit...limit).contains(ticks) else { throw CFailure(.invalidArgument, "the shift is \(ticks) ticks, not within ±\(limit)") }
        out.pointee = scores.insert(box.edited { sequence in
            sequence.move(by: ticks)
        })
    }
}

/// A new score keeping only the notes whose `keep` byte is non-zero: `keep` has one byte per
/// row of `tactus_score_notes` (every track's notes, track after track), and `count` must be
/// that number of notes. Everything else (controllers, tempos, lyrics, the track layout)
/// stays as it is; a dropped note paired from note-on and note-off messages loses both.
@_cdecl("tactus_score_keep_notes")
public func tactus_score_keep_notes(_ score: OpaquePointer?, _ keep: UnsafePointer<UInt8>?, _ count: Int64,
                                    _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(CFailure) in
        let out = try checkedOut(out)
        let box = try scores.object(score)
        let rows = try checkedCount(count, "the count")
        let summaries = box.noteSummaries
        let total = summaries.reduce(0) { $0 + $1.count }
        guard rows == total else { throw CFailure(.invalidArgument, "the mask has \(rows) entries, the score has \(total) notes") }
        guard let keep else {
            if total == 0 { out.pointee = scores.insert(box); return }
            throw CFailure(.invalidArgument, "the mask pointer is NULL")
        }
        var file = box.file
        var offset = 0
        for (index, summary) in summaries.enumerated() {
            let mask = UnsafeBufferPointer(start: keep + offset, count: summary.count)
            offset += summary.count
            guard mask.contains(0) else { continue }
            let dropped = TrackNotes.eventOrders(of: file.tracks[index], summary: summary, where: { mask[$0] == 0 })
            file.tracks[index].removeAll { dropped.contains($0.order) }
        }
        out.pointee = scores.insert(ScoreBox(file: file, name: box.name, augmentation: box.augmentation))
    }
}

/// The score as Standard MIDI File bytes, copied as `tactus_score_track_name` copies a name
/// but without a terminator: `needed` receives the byte count; a NULL buffer or a capacity of
/// 0 only asks it. An event past the writer's tick limit (2^31 - 1) gives
/// `TACTUS_ERROR_INVALID_FILE`.
@_cdecl("tactus_score_smf_bytes")
public func tactus_score_smf_bytes(_ score: OpaquePointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ capacity: Int64,
                                   _ needed: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let bytes = try scores.object(score).smfBytes()
        let size = try checkedCount(capacity, "the capacity")
        needed?.pointee = Int64(bytes.count)
        guard let buffer, size > 0 else { return }
        guard size >= bytes.count else { throw CFailure(.bufferTooSmall, "the file takes \(bytes.count) bytes, the buffer holds \(size)") }
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: bytes.count) }
    }
}

/// Writes the score as a Standard MIDI File at `path`, as `tactus edit` writes: through a
/// temporary file renamed into place, so a failed write leaves any earlier file whole; a path
/// that is a device or FIFO is written in place. Fails with `TACTUS_ERROR_WRITE_FAILED`.
@_cdecl("tactus_score_write")
public func tactus_score_write(_ score: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    guarded { () throws(CFailure) in
        let bytes = try scores.object(score).smfBytes()
        guard let path else { throw CFailure(.invalidArgument, "the path is NULL") }
        do throws(SMFWriteError) {
            try SMFWriter.writeAtomically(bytes, to: String(cString: path))
        } catch {
            throw CFailure(.writeFailed, error.description)
        }
    }
}
