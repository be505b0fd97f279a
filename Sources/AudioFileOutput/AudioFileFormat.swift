import Foundation
import MIDIFile

/// The containers and encodings Tactus writes.
public enum AudioFileFormat: Sendable, Hashable, CustomStringConvertible {
    /// RIFF WAV, built in: 16/24-bit integer or 32-bit float.
    case wav(WAVSampleFormat)
    /// FLAC, lossless, 16 or 24-bit (through libsndfile).
    case flac(bitsPerSample: Int)
    /// Ogg Vorbis (through libsndfile).
    case vorbis
    /// Ogg Opus (through libsndfile; 48000 Hz only).
    case opus

    /// The file name extension for this format.
    public var fileExtension: String {
        switch self {
        case .wav: return "wav"
        case .flac: return "flac"
        case .vorbis: return "ogg"
        case .opus: return "opus"
        }
    }

    /// True when the format needs libsndfile.
    public var needsSndFile: Bool {
        if case .wav = self { return false }
        return true
    }

    public var description: String {
        switch self {
        case .wav(let sample): return "WAV \(sample.rawValue)"
        case .flac(let bits): return "FLAC \(bits)-bit"
        case .vorbis: return "Ogg Vorbis"
        case .opus: return "Ogg Opus"
        }
    }

    /// The spellings `--format` takes, comma-separated: a container and/or a sample encoding.
    public static let spellings = "wav, flac, ogg (Vorbis), opus, and s16, s24, f32"

    /// The format for `outputPath` and the `--format` text (`flac`, `s24`, `flac,s24`, ...):
    /// the container named in `spec`, else the output's extension (`.wav`, `.flac`, `.ogg`,
    /// `.oga`, `.opus`), else WAV; the sample encoding named in `spec`, else 16-bit. A file
    /// whose extension names another format (`x.mp3`, `x.mid`) is refused unless `spec` names
    /// the container; a name without an extension, a device or a descriptor gets WAV.
    public static func resolve(spec: String?, outputPath: String?) throws(AudioFileFormatError) -> AudioFileFormat {
        var container: String?
        var sample: WAVSampleFormat?
        for word in (spec ?? "").split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() })
        where !word.isEmpty {
            if let s = WAVSampleFormat(rawValue: word) {
                guard sample == nil else { throw .conflicting(spec ?? "") }
                sample = s
            } else if ["wav", "flac", "ogg", "vorbis", "opus"].contains(word) {
                guard container == nil else { throw .conflicting(spec ?? "") }
                container = word == "vorbis" ? "ogg" : word
            } else {
                throw .unknown(word)
            }
        }
        if container == nil, let outputPath {
            let suffix = URL(fileURLWithPath: outputPath).pathExtension.lowercased()
            switch suffix {
            case "flac": container = "flac"
            case "ogg", "oga": container = "ogg"
            case "opus": container = "opus"
            case "wav", "wave", "": container = "wav"
            default:
                // A device or descriptor has no name to honour; a file named for another
                // format must not silently receive WAV bytes.
                guard case .replace? = try? OutputDestination.resolve(outputPath) else {
                    container = "wav"
                    break
                }
                throw .unsupportedExtension(suffix)
            }
        }
        switch container ?? "wav" {
        case "flac":
            switch sample ?? .s16 {
            case .s16: return .flac(bitsPerSample: 16)
            case .s24: return .flac(bitsPerSample: 24)
            case .f32: throw .unsupportedSample("flac", "f32")
            }
        case "ogg", "opus":
            if let sample { throw .unsupportedSample(container!, sample.rawValue) }
            return container == "ogg" ? .vorbis : .opus
        default:
            return .wav(sample ?? .s16)
        }
    }

    /// Opens a writer of this format at `path` (`-` for standard output; see `OutputFile`).
    public func makeWriter(path: String, sampleRate: Int, channelCount: Int) throws(AudioSinkError) -> any AudioSink {
        switch self {
        case .wav(let sample):
            do {
                return try WAVWriter(path: path, sampleRate: sampleRate, channelCount: channelCount, format: sample)
            } catch {
                throw .wav(error)
            }
        default:
            do {
                return try SndFileWriter(path: path, format: self, sampleRate: sampleRate, channelCount: channelCount)
            } catch {
                throw .encoded(error)
            }
        }
    }
}

/// A `--format` text that names no format Tactus writes.
public enum AudioFileFormatError: Error, Equatable, CustomStringConvertible {
    /// A word that is neither a container nor a sample encoding.
    case unknown(String)
    /// Two containers or two sample encodings.
    case conflicting(String)
    /// A sample encoding the container cannot hold (container, encoding).
    case unsupportedSample(String, String)
    /// An output file extension that names no format Tactus writes (without the dot).
    case unsupportedExtension(String)

    public var description: String {
        switch self {
        case .unknown(let word): return "unknown format '\(word)' (use \(AudioFileFormat.spellings))"
        case .conflicting(let spec): return "format '\(spec)' names two containers or two sample encodings"
        case .unsupportedSample(let container, let sample): return "\(container) output cannot be \(sample)"
        case .unsupportedExtension(let suffix):
            return "Tactus does not write .\(suffix) files (it writes .wav, .flac, .ogg, .oga and .opus; or name one with --format)"
        }
    }
}
