import AudioFileOutput
import AudioTestSupport
import Foundation
import Testing

/// FLAC, Ogg Vorbis and Opus written in the test's own process through libsndfile's C calls,
/// in blocks of awkward sizes: what `tactus render -o x.flac` relies on, checked by the
/// reference decoders. In-process, so the AddressSanitizer stage covers the C calls too.
@Suite struct EncodedWriterTests {
    static func tool(_ name: String) -> String? { ExternalTools.path(name) }
    static let hasSndFile = ExternalTools.libraryLoads("libsndfile.so.1")

    /// Two seconds of two different sines with full-scale and beyond-full-scale edges at the
    /// start, so clamping and the last bit of each word are both exercised.
    static func signal(frames: Int, rate: Int) -> (left: [Float], right: [Float]) {
        var left = (0..<frames).map { Float(0.6 * sin(2 * Double.pi * 440 * Double($0) / Double(rate))) }
        var right = (0..<frames).map { Float(0.3 * sin(2 * Double.pi * 660 * Double($0) / Double(rate))) }
        let edges: [Float] = [1, -1, 1.5, -1.5, 0.999_999, -0.999_999, 1e-7, -1e-7]
        for (i, value) in edges.enumerated() {
            left[i] = value
            right[i] = -value
        }
        return (left, right)
    }

    /// Writes the signal through `format`'s writer in blocks of 1, 63, 1000 and 4096 frames.
    static func write(_ format: AudioFileFormat, to path: String, rate: Int, _ signal: (left: [Float], right: [Float])) throws {
        let writer = try format.makeWriter(path: path, sampleRate: rate, channelCount: 2)
        let sizes = [1, 63, 1_000, 4_096]
        var at = 0, block = 0
        try signal.left.withUnsafeBufferPointer { l in
            try signal.right.withUnsafeBufferPointer { r in
                while at < signal.left.count {
                    let count = min(sizes[block % sizes.count], signal.left.count - at)
                    try writer.write(left: l.baseAddress! + at, right: r.baseAddress! + at, count: count)
                    at += count
                    block += 1
                }
            }
        }
        try writer.finish()
    }

    func temporaryDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "tactus-encoded-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("FLAC at 16 and 24 bits passes flac -t and decodes to exactly the WAV writer's samples",
          .enabled(if: tool("flac") != nil && hasSndFile, "needs flac (Debian package flac) and libsndfile.so.1 (libsndfile1)"))
    func flacIsLossless() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let signal = Self.signal(frames: 88_200, rate: 44_100)
        for (bits, wavFormat) in [(16, WAVSampleFormat.s16), (24, .s24)] {
            let wav = "\(dir)/\(bits).wav", flac = "\(dir)/\(bits).flac", decoded = "\(dir)/\(bits)-decoded.wav"
            try Self.write(.wav(wavFormat), to: wav, rate: 44_100, signal)
            try Self.write(.flac(bitsPerSample: bits), to: flac, rate: 44_100, signal)
            #expect(try ExternalTools.run(Self.tool("flac")!, ["-t", "-s", flac]) == 0, "flac -t \(bits)-bit")
            #expect(try ExternalTools.run(Self.tool("flac")!, ["-d", "-s", "-f", "-o", decoded, flac]) == 0)
            let expected = try WAVChunks.samples(atPath: wav)
            #expect(expected.count == 88_200 * 2 * bits / 8)
            #expect(try WAVChunks.samples(atPath: decoded) == expected, "\(bits)-bit FLAC decodes to the WAV writer's samples")
        }
    }

    @Test("Ogg Vorbis decodes in oggdec to the signal's length; Opus at 48 kHz is an Ogg Opus stream",
          .enabled(if: tool("oggdec") != nil && hasSndFile, "needs oggdec (Debian package vorbis-tools) and libsndfile.so.1 (libsndfile1)"))
    func oggVorbisAndOpus() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let ogg = "\(dir)/a.ogg", decoded = "\(dir)/decoded.wav"
        try Self.write(.vorbis, to: ogg, rate: 44_100, Self.signal(frames: 44_100, rate: 44_100))
        #expect(try ExternalTools.run(Self.tool("oggdec")!, ["-Q", "-o", decoded, ogg]) == 0)
        #expect(try WAVChunks.samples(atPath: decoded).count == 44_100 * 2 * 2, "oggdec's 16-bit stereo output has every frame")

        let opus = "\(dir)/a.opus"
        try Self.write(.opus, to: opus, rate: 48_000, Self.signal(frames: 48_000, rate: 48_000))
        let head = try Data(contentsOf: URL(fileURLWithPath: opus)).prefix(64)
        #expect(head.prefix(4) == Data("OggS".utf8) && head.range(of: Data("OpusHead".utf8)) != nil)
    }
}
