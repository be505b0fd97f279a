import MIDI
import MIDIFile
import Sequencing

/// The caller's note columns; a NULL column is skipped.
struct NoteColumns {
    var start: UnsafeMutablePointer<Int64>?
    var duration: UnsafeMutablePointer<Int64>?
    var pitch: UnsafeMutablePointer<UInt8>?
    var velocity: UnsafeMutablePointer<UInt8>?
    var channel: UnsafeMutablePointer<UInt8>?

    func store(_ i: Int, start s: Int64, duration d: Int64, pitch p: UInt8, velocity v: UInt8, channel c: UInt8) {
        start?[i] = s
        duration?[i] = d
        pitch?[i] = p
        velocity?[i] = v
        channel?[i] = c
    }
}

/// The notes of a track as `tactus dump --notes` lists them: in note-on order, a note-on kept
/// as a message (no partner within a note's longest duration) paired first in, first out per
/// channel and key with the next note-off; note-ons that never end are left out.
enum TrackNotes {
    /// What a first pass over a track learns: how many notes ``fill(_:into:summary:)``
    /// writes, and whether the track holds unpaired note messages, which need the slower
    /// pairing pass (they are rare: a release further than a note's longest duration, or none).
    struct Summary: Sendable {
        var count: Int
        var needsPairing: Bool
        /// The paired notes of a track that needs pairing, kept so the fill does not pair again.
        var pairedRows: [Row]? = nil
    }

    static func summary(_ track: MusicTrack) -> Summary {
        // Events are read in place: a copy of each would retain the payloads of meta and
        // sysex events.
        let needsPairing = track.events.withUnsafeBufferPointer { events in
            var count = 0
            for i in events.indices {
                switch events[i].event {
                case .note: count += 1
                case .message(let m) where m.isNoteOn || m.isNoteOff: return Summary(count: 0, needsPairing: true)
                default: break
                }
            }
            return Summary(count: count, needsPairing: false)
        }
        guard needsPairing.needsPairing else { return needsPairing }
        let rows = paired(track)
        return Summary(count: rows.count, needsPairing: true, pairedRows: rows)
    }

    /// The number of notes ``fill(_:into:summary:)`` writes.
    static func count(_ track: MusicTrack) -> Int {
        summary(track).count
    }

    /// Writes the notes into `columns`, which hold at least ``count(_:)`` rows, using what
    /// the track's `summary` learned.
    static func fill(_ track: MusicTrack, into columns: NoteColumns, summary: Summary) {
        if !summary.needsPairing {
            track.events.withUnsafeBufferPointer { events in
                var row = 0
                for i in events.indices {
                    guard case .note(let n) = events[i].event else { continue }
                    columns.store(row, start: events[i].tick, duration: n.duration, pitch: n.key, velocity: n.velocity, channel: n.channel)
                    row += 1
                }
            }
            return
        }
        for (i, row) in (summary.pairedRows ?? paired(track)).enumerated() {
            columns.store(i, start: row.start, duration: row.end - row.start, pitch: row.pitch, velocity: row.velocity, channel: row.channel)
        }
    }

    struct Row: Sendable {
        var start: Int64
        var end: Int64
        var pitch: UInt8
        var velocity: UInt8
        var channel: UInt8
        var ended: Bool
        /// The orders of the events the note was made from: its note event, or its note-on
        /// and note-off messages.
        var onOrder: UInt32
        var offOrder: UInt32? = nil
    }

    /// The event orders of the notes (rows of ``fill(_:into:summary:)``) that `drop` picks,
    /// by row number: both messages of a note paired from note-on and note-off.
    static func eventOrders(of track: MusicTrack, summary: Summary, where drop: (Int) -> Bool) -> Set<UInt32> {
        var orders: Set<UInt32> = []
        if !summary.needsPairing {
            var row = 0
            for e in track.events {
                guard case .note = e.event else { continue }
                if drop(row) { orders.insert(e.order) }
                row += 1
            }
            return orders
        }
        for (i, row) in (summary.pairedRows ?? paired(track)).enumerated() where drop(i) {
            orders.insert(row.onOrder)
            if let off = row.offOrder { orders.insert(off) }
        }
        return orders
    }

    private static func paired(_ track: MusicTrack) -> [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(track.events.count)
        // One first-in, first-out queue of row indices per channel and key, read from `heads`.
        var waiting = [[Int]](repeating: [], count: 16 << 7)
        var heads = [Int](repeating: 0, count: 16 << 7)
        for e in track.events {
            switch e.event {
            case .note(let n):
                rows.append(Row(start: e.tick, end: e.tick + n.duration, pitch: n.key, velocity: n.velocity, channel: n.channel, ended: true,
                                onOrder: e.order))
            case .message(let m) where m.isNoteOn:
                waiting[Int(m.channel) << 7 | Int(m.data1 & 0x7F)].append(rows.count)
                rows.append(Row(start: e.tick, end: e.tick, pitch: m.data1 & 0x7F, velocity: m.data2 & 0x7F, channel: m.channel, ended: false,
                                onOrder: e.order))
            case .message(let m) where m.isNoteOff:
                let key = Int(m.channel) << 7 | Int(m.data1 & 0x7F)
                if heads[key] < waiting[key].count {
                    let first = waiting[key][heads[key]]
                    heads[key] += 1
                    rows[first].end = e.tick
                    rows[first].ended = true
                    rows[first].offOrder = e.order
                }
            default:
                break
            }
        }
        rows.removeAll { !$0.ended }
        return rows
    }
}

/// The number of notes of track `track` (see `tactus_score_track_notes`).
@_cdecl("tactus_score_track_note_count")
public func tactus_score_track_note_count(_ score: OpaquePointer?, _ track: Int64, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    countRows(of: score, track: track, into: out, TrackNotes.count)
}

/// The body of a `..._count` function over one track: `count` of track `track` through `out`.
func countRows(of score: OpaquePointer?, track: Int64, into out: UnsafeMutablePointer<Int64>?,
               _ count: (MusicTrack) -> Int) -> Int32 {
    guarded { () throws(CFailure) in
        let events = try scores.object(score).track(track)
        guard let out else { throw CFailure(.invalidArgument, "the output pointer is NULL") }
        out.pointee = Int64(count(events))
    }
}

/// Copies the notes of track `track` into caller-owned columns of `capacity` rows each: start
/// and duration in ticks, pitch, velocity and channel (0...15). Notes are in note-on order,
/// paired first in, first out per channel and key; note-ons that never end are left out. A
/// NULL column is skipped. Fewer rows than the notes gives `TACTUS_ERROR_BUFFER_TOO_SMALL`
/// and writes nothing.
@_cdecl("tactus_score_track_notes")
public func tactus_score_track_notes(_ score: OpaquePointer?, _ track: Int64, _ start: UnsafeMutablePointer<Int64>?,
                                     _ duration: UnsafeMutablePointer<Int64>?, _ pitch: UnsafeMutablePointer<UInt8>?,
                                     _ velocity: UnsafeMutablePointer<UInt8>?, _ channel: UnsafeMutablePointer<UInt8>?,
                                     _ capacity: Int64) -> Int32 {
    guarded { () throws(CFailure) in
        let notes = try scores.object(score).track(track)
        let rows = try checkedCount(capacity, "the capacity")
        let summary = TrackNotes.summary(notes)
        guard rows >= summary.count else { throw CFailure(.bufferTooSmall, "track \(track) has \(summary.count) notes, the buffers hold \(rows)") }
        TrackNotes.fill(notes, into: NoteColumns(start: start, duration: duration, pitch: pitch, velocity: velocity, channel: channel),
                        summary: summary)
    }
}

/// The note counts of every track at once: `per_track` (room for `capacity` tracks, or NULL)
/// gets each track's count, `total` (or NULL) their sum. Fewer than the file's tracks gives
/// `TACTUS_ERROR_BUFFER_TOO_SMALL`.
@_cdecl("tactus_score_note_counts")
public func tactus_score_note_counts(_ score: OpaquePointer?, _ perTrack: UnsafeMutablePointer<Int64>?, _ capacity: Int64,
                                     _ total: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let summaries = try scores.object(score).noteSummaries
        let rows = try checkedCount(capacity, "the capacity")
        guard perTrack == nil || rows >= summaries.count else { throw CFailure(.bufferTooSmall, "\(summaries.count) tracks, the buffer holds \(rows)") }
        var sum: Int64 = 0
        for (i, summary) in summaries.enumerated() {
            perTrack?[i] = Int64(summary.count)
            sum += Int64(summary.count)
        }
        total?.pointee = sum
    }
}

/// The notes of every track in one set of columns, track after track in file order (each
/// track's rows as `tactus_score_track_notes` gives them; `tactus_score_note_counts` says
/// where each track starts). One call instead of one per track, for bindings whose calls cost.
@_cdecl("tactus_score_notes")
public func tactus_score_notes(_ score: OpaquePointer?, _ start: UnsafeMutablePointer<Int64>?,
                               _ duration: UnsafeMutablePointer<Int64>?, _ pitch: UnsafeMutablePointer<UInt8>?,
                               _ velocity: UnsafeMutablePointer<UInt8>?, _ channel: UnsafeMutablePointer<UInt8>?,
                               _ capacity: Int64) -> Int32 {
    guarded { () throws(CFailure) in
        let box = try scores.object(score)
        let tracks = box.file.tracks
        let rows = try checkedCount(capacity, "the capacity")
        let summaries = box.noteSummaries
        let total = summaries.reduce(0) { $0 + $1.count }
        guard rows >= total else { throw CFailure(.bufferTooSmall, "the file has \(total) notes, the buffers hold \(rows)") }
        var offset = 0
        for (track, summary) in zip(tracks, summaries) {
            TrackNotes.fill(track, into: NoteColumns(start: start.map { $0 + offset }, duration: duration.map { $0 + offset },
                                                     pitch: pitch.map { $0 + offset }, velocity: velocity.map { $0 + offset },
                                                     channel: channel.map { $0 + offset }),
                             summary: summary)
            offset += summary.count
        }
    }
}

/// The number of tempo changes, all tracks merged.
@_cdecl("tactus_score_tempo_count")
public func tactus_score_tempo_count(_ score: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let changes = try scores.object(score).tempoChanges
        guard let out else { throw CFailure(.invalidArgument, "the output pointer is NULL") }
        out.pointee = Int64(changes.count)
    }
}

/// Copies the tempo changes of all tracks, sorted by tick (file order within a tick): tick
/// and microseconds per quarter note. A NULL column is skipped.
@_cdecl("tactus_score_tempos")
public func tactus_score_tempos(_ score: OpaquePointer?, _ ticks: UnsafeMutablePointer<Int64>?,
                                _ microsecondsPerQuarter: UnsafeMutablePointer<Int32>?, _ capacity: Int64) -> Int32 {
    guarded { () throws(CFailure) in
        let changes = try scores.object(score).tempoChanges
        let rows = try checkedCount(capacity, "the capacity")
        guard rows >= changes.count else { throw CFailure(.bufferTooSmall, "\(changes.count) tempo changes, the buffers hold \(rows)") }
        for (i, change) in changes.enumerated() {
            ticks?[i] = change.tick
            microsecondsPerQuarter?[i] = Int32(clamping: change.microsecondsPerQuarter)
        }
    }
}

/// The number of time signatures, all tracks merged.
@_cdecl("tactus_score_time_signature_count")
public func tactus_score_time_signature_count(_ score: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let signatures = try scores.object(score).timeSignatures
        guard let out else { throw CFailure(.invalidArgument, "the output pointer is NULL") }
        out.pointee = Int64(signatures.count)
    }
}

/// Copies the time signatures of all tracks, sorted by tick: tick, numerator and denominator
/// (a power of two; 0 when the file's exponent exceeds 30). A NULL column is skipped.
@_cdecl("tactus_score_time_signatures")
public func tactus_score_time_signatures(_ score: OpaquePointer?, _ ticks: UnsafeMutablePointer<Int64>?,
                                         _ numerator: UnsafeMutablePointer<Int32>?, _ denominator: UnsafeMutablePointer<Int32>?,
                                         _ capacity: Int64) -> Int32 {
    guarded { () throws(CFailure) in
        let signatures = try scores.object(score).timeSignatures
        let rows = try checkedCount(capacity, "the capacity")
        guard rows >= signatures.count else { throw CFailure(.bufferTooSmall, "\(signatures.count) time signatures, the buffers hold \(rows)") }
        for (i, item) in signatures.enumerated() {
            ticks?[i] = item.tick
            numerator?[i] = Int32(item.signature.numerator)
            let power = item.signature.denominatorPower
            denominator?[i] = power <= 30 ? Int32(1) << Int32(power) : 0
        }
    }
}

/// Converts `count` ticks to seconds through the tempo map of all tracks (exact rational
/// time, rounded once to double). Fails with `TACTUS_ERROR_INVALID_FILE` for a file without
/// timing (division 0). `ticks` and `seconds` may be the same memory only if the caller
/// reinterprets it; they are read and written element by element.
@_cdecl("tactus_score_ticks_to_seconds")
public func tactus_score_ticks_to_seconds(_ score: OpaquePointer?, _ ticks: UnsafePointer<Int64>?,
                                          _ seconds: UnsafeMutablePointer<Double>?, _ count: Int64) -> Int32 {
    guarded { () throws(CFailure) in
        let map = try scores.object(score).tempoMap()
        let n = try checkedCount(count, "the count")
        guard n == 0 || (ticks != nil && seconds != nil) else { throw CFailure(.invalidArgument, "the tick or seconds pointer is NULL") }
        guard let ticks, let seconds else { return }
        for i in 0..<n { seconds[i] = map.seconds(atTick: ticks[i]) }
    }
}
