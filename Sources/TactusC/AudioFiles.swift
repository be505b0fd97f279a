import AudioFileOutput

/// Writes `frames` frames of float samples (`channels` 1, or 2 interleaved left and right) to
/// `path` as `tactus render -o PATH --format FORMAT` writes its output: `format` is the CLI's
/// `--format` text (`s24`, `flac`, `flac,s24`, `ogg`, `opus`...) or NULL to go by the path's
/// extension (WAV s16 without one). The file goes through a temporary renamed into place.
/// `sample_rate` is 44100, 48000 or 96000 (Ogg Opus: 48000). A format Tactus does not write
/// is `TACTUS_ERROR_INVALID_ARGUMENT`; FLAC, Ogg and Opus need libsndfile at run time
/// (`TACTUS_ERROR_WRITE_FAILED` naming it when missing), as does any failure to write.
@_cdecl("tactus_write_audio")
public func tactus_write_audio(_ samples: UnsafePointer<Float>?, _ frames: Int64, _ channels: Int32, _ sampleRate: Int32,
                               _ path: UnsafePointer<CChar>?, _ format: UnsafePointer<CChar>?) -> Int32 {
    guarded { () throws(CFailure) in
        let count = try checkedCount(frames, "the frame count")
        guard channels == 1 || channels == 2 else { throw CFailure(.invalidArgument, "\(channels) channels: the audio must be mono or stereo") }
        try RenderRequest.checkSampleRate(sampleRate)
        guard let path else { throw CFailure(.invalidArgument, "the path is NULL") }
        guard count == 0 || samples != nil else { throw CFailure(.invalidArgument, "the sample pointer is NULL") }
        let output = String(cString: path)
        let audioFormat: AudioFileFormat
        do throws(AudioFileFormatError) {
            audioFormat = try AudioFileFormat.resolve(spec: format.map { String(cString: $0) }, outputPath: output)
        } catch {
            throw CFailure(.invalidArgument, "\(output): \(error)")
        }
        if audioFormat == .opus && sampleRate != 48_000 {
            throw CFailure(.invalidArgument, "\(output): Ogg Opus is written at 48000 Hz only, not \(sampleRate)")
        }
        if audioFormat.needsSndFile {
            do throws(SndFileError) {
                try SndFileLibrary.load()
            } catch {
                throw CFailure(.writeFailed, "\(output): \(error)")
            }
        }
        let writer: any AudioSink
        do throws(AudioSinkError) {
            writer = try audioFormat.makeWriter(path: output, sampleRate: Int(sampleRate), channelCount: Int(channels))
        } catch {
            throw CFailure(.writeFailed, "\(error)")
        }
        // Blocks of split channels, as a render hands them to the writer.
        let block = 4096
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block), right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer {
            left.deallocate()
            right.deallocate()
        }
        do throws(AudioSinkError) {
            var done = 0
            while done < count, let samples {
                let n = min(block, count - done)
                for i in 0..<n {
                    if channels == 2 {
                        left[i] = samples[2 * (done + i)]
                        right[i] = samples[2 * (done + i) + 1]
                    } else {
                        left[i] = samples[done + i]
                        right[i] = samples[done + i]
                    }
                }
                try writer.write(left: left, right: right, count: n)
                done += n
            }
            try writer.finish()
        } catch {
            writer.cancel()
            throw CFailure(.writeFailed, "\(error)")
        }
    }
}
