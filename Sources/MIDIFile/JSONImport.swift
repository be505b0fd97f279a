import Foundation
import MIDI
import Sequencing

/// Why a JSON sequence document could not be turned into a file.
public struct JSONImportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where in the document, as a JSON path like `$.tracks[2].events[15]`.
    public var path: String
    /// What is wrong.
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}

/// Builds a file from the document `tactus dump --json` prints (the corpus oracle's schema),
/// so scripts can generate and edit sequences as text. Only the keys that carry data are
/// read: `format`, `division.raw` (or its fields) and `tracks[].events` as
/// `[tick, kind, hex]`; counts and summaries are recomputed.
public enum JSONImport {
    /// Documents larger than this are refused before parsing (256 MiB, as for MIDI files):
    /// the parsed tree takes several times the text's size.
    public static let maximumDocumentSize = 256 << 20

    /// Parses the document in `data`, refusing documents over `maximumSize` bytes.
    public static func file(from data: Data, maximumSize: Int = maximumDocumentSize) throws(JSONImportError) -> StandardMIDIFile {
        guard data.count <= maximumSize else {
            throw JSONImportError(path: "$", reason: "limit exceeded: the document is \(data.count) bytes, more than the \(maximumSize) allowed")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw JSONImportError(path: "$", reason: "not valid JSON (\(error.localizedDescription))")
        }
        guard let doc = object as? [String: Any] else { throw JSONImportError(path: "$", reason: "expected an object") }
        if let error = doc["error"] { throw JSONImportError(path: "$.error", reason: "the document records a read error: \(error)") }
        let format = try integer(doc["format"] ?? 1, "$.format", 0...2)
        let division = try divisionWord(doc["division"])
        guard let tracks = doc["tracks"] as? [Any] else { throw JSONImportError(path: "$.tracks", reason: "expected a list of tracks") }
        var encoder = TrackEncoder(capacity: 64 + data.count / 2)
        defer { encoder.deallocate() }
        encoder.append(contentsOf: StandardMIDIFile.header(format: UInt16(format), tracks: tracks.count, division: division))
        for (ti, trackValue) in tracks.enumerated() {
            let path = "$.tracks[\(ti)]"
            guard let track = trackValue as? [String: Any], let events = track["events"] as? [Any] else {
                throw JSONImportError(path: path, reason: "expected an object with an \"events\" list")
            }
            encoder.beginChunk()
            var lastTick: Int64 = 0
            var endOfTrack: Int64?
            for (ei, eventValue) in events.enumerated() {
                let epath = "\(path).events[\(ei)]"
                guard let row = eventValue as? [Any], row.count == 3, let hexText = row[2] as? String else {
                    throw JSONImportError(path: epath, reason: "expected [tick, kind, hex]")
                }
                let tick = Int64(try integer(row[0], epath + "[0]", 0...Int(Int32.max)))
                guard tick >= lastTick else { throw JSONImportError(path: epath, reason: "tick \(tick) comes before the previous event's \(lastTick)") }
                if endOfTrack != nil { throw JSONImportError(path: epath, reason: "event after end_of_track") }
                lastTick = tick
                let raw = try hexBytes(hexText, epath + "[2]")
                guard let status = raw.first else { throw JSONImportError(path: epath, reason: "no bytes") }
                switch status {
                case 0xFF:
                    guard raw.count >= 2 else { throw JSONImportError(path: epath, reason: "meta event without a type byte") }
                    if raw[1] == MetaType.endOfTrack {
                        endOfTrack = tick
                    } else {
                        encoder.append(tick: tick, .meta(MetaEvent(type: raw[1], data: Array(raw[2...]))))
                    }
                case 0xF0, 0xF7:
                    encoder.append(tick: tick, .sysex(SysexEvent(status: status, payload: Array(raw[1...]))))
                default:
                    guard let count = MIDIStatus.dataByteCount(status), status >= 0x80, raw.count == count + 1 else {
                        throw JSONImportError(path: epath, reason: "\"\(hexText)\" is not a complete MIDI message")
                    }
                    guard raw.dropFirst().allSatisfy({ $0 < 0x80 }) else {
                        throw JSONImportError(path: epath, reason: "data byte above 127 in \"\(hexText)\"")
                    }
                    encoder.append(tick: tick, .message(MIDIMessage(status: status, data1: count > 0 ? raw[1] : 0, data2: count > 1 ? raw[2] : 0)))
                }
            }
            if let endOfTrack {
                encoder.finish(endTick: endOfTrack)
            } else {
                // Keep "no end of track" as the document says, so dump -> build -> dump agrees.
                encoder.closeChunk()
            }
        }
        let bytes = encoder.bytes
        do {
            var file = try SMFReader.read(bytes)
            file.warnings.removeAll { $0.message.contains("no end-of-track") }
            return file
        } catch {
            throw JSONImportError(path: "$", reason: "\(error.reasonText)")
        }
    }

    static func integer(_ value: Any, _ path: String, _ range: ClosedRange<Int>) throws(JSONImportError) -> Int {
        // Foundation hands JSON booleans over as NSNumber too; they are not numbers here.
        let isBoolean = value is Bool && String(describing: type(of: value)).contains("Bool")
        guard !isBoolean, let number = value as? NSNumber, number.doubleValue == number.doubleValue.rounded(),
              range.contains(number.intValue) else {
            throw JSONImportError(path: path, reason: "expected a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return number.intValue
    }

    static func divisionWord(_ value: Any?) throws(JSONImportError) -> UInt16 {
        guard let division = value as? [String: Any] else { return 960 }
        if let raw = division["raw"] { return UInt16(try integer(raw, "$.division.raw", 0...0xFFFF)) }
        if let q = division["ticks_per_quarter"] { return UInt16(try integer(q, "$.division.ticks_per_quarter", 1...0x7FFF)) }
        if let fps = division["fps"], let tpf = division["ticks_per_frame"] {
            let f = try integer(fps, "$.division.fps", 1...127)
            let t = try integer(tpf, "$.division.ticks_per_frame", 1...255)
            return TimeBase.smpte(framesPerSecond: f, ticksPerFrame: t).divisionWord
        }
        throw JSONImportError(path: "$.division", reason: "expected raw, ticks_per_quarter, or fps and ticks_per_frame")
    }

    static func hexBytes(_ text: String, _ path: String) throws(JSONImportError) -> [UInt8] {
        if text.hasPrefix("len=") {
            throw JSONImportError(path: path, reason: "event bytes are abbreviated (\(text.prefix(40))...); dump with --full to keep them")
        }
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { throw JSONImportError(path: path, reason: "odd number of hex digits") }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: return nil
            }
        }
        var i = 0
        while i < digits.count {
            guard let hi = value(digits[i]), let lo = value(digits[i + 1]) else {
                throw JSONImportError(path: path, reason: "not hexadecimal: \"\(text.prefix(40))\"")
            }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
