import Foundation
import Testing
import SoundFont

/// The hand-built banks the `fuzz-sf2` target starts from (Fuzz/seeds/fuzz-sf2): global
/// zones, layers, splits, modulators, stereo pairs and 24-bit data, so the fuzzer begins with
/// every part of the hydra in use.
enum FuzzSeeds {
    static var folder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/seeds/fuzz-sf2")
    }

    static func banks() -> [String: [UInt8]] {
        var layered = W.minimal()
        layered.samples.append(W.Sample(name: "L", points: W.sinePoints(64), type: 4, link: 2))
        layered.samples.append(W.Sample(name: "R", points: W.sinePoints(64), type: 2, link: 1))
        layered.instruments = [
            W.Instrument(name: "Mono", zones: [
                W.Zone([W.gen(.attackVolEnv, -2000)], modulators: [SoundFontModulator(source: 0x0081, destination: 8, amount: -1200, amountSource: 0, transform: 0)]),
                W.Zone([W.keys(0, 63), W.gen(.sampleModes, 1), W.sample(0)]),
                W.Zone([W.keys(64, 127), W.velocities(0, 100), W.gen(.coarseTune, 12), W.sample(0)]),
            ]),
            W.Instrument(name: "Stereo", zones: [W.Zone([W.gen(.pan, -500), W.sample(1)]), W.Zone([W.gen(.pan, 500), W.sample(2)])]),
        ]
        layered.presets = [
            W.Preset(name: "Layer", zones: [
                W.Zone([W.gen(.reverbEffectsSend, 200)], modulators: [SoundFontModulator(source: 0x008B, destination: 48, amount: 100, amountSource: 0, transform: 0)]),
                W.Zone([W.instrument(0)]), W.Zone([W.keys(30, 90), W.instrument(1)]),
            ]),
            W.Preset(name: "Split", program: 1, zones: [W.Zone([W.keys(0, 59), W.instrument(0)]), W.Zone([W.keys(60, 127), W.instrument(1)])]),
            W.Preset(name: "Kit", program: 0, bank: 128, zones: [W.Zone([W.keys(35, 38), W.instrument(0)])]),
        ]
        var deep = layered
        deep.lowByte = { UInt8(truncatingIfNeeded: $0 * 7) }
        var repaired = W.minimal()
        repaired.samples[0].loop = (90, 10)
        repaired.instruments[0].zones[0].generators = [W.gen(.pan, 5), W.keys(0, 60), W.sample(0), W.gen(.pan, 9)]
        return ["minimal.sf2": W.minimal().bytes(), "layered.sf2": layered.bytes(), "24bit.sf2": deep.bytes(), "repaired.sf2": repaired.bytes()]
    }
}

@Suite("Fuzz seeds")
struct FuzzSeedTests {
    @Test("The committed fuzz-sf2 seeds are the banks the writer makes, and read")
    func seeds() throws {
        let banks = FuzzSeeds.banks()
        if ProcessInfo.processInfo.environment["TACTUS_WRITE_FUZZ_SEEDS"] == "1" {
            try FileManager.default.createDirectory(at: FuzzSeeds.folder, withIntermediateDirectories: true)
            for (name, bytes) in banks { try Data(bytes).write(to: FuzzSeeds.folder.appendingPathComponent(name)) }
        }
        for (name, bytes) in banks {
            let committed = try Data(contentsOf: FuzzSeeds.folder.appendingPathComponent(name))
            #expect(Array(committed) == bytes, "\(name) is stale: run the test with TACTUS_WRITE_FUZZ_SEEDS=1")
            let file = try SoundFontReader.read(bytes, name: name)
            #expect(!file.bank.presets.isEmpty)
            #expect(invariantViolation(file.bank) == nil)
            #expect(bytes.count < 4096, "seeds stay small")
        }
    }
}
