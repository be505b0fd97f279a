import AudioTestSupport
import Foundation
import SoundFont
import Testing

/// oggenc and oggdec (Debian package vorbis-tools) make and independently decode the test
/// banks' Ogg Vorbis streams.
let vorbisToolsAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/oggenc")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/oggdec")

/// Runs a tool and waits for it.
@discardableResult
func runTool(_ path: String, _ arguments: [String]) throws -> Int32 { try ExternalTools.run(path, arguments) }

/// Encodes 16-bit mono points with oggenc; returns the stream and oggdec's decoding of it
/// (oggdec writes what libvorbisfile's ov_read gives).
func vorbisRoundTrip(_ points: [Int16], rate: Int) throws -> (stream: [UInt8], decoded: [Int16]) {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-sf3-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let raw = dir.appendingPathComponent("in.raw"), ogg = dir.appendingPathComponent("out.ogg"), back = dir.appendingPathComponent("back.raw")
    try Data(points.flatMap { le16(UInt16(bitPattern: $0)) }).write(to: raw)
    try #require(try runTool("/usr/bin/oggenc", ["--quiet", "--raw", "--raw-bits=16", "--raw-chan=1", "--raw-rate=\(rate)",
                                                  "--raw-endianness", "0", "-q", "4", "-o", ogg.path, raw.path]) == 0)
    try #require(try runTool("/usr/bin/oggdec", ["--quiet", "--raw", "--bits", "16", "--endianness", "0", "--sign", "1",
                                                  "-o", back.path, ogg.path]) == 0)
    let decodedBytes = [UInt8](try Data(contentsOf: back))
    let decoded = stride(from: 0, to: decodedBytes.count - 1, by: 2).map {
        Int16(bitPattern: UInt16(decodedBytes[$0]) | UInt16(decodedBytes[$0 + 1]) << 8)
    }
    return ([UInt8](try Data(contentsOf: ogg)), decoded)
}

@Suite struct SoundFont3Tests {
    typealias W = SF2Writer

    /// Two samples, a sine and a ramp, each with its own preset (0:0 and 0:1).
    func twoSampleWriter(streams: [[UInt8]]) -> W {
        var writer = W()
        writer.version = (3, 1)
        writer.samples = [W.Sample(name: "sine", points: W.sinePoints(4410), loop: (100, 4000)),
                          W.Sample(name: "ramp", points: (0..<3000).map { Int16($0 * 8 - 12_000) }, loop: nil)]
        writer.instruments = [W.Instrument(name: "Sine", zones: [W.Zone([W.sample(0)])]),
                              W.Instrument(name: "Ramp", zones: [W.Zone([W.sample(1)])])]
        writer.presets = [W.Preset(name: "Sine", program: 0, zones: [W.Zone([W.instrument(0)])]),
                          W.Preset(name: "Ramp", program: 1, zones: [W.Zone([W.instrument(1)])])]
        writer.vorbisStreams = streams
        return writer
    }

    @Test(.enabled(if: vorbisToolsAvailable && VorbisDecoder.isAvailable,
                   "needs oggenc and oggdec (Debian package vorbis-tools) and libvorbisfile.so.3 (libvorbisfile3)"))
    func compressedSamplesAreByteRangesDecodedOnRequestAsLibvorbisfileGivesThem() throws {
        let writer0 = twoSampleWriter(streams: [])
        let sine = try vorbisRoundTrip(writer0.samples[0].points, rate: 22_050)
        let ramp = try vorbisRoundTrip(writer0.samples[1].points, rate: 22_050)
        let file = try SoundFontReader.read(twoSampleWriter(streams: [sine.stream, ramp.stream]).bytes())
        #expect(file.info.version == SoundFontVersion(major: 3, minor: 1))
        #expect(file.compressedSampleCount == 2)
        #expect(file.compressedByteCount == sine.stream.count + ramp.stream.count)
        let samples = file.bank.samples
        #expect(samples.map(\.isCompressed) == [true, true])
        #expect(samples[0].start == 0 && samples[0].end == sine.stream.count)
        #expect(samples[1].start == sine.stream.count && samples[1].end == sine.stream.count + ramp.stream.count)
        #expect(samples[0].loopStart == 100 && samples[0].loopEnd == 4000)
        #expect(file.bank.presets.map { $0.regions.count } == [1, 1])

        // Nothing is decoded until asked, and only what is asked for.
        let store = try #require(file.bank.compressedSamples)
        #expect(store.decoded(0) == nil && store.decoded(1) == nil && store.decodedByteCount == 0)
        #expect(try store.decode([0]).isEmpty)
        let decoded = try #require(store.decoded(0))
        #expect(store.decoded(1) == nil)
        #expect(Array(decoded.buffer) == sine.decoded)
        #expect(decoded.count == 4410)
        #expect(decoded.loopStart == 100 && decoded.loopEnd == 4000)
        #expect(store.decodedByteCount == 32 + 2 * 4410)
        #expect(try store.decode([0, 1, 1]).isEmpty)
        #expect(Array(try #require(store.decoded(1)).buffer) == ramp.decoded)
        // The ramp has no loop: its loop is the whole decoded sample.
        #expect(store.decoded(1)?.loopStart == 0 && store.decoded(1)?.loopEnd == 3000)
    }

    @Test func oddSizedChunksWithoutPadBytesAreReadWithAWarning() throws {
        // Three- and four-byte "streams": the structure is read without decoding anything.
        var writer = twoSampleWriter(streams: [[1, 2, 3], [4, 5, 6, 7]])
        writer.unpaddedOddSampleData = true
        let bytes = writer.bytes()
        let file = try SoundFontReader.read(bytes)
        #expect(file.bank.presets.count == 2)
        #expect(file.compressedSampleCount == 2 && file.compressedByteCount == 7)
        let padding = file.warnings.filter { $0.message.contains("without its pad byte") }
        #expect(padding.count == 1)
        #expect(padding.first?.location.chunk == "LIST sdta")
        #expect(padding.first?.message == "odd-sized chunk (19 bytes) without its pad byte; the next chunk is read right after it")
        // The same bank, strict: the repair is an error.
        var strict = SoundFontReadOptions()
        strict.strict = true
        #expect(throws: SoundFontError.self) { try SoundFontReader.read(bytes, options: strict) }
    }

    @Test(.enabled(if: VorbisDecoder.isAvailable, "needs libvorbisfile.so.3 (Debian package libvorbisfile3)"))
    func aStreamThatDoesNotDecodeIsSilentAndOneWarning() throws {
        let file = try SoundFontReader.read(twoSampleWriter(streams: [Array("OggS but not really".utf8), [9, 9, 9, 9]]).bytes())
        let store = try #require(file.bank.compressedSamples)
        let warnings = try store.decode([0, 1])
        #expect(warnings.count == 2)
        #expect(warnings.allSatisfy { $0.message.contains("not a readable Ogg Vorbis stream") && $0.message.contains("plays silent") })
        #expect(store.decoded(0) == nil && store.decoded(1) == nil)
        // Failed samples are not tried again.
        #expect(try store.decode([0, 1]).isEmpty)
    }

    @Test func compressedSamplesOutsideSmplOrInASoundFont2BankAreUnusable() throws {
        var outside = twoSampleWriter(streams: [[1, 2, 3, 4], [5, 6]])
        outside.samples[1].rawPoints = (4, 400, 0, 10)
        let file = try SoundFontReader.read(outside.bytes())
        #expect(file.warnings.contains { $0.message.contains("compressed sample 'ramp' spans bytes 4..<400, not inside the 6 bytes of smpl") })
        #expect(file.bank.presets[1].regions.isEmpty)
        #expect(file.compressedSampleCount == 1)

        var sf2 = twoSampleWriter(streams: [[1, 2, 3, 4], [5, 6]])
        sf2.version = (2, 4)
        let old = try SoundFontReader.read(sf2.bytes())
        #expect(old.warnings.contains { $0.message.contains("is compressed in a SoundFont 2 bank") })
        #expect(old.compressedSampleCount == 0 && old.bank.compressedSamples == nil)
    }
}
