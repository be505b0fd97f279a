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

/// Limits that keep memory bounded on hostile input.
public struct SMFReadOptions: Sendable {
    /// Refuse files larger than this many bytes (default 256 MiB).
    public var maximumFileSize: Int = 256 << 20
    /// Refuse files with more track chunks than this (default 65,535, the header's limit).
    public var maximumTrackCount: Int = 65_535
    /// Refuse a single meta or sysex event longer than this (default 16 MiB).
    public var maximumEventLength: Int = 16 << 20
    /// Refuse files with more events than this in all tracks (default 32 Mi, about 1 GiB of
    /// event records). Checked after each track, so one more track's events may be held
    /// briefly; the file size limit bounds that track.
    public var maximumEventCount: Int = 32 << 20
    /// Make every warning an error.
    public var strict = false
    /// Asked between stretches of at most ``cancellationStride`` bytes of a track, and between
    /// chunks: once it says true, reading stops with ``SMFErrorReason/cancelled``. For a caller
    /// with a deadline or a stop request (a batch's `--timeout`, a signal): a file of millions
    /// of events takes a noticeable time to read. Nil (the default): never asked.
    public var shouldCancel: (@Sendable () -> Bool)?

    /// How many bytes of a track are read between two calls of ``shouldCancel`` (at most).
    public static let cancellationStride = 1 << 18

    /// Default limits, tolerant reading.
    public init() {}
}

/// A Standard MIDI File as read: its header fields and its track chunks, each turned into a
/// `MusicTrack` with notes paired (first in, first out per channel and key).
public struct StandardMIDIFile: Sendable, Hashable {
    /// The header's format word (0, 1 or 2; other values are kept as read).
    public var format: UInt16
    /// The header's track count, which may disagree with the chunks found.
    public var declaredTrackCount: Int
    /// The header's division word, kept as read (see ``timeBase``).
    public var divisionWord: UInt16
    /// The track chunks in file order.
    public var tracks: [MusicTrack]
    /// What the reader noticed and tolerated.
    public var warnings: [SMFWarning]

    /// Creates a file value.
    public init(format: UInt16, divisionWord: UInt16, tracks: [MusicTrack], declaredTrackCount: Int? = nil, warnings: [SMFWarning] = []) {
        self.format = format
        self.divisionWord = divisionWord
        self.tracks = tracks
        self.declaredTrackCount = declaredTrackCount ?? tracks.count
        self.warnings = warnings
    }

    /// The time base of the division word.
    public var timeBase: TimeBase { TimeBase(divisionWord: divisionWord) }
}

/// Reads Standard MIDI Files: formats 0, 1 and 2, PPQ and SMPTE division, running status
/// (also across meta and sysex events, as real files use it), F0 and F7 sysex packets,
/// unknown chunks, and RIFF RMID files.
///
/// It never reads outside the bytes it was given, never allocates by a length field before
/// checking it against the bytes present, and always terminates: every step consumes input.
/// Damage it can work around becomes a warning with a byte offset; damage it cannot becomes an
/// ``SMFError`` naming the chunk, offset and reason.
public enum SMFReader {
    /// Reads the file at `path`: a regular file (mapped), or a pipe or device (read to its
    /// end, up to the size limit).
    /// - Throws: ``SMFError``; a file that is missing, a directory or cannot be opened or read
    ///   has the reason ``SMFErrorReason/cannotRead(_:)`` (see ``SMFError/isUnreadableInput``).
    public static func read(contentsOf path: String, options: SMFReadOptions = SMFReadOptions()) throws(SMFError) -> StandardMIDIFile {
        do throws(SMFError) {
            // A regular file is checked with fstat(2) and mapped without Foundation, whose code
            // pages would otherwise count in the memory of every load.
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw fileProblem(errno) }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw fileProblem(errno) }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                throw SMFError(location: SMFLocation(chunk: nil, offset: 0), reason: .cannotRead("is a directory, not a MIDI file"))
            case S_IFREG:
                try checkSize(Int(info.st_size), isRegularFile: true, options: options)
                if let mapped = MappedFile(fd: fd, size: Int(info.st_size)) {
                    defer { mapped.unmap() }
                    var parser = FileParser(bytes: mapped.bytes, options: options)
                    parser.releasesParsedPages = true
                    return try parser.parse()
                }
            default:
                break
            }
            // A pipe, a device, or a file that could not be mapped: read to its end.
            let bytes = try readToEnd(fd, options: options)
            // Array's withUnsafeBytes rethrows untyped: carry the typed error out in a Result.
            let result = bytes.withUnsafeBytes { raw in Result { () throws(SMFError) in try read(raw, options: options) } }
            return try result.get()
        } catch var error {
            error.path = path
            throw error
        }
    }

    /// The error for a failed open, stat or read, in the words the CLI prints.
    private static func fileProblem(_ code: Int32) -> SMFError {
        let reason: String
        switch code {
        case ENOENT: reason = "no such file"
        case EACCES, EPERM: reason = "permission denied"
        case EISDIR: reason = "is a directory, not a MIDI file"
        default: reason = "cannot read: " + String(cString: strerror(code))
        }
        return SMFError(location: SMFLocation(chunk: nil, offset: 0), reason: .cannotRead(reason))
    }

    /// Reads `fd` to its end; more than the options' size limit is refused.
    private static func readToEnd(_ fd: Int32, options: SMFReadOptions) throws(SMFError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw fileProblem(errno)
            }
            bytes.append(contentsOf: chunk[0..<count])
            try checkSize(bytes.count, isRegularFile: false, options: options)
        }
        if bytes.isEmpty { throw SMFError(location: SMFLocation(chunk: nil, offset: 0), reason: .emptyFile) }
        return bytes
    }

    /// Refuses a file over the size limit, and an empty regular file before reading it
    /// (FoundationEssentials leaks its read buffer for empty files).
    private static func checkSize(_ size: Int, isRegularFile: Bool, options: SMFReadOptions) throws(SMFError) {
        if size > options.maximumFileSize {
            throw SMFError(location: SMFLocation(chunk: nil, offset: 0),
                           reason: .limitExceeded("file is \(size) bytes, more than the \(options.maximumFileSize) allowed"))
        }
        if size == 0 && isRegularFile {
            throw SMFError(location: SMFLocation(chunk: nil, offset: 0), reason: .emptyFile)
        }
    }

    /// Reads a file from bytes in memory.
    public static func read(_ bytes: [UInt8], options: SMFReadOptions = SMFReadOptions()) throws(SMFError) -> StandardMIDIFile {
        do {
            return try bytes.withUnsafeBytes { raw in try read(raw, options: options) }
        } catch let error as SMFError {
            throw error
        } catch {
            throw SMFError(location: SMFLocation(chunk: nil, offset: 0), reason: .limitExceeded("\(error)"))
        }
    }

    /// Reads a file from a raw buffer.
    public static func read(_ raw: UnsafeRawBufferPointer, options: SMFReadOptions = SMFReadOptions()) throws(SMFError) -> StandardMIDIFile {
        var parser = FileParser(bytes: raw.bindMemory(to: UInt8.self), options: options)
        return try parser.parse()
    }
}

/// A regular file mapped read-only, so the reader can hand pages it has parsed back to the
/// kernel: a loaded file's peak memory is then its events and one track's bytes, not the
/// events and the whole file.
private struct MappedFile {
    let bytes: UnsafeBufferPointer<UInt8>

    /// Maps the first `size` bytes of the regular file open as `fd`; nil when it cannot be
    /// mapped.
    init?(fd: Int32, size: Int) {
        guard size > 0, let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else { return nil }
        bytes = UnsafeBufferPointer(start: address.assumingMemoryBound(to: UInt8.self), count: size)
    }

    func unmap() {
        munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
    }
}

/// Big-endian and chunk walking over the file's bytes, with every access bounds-checked.
struct FileParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let options: SMFReadOptions
    var warnings: [SMFWarning] = []
    /// The part of `bytes` that holds the SMF (differs from the whole for RIFF files).
    var base = 0
    var end = 0
    /// Set when `bytes` is a private read-only mapping of a file (``MappedFile``): the pages
    /// of each parsed chunk are then dropped from memory (a later read faults them in again).
    var releasesParsedPages = false
    /// Bytes from the start of `bytes` already dropped.
    private var releasedBytes = 0

    init(bytes: UnsafeBufferPointer<UInt8>, options: SMFReadOptions) {
        self.bytes = bytes
        self.options = options
        self.end = bytes.count
    }

    mutating func warn(_ chunk: String?, _ offset: Int, _ message: String) throws(SMFError) {
        let w = SMFWarning(location: SMFLocation(chunk: chunk, offset: offset), message: message)
        if options.strict { throw SMFError(location: w.location, reason: .strict(w)) }
        warnings.append(w)
    }

    func fail(_ chunk: String?, _ offset: Int, _ reason: SMFErrorReason) -> SMFError {
        SMFError(location: SMFLocation(chunk: chunk, offset: offset), reason: reason)
    }

    func u32be(_ at: Int) -> Int {
        Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
    }

    func u32le(_ at: Int) -> Int {
        Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
    }

    func tag(_ at: Int) -> String {
        var s = ""
        for i in min(at, bytes.count)..<min(at + 4, bytes.count) {
            let b = bytes[i]
            s += (32..<127).contains(b) ? String(UnicodeScalar(b)) : "\\x" + hex(b)
        }
        return "'" + s + "'"
    }

    func isTag(_ at: Int, _ t: StaticString) -> Bool {
        guard at >= 0, at + 4 <= end else { return false }
        let p = t.utf8Start
        return bytes[at] == p[0] && bytes[at + 1] == p[1] && bytes[at + 2] == p[2] && bytes[at + 3] == p[3]
    }

    func isPrintableTag(_ at: Int) -> Bool {
        guard at + 4 <= end else { return false }
        for i in at..<at + 4 where !(32..<127).contains(bytes[i]) { return false }
        return true
    }

    /// Position of the next "MTrk" tag at or after `from`, if any.
    func findTrackTag(from: Int, before limit: Int) -> Int? {
        var i = max(from, base)
        while i + 8 <= min(limit, end) {
            if bytes[i] == 0x4D && isTag(i, "MTrk") { return i }
            i += 1
        }
        return nil
    }

    mutating func unwrapRIFF() throws(SMFError) {
        // RIFF <size> RMID, then chunks: "data" holds the SMF.
        guard bytes.count >= 12 else {
            throw fail("RIFF", 0, .badRIFFWrapper("the RIFF header is cut short (\(bytes.count) bytes)"))
        }
        guard isTag(8, "RMID") else {
            throw fail("RIFF", 0, .badRIFFWrapper("RIFF file of type \(tag(8)), not RMID"))
        }
        var p = 12
        while p + 8 <= bytes.count {
            let length = u32le(p + 4)
            if isTag(p, "data") {
                let available = bytes.count - (p + 8)
                if length > available {
                    try warn("RIFF", p, "RIFF data chunk declares \(length) bytes, \(available) present")
                }
                base = p + 8
                end = p + 8 + min(length, available)
                try warn("RIFF", 0, "RIFF RMID wrapper unwrapped; the SMF starts at byte \(base)")
                return
            }
            let next = p + 8 + length + (length & 1)
            if next <= p { break }
            p = next
        }
        throw fail("RIFF", 12, .badRIFFWrapper("no 'data' chunk"))
    }

    /// Drops the whole pages before `offset` (see ``releasesParsedPages``).
    mutating func releasePages(before offset: Int) {
        guard releasesParsedPages, let start = bytes.baseAddress else { return }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = offset / pageSize * pageSize
        guard end > releasedBytes else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: start + releasedBytes), end - releasedBytes, Int32(MADV_DONTNEED))
        releasedBytes = end
    }

    mutating func parse() throws(SMFError) -> StandardMIDIFile {
        if bytes.isEmpty { throw fail(nil, 0, .emptyFile) }
        if bytes.count >= 4 && isTag(0, "RIFF") {
            try unwrapRIFF()
        }
        if end - base >= 8 && isTag(base, "SMF2") && isTag(base + 4, "CLIP") {
            throw fail(nil, base, .midi2ClipFile)
        }
        guard end - base >= 4, isTag(base, "MThd") else {
            throw fail(nil, base, .notAStandardMIDIFile(found: end - base >= 4 ? tag(base) : "\(end - base) byte(s)"))
        }
        guard end - base >= 8 else { throw fail("MThd", base, .truncatedHeader(bytesPresent: 0)) }
        let headerLength = u32be(base + 4)
        let headerPresent = min(headerLength, end - base - 8)
        guard headerLength >= 6, headerPresent >= 6 else {
            throw fail("MThd", base + 8, .truncatedHeader(bytesPresent: max(0, min(headerPresent, 6))))
        }
        let h = base + 8
        let format = UInt16(bytes[h]) << 8 | UInt16(bytes[h + 1])
        let declaredTracks = Int(bytes[h + 2]) << 8 | Int(bytes[h + 3])
        let division = UInt16(bytes[h + 4]) << 8 | UInt16(bytes[h + 5])
        if headerLength > 6 {
            try warn("MThd", base + 4, "header declares \(headerLength) bytes; the \(headerLength - 6) beyond the standard 6 are ignored")
        }
        if format > 2 {
            try warn("MThd", h, "unknown format \(format); read as format 1")
        }
        if division == 0 {
            try warn("MThd", h + 4, "division is 0: ticks cannot be converted to time")
        } else if division & 0x8000 != 0 {
            let fps = 256 - Int(division >> 8)
            if ![24, 25, 29, 30].contains(fps) {
                try warn("MThd", h + 4, "SMPTE division with \(fps) frames per second (24, 25, 29 or 30 expected)")
            }
        }
        var tracks: [MusicTrack] = []
        var eventCount = 0
        // One working buffer for every track: its pages are touched once per file.
        let storage = TrackEventStorage()
        var position = h + headerPresent
        var extraChunkSeen = false
        while position < end {
            if let shouldCancel = options.shouldCancel, shouldCancel() { throw fail(nil, position, .cancelled) }
            if end - position < 8 {
                try warn(nil, position, "\(end - position) trailing byte(s) after the last chunk ignored")
                break
            }
            let chunkLength = u32be(position + 4)
            let payload = position + 8
            let available = end - payload
            if isTag(position, "MTrk") {
                let index = tracks.count
                let name = "MTrk #\(index)"
                if index >= declaredTracks {
                    if chunkLength > available {
                        try warn(name, position, "track chunk beyond the \(declaredTracks) declared, with a length of \(chunkLength) bytes past the end of the file: ignored")
                        break
                    }
                    if !extraChunkSeen {
                        try warn(name, position, "more track chunks than the \(declaredTracks) the header declares; reading them")
                        extraChunkSeen = true
                    }
                }
                if tracks.count >= options.maximumTrackCount {
                    throw fail(name, position, .limitExceeded("more than \(options.maximumTrackCount) tracks"))
                }
                let truncated = chunkLength > available
                if truncated {
                    try warn(name, position, "track chunk declares \(chunkLength) bytes but the file ends after \(available); reading what is there")
                }
                let chunkEnd = payload + min(chunkLength, available)
                var trackParser = TrackParser(file: self, chunkName: name, start: payload, end: chunkEnd,
                                              truncatedByEOF: truncated, storage: storage)
                let parsed = try trackParser.parse()
                warnings.append(contentsOf: trackParser.warnings)
                eventCount += parsed.track.events.count
                if eventCount > options.maximumEventCount {
                    throw fail(name, position, .limitExceeded("more than \(options.maximumEventCount) events"))
                }
                tracks.append(parsed.track)
                releasePages(before: parsed.resyncAt ?? chunkEnd)
                if let resync = parsed.resyncAt {
                    position = resync
                    continue
                }
                if truncated { break }
                position = chunkEnd
            } else if isPrintableTag(position) {
                try warn(nil, position, "unknown chunk \(tag(position)) of \(chunkLength) bytes skipped")
                if chunkLength > available { break }
                position = payload + chunkLength
            } else {
                // Not a chunk header: garbage, or the misplaced end of a chunk whose length was
                // wrong. Re-synchronize on the next track tag when there is one.
                if let next = findTrackTag(from: position + 1, before: end) {
                    try warn(nil, position, "\(next - position) byte(s) of non-chunk data skipped up to the next 'MTrk'")
                    position = next
                } else {
                    try warn(nil, position, "\(end - position) byte(s) of non-chunk data after the last chunk ignored")
                    break
                }
            }
        }
        if tracks.count < declaredTracks {
            try warn(nil, end, "header declares \(declaredTracks) track(s), \(tracks.count) found")
        }
        if format == 0 && tracks.count > 1 {
            try warn(nil, base, "format 0 file with \(tracks.count) tracks")
        }
        return StandardMIDIFile(format: format, divisionWord: division, tracks: tracks,
                                declaredTrackCount: declaredTracks, warnings: warnings)
    }
}
