import MIDIFile
import Playback
import Sequencing
import Synchronization

/// A loaded Standard MIDI File behind a `TactusScore` handle. Immutable once loaded; the tempo
/// map is built on first use.
final class ScoreBox: Sendable {
    let file: StandardMIDIFile
    let name: String
    private let cachedTempoMap = Mutex<TempoMap?>(nil)
    private let cachedNoteSummaries = Mutex<[TrackNotes.Summary]?>(nil)
    /// The stems of each grouping asked for (see Dataset.swift).
    let cachedStems = Mutex<[StemGrouping: [Stem]]>([:])

    /// What `tactus_score_augment` drew to make this score (nil for a score as loaded): its
    /// gain is added to every render of the score, as `tactus render --augment` adds it.
    let augmentation: AugmentationDraw?

    init(file: StandardMIDIFile, name: String, augmentation: AugmentationDraw? = nil) {
        self.file = file
        self.name = name
        self.augmentation = augmentation
    }

    /// Tempo changes of every track, sorted by tick (file order at one tick), as mido and
    /// symusic merge them.
    var tempoChanges: [TempoChange] {
        var result: [TempoChange] = []
        for track in file.tracks {
            for e in track.events {
                if case .meta(let m) = e.event, let us = m.tempoMicrosecondsPerQuarter, us > 0 {
                    result.append(TempoChange(tick: e.tick, microsecondsPerQuarter: us))
                }
            }
        }
        return stableSortedByTick(result) { $0.tick }
    }

    /// Time signatures of every track, sorted by tick.
    var timeSignatures: [(tick: Int64, signature: TimeSignature)] {
        var result: [(tick: Int64, signature: TimeSignature)] = []
        for track in file.tracks {
            for e in track.events {
                if case .meta(let m) = e.event, let signature = m.timeSignature { result.append((e.tick, signature)) }
            }
        }
        return stableSortedByTick(result) { $0.tick }
    }

    /// The tempo map; fails for a file without timing (division 0).
    func tempoMap() throws(CFailure) -> TempoMap {
        guard file.timeBase.isUsable else {
            throw CFailure(.invalidFile, "\(name): division is 0, so the file has no timing")
        }
        if let map = cachedTempoMap.withLock({ $0 }) { return map }
        let map = TempoMap(timeBase: file.timeBase, changes: tempoChanges)
        cachedTempoMap.withLock { $0 = map }
        return map
    }

    /// Every track's ``TrackNotes/Summary``, made once: the whole-file calls ask for them
    /// twice (counts, then the fill).
    var noteSummaries: [TrackNotes.Summary] {
        if let summaries = cachedNoteSummaries.withLock({ $0 }) { return summaries }
        let summaries = file.tracks.map(TrackNotes.summary)
        cachedNoteSummaries.withLock { $0 = summaries }
        return summaries
    }

    /// The track at `index`.
    func track(_ index: Int64) throws(CFailure) -> MusicTrack {
        guard index >= 0, index < Int64(file.tracks.count) else {
            throw CFailure(.invalidArgument, "track \(index) is outside 0..<\(file.tracks.count)")
        }
        return file.tracks[Int(index)]
    }
}

private func stableSortedByTick<T>(_ items: [T], _ tick: (T) -> Int64) -> [T] {
    items.enumerated().sorted { a, b in
        let ta = tick(a.element), tb = tick(b.element)
        return ta != tb ? ta < tb : a.offset < b.offset
    }.map(\.element)
}

let scores = HandleTable<ScoreBox>(kind: "score")

private func load(path: UnsafePointer<CChar>) throws(CFailure) -> ScoreBox {
    if let problem = pathProblem(path) { throw problem }
    let name = String(cString: path)
    do {
        let file = try SMFReader.read(contentsOf: name)
        return ScoreBox(file: file, name: name)
    } catch {
        throw CFailure(error.isUnreadableInput ? .unreadable : .invalidFile, error.description)
    }
}

/// Loads the Standard MIDI File at `path` (a NUL-terminated file name) into a new score.
@_cdecl("tactus_score_load_path")
public func tactus_score_load_path(_ path: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(CFailure) in
        let out = try checkedOut(out)
        guard let path else { throw CFailure(.invalidArgument, "the path is NULL") }
        let box = try load(path: path)
        out.pointee = scores.insert(box)
    }
}

/// Loads a Standard MIDI File from `count` bytes at `bytes` (copied; the caller keeps them).
@_cdecl("tactus_score_load_bytes")
public func tactus_score_load_bytes(_ bytes: UnsafePointer<UInt8>?, _ count: Int64,
                                    _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(CFailure) in
        let out = try checkedOut(out)
        let length = try checkedCount(count, "the byte count")
        guard let bytes else { throw CFailure(.invalidArgument, "the byte pointer is NULL") }
        do {
            let file = try SMFReader.read(UnsafeRawBufferPointer(start: bytes, count: length))
            out.pointee = scores.insert(ScoreBox(file: file, name: "MIDI data"))
        } catch {
            throw CFailure(.invalidFile, "MIDI data: \(error)")
        }
    }
}

/// Frees a score; returns `TACTUS_ERROR_INVALID_HANDLE` for a handle that is not live.
@_cdecl("tactus_score_free")
public func tactus_score_free(_ score: OpaquePointer?) -> Int32 {
    guarded { () throws(CFailure) in
        guard scores.remove(score) else { throw CFailure(.invalidHandle, "not a live score handle (already freed, or never made)") }
    }
}

/// The header: format word, division word as stored, ticks per quarter note (for an SMPTE
/// division, the ticks of half a second), and the number of track chunks. Any output
/// pointer may be NULL.
@_cdecl("tactus_score_header")
public func tactus_score_header(_ score: OpaquePointer?, _ format: UnsafeMutablePointer<Int32>?,
                                _ division: UnsafeMutablePointer<Int32>?, _ ticksPerQuarter: UnsafeMutablePointer<Int32>?,
                                _ trackCount: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let file = try scores.object(score).file
        format?.pointee = Int32(file.format)
        division?.pointee = Int32(file.divisionWord)
        ticksPerQuarter?.pointee = Int32(clamping: file.timeBase.ticksPerQuarterForBeats)
        trackCount?.pointee = Int64(file.tracks.count)
    }
}

/// The last tick of track `track` (its end of track), or of the longest track when `track`
/// is -1.
@_cdecl("tactus_score_end_tick")
public func tactus_score_end_tick(_ score: OpaquePointer?, _ track: Int64, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let box = try scores.object(score)
        guard let out else { throw CFailure(.invalidArgument, "the output pointer is NULL") }
        if track == -1 {
            out.pointee = box.file.tracks.reduce(0) { max($0, $1.length) }
        } else {
            out.pointee = try box.track(track).length
        }
    }
}

/// Copies the name of track `track` (its first track-name event, UTF-8, NUL-terminated) into
/// `buffer` of `capacity` bytes; `needed` receives the bytes the whole name takes with its
/// NUL (1 for a track without a name). A buffer too small gets nothing and
/// `TACTUS_ERROR_BUFFER_TOO_SMALL`; `buffer` may be NULL with `capacity` 0 to ask the size.
@_cdecl("tactus_score_track_name")
public func tactus_score_track_name(_ score: OpaquePointer?, _ track: Int64, _ buffer: UnsafeMutablePointer<CChar>?,
                                    _ capacity: Int64, _ needed: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let name = try scores.object(score).track(track).name ?? ""
        try copyCString(name, into: buffer, capacity: capacity, needed: needed)
    }
}

/// Copies `text` (UTF-8, NUL-terminated) into `buffer` of `capacity` bytes; `needed` receives
/// the bytes it takes with its NUL. A buffer too small gets nothing and
/// `TACTUS_ERROR_BUFFER_TOO_SMALL`; a NULL buffer or a capacity of 0 only asks the size.
func copyCString(_ text: String, into buffer: UnsafeMutablePointer<CChar>?, capacity: Int64,
                 needed: UnsafeMutablePointer<Int64>?) throws(CFailure) {
    let size = try checkedCount(capacity, "the capacity")
    let utf8 = Array(text.utf8)
    needed?.pointee = Int64(utf8.count + 1)
    guard let buffer, size > 0 else { return }
    guard size > utf8.count else { throw CFailure(.bufferTooSmall, "the text takes \(utf8.count + 1) bytes, the buffer holds \(size)") }
    utf8.withUnsafeBufferPointer { source in
        for (i, byte) in source.enumerated() { buffer[i] = CChar(bitPattern: byte) }
    }
    buffer[utf8.count] = 0
}
