import CSndFile
import SoundFont
#if canImport(Glibc)
import Glibc
#endif

/// Decodes a region's sample file: WAV with Tactus's own reader, anything else (FLAC, Ogg,
/// AIFF...) through libsndfile, loaded at run time. The loop and root key a file stores come
/// with its audio.
enum SFZSampleReader {
    /// `path` decoded, refusing more than `budget` bytes of sample memory (24-bit size, as
    /// `SoundFontBankBuilder.bytes(frames:channels:lowBytes:)` counts it). Errors carry no path.
    static func read(_ path: String, budget: Int) throws(PCMAudioError) -> PCMAudio {
        if path.lowercased().hasSuffix(".wav") {
            let audio = try PCMAudio.readWAV(contentsOf: path)
            try check(frames: audio.frameCount, channels: audio.channels.count, budget: budget)
            return audio
        }
        return try readWithSndFile(path, budget: budget)
    }

    static func check(frames: Int, channels: Int, budget: Int) throws(PCMAudioError) {
        let needed = SoundFontBankBuilder.bytes(frames: frames, channels: channels, lowBytes: true)
        guard needed <= budget else {
            throw PCMAudioError(reason: "\(frames) frames x \(channels) channels need \(needed) bytes of sample memory, "
                                + "over the \(max(0, budget)) bytes left of the limit (--sample-memory)")
        }
    }

    static func readWithSndFile(_ path: String, budget: Int) throws(PCMAudioError) -> PCMAudio {
        var message = [CChar](repeating: 0, count: 512)
        guard tactus_sndfile_load(&message, Int32(message.count)) == 0 else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw PCMAudioError(reason: "libsndfile.so.1 cannot be loaded (\(reason)); samples other than WAV need it: apt-get install libsndfile1")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            throw PCMAudioError(reason: errno == ENOENT ? "no such file" : "cannot open: \(String(cString: strerror(errno)))", isUnreadableInput: true)
        }
        // The descriptor stays ours (close_desc 0), closed once whether libsndfile opens it or not.
        defer { close(fd) }
        var info = tactus_SF_INFO()
        guard let file = tactus_sf_open_fd(fd, Int32(TACTUS_SFM_READ), &info, 0) else {
            throw PCMAudioError(reason: "not a sound file libsndfile reads (\(String(cString: tactus_sf_strerror(nil))))")
        }
        defer { _ = tactus_sf_close(file) }
        let channels = Int(info.channels)
        guard channels == 1 || channels == 2 else {
            throw PCMAudioError(reason: "\(channels) channels; only mono and stereo are supported")
        }
        guard info.samplerate > 0 else { throw PCMAudioError(reason: "sample rate 0") }
        let frames = Int(info.frames)
        try check(frames: frames, channels: channels, budget: budget)
        var decoded = [[Int32]](repeating: [], count: channels)
        for c in 0..<channels { decoded[c].reserveCapacity(frames) }
        var block = [Int32](repeating: 0, count: 4096 * channels)
        while true {
            let got = block.withUnsafeMutableBufferPointer { tactus_sf_readf_int(file, $0.baseAddress, 4096) }
            guard got > 0 else { break }
            for frame in 0..<Int(got) {
                // libsndfile scales every format to the full 32-bit range; the bank keeps 24.
                for c in 0..<channels { decoded[c].append(block[frame * channels + c] >> 8) }
            }
        }
        // FLAC and 24-bit files carry a low byte worth keeping; 16-bit sources come out with it zero.
        let hasLowBytes = decoded.contains { $0.contains { $0 & 0xFF != 0 } }
        var audio = PCMAudio(sampleRate: Int(info.samplerate), channels: decoded, hasLowBytes: hasLowBytes)
        var instrument = tactus_SF_INSTRUMENT()
        if tactus_sf_command(file, Int32(TACTUS_SFC_GET_INSTRUMENT), &instrument, Int32(MemoryLayout<tactus_SF_INSTRUMENT>.size))
            == Int32(TACTUS_SF_TRUE) {
            audio.rootKey = (0...127).contains(Int(instrument.basenote)) ? Int(instrument.basenote) : nil
            // libsndfile's loop end is one past the last frame played (sfizz subtracts one too).
            let first = instrument.loops.0
            if instrument.loop_count > 0, first.end > first.start {
                audio.loop = PCMLoop(start: Int(first.start), end: Int(first.end) - 1)
            }
        }
        return audio
    }
}
