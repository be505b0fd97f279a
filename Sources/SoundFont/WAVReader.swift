#if canImport(Glibc)
import Glibc
#endif

/// Audio read from a WAV file: every channel as 24-bit integers (-8,388,608...8,388,607).
struct WAVAudio {
    var sampleRate: Int
    /// One array per channel (1 or 2), all of the same length.
    var channels: [[Int32]]
    /// True when the file held more than 16 bits per sample, so the low byte matters.
    var hasLowBytes: Bool
    /// The first loop of the `smpl` chunk (first and last frame, both played), if any.
    var loop: (start: Int, end: Int)?
    /// The `smpl` chunk's unity note (0-127), if any.
    var rootKey: Int?

    var frameCount: Int { channels.first?.count ?? 0 }
}

/// Why a WAV file cannot be used (without the path, which the caller adds).
struct WAVProblem: Error {
    var reason: String
    var isUnreadableInput = false
}

/// Reads RIFF WAVE files: PCM 8, 16, 24 and 32-bit integer and 32-bit float
/// (`WAVE_FORMAT_EXTENSIBLE` too), mono or stereo, and the sampler chunk (`smpl`: unity note
/// and first loop). Other chunks are skipped; a `data` chunk cut short by the end of the file
/// gives the whole frames present.
enum WAVReader {
    static func read(contentsOf path: String) throws(WAVProblem) -> WAVAudio {
        try read(readWholeFile(path))
    }

    static func read(_ bytes: [UInt8]) throws(WAVProblem) -> WAVAudio {
        let result: Result<WAVAudio, WAVProblem> = bytes.withUnsafeBytes { raw in
            Result { () throws(WAVProblem) in try read(raw) }
        }
        return try result.get()
    }

    static func read(_ b: UnsafeRawBufferPointer) throws(WAVProblem) -> WAVAudio {
        guard b.count >= 12, b[0] == 0x52, b[1] == 0x49, b[2] == 0x46, b[3] == 0x46,
              b[8] == 0x57, b[9] == 0x41, b[10] == 0x56, b[11] == 0x45 else {
            throw WAVProblem(reason: "not a WAV file (no RIFF WAVE header)")
        }
        var format: (tag: Int, channels: Int, rate: Int, blockAlign: Int, bits: Int)?
        var data: Range<Int>?
        var sampler: (loop: (start: Int, end: Int)?, rootKey: Int?)?
        var offset = 12
        while offset + 8 <= b.count {
            let id = String(decoding: UnsafeRawBufferPointer(rebasing: b[offset..<offset + 4]), as: UTF8.self)
            let size = b.u32le(offset + 4)
            let start = offset + 8
            let end = min(b.count, start + size)
            if id == "fmt " {
                guard end - start >= 16 else { throw WAVProblem(reason: "fmt chunk of \(end - start) bytes is too short") }
                var tag = b.u16le(start)
                if tag == 0xFFFE {
                    guard end - start >= 26 else { throw WAVProblem(reason: "extensible fmt chunk of \(end - start) bytes is too short") }
                    tag = b.u16le(start + 24)
                }
                format = (tag, b.u16le(start + 2), b.u32le(start + 4), b.u16le(start + 12), b.u16le(start + 14))
            } else if id == "data" {
                data = start..<end
            } else if id == "smpl", end - start >= 36 {
                // The manufacturer-neutral sampler chunk: unity note at 12, loop count at 28,
                // 24-byte loops from 36 whose start and end (at 8 and 12) are both played.
                let unity = b.u32le(start + 12)
                let loopCount = b.u32le(start + 28)
                var loop: (start: Int, end: Int)?
                if loopCount > 0, end - start >= 36 + 24 {
                    let first = b.u32le(start + 36 + 8), last = b.u32le(start + 36 + 12)
                    if first <= last { loop = (first, last) }
                }
                sampler = (loop, unity <= 127 ? unity : nil)
            }
            offset = start + size + (size & 1)
        }
        guard let format else { throw WAVProblem(reason: "no fmt chunk") }
        guard let data else { throw WAVProblem(reason: "no data chunk") }
        let supported = "16, 24 or 32-bit integer PCM, 32-bit float or 8-bit PCM"
        guard format.channels == 1 || format.channels == 2 else {
            throw WAVProblem(reason: "\(format.channels) channels; only mono and stereo are supported")
        }
        let bytesPerSample: Int
        switch (format.tag, format.bits) {
        case (1, 8), (1, 16), (1, 24), (1, 32), (3, 32): bytesPerSample = format.bits / 8
        case (3, let bits): throw WAVProblem(reason: "\(bits)-bit float samples; \(supported) is supported")
        case (1, let bits): throw WAVProblem(reason: "\(bits)-bit integer samples; \(supported) is supported")
        default: throw WAVProblem(reason: "sample format \(format.tag) is not PCM; \(supported) is supported")
        }
        guard format.blockAlign == bytesPerSample * format.channels else {
            throw WAVProblem(reason: "block size \(format.blockAlign) does not match \(format.channels) channel(s) of \(format.bits) bits")
        }
        guard format.rate > 0 else { throw WAVProblem(reason: "sample rate 0") }
        let frames = data.count / format.blockAlign
        var channels = [[Int32]](repeating: [], count: format.channels)
        for c in 0..<format.channels { channels[c].reserveCapacity(frames) }
        for frame in 0..<frames {
            for c in 0..<format.channels {
                let at = data.lowerBound + frame * format.blockAlign + c * bytesPerSample
                let value: Int32
                switch (format.tag, bytesPerSample) {
                case (1, 1): value = (Int32(b[at]) - 128) << 16
                case (1, 2): value = Int32(Int16(bitPattern: UInt16(b.u16le(at)))) << 8
                case (1, 3): value = Int32(bitPattern: UInt32(b.u16le(at) | Int(b[at + 2]) << 16) << 8) >> 8
                case (1, _): value = Int32(bitPattern: UInt32(b.u32le(at))) >> 8
                default:
                    let float = Float(bitPattern: UInt32(b.u32le(at)))
                    let scaled = (float.isNaN ? 0 : float) * 8_388_608
                    value = Int32(max(-8_388_608, min(8_388_607, scaled.rounded())))
                }
                channels[c].append(value)
            }
        }
        return WAVAudio(sampleRate: format.rate, channels: channels, hasLowBytes: format.bits > 16,
                        loop: sampler?.loop, rootKey: sampler?.rootKey)
    }
}

/// The whole content of a file, or why it cannot be read.
func readWholeFile(_ path: String) throws(WAVProblem) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else {
        throw WAVProblem(reason: errno == ENOENT ? "no such file" : "cannot open: \(String(cString: strerror(errno)))", isUnreadableInput: true)
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
        throw WAVProblem(reason: "not a regular file", isUnreadableInput: true)
    }
    // Patches and their samples are small next to banks; 1 GiB keeps a mistake from eating memory.
    guard info.st_size <= 1 << 30 else { throw WAVProblem(reason: "file is \(info.st_size) bytes, more than the 1 GiB allowed") }
    var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
    var filled = 0
    while filled < bytes.count {
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else {
            if n == 0 { break }
            throw WAVProblem(reason: "cannot read: \(String(cString: strerror(errno)))", isUnreadableInput: true)
        }
        filled += n
    }
    return Array(bytes[0..<filled])
}
