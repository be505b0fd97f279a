/// Something that takes rendered audio and turns it into a complete output: a file writer,
/// memory, or a wrapper that measures or limits what passes through.
public protocol AudioSink: AnyObject {
    /// Appends `count` frames of the two channels.
    func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(AudioSinkError)
    /// Completes the output under its final name.
    func finish() throws(AudioSinkError)
    /// Abandons the output: nothing appears under the final name.
    func cancel()
}

/// Why an ``AudioSink`` could not take or complete its audio, with the writer's own error as
/// the cause, so a caller can tell a full disk from an unsupported format without reading text.
public enum AudioSinkError: Error, Equatable, CustomStringConvertible {
    /// The WAV writer failed.
    case wav(WAVWriterError)
    /// The libsndfile writer (FLAC, Ogg Vorbis, Opus) failed.
    case encoded(SndFileError)
    /// A sink of the caller's own failed: the output's name and why.
    case failed(output: String, reason: String)

    /// The cause's one-line message, which names the output once.
    public var description: String {
        switch self {
        case .wav(let error): return error.description
        case .encoded(let error): return error.description
        case .failed(let output, let reason): return "\(output): \(reason)"
        }
    }
}
