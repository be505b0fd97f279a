import MIDI
import Sequencing

/// The JSON documents of `tactus dump --json` and `--notes`, in exactly the schema of the
/// corpus oracle (`shared/corpus/oracle.py`), so any reader can be diffed against Tactus.
///
/// The dump is made from the tracks as Tactus holds them (notes already paired), walked back
/// into file order; so it shows what Tactus would write, not a second parse of the bytes.
public enum FileDump {
    /// Event kind names, as mido names them.
    public static func kindName(_ event: FileEvent) -> String {
        switch event {
        case .sysex: return "sysex"
        case .meta(let m): return metaName(m.type)
        case .message(let m):
            switch m.status & 0xF0 {
            case 0x80: return "note_off"
            case 0x90: return "note_on"
            case 0xA0: return "polytouch"
            case 0xB0: return "control_change"
            case 0xC0: return "program_change"
            case 0xD0: return "aftertouch"
            case 0xE0: return "pitchwheel"
            default:
                switch m.status {
                case 0xF1: return "quarter_frame"
                case 0xF2: return "songpos"
                case 0xF3: return "song_select"
                case 0xF6: return "tune_request"
                case 0xF8: return "clock"
                case 0xFA: return "start"
                case 0xFB: return "continue"
                case 0xFC: return "stop"
                case 0xFE: return "active_sensing"
                default: return "reset"
                }
            }
        }
    }

    /// Meta type names, as mido names them.
    public static func metaName(_ type: UInt8) -> String {
        switch type {
        case 0x00: return "sequence_number"
        case 0x01: return "text"
        case 0x02: return "copyright"
        case 0x03: return "track_name"
        case 0x04: return "instrument_name"
        case 0x05: return "lyrics"
        case 0x06: return "marker"
        case 0x07: return "cue_marker"
        case 0x09: return "device_name"
        case 0x20: return "channel_prefix"
        case 0x21: return "midi_port"
        case 0x2F: return "end_of_track"
        case 0x51: return "set_tempo"
        case 0x54: return "smpte_offset"
        case 0x58: return "time_signature"
        case 0x59: return "key_signature"
        case 0x7F: return "sequencer_specific"
        default: return "unknown_meta"
        }
    }

    static func hexField(_ bytes: [UInt8], full: Bool = false) -> String {
        if bytes.count > 1024 && !full {
            return "len=\(bytes.count) sha256=\(SHA256.hexDigest(bytes))"
        }
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func rawBytes(_ event: FileEvent) -> [UInt8] {
        switch event {
        case .message(let m): return m.bytes
        case .sysex(let s): return [s.status] + s.payload
        case .meta(let m): return [0xFF, m.type] + m.data
        }
    }

    /// A note as the oracle's `--notes` view lists it.
    public struct NoteRow: Hashable, Sendable {
        /// The track's index in the file (the conductor track counts).
        public var track: Int
        /// The channel, 0...15.
        public var channel: Int
        /// The key, 0...127.
        public var pitch: Int
        /// The tick of the note-on.
        public var start: Int64
        /// The tick of the matching note-off; nil when the note never ends.
        public var end: Int64?
        /// The note-on's velocity.
        public var velocity: Int
    }

    /// Notes of the file, paired first in, first out per (track, channel, pitch), in note-on
    /// order; plus unterminated notes and the count of orphan note-offs.
    public static func notes(of file: StandardMIDIFile) -> (matched: [NoteRow], unterminated: [NoteRow], orphans: Int) {
        // Rows in note-on order; a note-on kept as a message (its release was further away
        // than a note's duration holds, or never came) is paired here first in, first out.
        var rows: [NoteRow] = []
        var orphans = 0
        for (ti, track) in file.tracks.enumerated() {
            var waiting: [Int: [Int]] = [:]  // channel << 7 | key: indices in `rows`
            for e in track.events {
                switch e.event {
                case .note(let n):
                    rows.append(NoteRow(track: ti, channel: Int(n.channel), pitch: Int(n.key), start: e.tick, end: e.tick + n.duration, velocity: Int(n.velocity)))
                case .message(let m) where m.isNoteOn:
                    waiting[Int(m.channel) << 7 | Int(m.data1), default: []].append(rows.count)
                    rows.append(NoteRow(track: ti, channel: Int(m.channel), pitch: Int(m.data1), start: e.tick, end: nil, velocity: Int(m.data2)))
                case .message(let m) where m.isNoteOff:
                    let k = Int(m.channel) << 7 | Int(m.data1)
                    if let first = waiting[k]?.first {
                        waiting[k]?.removeFirst()
                        rows[first].end = e.tick
                    } else {
                        orphans += 1
                    }
                default: break
                }
            }
        }
        return (rows.filter { $0.end != nil }, rows.filter { $0.end == nil }, orphans)
    }

    /// The full document (`dump --json`).
    /// With `fullBytes`, events over 1024 bytes are printed whole instead of as the oracle's
    /// "len=N sha256=HEX" abbreviation, so `tactus build` can turn the document back into a file.
    public static func document(of file: StandardMIDIFile, fullBytes: Bool = false) -> JSONValue {
        var tracks: [JSONValue] = []
        var tempoRows: [(Int64, Int, Int)] = []
        var timeSigRows: [(Int64, [JSONValue], Int)] = []
        var keySigRows: [(Int64, [JSONValue], Int)] = []
        var noteCount = 0
        var total = 0
        var lengthTicks: Int64 = 0
        for (ti, track) in file.tracks.enumerated() {
            var rows: [JSONValue] = []
            var ons = 0, offs = 0
            var lastTick: Int64 = 0
            track.forEachFileEvent { tick, event in
                rows.append(.array([.int(tick), .string(kindName(event)), .string(hexField(rawBytes(event), full: fullBytes))]))
                lastTick = max(lastTick, tick)
                switch event {
                case .message(let m):
                    if m.isNoteOn { ons += 1 } else if m.isNoteOff { offs += 1 }
                case .meta(let meta):
                    if meta.type == MetaType.tempo && meta.data.count >= 3 {
                        tempoRows.append((tick, Int(meta.data[0]) << 16 | Int(meta.data[1]) << 8 | Int(meta.data[2]), ti))
                    } else if meta.type == MetaType.timeSignature && meta.data.count >= 4 {
                        let d = meta.data
                        timeSigRows.append((tick, [.int(tick), .int(Int64(d[0])), .int(Int64(1) << Int64(min(d[1], 62))), .int(Int64(d[2])), .int(Int64(d[3])), .int(Int64(ti))], ti))
                    } else if meta.type == MetaType.keySignature && meta.data.count >= 2 {
                        keySigRows.append((tick, [.int(tick), .int(Int64(Int8(bitPattern: meta.data[0]))), .int(Int64(meta.data[1])), .int(Int64(ti))], ti))
                    }
                case .sysex: break
                }
            }
            if let eot = track.explicitLength {
                let t = max(eot, lastTick)
                rows.append(.array([.int(t), .string("end_of_track"), .string("ff2f")]))
                lastTick = t
            }
            noteCount += ons
            total += rows.count
            lengthTicks = max(lengthTicks, lastTick)
            tracks.append(.object([
                "index": .int(Int64(ti)),
                "end_tick": .int(lastTick),
                "event_count": .int(Int64(rows.count)),
                "note_on_count": .int(Int64(ons)),
                "note_off_count": .int(Int64(offs)),
                "events": .array(rows),
            ]))
        }
        tempoRows.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.2 < $1.2 }
        timeSigRows.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.2 < $1.2 }
        keySigRows.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.2 < $1.2 }

        let division: JSONValue
        let timeBase = file.timeBase
        switch timeBase {
        case .ticksPerQuarter(let q):
            division = .object(["raw": .int(Int64(file.divisionWord)), "type": .string("ppq"), "ticks_per_quarter": .int(Int64(q))])
        case .smpte(let fps, let tpf):
            division = .object(["raw": .int(Int64(file.divisionWord)), "type": .string("smpte"), "fps": .int(Int64(fps)), "ticks_per_frame": .int(Int64(tpf))])
        }
        let seconds = lengthSeconds(timeBase: timeBase, format: file.format, lengthTicks: lengthTicks, tempos: tempoRows.map { ($0.0, $0.1) })
        let pairing = notes(of: file)
        return .object([
            "format": .int(Int64(file.format)),
            "ntracks_header": .int(Int64(file.declaredTrackCount)),
            "division": division,
            "tracks": .array(tracks),
            "tempo_map": .array(tempoRows.map { .array([.int($0.0), .int(Int64($0.1)), .int(Int64($0.2))]) }),
            "time_signatures": .array(timeSigRows.map { .array($0.1) }),
            "key_signatures": .array(keySigRows.map { .array($0.1) }),
            "length_ticks": .int(lengthTicks),
            "length_seconds": seconds.map { .double($0) } ?? .null,
            "event_count": .int(Int64(total)),
            "note_count": .int(Int64(noteCount)),
            "notes_matched": .int(Int64(pairing.matched.count)),
            "notes_unterminated": .int(Int64(pairing.unterminated.count)),
            "note_offs_orphan": .int(Int64(pairing.orphans)),
        ])
    }

    /// Exact length in seconds, as the oracle computes it: tempo changes (all tracks) up to
    /// the end for PPQ, frames for SMPTE; nil for format 2 or a zero division.
    static func lengthSeconds(timeBase: TimeBase, format: UInt16, lengthTicks: Int64, tempos: [(Int64, Int)]) -> Double? {
        guard format != 2 else { return nil }
        switch timeBase {
        case .smpte(let fps, let tpf):
            guard fps > 0, tpf > 0 else { return nil }
            let seconds = fps == 29
                ? Double(lengthTicks) * 1001.0 / (30000.0 * Double(tpf))
                : Double(lengthTicks) / (Double(fps) * Double(tpf))
            return (seconds * 1e9).rounded() / 1e9
        case .ticksPerQuarter(let q):
            guard q > 0 else { return nil }
            // Exact sum of ticks * microseconds, in 128 bits against overflow.
            var high: Int64 = 0
            var low: UInt64 = 0
            func add(_ ticks: Int64, _ tempo: Int) {
                let product = ticks.multipliedFullWidth(by: Int64(tempo))
                let (l, carry) = low.addingReportingOverflow(product.low)
                low = l
                high = high &+ product.high &+ (carry ? 1 : 0)
            }
            var lastTick: Int64 = 0
            var tempo = 500_000
            for (tick, value) in tempos {
                if tick > lengthTicks { break }
                add(tick - lastTick, tempo)
                lastTick = tick
                tempo = value
            }
            add(lengthTicks - lastTick, tempo)
            let numerator = Double(high) * 18446744073709551616.0 + Double(low)
            let wholeMicros = numerator / Double(q)
            let seconds = wholeMicros / 1_000_000
            return (seconds * 1e9).rounded() / 1e9
        }
    }

    /// The notes document (`dump --json --notes`).
    public static func notesDocument(of file: StandardMIDIFile) -> JSONValue {
        let pairing = notes(of: file)
        func row(_ n: NoteRow) -> JSONValue {
            .array([.int(Int64(n.track)), .int(Int64(n.channel)), .int(Int64(n.pitch)), .int(n.start), n.end.map { .int($0) } ?? .null, .int(Int64(n.velocity))])
        }
        return .object([
            "pairing": .string("FIFO per (track, channel, pitch); note_on velocity 0 is a note off; rows are [track, channel, pitch, start_tick, end_tick, velocity] in note-on order; unterminated notes have end_tick null"),
            "notes": .array(pairing.matched.map(row)),
            "unterminated": .array(pairing.unterminated.map(row)),
            "note_offs_orphan": .int(Int64(pairing.orphans)),
            "notes_matched": .int(Int64(pairing.matched.count)),
        ])
    }
}
