import Foundation

/// Sample encodings of a WAV file.
public enum WAVSampleFormat: String, Sendable, CaseIterable {
    /// 16-bit signed integer PCM.
    case s16
    /// 24-bit signed integer PCM.
    case s24
    /// 32-bit IEEE float.
    case f32

    /// `x` as a 16-bit sample: clamped to full scale, rounded half away from zero.
    @inline(__always)
    public static func pcm16(_ x: Float) -> Int16 {
        // Truncation after adding a signed half rounds without a libm call.
        let y = min(max(x, -1), 1) * 32767
        return Int16(y + (y < 0 ? -0.5 : 0.5))
    }

    /// Four samples as the one-sample `pcm16` gives each, in 32-bit lanes (sign-extended),
    /// without a conversion call per lane: values of that size round exactly through 1.5 x 2²³.
    @inline(__always)
    static func pcm16(_ x: SIMD4<Float>) -> SIMD4<Int32> {
        var clamped = x
        clamped.replace(with: -1, where: clamped .< -1)
        clamped.replace(with: 1, where: clamped .> 1)
        let y = clamped * 32767
        let t = y + SIMD4<Float>(repeating: 0.5).replacing(with: -0.5, where: y .< 0)
        // Rounded to the nearest integer by the magic constant, then moved one toward zero
        // where that rounded away from it: truncation, as Int16(_:) does.
        let magic = SIMD4<Float>(repeating: 12_582_912)
        var whole = (t + magic) - magic
        whole.replace(with: whole - 1, where: (t .>= 0) .& (whole .> t))
        whole.replace(with: whole + 1, where: (t .< 0) .& (whole .< t))
        return unsafeBitCast(whole + magic, to: SIMD4<Int32>.self) &- unsafeBitCast(magic, to: SIMD4<Int32>.self)
    }

    /// `x` as a 24-bit sample (in the low 24 bits): clamped, rounded half away from zero.
    @inline(__always)
    public static func pcm24(_ x: Float) -> Int32 {
        let y = min(max(x, -1), 1) * 8_388_607
        return Int32(y + (y < 0 ? -0.5 : 0.5))
    }

    /// Bytes per sample.
    public var bytesPerSample: Int {
        switch self {
        case .s16: return 2
        case .s24: return 3
        case .f32: return 4
        }
    }
}

/// Why a WAV file could not be written.
public enum WAVWriterError: Error, Equatable, CustomStringConvertible {
    /// The file could not be created (path, reason).
    case cannotCreate(String, String)
    /// Writing failed part way (path, reason).
    case writeFailed(String, String)
    /// More data than a RIFF file can hold (4 GiB).
    case tooLarge(String)
    /// Sample rate or channel count not supported.
    case unsupported(String)

    public var description: String {
        switch self {
        case .cannotCreate(let path, let reason): return "\(path): cannot create: \(reason)"
        case .writeFailed(let path, let reason): return "\(path): write failed: \(reason)"
        case .tooLarge(let path): return "\(path): the audio exceeds the 4 GiB a WAV file can hold"
        case .unsupported(let message): return message
        }
    }

    init(_ error: OutputFileError) {
        switch error {
        case .cannotCreate(let path, let reason): self = .cannotCreate(path, reason)
        case .writeFailed(let path, let reason): self = .writeFailed(path, reason)
        }
    }
}

/// Streams audio into a WAV file (16/24-bit integer or 32-bit float, mono or stereo).
///
/// The data goes to a hidden temporary file next to the destination, which ``finish()``
/// completes and renames over the destination; until then (and after ``cancel()`` or an
/// error) the destination is untouched, so an interrupted render leaves no partial WAV.
/// An existing destination that is not a regular file (`/dev/null`, a FIFO, a terminal) is
/// written in place, and `-` is standard output (see ``OutputFile``); when the output cannot
/// seek, the header is a streaming one (RIFF and data sizes 0xFFFFFFFF, "until the end"), as
/// sox and ffmpeg write and read on pipes.
public final class WAVWriter: AudioSink {
    /// The destination path.
    public let path: String
    /// The file written until ``finish()``: the temporary file, or the destination itself when
    /// it is written in place.
    public var temporaryPath: String { output.temporaryPath ?? path }
    /// Frames per second.
    public let sampleRate: Int
    /// 1 or 2.
    public let channelCount: Int
    /// Sample encoding.
    public let format: WAVSampleFormat
    /// Frames written so far.
    public private(set) var frameCount: Int64 = 0

    private let output: OutputFile
    private var isOpen = true
    private var pending: [UInt8] = []
    private static let headerSize = 58 // RIFF + fmt (18-byte body) + fact + data headers
    private static let flushSize = 1 << 16

    /// Opens the output and writes a header with placeholder sizes.
    public init(path: String, sampleRate: Int, channelCount: Int, format: WAVSampleFormat) throws(WAVWriterError) {
        guard channelCount == 1 || channelCount == 2 else {
            throw .unsupported("\(path): \(channelCount) channels; WAV output is mono or stereo")
        }
        guard sampleRate > 0 else { throw .unsupported("\(path): sample rate must be positive") }
        self.path = path
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.format = format
        do {
            output = try OutputFile(path: path)
        } catch {
            throw WAVWriterError(error)
        }
        pending.reserveCapacity(Self.flushSize + 4096)
        pending += header(dataBytes: output.isSeekable ? 0 : nil)
    }

    deinit {
        if isOpen { cancel() }
    }

    /// The header for `dataBytes` of samples; nil for a streaming header of unknown length.
    private func header(dataBytes: UInt32?) -> [UInt8] {
        var h: [UInt8] = []
        func u32(_ v: UInt32) { h += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        func u16(_ v: UInt16) { h += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        let blockAlign = channelCount * format.bytesPerSample
        h += Array("RIFF".utf8); u32(dataBytes.map { UInt32(Self.headerSize - 8) + $0 } ?? UInt32.max)
        h += Array("WAVE".utf8)
        h += Array("fmt ".utf8); u32(18)
        u16(format == .f32 ? 3 : 1)
        u16(UInt16(channelCount)); u32(UInt32(sampleRate)); u32(UInt32(sampleRate * blockAlign))
        u16(UInt16(blockAlign)); u16(UInt16(format.bytesPerSample * 8)); u16(0)
        // A fact chunk (frames per channel) is required for non-PCM data and harmless for PCM.
        h += Array("fact".utf8); u32(4); u32(dataBytes == nil ? UInt32.max : UInt32(truncatingIfNeeded: frameCount))
        h += Array("data".utf8); u32(dataBytes ?? UInt32.max)
        return h
    }

    private func flushPending() throws(WAVWriterError) {
        guard !pending.isEmpty else { return }
        let output = self.output
        let written: Result<Void, OutputFileError> = pending.withUnsafeBytes { bytes in
            Result { () throws(OutputFileError) in try output.write(bytes) }
        }
        if case .failure(let error) = written { throw WAVWriterError(error) }
        pending.removeAll(keepingCapacity: true)
    }

    /// Appends `count` frames. Mono output is the average of the two channels; integer formats
    /// clamp to full scale and round half away from zero.
    public func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(AudioSinkError) {
        do {
            try writeFrames(left: left, right: right, count: count)
        } catch {
            throw .wav(error)
        }
    }

    private func writeFrames(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(WAVWriterError) {
        guard isOpen else { throw .writeFailed(path, "file already closed") }
        let bytesPerFrame = channelCount * format.bytesPerSample
        if output.isSeekable,
           Int64(Self.headerSize) + (frameCount + Int64(count)) * Int64(bytesPerFrame) > Int64(UInt32.max) {
            throw .tooLarge(path)
        }
        let format = self.format, stereo = channelCount == 2
        let channels = stereo ? 2 : 1
        // Frames are encoded straight into the pending bytes, one access a stretch: appended
        // byte by byte, each append paid the array's exclusivity and capacity checks. A
        // stretch never outgrows the reserved capacity, so writing never allocates (the
        // offline render thread calls this).
        var done = 0
        while done < count {
            let room = (pending.capacity - pending.count) / bytesPerFrame
            if room == 0 {
                if pending.isEmpty { pending.reserveCapacity(Self.flushSize + 4096) } else { try flushPending() }
                continue
            }
            let n = min(room, count - done)
            let start = pending.count
            pending.append(contentsOf: repeatElement(0, count: n * bytesPerFrame))
            pending.withUnsafeMutableBytes { raw in
                let bytes = raw.baseAddress! + start
                if format == .s16 && stereo {
                    // What nearly every render writes, in a loop of its own: the general one
                    // below decides the format and the channel on every sample.
                    var i = 0
                    #if _endian(little)
                    while i &+ 4 <= n {
                        let l = WAVSampleFormat.pcm16(UnsafeRawPointer(left + done + i).loadUnaligned(as: SIMD4<Float>.self))
                        let r = WAVSampleFormat.pcm16(UnsafeRawPointer(right + done + i).loadUnaligned(as: SIMD4<Float>.self))
                        // Frame k as one 32-bit word: left in the low half, right in the high.
                        let frames = (unsafeBitCast(l, to: SIMD4<UInt32>.self) & 0xFFFF) | (unsafeBitCast(r, to: SIMD4<UInt32>.self) &<< 16)
                        bytes.storeBytes(of: frames, toByteOffset: 4 &* i, as: SIMD4<UInt32>.self)
                        i &+= 4
                    }
                    #endif
                    while i < n {
                        bytes.storeBytes(of: WAVSampleFormat.pcm16(left[done + i]).littleEndian, toByteOffset: 4 * i, as: Int16.self)
                        bytes.storeBytes(of: WAVSampleFormat.pcm16(right[done + i]).littleEndian, toByteOffset: 4 * i + 2, as: Int16.self)
                        i += 1
                    }
                    return
                }
                var offset = 0
                for i in done..<done + n {
                    for channel in 0..<channels {
                        let x = stereo ? (channel == 0 ? left[i] : right[i]) : (left[i] + right[i]) * 0.5
                        switch format {
                        case .s16:
                            bytes.storeBytes(of: WAVSampleFormat.pcm16(x).littleEndian, toByteOffset: offset, as: Int16.self)
                            offset += 2
                        case .s24:
                            let u = UInt32(bitPattern: WAVSampleFormat.pcm24(x))
                            bytes.storeBytes(of: UInt8(u & 0xFF), toByteOffset: offset, as: UInt8.self)
                            bytes.storeBytes(of: UInt8(u >> 8 & 0xFF), toByteOffset: offset + 1, as: UInt8.self)
                            bytes.storeBytes(of: UInt8(u >> 16 & 0xFF), toByteOffset: offset + 2, as: UInt8.self)
                            offset += 3
                        case .f32:
                            bytes.storeBytes(of: x.bitPattern.littleEndian, toByteOffset: offset, as: UInt32.self)
                            offset += 4
                        }
                    }
                }
            }
            done += n
            if pending.count >= Self.flushSize { try flushPending() }
        }
        frameCount += Int64(count)
    }

    /// Completes the header (when the output can seek), flushes to disk and renames the
    /// temporary file to ``path``.
    public func finish() throws(AudioSinkError) {
        guard isOpen else { throw .wav(.writeFailed(path, "file already closed")) }
        do {
            try completeHeaderAndCommit()
            isOpen = false
        } catch {
            cancel()
            throw .wav(error)
        }
    }

    private func completeHeaderAndCommit() throws(WAVWriterError) {
        try flushPending()
        if output.isSeekable {
            let dataBytes = UInt32(frameCount * Int64(channelCount * format.bytesPerSample))
            if lseek(output.descriptor, 0, SEEK_SET) < 0 {
                throw .writeFailed(path, String(cString: strerror(errno)))
            }
            pending = header(dataBytes: dataBytes)
            try flushPending()
        }
        do {
            try output.commit()
        } catch {
            throw WAVWriterError(error)
        }
    }

    /// Abandons the file: closes and deletes the temporary file; the destination is untouched.
    public func cancel() {
        isOpen = false
        output.abandon()
    }
}
