// FoundationEssentials is enough here, and it keeps ICU and the rest of Foundation out of
// programs that use only the codec (less start-up memory and time).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import MIDI
import Sequencing

/// Which SMF layout to write.
public enum SMFLayout: Hashable, Sendable {
    /// The layout the sequence was read with (its tracks as they are); new sequences are
    /// written as format 1, or format 0 when they hold a single track.
    case asRead
    /// Format 0: every track merged into one.
    case format0
    /// Format 1: the tempo track (when it has anything) and the event tracks, played together.
    case format1
    /// Format 2: independent patterns.
    case format2
}

/// Errors from writing files.
public struct SMFWriteError: Error, CustomStringConvertible, Sendable {
    /// The file that could not be written.
    public var path: String
    /// Why.
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}

extension StandardMIDIFile {
    /// Splits the file's tracks into a sequence. In format 1 a first track that holds only
    /// meta and sysex events becomes the tempo track; everything else becomes an event track.
    public func makeSequence() -> MusicSequence {
        var sequence = MusicSequence(timeBase: timeBase)
        sequence.sourceFormat = format
        var rest = tracks[...]
        if format != 0 && format != 2, let first = tracks.first, !first.isEmpty, first.events.allSatisfy({ e in
            switch e.event {
            case .meta, .sysex: return true
            default: return false
            }
        }) {
            sequence.tempoTrack = first
            rest = tracks.dropFirst()
        }
        sequence.tracks = Array(rest)
        return sequence
    }

    /// The file layout of `sequence`.
    public init(sequence: MusicSequence, layout: SMFLayout = .asRead) {
        let conductorUsed = !sequence.tempoTrack.isEmpty || (sequence.tempoTrack.explicitLength ?? 0) > 0
        var fileTracks = (conductorUsed ? [sequence.tempoTrack] : []) + sequence.tracks
        var format: UInt16
        switch layout {
        case .asRead:
            if let source = sequence.sourceFormat, source <= 2 {
                format = source
            } else {
                format = fileTracks.count == 1 ? 0 : 1
            }
        case .format0: format = 0
        case .format1: format = 1
        case .format2: format = 2
        }
        if format == 0 && fileTracks.count > 1 && layout != .asRead {
            fileTracks = [StandardMIDIFile.merge(fileTracks)]
        }
        self.init(format: format, divisionWord: sequence.timeBase.divisionWord, tracks: fileTracks)
    }

    /// Merges tracks into one, keeping each event's time; at one tick, events keep their
    /// track order, then their order within the track.
    static func merge(_ tracks: [MusicTrack]) -> MusicTrack {
        var flat: [(tick: Int64, track: Int, seq: Int, event: FileEvent)] = []
        var end: Int64 = 0
        for (i, t) in tracks.enumerated() {
            var seq = 0
            t.forEachFileEvent { tick, e in
                flat.append((tick, i, seq, e))
                seq += 1
            }
            end = max(end, t.length)
        }
        flat.sort { a, b in
            if a.tick != b.tick { return a.tick < b.tick }
            if a.track != b.track { return a.track < b.track }
            return a.seq < b.seq
        }
        // Re-read the merged stream so notes pair again first-in, first-out.
        var bytes = TrackEncoder()
        for f in flat { bytes.append(tick: f.tick, f.event) }
        bytes.finish(endTick: end)
        let chunk = bytes.chunk
        if let file = try? SMFReader.read(StandardMIDIFile.header(format: 0, tracks: 1, division: 960) + chunk),
           let merged = file.tracks.first {
            return merged
        }
        return MusicTrack()
    }

    static func header(format: UInt16, tracks: Int, division: UInt16) -> [UInt8] {
        let n = UInt16(clamping: tracks)
        return Array("MThd".utf8) + [0, 0, 0, 6, UInt8(format >> 8), UInt8(format & 0xFF),
                                     UInt8(n >> 8), UInt8(n & 0xFF), UInt8(division >> 8), UInt8(division & 0xFF)]
    }
}

/// Encodes one track chunk with running status.
struct TrackEncoder {
    var body: [UInt8] = []
    var lastTick: Int64 = 0
    var runningStatus: UInt8 = 0

    init(capacity: Int = 0) {
        body.reserveCapacity(capacity)
    }

    @inline(__always)
    mutating func writeVLQ(_ value: Int) {
        let v = UInt32(clamping: max(0, min(value, 0x0FFF_FFFF)))
        if v < 0x80 {
            body.append(UInt8(v))
        } else if v < 0x4000 {
            body.append(UInt8(0x80 | (v >> 7)))
            body.append(UInt8(v & 0x7F))
        } else if v < 0x20_0000 {
            body.append(UInt8(0x80 | (v >> 14)))
            body.append(UInt8(0x80 | ((v >> 7) & 0x7F)))
            body.append(UInt8(v & 0x7F))
        } else {
            body.append(UInt8(0x80 | (v >> 21)))
            body.append(UInt8(0x80 | ((v >> 14) & 0x7F)))
            body.append(UInt8(0x80 | ((v >> 7) & 0x7F)))
            body.append(UInt8(v & 0x7F))
        }
    }

    /// Writes the delta time; deltas beyond the 28-bit VLQ limit are split across empty
    /// text events so no time is lost.
    @inline(__always)
    mutating func writeDelta(to tick: Int64) {
        var delta = max(0, tick - lastTick)
        while delta > 0x0FFF_FFFF {
            writeVLQ(0x0FFF_FFFF)
            body.append(contentsOf: [0xFF, 0x01, 0x00])
            runningStatus = 0
            delta -= 0x0FFF_FFFF
        }
        writeVLQ(Int(delta))
        lastTick = max(lastTick, tick)
    }

    mutating func append(tick: Int64, _ event: FileEvent) {
        writeDelta(to: tick)
        switch event {
        case .message(let m):
            let n = m.dataByteCount
            if m.status < 0xF0 {
                if m.status != runningStatus {
                    body.append(m.status)
                    runningStatus = m.status
                }
            } else {
                body.append(m.status)
                runningStatus = 0
            }
            if n >= 1 { body.append(m.data1) }
            if n == 2 { body.append(m.data2) }
        case .sysex(let s):
            body.append(s.status)
            writeVLQ(s.payload.count)
            body.append(contentsOf: s.payload)
            runningStatus = 0
        case .meta(let m):
            body.append(0xFF)
            body.append(m.type)
            writeVLQ(m.data.count)
            body.append(contentsOf: m.data)
            runningStatus = 0
        }
    }

    mutating func finish(endTick: Int64) {
        writeDelta(to: max(endTick, lastTick))
        body.append(contentsOf: [0xFF, 0x2F, 0x00])
    }

    var chunk: [UInt8] {
        let n = UInt32(clamping: body.count)
        return Array("MTrk".utf8) + [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + body
    }
}

/// Writes Standard MIDI Files: running status, the file's own division, every event with its
/// tick, bytes and same-tick order, and an end of track on every track.
public enum SMFWriter {
    /// The bytes of `file`.
    public static func bytes(of file: StandardMIDIFile) -> [UInt8] {
        var out = StandardMIDIFile.header(format: file.format, tracks: file.tracks.count, division: file.divisionWord)
        for track in file.tracks {
            var encoder = TrackEncoder(capacity: track.count * 4 + 16)
            track.forEachFileEvent { tick, e in encoder.append(tick: tick, e) }
            encoder.finish(endTick: track.length)
            let n = UInt32(clamping: encoder.body.count)
            out.append(contentsOf: Array("MTrk".utf8))
            out.append(contentsOf: [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)])
            out.append(contentsOf: encoder.body)
        }
        return out
    }

    /// The bytes of `sequence` in `layout`.
    public static func bytes(of sequence: MusicSequence, layout: SMFLayout = .asRead) -> [UInt8] {
        bytes(of: StandardMIDIFile(sequence: sequence, layout: layout))
    }

    /// Writes `bytes` to `path` through a temporary file and a rename, so an interrupted write
    /// never leaves a half-written file under the final name.
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        var info = stat()
        guard stat(directory.path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw SMFWriteError(path: path, reason: "directory \(directory.path) does not exist")
        }
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())")
        guard FileManager.default.createFile(atPath: temporary.path, contents: Data(bytes)) else {
            throw SMFWriteError(path: path, reason: "cannot write (\(String(cString: strerror(errno))))")
        }
        if rename(temporary.path, url.path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw SMFWriteError(path: path, reason: "cannot write (\(reason))")
        }
    }
}
