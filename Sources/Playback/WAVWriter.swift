import Foundation

/// Sample encodings of a WAV file.
public enum WAVSampleFormat: String, Sendable, CaseIterable {
    /// 16-bit signed integer PCM.
    case s16
    /// 24-bit signed integer PCM.
    case s24
    /// 32-bit IEEE float.
    case f32

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
}

/// Streams audio into a WAV file (16/24-bit integer or 32-bit float, mono or stereo).
///
/// The data goes to a hidden temporary file next to the destination, which ``finish()``
/// completes and renames over the destination; until then (and after ``cancel()`` or an
/// error) the destination is untouched, so an interrupted render leaves no partial WAV.
public final class WAVWriter {
    /// The destination path.
    public let path: String
    /// The temporary file written until ``finish()``.
    public let temporaryPath: String
    /// Frames per second.
    public let sampleRate: Int
    /// 1 or 2.
    public let channelCount: Int
    /// Sample encoding.
    public let format: WAVSampleFormat
    /// Frames written so far.
    public private(set) var frameCount: Int64 = 0

    private var file: UnsafeMutablePointer<FILE>?
    private var bytes: [UInt8] = []
    private static let headerSize = 58 // RIFF + fmt (18-byte body) + fact + data headers

    /// Creates the temporary file and writes a header with placeholder sizes.
    public init(path: String, sampleRate: Int, channelCount: Int, format: WAVSampleFormat) throws {
        guard channelCount == 1 || channelCount == 2 else {
            throw WAVWriterError.unsupported("\(path): \(channelCount) channels; WAV output is mono or stereo")
        }
        guard sampleRate > 0 else { throw WAVWriterError.unsupported("\(path): sample rate must be positive") }
        self.path = path
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.format = format
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        temporaryPath = directory + "/." + url.lastPathComponent + ".partial-\(getpid())"
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw WAVWriterError.cannotCreate(path, "is a directory")
        }
        guard let f = fopen(temporaryPath, "wb") else {
            throw WAVWriterError.cannotCreate(path, String(cString: strerror(errno)))
        }
        file = f
        try writeHeader(dataBytes: 0)
    }

    deinit {
        if file != nil { cancel() }
    }

    private func header(dataBytes: UInt32) -> [UInt8] {
        var h: [UInt8] = []
        func u32(_ v: UInt32) { h += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        func u16(_ v: UInt16) { h += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        let blockAlign = channelCount * format.bytesPerSample
        h += Array("RIFF".utf8); u32(UInt32(Self.headerSize - 8) + dataBytes)
        h += Array("WAVE".utf8)
        h += Array("fmt ".utf8); u32(18)
        u16(format == .f32 ? 3 : 1)
        u16(UInt16(channelCount)); u32(UInt32(sampleRate)); u32(UInt32(sampleRate * blockAlign))
        u16(UInt16(blockAlign)); u16(UInt16(format.bytesPerSample * 8)); u16(0)
        // A fact chunk (frames per channel) is required for non-PCM data and harmless for PCM.
        h += Array("fact".utf8); u32(4); u32(UInt32(truncatingIfNeeded: frameCount))
        h += Array("data".utf8); u32(dataBytes)
        return h
    }

    private func writeHeader(dataBytes: UInt32) throws {
        let h = header(dataBytes: dataBytes)
        try put(h)
    }

    private func put(_ data: [UInt8]) throws {
        guard let file else { throw WAVWriterError.writeFailed(path, "file already closed") }
        let written = data.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        if written != data.count { throw WAVWriterError.writeFailed(path, String(cString: strerror(errno))) }
    }

    /// Appends `count` frames. Mono output is the average of the two channels; integer formats
    /// clamp to full scale and round half away from zero.
    public func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws {
        let bytesPerFrame = channelCount * format.bytesPerSample
        if Int64(Self.headerSize) + (frameCount + Int64(count)) * Int64(bytesPerFrame) > Int64(UInt32.max) {
            throw WAVWriterError.tooLarge(path)
        }
        let size = count * bytesPerFrame
        if bytes.count < size { bytes = [UInt8](repeating: 0, count: size) }
        bytes.withUnsafeMutableBytes { raw in
            var at = 0
            let format = self.format
            @inline(__always) func put(_ x: Float) {
                switch format {
                case .s16:
                    // Truncation after adding a signed half rounds without a libm call.
                    let y = min(max(x, -1), 1) * 32767
                    let u = UInt16(bitPattern: Int16(y + (y < 0 ? -0.5 : 0.5)))
                    raw[at] = UInt8(u & 0xFF); raw[at + 1] = UInt8(u >> 8)
                    at += 2
                case .s24:
                    let y = min(max(x, -1), 1) * 8_388_607
                    let u = UInt32(bitPattern: Int32(y + (y < 0 ? -0.5 : 0.5)))
                    raw[at] = UInt8(u & 0xFF); raw[at + 1] = UInt8(u >> 8 & 0xFF); raw[at + 2] = UInt8(u >> 16 & 0xFF)
                    at += 3
                case .f32:
                    let u = x.bitPattern
                    raw[at] = UInt8(u & 0xFF); raw[at + 1] = UInt8(u >> 8 & 0xFF)
                    raw[at + 2] = UInt8(u >> 16 & 0xFF); raw[at + 3] = UInt8(u >> 24)
                    at += 4
                }
            }
            for i in 0..<count {
                if channelCount == 2 {
                    put(left[i])
                    put(right[i])
                } else {
                    put((left[i] + right[i]) * 0.5)
                }
            }
        }
        guard let file else { throw WAVWriterError.writeFailed(path, "file already closed") }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, size, file) }
        if written != size { throw WAVWriterError.writeFailed(path, String(cString: strerror(errno))) }
        frameCount += Int64(count)
    }

    /// Completes the header, flushes to disk and renames the temporary file to ``path``.
    public func finish() throws {
        guard let f = file else { throw WAVWriterError.writeFailed(path, "file already closed") }
        let dataBytes = UInt32(frameCount * Int64(channelCount * format.bytesPerSample))
        do {
            if fseek(f, 0, SEEK_SET) != 0 { throw WAVWriterError.writeFailed(path, String(cString: strerror(errno))) }
            try writeHeader(dataBytes: dataBytes)
            if fflush(f) != 0 || fsync(fileno(f)) != 0 {
                throw WAVWriterError.writeFailed(path, String(cString: strerror(errno)))
            }
        } catch {
            cancel()
            throw error
        }
        fclose(f)
        file = nil
        if rename(temporaryPath, path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw WAVWriterError.cannotCreate(path, reason)
        }
    }

    /// Abandons the file: closes and deletes the temporary file; the destination is untouched.
    public func cancel() {
        if let f = file { fclose(f) }
        file = nil
        unlink(temporaryPath)
    }
}
