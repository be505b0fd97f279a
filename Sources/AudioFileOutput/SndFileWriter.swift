import CSndFile
import Foundation

/// libsndfile could not be loaded, or refused or failed to write an output.
public enum SndFileError: Error, Equatable, CustomStringConvertible {
    /// The shared library is missing (the loader's reason).
    case libraryMissing(String)
    /// libsndfile refused to open the output (path, reason).
    case cannotCreate(String, String)
    /// Writing or closing failed (path, reason).
    case writeFailed(String, String)

    public var description: String {
        switch self {
        case .libraryMissing(let reason):
            return "libsndfile.so.1 cannot be loaded (\(reason)); FLAC and Ogg output need it: apt-get install libsndfile1"
        case .cannotCreate(let path, let reason): return "\(path): cannot create: \(reason)"
        case .writeFailed(let path, let reason): return "\(path): write failed: \(reason)"
        }
    }
}

/// The run-time loaded libsndfile.
public enum SndFileLibrary {
    /// Loads libsndfile.so.1 (once); throws ``SndFileError/libraryMissing(_:)`` naming the
    /// Debian package when it is not installed.
    public static func load() throws(SndFileError) {
        var message = [CChar](repeating: 0, count: 512)
        if tactus_sndfile_load(&message, Int32(message.count)) != 0 {
            throw .libraryMissing(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    /// True when libsndfile can be loaded.
    public static var isAvailable: Bool { (try? load()) != nil }
}

/// Streams audio into FLAC, Ogg Vorbis or Ogg Opus through libsndfile, with the same output
/// rules as `WAVWriter` (temporary file renamed when complete, devices written in place, `-`
/// for standard output).
///
/// FLAC samples are quantized by Tactus exactly as the WAV writer does (clamped, rounded half
/// away from zero) and handed over as integers, so a FLAC file decodes to the very samples of
/// the WAV file of the same render.
public final class SndFileWriter: AudioSink {
    /// The destination path.
    public let path: String
    /// The encoding.
    public let format: AudioFileFormat
    /// 1 or 2.
    public let channelCount: Int
    /// Frames written so far.
    public private(set) var frameCount: Int64 = 0

    private let output: OutputFile
    private var file: OpaquePointer?
    private var scratchDescriptor: Int32 = -1
    private var integers: [Int32] = []
    private var floats: [Float] = []

    /// Opens the output: throws ``SndFileError`` when libsndfile is missing or refuses the
    /// format, or the output cannot be created.
    public init(path: String, format: AudioFileFormat, sampleRate: Int, channelCount: Int) throws(SndFileError) {
        try SndFileLibrary.load()
        guard channelCount == 1 || channelCount == 2 else {
            throw .cannotCreate(path, "\(channelCount) channels; output is mono or stereo")
        }
        var info = tactus_SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channelCount)
        switch format {
        case .flac(let bits):
            info.format = Int32(TACTUS_SF_FORMAT_FLAC) | Int32(bits == 24 ? TACTUS_SF_FORMAT_PCM_24 : TACTUS_SF_FORMAT_PCM_16)
        case .vorbis:
            info.format = Int32(TACTUS_SF_FORMAT_OGG) | Int32(TACTUS_SF_FORMAT_VORBIS)
        case .opus:
            guard sampleRate == 48_000 else {
                throw .cannotCreate(path, "Opus output needs --sample-rate 48000")
            }
            info.format = Int32(TACTUS_SF_FORMAT_OGG) | Int32(TACTUS_SF_FORMAT_OPUS)
        case .wav:
            throw .cannotCreate(path, "WAV is written by WAVWriter")
        }
        guard tactus_sf_format_check(&info) != 0 else {
            throw .cannotCreate(path, "libsndfile cannot write \(format) at \(sampleRate) Hz")
        }
        self.path = path
        self.format = format
        self.channelCount = channelCount
        do {
            output = try OutputFile(path: path)
        } catch {
            switch error {
            case .cannotCreate(_, let reason), .writeFailed(_, let reason): throw .cannotCreate(path, reason)
            }
        }
        // The encoders seek back to complete their headers (FLAC's STREAMINFO), which a pipe or
        // terminal cannot do: there they encode into an unlinked scratch file that is copied to
        // the output once complete.
        var encodeInto = output.descriptor
        if !output.isSeekable {
            var template = Array((NSTemporaryDirectory() + "/tactus-encode-XXXXXX").utf8CString)
            let scratch = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard scratch >= 0 else {
                let reason = String(cString: strerror(errno))
                output.abandon()
                throw .cannotCreate(path, "no scratch file for encoding to a stream: \(reason)")
            }
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            scratchDescriptor = scratch
            encodeInto = scratch
        }
        guard let opened = tactus_sf_open_fd(encodeInto, Int32(TACTUS_SFM_WRITE), &info, 0) else {
            let reason = String(cString: tactus_sf_strerror(nil))
            if scratchDescriptor >= 0 { close(scratchDescriptor) }
            output.abandon()
            throw .cannotCreate(path, reason)
        }
        file = opened
        if case .flac = format {
            // A fixed level, so the bytes do not change with libsndfile's default.
            var level = 0.5
            _ = tactus_sf_command(opened, Int32(TACTUS_SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size))
        }
    }

    deinit {
        if file != nil { cancel() }
    }

    /// Appends `count` frames (mono is the average of the channels).
    public func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(AudioSinkError) {
        guard let file else { throw .encoded(.writeFailed(path, "already closed")) }
        let samples = count * channelCount
        let written: Int64
        switch format {
        case .flac(let bits):
            // libsndfile takes ints as 32-bit full scale and keeps the top bits.
            let shift: Int32 = bits == 24 ? 8 : 16
            if integers.count < samples { integers = [Int32](repeating: 0, count: samples) }
            integers.withUnsafeMutableBufferPointer { out in
                for i in 0..<count {
                    if channelCount == 2 {
                        out[2 * i] = quantize(left[i], bits) << shift
                        out[2 * i + 1] = quantize(right[i], bits) << shift
                    } else {
                        out[i] = quantize((left[i] + right[i]) * 0.5, bits) << shift
                    }
                }
            }
            written = integers.withUnsafeBufferPointer { tactus_sf_writef_int(file, $0.baseAddress, Int64(count)) }
        default:
            if floats.count < samples { floats = [Float](repeating: 0, count: samples) }
            floats.withUnsafeMutableBufferPointer { out in
                for i in 0..<count {
                    if channelCount == 2 {
                        out[2 * i] = left[i]
                        out[2 * i + 1] = right[i]
                    } else {
                        out[i] = (left[i] + right[i]) * 0.5
                    }
                }
            }
            written = floats.withUnsafeBufferPointer { tactus_sf_writef_float(file, $0.baseAddress, Int64(count)) }
        }
        guard written == Int64(count) else {
            throw .encoded(.writeFailed(path, String(cString: tactus_sf_strerror(file))))
        }
        frameCount += Int64(count)
    }

    @inline(__always)
    private func quantize(_ x: Float, _ bits: Int) -> Int32 {
        bits == 24 ? WAVSampleFormat.pcm24(x) : Int32(WAVSampleFormat.pcm16(x))
    }

    /// Closes the encoder (writing its final headers) and completes the output.
    public func finish() throws(AudioSinkError) {
        guard let file else { throw .encoded(.writeFailed(path, "already closed")) }
        self.file = nil
        let status = tactus_sf_close(file)
        guard status == 0 else {
            output.abandon()
            throw .encoded(.writeFailed(path, "libsndfile error \(status)"))
        }
        do {
            if scratchDescriptor >= 0 {
                defer { close(scratchDescriptor); scratchDescriptor = -1 }
                try copyScratchToOutput()
            }
            try commitOutput()
        } catch {
            output.abandon()
            throw .encoded(error)
        }
    }

    private func commitOutput() throws(SndFileError) {
        do {
            try output.commit()
        } catch {
            switch error {
            case .cannotCreate(_, let reason), .writeFailed(_, let reason): throw .writeFailed(path, reason)
            }
        }
    }

    private func copyScratchToOutput() throws(SndFileError) {
        guard lseek(scratchDescriptor, 0, SEEK_SET) == 0 else {
            throw .writeFailed(path, String(cString: strerror(errno)))
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(scratchDescriptor, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .writeFailed(path, String(cString: strerror(errno)))
            }
            if n == 0 { return }
            let output = self.output
            let copied: Result<Void, OutputFileError> = buffer.withUnsafeBytes { bytes in
                Result { () throws(OutputFileError) in try output.write(UnsafeRawBufferPointer(rebasing: bytes[0..<n])) }
            }
            if case .failure(.cannotCreate(_, let reason)) = copied { throw .writeFailed(path, reason) }
            if case .failure(.writeFailed(_, let reason)) = copied { throw .writeFailed(path, reason) }
        }
    }

    /// Abandons the output: nothing appears under the final name.
    public func cancel() {
        if let file { _ = tactus_sf_close(file) }
        file = nil
        if scratchDescriptor >= 0 { close(scratchDescriptor) }
        scratchDescriptor = -1
        output.abandon()
    }
}
