import CVorbisFile

/// Decodes Ogg Vorbis streams held in memory with libvorbisfile, which is loaded at run time:
/// Tactus builds and runs without it, and only decoding a SoundFont 3 bank's samples needs it.
public enum VorbisDecoder {
    /// The shared object Tactus loads.
    public static let libraryName = "libvorbisfile.so.3"
    /// The Debian package that installs ``libraryName``.
    public static let debianPackage = "libvorbisfile3"
    /// True when libvorbisfile can be loaded on this machine.
    public static var isAvailable: Bool { tactus_vorbis_load() == 0 }

    /// Loads libvorbisfile once per process.
    /// - Throws: ``SoundFontErrorReason/libraryUnavailable(library:package:detail:)`` naming the
    ///   library and its Debian package when it cannot be loaded.
    public static func loadLibrary() throws(SoundFontError) {
        guard tactus_vorbis_load() != 0 else { return }
        let detail = tactus_vorbis_load_error().map { String(cString: $0) } ?? "cannot be loaded"
        throw SoundFontError(location: SoundFontLocation(chunk: nil, offset: 0),
                             reason: .libraryUnavailable(library: libraryName, package: debianPackage, detail: detail))
    }

    /// Why a stream could not be decoded.
    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// libvorbisfile refused the stream (its error code: -132 not Vorbis, -133 a bad
        /// header, ...).
        case notVorbis(code: Int)
        /// The stream has a channel count other than one (SoundFont 3 samples are mono).
        case channels(Int)
        /// The stream decodes to no audio at all.
        case empty
        /// libvorbisfile cannot be loaded.
        case libraryUnavailable

        public var description: String {
            switch self {
            case .notVorbis(let code): return "not a readable Ogg Vorbis stream (libvorbisfile error \(code))"
            case .channels(let n): return "an Ogg Vorbis stream with \(n) channels, not mono"
            case .empty: return "an Ogg Vorbis stream with no audio"
            case .libraryUnavailable: return "\(VorbisDecoder.libraryName) cannot be loaded"
            }
        }
    }

    /// Decodes the mono stream in `bytes` to signed 16-bit points exactly as libvorbisfile's
    /// `ov_read` gives them (scaled by 32768, rounded, clipped). The result is allocated with
    /// room for `headerBytes` in front of the points (callers keep a header there); `count` is
    /// the number of points, at most `maximumFrameCount` (a longer stream is cut). The caller
    /// owns (and deallocates) the memory.
    static func decodeMono(_ bytes: UnsafeRawBufferPointer, headerBytes: Int, maximumFrameCount: Int) -> Result<(memory: UnsafeMutableRawPointer, count: Int), Failure> {
        guard tactus_vorbis_load() == 0 else { return .failure(.libraryUnavailable) }
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .failure(.notVorbis(code: -132)) }
        var opened: OpaquePointer?
        let status = tactus_vorbis_open(base, bytes.count, &opened)
        guard status == 0, let stream = opened else { return .failure(.notVorbis(code: Int(status))) }
        defer { tactus_vorbis_close(stream) }
        let channels = Int(tactus_vorbis_channels(stream))
        guard channels == 1 else { return .failure(.channels(channels)) }
        // The total comes from the last page's granule position, which the file may state
        // wrongly: it sizes the first allocation, and the buffer grows if the stream holds more.
        let claimed = Int(tactus_vorbis_frame_count(stream))
        var capacity = min(max(claimed, 4096), maximumFrameCount)
        var memory = UnsafeMutableRawPointer.allocate(byteCount: headerBytes + 2 * capacity, alignment: 16)
        var count = 0
        var holes = 0
        while count < maximumFrameCount {
            if count == capacity {
                let larger = min(capacity * 2, maximumFrameCount)
                let grown = UnsafeMutableRawPointer.allocate(byteCount: headerBytes + 2 * larger, alignment: 16)
                grown.copyMemory(from: memory, byteCount: headerBytes + 2 * count)
                memory.deallocate()
                memory = grown
                capacity = larger
            }
            let room = min(capacity - count, 1 << 20)
            let got = tactus_vorbis_read(stream, memory + headerBytes + 2 * count, Int32(2 * room))
            if got == -3, holes < 64 {
                // OV_HOLE: a gap in the data (a lost page); decoding goes on after it.
                holes += 1
                continue
            }
            guard got > 0 else { break }
            count += got / 2
        }
        guard count > 0 else {
            memory.deallocate()
            return .failure(.empty)
        }
        #if _endian(big)
        let points = (memory + headerBytes).assumingMemoryBound(to: Int16.self)
        for i in 0..<count { points[i] = Int16(littleEndian: points[i]) }
        #endif
        return .success((memory, count))
    }
}
