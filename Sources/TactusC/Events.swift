import MIDI
import MIDIFile
import Sequencing

/// What a row of `tactus_score_track_controls` is (`TACTUS_CONTROL_*` in tactus.h).
enum ControlKind: UInt8 {
    case controlChange = 0
    case programChange = 1
    case pitchBend = 2
    case channelPressure = 3
    case polyPressure = 4

    /// The kind of a channel message that is not a note, or nil.
    init?(_ message: MIDIMessage) {
        switch message.kind {
        case .controlChange: self = .controlChange
        case .programChange: self = .programChange
        case .pitchBend: self = .pitchBend
        case .channelPressure: self = .channelPressure
        case .polyPressure: self = .polyPressure
        default: return nil
        }
    }
}

/// A row of `tactus_score_track_controls`: the number is the controller, program or key
/// (0 for pitch bend and channel pressure), the value the controller value, the pressure or
/// the bend centred on 0 (0 for a program change).
private func controlRow(_ message: MIDIMessage, _ kind: ControlKind) -> (number: UInt8, value: Int16) {
    switch kind {
    case .controlChange, .polyPressure: return (message.data1 & 0x7F, Int16(message.data2 & 0x7F))
    case .programChange: return (message.data1 & 0x7F, 0)
    case .channelPressure: return (0, Int16(message.data1 & 0x7F))
    case .pitchBend: return (0, Int16(message.pitchBendValue) - 8192)
    }
}

private func controlCount(_ track: MusicTrack) -> Int {
    track.events.withUnsafeBufferPointer { events in
        var count = 0
        for i in events.indices {
            if case .message(let m) = events[i].event, ControlKind(m) != nil { count += 1 }
        }
        return count
    }
}

/// The number of controls of track `track` (see `tactus_score_track_controls`).
@_cdecl("tactus_score_track_control_count")
public func tactus_score_track_control_count(_ score: OpaquePointer?, _ track: Int64, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    countRows(of: score, track: track, into: out, controlCount)
}

/// Copies the channel messages of track `track` that are not notes (controllers, program
/// changes, pitch bends, channel and key pressure) in file order into caller-owned columns of
/// `capacity` rows: tick, channel, kind, number and value (see ``ControlKind``). A NULL
/// column is skipped; too few rows gives `TACTUS_ERROR_BUFFER_TOO_SMALL` and writes nothing.
@_cdecl("tactus_score_track_controls")
public func tactus_score_track_controls(_ score: OpaquePointer?, _ track: Int64, _ tick: UnsafeMutablePointer<Int64>?,
                                        _ channel: UnsafeMutablePointer<UInt8>?, _ kind: UnsafeMutablePointer<UInt8>?,
                                        _ number: UnsafeMutablePointer<UInt8>?, _ value: UnsafeMutablePointer<Int16>?,
                                        _ capacity: Int64) -> Int32 {
    guarded { () throws(CFailure) in
        let events = try scores.object(score).track(track)
        let rows = try checkedCount(capacity, "the capacity")
        let count = controlCount(events)
        guard rows >= count else { throw CFailure(.bufferTooSmall, "track \(track) has \(count) controls, the buffers hold \(rows)") }
        events.events.withUnsafeBufferPointer { events in
            var row = 0
            for i in events.indices {
                guard case .message(let m) = events[i].event, let k = ControlKind(m) else { continue }
                let (n, v) = controlRow(m, k)
                tick?[row] = events[i].tick
                channel?[row] = m.channel
                kind?[row] = k.rawValue
                number?[row] = n
                value?[row] = v
                row += 1
            }
        }
    }
}

/// The lyrics as `tactus dump --lyrics` finds them, and the UTF-8 bytes their texts take
/// together (no terminators). Either output may be NULL.
@_cdecl("tactus_score_lyric_count")
public func tactus_score_lyric_count(_ score: OpaquePointer?, _ count: UnsafeMutablePointer<Int64>?,
                                     _ textBytes: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let lyrics = Lyrics.events(in: try scores.object(score).file.tracks)
        count?.pointee = Int64(lyrics.count)
        textBytes?.pointee = Int64(lyrics.reduce(0) { $0 + $1.text.utf8.count })
    }
}

/// Copies the lyrics in time order: tick, file track, and where each text ends in `text`
/// (`text_end[i]`; the text of row i starts where row i-1's ends, row 0's at 0). The texts are
/// UTF-8 (Latin-1 in the file is converted), one after another without terminators. Too few
/// rows or bytes gives `TACTUS_ERROR_BUFFER_TOO_SMALL` and writes nothing; a NULL column is
/// skipped.
@_cdecl("tactus_score_lyrics")
public func tactus_score_lyrics(_ score: OpaquePointer?, _ tick: UnsafeMutablePointer<Int64>?, _ track: UnsafeMutablePointer<Int64>?,
                                _ textEnd: UnsafeMutablePointer<Int64>?, _ text: UnsafeMutablePointer<UInt8>?,
                                _ capacity: Int64, _ textCapacity: Int64) -> Int32 {
    guarded { () throws(CFailure) in
        let lyrics = Lyrics.events(in: try scores.object(score).file.tracks)
        let rows = try checkedCount(capacity, "the capacity")
        let bytes = try checkedCount(textCapacity, "the text capacity")
        let texts = lyrics.map { Array($0.text.utf8) }
        let total = texts.reduce(0) { $0 + $1.count }
        guard rows >= lyrics.count else { throw CFailure(.bufferTooSmall, "\(lyrics.count) lyrics, the buffers hold \(rows)") }
        guard text == nil || bytes >= total else { throw CFailure(.bufferTooSmall, "the lyrics take \(total) bytes, the buffer holds \(bytes)") }
        var end = 0
        for (i, lyric) in lyrics.enumerated() {
            tick?[i] = lyric.tick
            track?[i] = Int64(lyric.track)
            for byte in texts[i] {
                text?[end] = byte
                end += 1
            }
            textEnd?[i] = Int64(end)
        }
    }
}
