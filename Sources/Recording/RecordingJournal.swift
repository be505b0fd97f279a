#if canImport(Glibc)
import Glibc
#endif
import Sequencing

/// Why a journal could not be written or read, naming the file.
public struct RecordingJournalError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The journal's path.
    public var path: String
    /// What went wrong.
    public var reason: String

    /// Creates an error.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

/// What a recovery needs besides the events: the tempo map and meter the take times were
/// converted with, the take's settings, and the backing file, if any.
public struct RecordingJournalHeader: Hashable, Sendable {
    /// Ticks per quarter note of the recorded sequence.
    public var ticksPerQuarter: Int
    /// Tempo changes of the recorded sequence.
    public var tempoChanges: [TempoChange]
    /// Time signature changes: tick, numerator and the denominator as a power of two.
    public var timeSignatures: [TimedSignature]
    /// The take's settings.
    public var settings: RecordingSettings
    /// The backing file the take was recorded against, as given on the command line.
    public var backingPath: String?

    /// A time signature at a tick.
    public struct TimedSignature: Hashable, Sendable {
        /// Where the signature starts.
        public var tick: Int64
        /// The signature.
        public var signature: TimeSignature
        /// Creates a time signature at a tick.
        public init(tick: Int64, signature: TimeSignature) {
            self.tick = tick
            self.signature = signature
        }
    }

    /// Creates a header.
    public init(ticksPerQuarter: Int, tempoChanges: [TempoChange], timeSignatures: [TimedSignature],
                settings: RecordingSettings, backingPath: String? = nil) {
        self.ticksPerQuarter = ticksPerQuarter
        self.tempoChanges = tempoChanges
        self.timeSignatures = timeSignatures
        self.settings = settings
        self.backingPath = backingPath
    }

    /// The header for recording into `sequence`.
    public init(sequence: MusicSequence, settings: RecordingSettings, backingPath: String?) {
        self.init(ticksPerQuarter: sequence.ticksPerQuarter, tempoChanges: sequence.tempoChanges,
                  timeSignatures: sequence.timeSignatures.map { TimedSignature(tick: $0.tick, signature: $0.signature) },
                  settings: settings, backingPath: backingPath)
    }

    /// A sequence holding only this header's tempo track: what a recovery without the
    /// backing file starts from.
    public func makeSequence() -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(ticksPerQuarter))
        for change in tempoChanges { sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: change.microsecondsPerQuarter)), at: change.tick) }
        for sig in timeSignatures { sequence.tempoTrack.add(.meta(.timeSignature(sig.signature)), at: sig.tick) }
        return sequence
    }

    /// The header's text: one `key value` line each, ended by an empty line.
    var text: String {
        var lines = ["tactus-journal 1", "division \(ticksPerQuarter)"]
        for change in tempoChanges { lines.append("tempo \(change.tick) \(change.microsecondsPerQuarter)") }
        for sig in timeSignatures {
            let s = sig.signature
            lines.append("timesig \(sig.tick) \(s.numerator) \(s.denominatorPower) \(s.clocksPerClick) \(s.thirtySecondsPerQuarter)")
        }
        lines.append("mode \(settings.mode.rawValue)")
        lines.append("start \(settings.startTick)")
        if let t = settings.punchIn { lines.append("punch-in \(t)") }
        if let t = settings.punchOut { lines.append("punch-out \(t)") }
        if let loop = settings.loop { lines.append("loop \(loop.lowerBound) \(loop.upperBound)") }
        if let grid = settings.quantize { lines.append("quantize \(grid)") }
        if let track = settings.targetTrack { lines.append("track \(track)") }
        if let backingPath { lines.append("backing \(backingPath)") }
        return lines.joined(separator: "\n") + "\n\n"
    }

    /// Parses the header text (without the empty line that ends it).
    init(parsing text: String, path: String) throws(RecordingJournalError) {
        func bad(_ why: String) -> RecordingJournalError { RecordingJournalError(path: path, reason: "not a Tactus journal (\(why))") }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.first == "tactus-journal 1" else { throw bad("no 'tactus-journal 1' first line") }
        var division: Int?
        var tempo: [TempoChange] = []
        var signatures: [TimedSignature] = []
        var settings = RecordingSettings()
        var backing: String?
        for line in lines.dropFirst() {
            let key = line.prefix { $0 != " " }
            let rest = line.dropFirst(key.count + 1)
            let numbers = rest.split(separator: " ").map { Int64($0) }
            func number(_ i: Int) throws(RecordingJournalError) -> Int64 {
                guard i < numbers.count, let n = numbers[i] else { throw bad("bad '\(key)' line") }
                return n
            }
            switch key {
            case "division": division = Int(try number(0))
            case "tempo": tempo.append(TempoChange(tick: try number(0), microsecondsPerQuarter: Int(try number(1))))
            case "timesig":
                signatures.append(TimedSignature(tick: try number(0), signature: TimeSignature(
                    numerator: UInt8(clamping: try number(1)), denominatorPower: UInt8(clamping: try number(2)),
                    clocksPerClick: UInt8(clamping: try number(3)), thirtySecondsPerQuarter: UInt8(clamping: try number(4)))))
            case "mode":
                guard let mode = RecordingMode(rawValue: String(rest)) else { throw bad("unknown mode '\(rest)'") }
                settings.mode = mode
            case "start": settings.startTick = try number(0)
            case "punch-in": settings.punchIn = try number(0)
            case "punch-out": settings.punchOut = try number(0)
            case "loop": settings.loop = try number(0)..<max(try number(0), try number(1))
            case "quantize":
                guard let grid = QuantizeGrid(parsing: String(rest)) else { throw bad("bad grid '\(rest)'") }
                settings.quantize = grid
            case "track": settings.targetTrack = Int(try number(0))
            case "backing": backing = String(rest)
            default: continue // a later version's key: what this one knows still recovers
            }
        }
        guard let division else { throw bad("no division") }
        // A take is a Standard MIDI File, whose division holds 15 bits (TimeBase's range).
        guard (1...0x7FFF).contains(division) else { throw bad("division \(division) out of 1...32767") }
        self.init(ticksPerQuarter: division, tempoChanges: tempo, timeSignatures: signatures, settings: settings, backingPath: backing)
    }
}

/// The journal of a take: every message as it arrives, on disk within 100 ms, so a crash, a
/// `kill -9` or a power cut loses at most the last moments (see ``RecordingJournalWriter``).
///
/// Format (version 1), append-only:
/// - a text header: the line `tactus-journal 1`, then `key value` lines (`division`, `tempo
///   TICK USPQ`, `timesig TICK NUM DENPOWER CLOCKS 32NDS`, `mode`, `start`, `punch-in`,
///   `punch-out`, `loop FROM TO`, `quantize`, `track`, `backing PATH`), then an empty line;
/// - binary records, little-endian. An event: `0xE1`, the take time in nanoseconds (Int64),
///   the byte count (UInt16), the message's bytes, then an FNV-1a 32-bit checksum of the
///   record's preceding bytes. A time mark (how far the take had got): `0xE2`, the take time
///   (Int64), the checksum.
///
/// A reader stops at the first record that is cut short or whose checksum fails: a record
/// being written when the power went leaves a torn tail, and everything before it is intact.
public enum RecordingJournal {
    static let eventMarker: UInt8 = 0xE1
    static let timeMarker: UInt8 = 0xE2

    /// What a journal holds.
    public struct Contents: Hashable, Sendable {
        /// The header.
        public var header: RecordingJournalHeader
        /// The events in the order they were written: take time in nanoseconds and bytes.
        public var events: [(nanoseconds: Int64, bytes: [UInt8])]
        /// The latest take time of any record (events and time marks).
        public var lastNanoseconds: Int64?
        /// Bytes at the end that did not form a whole, valid record (a torn tail).
        public var discardedByteCount: Int

        public static func == (a: Contents, b: Contents) -> Bool {
            a.header == b.header && a.lastNanoseconds == b.lastNanoseconds && a.discardedByteCount == b.discardedByteCount
                && a.events.count == b.events.count
                && zip(a.events, b.events).allSatisfy { $0.nanoseconds == $1.nanoseconds && $0.bytes == $1.bytes }
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(header)
            hasher.combine(events.count)
        }
    }

    /// FNV-1a, 32 bits: small, and enough to tell a torn or scribbled record from a whole one.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var h: UInt32 = 0x811C_9DC5
        for b in bytes {
            h ^= UInt32(b)
            h = h &* 0x0100_0193
        }
        return h
    }

    /// The bytes of an event record.
    static func eventRecord(nanoseconds: Int64, bytes: [UInt8]) -> [UInt8] {
        var r: [UInt8] = [eventMarker]
        withUnsafeBytes(of: nanoseconds.littleEndian) { r.append(contentsOf: $0) }
        let count = UInt16(min(bytes.count, Int(UInt16.max)))
        withUnsafeBytes(of: count.littleEndian) { r.append(contentsOf: $0) }
        r.append(contentsOf: bytes.prefix(Int(count)))
        withUnsafeBytes(of: checksum(r[...]).littleEndian) { r.append(contentsOf: $0) }
        return r
    }

    /// The bytes of a time mark.
    static func markRecord(nanoseconds: Int64) -> [UInt8] {
        var r: [UInt8] = [timeMarker]
        withUnsafeBytes(of: nanoseconds.littleEndian) { r.append(contentsOf: $0) }
        withUnsafeBytes(of: checksum(r[...]).littleEndian) { r.append(contentsOf: $0) }
        return r
    }

    /// Decodes a journal's bytes; `path` names it in errors.
    public static func decode(_ data: [UInt8], path: String) throws(RecordingJournalError) -> Contents {
        // The header ends at the first empty line.
        var end: Int?
        var i = 0
        while i + 1 < data.count {
            if data[i] == 0x0A && data[i + 1] == 0x0A { end = i; break }
            i += 1
        }
        guard let end, let text = String(validating: data[0..<end], as: UTF8.self) else {
            throw RecordingJournalError(path: path, reason: data.starts(with: Array("tactus-journal".utf8))
                ? "the journal's header is incomplete" : "not a Tactus journal")
        }
        let header = try RecordingJournalHeader(parsing: text, path: path)
        var events: [(nanoseconds: Int64, bytes: [UInt8])] = []
        var last: Int64?
        var p = end + 2
        func int64(at offset: Int) -> Int64 {
            var v: UInt64 = 0
            for k in 0..<8 { v |= UInt64(data[offset + k]) << (8 * UInt64(k)) }
            return Int64(bitPattern: v)
        }
        func uint32(at offset: Int) -> UInt32 {
            var v: UInt32 = 0
            for k in 0..<4 { v |= UInt32(data[offset + k]) << (8 * UInt32(k)) }
            return v
        }
        while p < data.count {
            let marker = data[p]
            if marker == eventMarker {
                guard p + 11 <= data.count else { break }
                let count = Int(data[p + 9]) | Int(data[p + 10]) << 8
                let sumAt = p + 11 + count
                guard sumAt + 4 <= data.count, uint32(at: sumAt) == checksum(data[p..<sumAt]) else { break }
                let t = int64(at: p + 1)
                events.append((t, Array(data[(p + 11)..<sumAt])))
                last = max(last ?? t, t)
                p = sumAt + 4
            } else if marker == timeMarker {
                guard p + 13 <= data.count, uint32(at: p + 9) == checksum(data[p..<(p + 9)]) else { break }
                let t = int64(at: p + 1)
                last = max(last ?? t, t)
                p += 13
            } else {
                break
            }
        }
        return Contents(header: header, events: events, lastNanoseconds: last, discardedByteCount: data.count - p)
    }

    /// Reads and decodes the journal at `path`.
    public static func read(contentsOf path: String) throws(RecordingJournalError) -> Contents {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw RecordingJournalError(path: path, reason: "cannot open (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw RecordingJournalError(path: path, reason: "cannot read (\(String(cString: strerror(errno))))")
            }
            if n == 0 { break }
            data.append(contentsOf: chunk[0..<n])
        }
        return try decode(data, path: path)
    }

    /// Replays a journal through a recorder: the take as it was when the journal was last
    /// flushed, notes still held then ending at the last time recorded.
    public static func recover(_ contents: Contents) -> MIDIRecorder {
        let header = contents.header
        let tempo = TempoMap(timeBase: .ticksPerQuarter(header.ticksPerQuarter), changes: header.tempoChanges)
        var recorder = MIDIRecorder(tempoMap: tempo, ticksPerQuarter: header.ticksPerQuarter, settings: header.settings)
        for e in contents.events { recorder.record(e.bytes, atSeconds: Double(e.nanoseconds) / 1e9) }
        recorder.finish(atSeconds: Double(contents.lastNanoseconds ?? 0) / 1e9)
        return recorder
    }
}

/// Appends a take's events to its journal file from a control thread (never the audio thread):
/// ``append(nanoseconds:bytes:)`` only buffers, ``flush()`` writes with write(2) and makes the
/// data durable with fdatasync, so calling it every 50 ms keeps the journal at most that far
/// behind.
public final class RecordingJournalWriter {
    /// The journal's path.
    public let path: String
    private let fd: Int32
    private var pending: [UInt8] = []
    private var lastTime: Int64?

    /// Creates the journal at `path`, locks it for as long as the writer lives, and writes the
    /// header durably.
    ///
    /// The journal is created exclusively and never through a symbolic link, so nothing that
    /// is already at `path` is overwritten: a journal another recording is writing (it is
    /// locked), the journal of a take that ended without being written (it may hold the only
    /// copy of that take), or a link planted there. Each is refused with a reason that says so.
    public init(path: String, header: RecordingJournalHeader) throws(RecordingJournalError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.creationError(path: path, code: errno) }
        // Held until the descriptor closes: a second writer (another process, or this one)
        // finds it taken. Just created exclusively, so only a race could hold it already.
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw RecordingJournalError(path: path, reason: "cannot lock (\(String(cString: strerror(errno))))")
        }
        pending = Array(header.text.utf8)
        do {
            try flush()
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// Why `path` could not be created: what is already there, in words a user can act on.
    private static func creationError(path: String, code: Int32) -> RecordingJournalError {
        var info = stat()
        guard code == EEXIST || code == ELOOP, lstat(path, &info) == 0 else {
            return RecordingJournalError(path: path, reason: "cannot create (\(String(cString: strerror(code))))")
        }
        if info.st_mode & S_IFMT == S_IFLNK {
            return RecordingJournalError(path: path, reason: "is a symbolic link; a journal is never written through one (remove it)")
        }
        let existing = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if existing >= 0 {
            defer { close(existing) }
            if flock(existing, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK {
                return RecordingJournalError(path: path, reason: "another recording is writing this journal; record to another file")
            }
        }
        return RecordingJournalError(path: path, reason: "exists: it keeps a take that was never written; recover it with "
                                        + "`tactus record --recover \(path) -o OUT.mid`, or remove it")
    }

    /// Buffers one event at take time `nanoseconds`.
    public func append(nanoseconds: Int64, bytes: [UInt8]) {
        pending += RecordingJournal.eventRecord(nanoseconds: nanoseconds, bytes: bytes)
        lastTime = max(lastTime ?? nanoseconds, nanoseconds)
    }

    /// Buffers a time mark: the take had reached `nanoseconds`, so a recovery ends held notes
    /// there rather than at their last event.
    public func mark(nanoseconds: Int64) {
        guard nanoseconds > (lastTime ?? .min) else { return }
        pending += RecordingJournal.markRecord(nanoseconds: nanoseconds)
        lastTime = nanoseconds
    }

    /// Writes what is buffered and waits until it is on the disk.
    public func flush() throws(RecordingJournalError) {
        var offset = 0
        while offset < pending.count {
            let n = pending.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw RecordingJournalError(path: path, reason: "cannot write (\(String(cString: strerror(errno))))")
            }
            offset += n
        }
        pending.removeAll(keepingCapacity: true)
        // A pipe or a terminal has nothing to sync; only a real failure on a file counts.
        if fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS {
            throw RecordingJournalError(path: path, reason: "cannot sync (\(String(cString: strerror(errno))))")
        }
    }
}
