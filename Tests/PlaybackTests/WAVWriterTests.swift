import AudioFileOutput
import Foundation
import Playback
import Testing

@Suite struct WAVWriterTests {
    func temporaryDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "tactus-wav-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    func u16(_ d: [UInt8], _ at: Int) -> Int { Int(d[at]) | Int(d[at + 1]) << 8 }
    func u32(_ d: [UInt8], _ at: Int) -> Int { u16(d, at) | u16(d, at + 2) << 16 }

    @Test(arguments: [(WAVSampleFormat.s16, 1), (.s16, 2), (.s24, 1), (.s24, 2), (.f32, 1), (.f32, 2)])
    func writesAReadableHeaderAndSamples(format: WAVSampleFormat, channels: Int) throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let left: [Float] = [0, 0.5, -0.5, 1, -1, 2, -2, 0.25]
        let right: [Float] = [0, -0.5, 0.5, -1, 1, -2, 2, 0.75]
        for rate in [44_100, 48_000, 96_000] {
            let path = dir + "/out-\(rate).wav"
            let w = try WAVWriter(path: path, sampleRate: rate, channelCount: channels, format: format)
            try left.withUnsafeBufferPointer { l in
                try right.withUnsafeBufferPointer { r in
                    try w.write(left: l.baseAddress!, right: r.baseAddress!, count: 3)
                    try w.write(left: l.baseAddress! + 3, right: r.baseAddress! + 3, count: 5)
                }
            }
            #expect(!FileManager.default.fileExists(atPath: path), "nothing at the destination before finish")
            try w.finish()
            #expect(!FileManager.default.fileExists(atPath: w.temporaryPath))
            let d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(String(decoding: d[0..<4], as: UTF8.self) == "RIFF")
            #expect(u32(d, 4) == d.count - 8)
            #expect(String(decoding: d[8..<16], as: UTF8.self) == "WAVEfmt ")
            #expect(u16(d, 20) == (format == .f32 ? 3 : 1))
            #expect(u16(d, 22) == channels)
            #expect(u32(d, 24) == rate)
            #expect(u16(d, 32) == channels * format.bytesPerSample)
            #expect(u16(d, 34) == format.bytesPerSample * 8)
            #expect(String(decoding: d[50..<54], as: UTF8.self) == "data")
            let dataBytes = u32(d, 54)
            #expect(dataBytes == 8 * channels * format.bytesPerSample)
            #expect(d.count == 58 + dataBytes)
            // Decode and compare with the expected (clamped, rounded or mixed) values.
            var decoded: [Float] = []
            var at = 58
            while at < d.count {
                switch format {
                case .s16: decoded.append(Float(Int16(bitPattern: UInt16(u16(d, at)))) / 32767)
                case .s24:
                    let raw = Int32(bitPattern: UInt32(d[at]) << 8 | UInt32(d[at + 1]) << 16 | UInt32(d[at + 2]) << 24) >> 8
                    decoded.append(Float(raw) / 8_388_607)
                case .f32: decoded.append(Float(bitPattern: UInt32(u32(d, at))))
                }
                at += format.bytesPerSample
            }
            var expected: [Float] = []
            for i in 0..<8 {
                let frame = channels == 2 ? [left[i], right[i]] : [(left[i] + right[i]) / 2]
                expected += frame.map { format == .f32 ? $0 : min(max($0, -1), 1) }
            }
            let tolerance: Float = format == .s16 ? 1.0 / 32767 : format == .s24 ? 1.0 / 8_388_607 : 0
            for (a, b) in zip(decoded, expected) { #expect(abs(a - b) <= tolerance, "\(format) \(channels)ch") }
            #expect(decoded.count == expected.count)
        }
    }

    @Test("16-bit stereo samples are exactly pcm16 of each input, at every rounding edge")
    func sixteenBitSamplesAreExact() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Halfway points, their float neighbours, full scale, beyond it, signed zeros, and a
        // sweep of ordinary values; an odd count so the last frames are written one by one.
        var values: [Float] = [0, -0.0, 1, -1, 1.5, -7, .ulpOfOne, -.ulpOfOne, .greatestFiniteMagnitude, -.infinity]
        for k in [0, 1, 2, 3, 100, 16_383, 32_766] {
            let half = (Float(k) + 0.5) / 32767
            values += [half, half.nextUp, half.nextDown, -half, -half.nextUp, -half.nextDown]
        }
        values += (0..<4001).map { Float($0 - 2000) / 1999.37 }
        let left = values, right = values.reversed().map { $0 * 0.999 }
        let path = dir + "/edges.wav"
        let w = try WAVWriter(path: path, sampleRate: 44_100, channelCount: 2, format: .s16)
        try left.withUnsafeBufferPointer { l in
            try right.withUnsafeBufferPointer { r in
                try w.write(left: l.baseAddress!, right: r.baseAddress!, count: 5)
                try w.write(left: l.baseAddress! + 5, right: r.baseAddress! + 5, count: values.count - 5)
            }
        }
        try w.finish()
        let d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(d.count == 58 + 4 * values.count)
        for i in values.indices {
            let l = Int16(bitPattern: UInt16(u16(d, 58 + 4 * i))), r = Int16(bitPattern: UInt16(u16(d, 60 + 4 * i)))
            #expect(l == WAVSampleFormat.pcm16(left[i]), "left \(left[i])")
            #expect(r == WAVSampleFormat.pcm16(right[i]), "right \(right[i])")
        }
        // Rounded half away from zero, clamped at full scale.
        #expect(WAVSampleFormat.pcm16(0.5 / 32767) == 1)
        #expect(WAVSampleFormat.pcm16(-0.5 / 32767) == -1)
        #expect(WAVSampleFormat.pcm16(3) == 32767)
        #expect(WAVSampleFormat.pcm16(-3) == -32767)
    }

    @Test func cancelLeavesNoFileAndKeepsTheOldOne() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/keep.wav"
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        let w = try WAVWriter(path: path, sampleRate: 48_000, channelCount: 2, format: .s24)
        let zeros = [Float](repeating: 0, count: 100)
        try zeros.withUnsafeBufferPointer { try w.write(left: $0.baseAddress!, right: $0.baseAddress!, count: 100) }
        #expect(FileManager.default.fileExists(atPath: w.temporaryPath))
        w.cancel()
        #expect(!FileManager.default.fileExists(atPath: w.temporaryPath))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["keep.wav"])
    }

    @Test func unwritableDestinationsAreRefused() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(throws: WAVWriterError.self) { try WAVWriter(path: dir + "/missing/out.wav", sampleRate: 44_100, channelCount: 2, format: .s16) }
        #expect(throws: WAVWriterError.self) { try WAVWriter(path: dir, sampleRate: 44_100, channelCount: 2, format: .s16) }
        #expect(throws: WAVWriterError.self) { try WAVWriter(path: dir + "/x.wav", sampleRate: 44_100, channelCount: 3, format: .s16) }
    }

    @Test("A sink's error keeps its writer's typed cause: a full device is the WAV writer's write failure with the system's reason")
    func aFullDeviceIsTheWAVWritersFailureWithItsReason() throws {
        let writer = try AudioFileFormat.wav(.s16).makeWriter(path: "/dev/full", sampleRate: 44_100, channelCount: 2)
        let silence = [Float](repeating: 0, count: 256)
        try writer.write(left: silence, right: silence, count: silence.count)
        let noSpace = String(cString: strerror(ENOSPC))
        #expect(throws: AudioSinkError.wav(.writeFailed("/dev/full", noSpace))) { try writer.finish() }
        #expect("\(AudioSinkError.wav(.writeFailed("/dev/full", noSpace)))" == "/dev/full: write failed: \(noSpace)")
    }

    @Test("Opening a writer the format cannot make is the writer's own error, inside the sink error")
    func refusedFormatsKeepTheirWritersError() throws {
        #expect(throws: AudioSinkError.wav(.unsupported("/tmp/x.wav: 3 channels; WAV output is mono or stereo"))) {
            _ = try AudioFileFormat.wav(.s16).makeWriter(path: "/tmp/x.wav", sampleRate: 44_100, channelCount: 3)
        }
        do {
            _ = try AudioFileFormat.opus.makeWriter(path: "/tmp/x.opus", sampleRate: 44_100, channelCount: 2)
            Issue.record("Opus at 44.1 kHz was opened")
        } catch {
            guard case .encoded(let cause) = error else { Issue.record("not libsndfile's error: \(error)"); return }
            // Without libsndfile the cause is the missing library, and that is still the encoder's.
            if SndFileLibrary.isAvailable { #expect(cause == .cannotCreate("/tmp/x.opus", "Opus output needs --sample-rate 48000")) }
        }
    }
}
