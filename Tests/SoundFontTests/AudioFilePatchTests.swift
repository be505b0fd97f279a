import Foundation
import Testing
@testable import SoundFont

/// A WAV file: `frames[frame][channel]` as 24-bit values, written as 16/24/32-bit integers or
/// 32-bit floats.
func wavBytes(_ frames: [[Int32]], bits: Int = 16, float: Bool = false, rate: Int = 44_100, extensible: Bool = false) -> [UInt8] {
    let channels = frames.first?.count ?? 1
    var data: [UInt8] = []
    for frame in frames {
        for v in frame {
            switch (float, bits) {
            case (true, _): data += le32(Float(Double(v) / 8_388_608).bitPattern)
            case (false, 16): data += le16(UInt16(bitPattern: Int16(v >> 8)))
            case (false, 24): data += Array(le32(UInt32(bitPattern: v)).prefix(3))
            default: data += le32(UInt32(bitPattern: v << 8))
            }
        }
    }
    let tag: UInt16 = extensible ? 0xFFFE : (float ? 3 : 1)
    var fmt = le16(tag) + le16(UInt16(channels)) + le32(UInt32(rate)) + le32(UInt32(rate * channels * bits / 8))
        + le16(UInt16(channels * bits / 8)) + le16(UInt16(bits))
    if extensible { fmt += le16(22) + le16(UInt16(bits)) + le32(0) + le16(float ? 3 : 1) + [UInt8](repeating: 0, count: 14) }
    let body = Array("WAVE".utf8) + Array("fmt ".utf8) + le32(UInt32(fmt.count)) + fmt + Array("data".utf8) + le32(UInt32(data.count)) + data
    return Array("RIFF".utf8) + le32(UInt32(body.count)) + body
}

/// A folder of patch fixtures, removed when the test ends.
final class PatchFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-patch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: url.appendingPathComponent(name))
    }

    func write(_ name: String, json: String) throws -> String {
        try write(name, Array(json.utf8))
        return url.appendingPathComponent(name).path
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

func loadError(_ path: String) -> AudioFilePatchError? {
    do {
        _ = try AudioFilePatch.load(contentsOf: path)
        return nil
    } catch {
        return error
    }
}

@Suite("Patches from audio files")
struct AudioFilePatchTests {
    @Test("Zones become regions with their ranges, root key, tuning, gain and loop; stereo files a linked pair")
    func zones() throws {
        let folder = try PatchFolder()
        let ramp = (0..<1000).map { [Int32($0 * 1000 - 500_000)] }
        try folder.write("low.wav", wavBytes(ramp, bits: 16, rate: 22_050))
        let stereo = (0..<500).map { [Int32($0 * 3001), Int32(-$0 * 3001)] }
        try folder.write("high.wav", wavBytes(stereo, bits: 24, rate: 48_000))
        let path = try folder.write("piano.json", json: """
            { "name": "Test piano",
              "zones": [
                { "file": "low.wav", "rootKey": 48, "keyRange": [0, 59], "tuning": -150, "gain": -6 },
                { "file": "high.wav", "rootKey": 72, "keyRange": [60, 127], "velocityRange": [1, 100],
                  "loopStart": 100, "loopEnd": 400, "loopMode": "untilRelease" },
                { "file": "low.wav", "rootKey": 36, "keyRange": [0, 59], "velocityRange": [101, 127], "loopStart": 10, "loopEnd": 20 }
              ] }
            """)
        let bank = try AudioFilePatch.load(contentsOf: path)
        #expect(bank.name == "Test piano")
        let preset = try #require(bank.preset(bank: 0, program: 0))
        #expect(preset.name == "Test piano")
        try #require(preset.regions.count == 4)
        let low = preset.regions[0]
        #expect(low.keyRange == 0...59 && low.velocityRange == 0...127)
        #expect(low.generators[.overridingRootKey] == 48)
        #expect(low.generators[.coarseTune] == -1 && low.generators[.fineTune] == -50)
        #expect(low.generators[.initialAttenuation] == 60)
        #expect(low.generators[.sampleModes] == 0)
        #expect(low.modulators == SoundFontModulator.defaults)
        let lowSample = bank.samples[low.sampleIndex]
        #expect(lowSample.sampleRate == 22_050 && lowSample.originalPitch == 48 && lowSample.kind == .mono)
        #expect(lowSample.end - lowSample.start == 1000)

        let (left, right) = (preset.regions[1], preset.regions[2])
        #expect(left.keyRange == 60...127 && left.velocityRange == 1...100)
        #expect(left.generators[.pan] == -500 && right.generators[.pan] == 500)
        #expect(left.generators[.sampleModes] == 3)
        let l = bank.samples[left.sampleIndex], r = bank.samples[right.sampleIndex]
        #expect(l.kind == .left && r.kind == .right)
        #expect(l.link == right.sampleIndex && r.link == left.sampleIndex)
        #expect(l.loopStart == l.start + 100 && l.loopEnd == l.start + 400)
        #expect(l.sampleRate == 48_000)

        // The same file with another root key and loop: its own header over the same points.
        let third = bank.samples[preset.regions[3].sampleIndex]
        #expect(preset.regions[3].sampleIndex != low.sampleIndex)
        #expect(third.start == lowSample.start && third.end == lowSample.end)
        #expect(third.loopStart == third.start + 10 && third.loopEnd == third.start + 20 && third.originalPitch == 36)
        #expect(preset.regions[3].generators[.sampleModes] == 1)

        // 24-bit data: the 16-bit file's low bytes are zero, the 24-bit file's are kept.
        let words = bank.sampleData.words
        let lowBytes = try #require(bank.sampleData.lowBytes)
        for i in [0, 1, 499, 999] {
            #expect(Int32(words[lowSample.start + i]) << 8 | Int32(lowBytes[lowSample.start + i]) == (ramp[i][0] >> 8) << 8)
        }
        for i in [0, 7, 250, 499] {
            #expect(Int32(words[l.start + i]) << 8 | Int32(lowBytes[l.start + i]) == stereo[i][0])
            #expect(Int32(words[r.start + i]) << 8 | Int32(lowBytes[r.start + i]) == stereo[i][1])
        }
        #expect(invariantViolation(bank) == nil)
    }

    @Test("WAV formats: 8, 16, 24 and 32-bit integer, 32-bit float, extensible headers")
    func wavFormats() throws {
        let values: [Int32] = [0, 8_388_607, -8_388_608, 1_234_567, -42 << 8]
        let frames = values.map { [$0] }
        for (bits, float, extensible) in [(16, false, false), (24, false, false), (32, false, false), (32, true, false), (24, false, true), (32, true, true)] {
            let audio = try WAVReader.read(wavBytes(frames, bits: bits, float: float, extensible: extensible))
            let expected = bits == 16 ? values.map { ($0 >> 8) << 8 } : values
            #expect(audio.channels == [expected], "\(bits) bits float \(float) extensible \(extensible)")
            #expect(audio.hasLowBytes == (bits > 16))
        }
        var eightBit = wavBytes([[0], [0]], bits: 16)
        // Rewrite as 8-bit: block align 1, 8 bits, two data bytes 0x80 (silence) and 0xFF.
        eightBit.replaceSubrange(32..<36, with: le16(1) + le16(8))
        eightBit.replaceSubrange(40..<44, with: le32(2))
        eightBit.replaceSubrange(44..<48, with: [0x80, 0xFF, 0, 0])
        #expect(try WAVReader.read(eightBit).channels == [[0, 127 << 16]])
    }

    @Test("Errors name the JSON field or the WAV file, and the reason")
    func errors() throws {
        let folder = try PatchFolder()
        try folder.write("ok.wav", wavBytes((0..<100).map { [Int32($0)] }))
        try folder.write("six.wav", wavBytes((0..<10).map { _ in [0, 0, 0, 0, 0, 0] }))
        try folder.write("text.wav", Array("hello".utf8))
        func check(_ json: String, path expectedPath: String? = nil, field: String?, _ reason: String, unreadable: Bool = false,
                   sourceLocation: SourceLocation = #_sourceLocation) throws {
            let path = try folder.write("p.json", json: json)
            guard let error = loadError(path) else {
                Issue.record("\(json) was accepted", sourceLocation: sourceLocation)
                return
            }
            #expect(error.path == (expectedPath ?? path), sourceLocation: sourceLocation)
            #expect(error.field == field, sourceLocation: sourceLocation)
            #expect(error.reason.contains(reason), "\(error)", sourceLocation: sourceLocation)
            #expect(error.isUnreadableInput == unreadable, sourceLocation: sourceLocation)
            #expect(error.description.hasPrefix(error.path + ": "), sourceLocation: sourceLocation)
        }
        try check("{", field: nil, "not valid JSON")
        try check("[]", field: nil, "must be an object")
        try check(#"{"zones": []}"#, field: "zones", "non-empty array")
        try check(#"{"zone": []}"#, field: "zone", "unknown key")
        try check(#"{"zones": [{"file": "ok.wav", "rootkey": 60}]}"#, field: "zones[0].rootkey", "unknown key")
        try check(#"{"zones": [{"rootKey": 60}]}"#, field: "zones[0].file", "missing")
        try check(#"{"zones": [{"file": "ok.wav", "rootKey": 128}]}"#, field: "zones[0].rootKey", "128 is outside 0...127")
        try check(#"{"zones": [{"file": "ok.wav", "rootKey": 60.5}]}"#, field: "zones[0].rootKey", "whole number")
        try check(#"{"zones": [{"file": "ok.wav", "keyRange": [70, 60]}]}"#, field: "zones[0].keyRange", "low 70 is above high 60")
        try check(#"{"zones": [{"file": "ok.wav", "velocityRange": [1]}]}"#, field: "zones[0].velocityRange", "[low, high]")
        try check(#"{"zones": [{"file": "ok.wav", "loopStart": 10}]}"#, field: "zones[0].loopEnd", "give both")
        try check(#"{"zones": [{"file": "ok.wav", "loopStart": 10, "loopEnd": 500}]}"#, field: "zones[0].loopEnd", "past the 100 frames")
        try check(#"{"zones": [{"file": "ok.wav", "loopStart": 50, "loopEnd": 50}]}"#, field: "zones[0].loopEnd", "must be after loop start")
        try check(#"{"zones": [{"file": "ok.wav", "loopMode": "pingpong"}]}"#, field: "zones[0].loopMode", "must be")
        try check(#"{"zones": [{"file": "ok.wav", "loopMode": "continuous"}]}"#, field: "zones[0].loopMode", "needs loopStart")
        try check(#"{"zones": [{"file": "ok.wav", "gain": 6}]}"#, field: "zones[0].gain", "can attenuate, not amplify")
        try check(#"{"zones": [{"file": "ok.wav", "tuning": 20000}]}"#, field: "zones[0].tuning", "outside -12000...12000")
        try check(#"{"zones": [{"file": "ok.wav"}, {"file": "gone.wav"}]}"#, path: folder.path("gone.wav"), field: nil,
                  "no such file (named by", unreadable: true)
        try check(#"{"zones": [{"file": "six.wav"}]}"#, path: folder.path("six.wav"), field: nil, "6 channels")
        try check(#"{"zones": [{"file": "text.wav"}]}"#, path: folder.path("text.wav"), field: nil, "not a WAV file")
        let missing = folder.path("nothing.json")
        #expect(loadError(missing)?.description == "\(missing): no such file")
        #expect(loadError(missing)?.isUnreadableInput == true)
    }
}
