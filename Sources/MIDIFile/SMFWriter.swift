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

/// An event or track end past ``SMFWriter/maximumTick``: the file is not written.
public struct SMFTickLimitError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The track (0-based, as written).
    public var track: Int
    /// The tick past the limit.
    public var tick: Int64

    public var description: String {
        "track \(track) reaches tick \(tick), past the \(SMFWriter.maximumTick) a written file may hold"
    }
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
        bytes.beginChunk()
        for f in flat { bytes.append(tick: f.tick, f.event) }
        bytes.finish(endTick: end)
        let chunk = bytes.bytes
        bytes.deallocate()
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

/// Encodes track chunks with running status into one growing buffer of manually managed
/// memory (the writer's hot path: no per-byte uniqueness or bounds checks). Call
/// ``deallocate()`` when done; the value must not be used after that.
struct TrackEncoder {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// False while the buffer is one lent by the caller (``init(lending:capacity:)``).
    private(set) var ownsBuffer = true
    /// Bytes written so far.
    private(set) var count = 0
    /// Where the open chunk's "MTrk" tag starts.
    private var chunkStart = 0
    var lastTick: Int64 = 0
    var runningStatus: UInt8 = 0

    init(capacity: Int = 0) {
        self.capacity = max(64, capacity)
        base = .allocate(capacity: self.capacity)
    }

    /// Encodes into `buffer` (uninitialized room for `capacity` bytes, which the caller
    /// keeps) until it is full; then the bytes move to a buffer of the encoder's own and
    /// ``ownsBuffer`` turns true.
    init(lending buffer: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.capacity = capacity
        base = buffer
        ownsBuffer = false
    }

    func deallocate() {
        if ownsBuffer { base.deallocate() }
    }

    /// Makes room for `n` more bytes.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if count &+ n > capacity { grow(to: count + n) }
    }

    private mutating func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        if ownsBuffer { base.deallocate() }
        base = newBase
        capacity = newCapacity
        ownsBuffer = true
    }

    /// Appends one byte; room must have been reserved.
    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        // Wrapping: room was reserved, so `count` stays below `capacity`.
        base[count] = byte
        count &+= 1
    }

    /// Appends `bytes`.
    mutating func append(contentsOf bytes: [UInt8]) {
        reserve(bytes.count)
        bytes.withUnsafeBufferPointer { source in
            if let address = source.baseAddress { (base + count).update(from: address, count: source.count) }
        }
        count += bytes.count
    }

    /// Appends a variable-length quantity (values are clamped to 0...0x0FFFFFFF); room for
    /// four bytes must have been reserved.
    @inline(__always)
    private mutating func putVLQ(_ value: Int) {
        let v = UInt32(clamping: max(0, min(value, 0x0FFF_FFFF)))
        if v < 0x80 {
            put(UInt8(v))
        } else if v < 0x4000 {
            put(UInt8(0x80 | (v >> 7)))
            put(UInt8(v & 0x7F))
        } else if v < 0x20_0000 {
            put(UInt8(0x80 | (v >> 14)))
            put(UInt8(0x80 | ((v >> 7) & 0x7F)))
            put(UInt8(v & 0x7F))
        } else {
            put(UInt8(0x80 | (v >> 21)))
            put(UInt8(0x80 | ((v >> 14) & 0x7F)))
            put(UInt8(0x80 | ((v >> 7) & 0x7F)))
            put(UInt8(v & 0x7F))
        }
    }

    /// Writes the delta time; deltas beyond the 28-bit VLQ limit are split across empty
    /// text events so no time is lost.
    @inline(__always)
    private mutating func writeDelta(to tick: Int64) {
        var delta = max(0, tick - lastTick)
        while delta > 0x0FFF_FFFF {
            reserve(7)
            putVLQ(0x0FFF_FFFF)
            put(0xFF)
            put(0x01)
            put(0x00)
            runningStatus = 0
            delta -= 0x0FFF_FFFF
        }
        reserve(4)
        putVLQ(Int(delta))
        lastTick = max(lastTick, tick)
    }

    /// Opens a track chunk: its tag and a length patched by ``finish(endTick:)``.
    mutating func beginChunk() {
        reserve(8)
        chunkStart = count
        for byte in "MTrk".utf8 { put(byte) }
        for _ in 0..<4 { put(0) }
        lastTick = 0
        runningStatus = 0
    }

    /// Appends a short message at `tick` with running status: the writer's hot path.
    @inline(__always)
    mutating func appendMessage(tick: Int64, _ m: MIDIMessage) {
        let delta = tick - lastTick
        if delta < 0 || delta > 0x0FFF_FFFF {
            writeDelta(to: tick)
            reserve(3)
        } else {
            reserve(7)
            putVLQ(Int(delta))
            lastTick = tick
        }
        let status = m.status
        if status < 0xF0 {
            if status != runningStatus {
                put(status)
                runningStatus = status
            }
            put(m.data1)
            // Program change and channel pressure (C0-DF) take one data byte, the rest two.
            if status & 0xE0 != 0xC0 { put(m.data2) }
        } else {
            put(status)
            runningStatus = 0
            let n = m.dataByteCount
            if n >= 1 { put(m.data1) }
            if n == 2 { put(m.data2) }
        }
    }

    /// Appends `track`'s events as a file holds them, in the order of
    /// ``MusicTrack/forEachFileEvent(_:)`` (each note split into its note-on and release);
    /// returns the track's ``MusicTrack/length``, found on the way.
    mutating func appendEvents(of track: MusicTrack) -> Int64 {
        var releases = ReleaseHeap()
        defer { releases.deallocate() }
        var end: Int64 = 0
        track.events.withUnsafeBufferPointer { buffer in
            for i in buffer.indices {
                let tick = buffer[i].tick
                let order = buffer[i].order
                while releases.hasRelease(before: tick, order: order) {
                    let r = releases.pop()
                    appendMessage(tick: r.tick, r.message)
                }
                end = max(end, tick)
                switch buffer[i].event {
                case .note(let n):
                    appendMessage(tick: tick, n.onMessage)
                    let releaseTick = tick + n.duration
                    end = max(end, releaseTick)
                    releases.push(PendingRelease(tick: releaseTick, order: n.releaseOrder, message: n.offMessage))
                case .message(let m):
                    appendMessage(tick: tick, m)
                case .sysex(let s):
                    append(tick: tick, .sysex(s))
                case .meta(let m):
                    if m.type != MetaType.endOfTrack { append(tick: tick, .meta(m)) }
                case .parameter, .user:
                    continue
                }
            }
        }
        while !releases.isEmpty {
            let r = releases.pop()
            appendMessage(tick: r.tick, r.message)
        }
        return max(end, track.explicitLength ?? 0)
    }

    @inline(__always)
    mutating func append(tick: Int64, _ event: FileEvent) {
        writeDelta(to: tick)
        switch event {
        case .message(let m):
            reserve(3)
            let n = m.dataByteCount
            if m.status < 0xF0 {
                if m.status != runningStatus {
                    put(m.status)
                    runningStatus = m.status
                }
            } else {
                put(m.status)
                runningStatus = 0
            }
            if n >= 1 { put(m.data1) }
            if n == 2 { put(m.data2) }
        case .sysex(let s):
            reserve(5)
            put(s.status)
            putVLQ(s.payload.count)
            append(contentsOf: s.payload)
            runningStatus = 0
        case .meta(let m):
            reserve(6)
            put(0xFF)
            put(m.type)
            putVLQ(m.data.count)
            append(contentsOf: m.data)
            runningStatus = 0
        }
    }

    /// Writes the end of track and the chunk's length.
    mutating func finish(endTick: Int64) {
        writeDelta(to: max(endTick, lastTick))
        reserve(3)
        put(0xFF)
        put(0x2F)
        put(0x00)
        closeChunk()
    }

    /// Writes the open chunk's length without an end of track (for `tactus build`, which keeps
    /// a document's missing end of track as it is).
    mutating func closeChunk() {
        let n = UInt32(clamping: count - chunkStart - 8)
        base[chunkStart + 4] = UInt8(n >> 24)
        base[chunkStart + 5] = UInt8((n >> 16) & 0xFF)
        base[chunkStart + 6] = UInt8((n >> 8) & 0xFF)
        base[chunkStart + 7] = UInt8(n & 0xFF)
    }

    /// A copy of the bytes written.
    var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { buffer.baseAddress!.update(from: base, count: count) }
            initialized = count
        }
    }
}

/// Writes Standard MIDI Files: running status, the file's own division, every event with its
/// tick, bytes and same-tick order, and an end of track on every track.
public enum SMFWriter {
    /// The bytes of `file`. An event past ``maximumTick`` is reached through filler events,
    /// as many as it takes; for positions from outside (a user's edit, a document) use
    /// ``checkedBytes(of:)-(StandardMIDIFile)``, which refuses them.
    public static func bytes(of file: StandardMIDIFile) -> [UInt8] {
        // The bytes are encoded straight into the array returned, sized for the longest
        // encoding of every event but meta and sysex data: a note takes at most 14 bytes (two
        // 4-byte deltas and two 3-byte messages), a message 7, a meta or sysex event up to 14
        // plus its data. Pages past the bytes written are never touched. Files whose meta and
        // sysex data overflow that move to a growing buffer and are copied once at the end.
        var capacity = 14
        for track in file.tracks { capacity += 8 + 7 + track.count * 14 }
        var grown: [UInt8]?
        let direct = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            var encoder = TrackEncoder(lending: buffer.baseAddress!, capacity: capacity)
            defer { encoder.deallocate() }
            encoder.append(contentsOf: StandardMIDIFile.header(format: file.format, tracks: file.tracks.count, division: file.divisionWord))
            for track in file.tracks {
                encoder.beginChunk()
                let length = encoder.appendEvents(of: track)
                encoder.finish(endTick: length)
            }
            if encoder.ownsBuffer {
                grown = encoder.bytes
                initialized = 0
            } else {
                initialized = encoder.count
            }
        }
        return grown ?? direct
    }

    /// The latest tick a file Tactus writes may hold: 2^31 - 1, about 12 days at 960 ticks per
    /// quarter and 120 BPM. A delta time holds at most 2^28 - 1 ticks, so a later event needs
    /// filler events to reach; past this limit the filler would grow without bound.
    public static let maximumTick = Int64(Int32.max)

    /// The bytes of `file`, once every event (a note to its end) and every track end is
    /// checked to lie at or before ``maximumTick``.
    /// - Throws: ``SMFTickLimitError`` naming the first track and tick past the limit.
    public static func checkedBytes(of file: StandardMIDIFile) throws(SMFTickLimitError) -> [UInt8] {
        for (index, track) in file.tracks.enumerated() {
            if let explicit = track.explicitLength, explicit > maximumTick {
                throw SMFTickLimitError(track: index, tick: explicit)
            }
            for event in track.events {
                var end = event.tick
                if case .note(let note) = event.event {
                    let (sum, overflow) = event.tick.addingReportingOverflow(note.duration)
                    end = overflow ? Int64.max : sum
                }
                if end > maximumTick { throw SMFTickLimitError(track: index, tick: end) }
            }
        }
        return bytes(of: file)
    }

    /// The bytes of `sequence` in `layout`, checked against ``maximumTick`` as for a file.
    public static func checkedBytes(of sequence: MusicSequence, layout: SMFLayout = .asRead) throws(SMFTickLimitError) -> [UInt8] {
        try checkedBytes(of: StandardMIDIFile(sequence: sequence, layout: layout))
    }

    /// The bytes of `sequence` in `layout`.
    public static func bytes(of sequence: MusicSequence, layout: SMFLayout = .asRead) -> [UInt8] {
        bytes(of: StandardMIDIFile(sequence: sequence, layout: layout))
    }

    /// Writes `bytes` to `path` through a temporary file and a rename, so an interrupted write
    /// never leaves a half-written file under the final name. The temporary file is created
    /// exclusively under a random name; a symbolic link to a file stays a link. `-` is standard
    /// output, and a path that is or resolves to anything but a regular file (`/dev/null`, a
    /// FIFO, `/dev/stdout`, `/proc/self/fd/N`) is written in place and never replaced (see
    /// ``OutputDestination``).
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws(SMFWriteError) {
        let destination: OutputDestination
        do {
            destination = try OutputDestination.resolve(path)
        } catch {
            throw SMFWriteError(path: path, reason: error.reason)
        }
        switch destination {
        case .descriptor(let fd):
            try write(bytes, to: fd, path: path)
        case .inPlace(let target):
            let fd = open(target, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw SMFWriteError(path: path, reason: "cannot write (\(String(cString: strerror(errno))))") }
            defer { close(fd) }
            try write(bytes, to: fd, path: path)
        case .replace(let target):
            let temporary: (descriptor: Int32, path: String)
            do {
                temporary = try OutputDestination.createTemporary(beside: target)
            } catch {
                throw SMFWriteError(path: path, reason: "cannot write (\(error.reason))")
            }
            do throws(SMFWriteError) {
                try write(bytes, to: temporary.descriptor, path: path)
                if fsync(temporary.descriptor) != 0 {
                    throw SMFWriteError(path: path, reason: "cannot write (\(String(cString: strerror(errno))))")
                }
            } catch {
                close(temporary.descriptor)
                unlink(temporary.path)
                throw error
            }
            close(temporary.descriptor)
            if rename(temporary.path, target) != 0 {
                let reason = String(cString: strerror(errno))
                unlink(temporary.path)
                throw SMFWriteError(path: path, reason: "cannot write (\(reason))")
            }
        }
    }

    private static func write(_ bytes: [UInt8], to fd: Int32, path: String) throws(SMFWriteError) {
        let failure: Int32? = bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return nil
        }
        if let failure { throw SMFWriteError(path: path, reason: "cannot write (\(String(cString: strerror(failure))))") }
    }
}
