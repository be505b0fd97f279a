import Foundation
import SoundFont
import Testing

/// A Level 2 bank with a melodic instrument (two regions, one overriding the wave's `wsmp`,
/// instrument articulation) and a drum kit (region articulation, key group).
func exampleDLS(level2: Bool = true, articulation: Bool = true) -> DLSWriter {
    var w = DLSWriter()
    w.level2 = level2
    w.waves = [
        DLSWriter.Wave(name: "tri low", points: DLSWriter.triangle(4000), sampleRate: 22_050,
                       info: DLSSampleInfo(unityNote: 48, fineTune: -7, gain: -30 * 65_536, loops: [DLSLoop(type: 0, start: 1000, length: 2000)])),
        DLSWriter.Wave(name: "tri high", points: DLSWriter.triangle(3000, period: 25), sampleRate: 44_100,
                       info: DLSSampleInfo(unityNote: 72), eightBit: true),
        DLSWriter.Wave(name: "click", points: DLSWriter.triangle(800, period: 10), sampleRate: 22_050, info: nil),
    ]
    let instrumentArticulation = [
        DLSConnection(source: 0, control: 0, destination: 0x206, transform: 0, scale: -1200 * 65_536),  // EG1 attack 0.5 s
        DLSConnection(source: 0, control: 0, destination: 0x207, transform: 0, scale: 2400 * 65_536),   // EG1 decay 4 s
        DLSConnection(source: 0, control: 0, destination: 0x20A, transform: 0, scale: 500 * 65_536),    // sustain 50 %
        DLSConnection(source: 0, control: 0, destination: 0x209, transform: 0, scale: 0),               // release 1 s
        DLSConnection(source: 0, control: 0, destination: 0x104, transform: 0, scale: -600 * 65_536),   // LFO freq
        DLSConnection(source: 1, control: 0, destination: 3, transform: 0, scale: 20 * 65_536),         // LFO to pitch
        DLSConnection(source: 0, control: 0, destination: 4, transform: 0, scale: -250 * 65_536),       // pan
        DLSConnection(source: 3, control: 0, destination: 0x207, transform: 0, scale: -1280 * 65_536),  // key to decay
        DLSConnection(source: 0, control: 0, destination: 0x500, transform: 0, scale: 9000 * 65_536),   // cutoff
    ]
    w.instruments = [
        DLSInstrument(name: "Triangle", bank: 0x0100 | 2, isDrumKit: false, program: 5, regions: [
            DLSRegion(keyLow: 0, keyHigh: 59, velocityLow: 0, velocityHigh: 127, waveIndex: 0),
            DLSRegion(keyLow: 60, keyHigh: 127, velocityLow: 20, velocityHigh: 100, waveIndex: 1,
                      sampleInfo: DLSSampleInfo(unityNote: 70, fineTune: 12, gain: -60 * 65_536, loops: [DLSLoop(type: 1, start: 100, length: 900)])),
        ], connections: instrumentArticulation),
        DLSInstrument(name: "Kit", bank: 0, isDrumKit: true, program: 0, regions: [
            DLSRegion(keyLow: 36, keyHigh: 36, keyGroup: 1, waveIndex: 2, connections: [
                DLSConnection(source: 0, control: 0, destination: 0x209, transform: 0, scale: Int32.min),
            ]),
        ]),
    ]
    if !articulation {
        // FluidSynth's DLS path (libinstpatch's voice cache) ignores articulation and wsmp
        // gain, and reads fine tune as an unsigned byte: this variant, on bank 0, without
        // them, is the one the two players can agree on.
        w.instruments[0].connections = []
        w.instruments[0].bank = 0
        w.instruments[1].regions[0].connections = []
        w.waves[0].info?.gain = 0
        w.waves[0].info?.fineTune = 0
        w.instruments[0].regions[1].sampleInfo?.gain = 0
        w.instruments[0].regions[1].sampleInfo?.fineTune = 0
    }
    return w
}

@Suite struct DLSReaderTests {
    @Test func convertsRegionsAndArticulation() throws {
        let file = try SoundFontReader.read(exampleDLS().bytes(), name: "x.dls")
        #expect(file.format == .dls)
        #expect(file.formatDescription == "DLS Level 2")
        #expect(file.bank.name == "Test DLS")
        #expect(file.warnings.isEmpty, "\(file.warnings)")
        let melodic = try #require(file.bank.preset(bank: 1, program: 5))
        #expect(melodic.name == "Triangle")
        #expect(melodic.regions.count == 2)
        let low = melodic.regions[0], high = melodic.regions[1]
        #expect(low.keyRange == 0...59 && high.keyRange == 60...127 && high.velocityRange == 20...100)
        // The wave's wsmp: root 48, -7 cents, -3 dB, a forward loop.
        let lowSample = file.bank.samples[low.sampleIndex]
        #expect(lowSample.originalPitch == 48 && lowSample.sampleRate == 22_050)
        #expect(lowSample.loopStart - lowSample.start == 1000 && lowSample.loopEnd - lowSample.start == 3000)
        #expect(low.generators[.fineTune] == -7 && low.generators[.initialAttenuation] == 30 && low.generators[.sampleModes] == 1)
        // The region's wsmp overrides the wave's: root 70, a loop until release.
        let highSample = file.bank.samples[high.sampleIndex]
        #expect(highSample.originalPitch == 70 && highSample.loopStart - highSample.start == 100 && highSample.loopEnd - highSample.start == 1000)
        #expect(high.generators[.fineTune] == 12 && high.generators[.initialAttenuation] == 60 && high.generators[.sampleModes] == 3)
        // 8-bit points become 16-bit words: the 8-bit wave's peak is near the 16-bit one's.
        let peak = (highSample.start..<highSample.end).map { abs(Int(file.bank.sampleData.words[$0])) }.max() ?? 0
        #expect((11_000...12_100).contains(peak))
        // Instrument articulation, converted.
        let g = low.generators
        #expect(g[.attackVolEnv] == -1200 && g[.sustainVolEnv] == 500 && g[.releaseVolEnv] == 0)
        #expect(g[.keyNumberToVolEnvDecay] == 10 && g[.decayVolEnv] == 2400 - 600)
        #expect(g[.freqModLFO] == -600 && g[.modLFOToPitch] == 20 && g[.pan] == -250 && g[.initialFilterCutoff] == 9000)
        #expect(high.generators == {
            var h = g
            h[.fineTune] = 12; h[.initialAttenuation] = 60; h[.sampleModes] = 3
            return h
        }())
        // Drums: bank 128, region articulation ("zero time" release), key group, no loop.
        let kit = try #require(file.bank.preset(bank: 128, program: 0))
        let click = try #require(kit.regions.first)
        #expect(click.keyRange == 36...36 && click.generators[.exclusiveClass] == 1)
        #expect(click.generators[.releaseVolEnv] == -12_000 && click.generators[.sampleModes] == 0)
        #expect(click.generators[.attackVolEnv] == -12_000)
        #expect(file.bank.samples[click.sampleIndex].originalPitch == 60)
    }

    @Test func level1BankAndRawModel() throws {
        let bytes = exampleDLS(level2: false).bytes()
        let dls = try bytes.withUnsafeBytes { raw in try DLSReader.collection(raw) }
        #expect(!dls.isLevel2)
        #expect(dls.instruments.count == 2 && dls.waves.count == 3)
        #expect(dls.poolTable == [0, 1, 2])
        #expect(dls.instruments[0].bank == 0x0102 && !dls.instruments[0].isDrumKit && dls.instruments[1].isDrumKit)
        #expect(dls.instruments[0].connections.count == 9)
        #expect(dls.waves[1].bitsPerSample == 8 && dls.waves[1].frameCount == 3000)
        let file = try SoundFontReader.read(bytes)
        #expect(file.formatDescription == "DLS Level 1")
    }

    @Test func rmiCarriesItsBank() throws {
        // Format 0, one track: a note on and off.
        let track: [UInt8] = [0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0, 0x00, 0xFF, 0x2F, 0x00]
        let smf = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 96] + Array("MTrk".utf8) + DLSWriter.le32(UInt32(track.count)).reversed() + track
        let rmi = exampleDLS().rmi(smf: smf)
        let range = try #require(rmi.withUnsafeBytes { DLSReader.embeddedBankRange($0) })
        #expect(range.lowerBound == 12 + 8 + smf.count)
        let file = try SoundFontReader.read(rmi)
        #expect(file.format == .dls && file.bank.presets.count == 2)
        let bare = DLSWriter.chunk("RIFF", Array("RMID".utf8) + DLSWriter.chunk("data", smf))
        do {
            _ = try SoundFontReader.read(bare)
            Issue.record("an RMI file without a bank was read as one")
        } catch {
            #expect(error.reasonText == "an RMI file without a DLS bank: it holds a MIDI song only")
        }
    }

    @Test func damagedBanksAreRefusedOrRepaired() throws {
        let good = exampleDLS().bytes()
        // Not a bank at all.
        do {
            _ = try SoundFontReader.read(Array("RIFF\u{4}\0\0\0WAVE".utf8))
            Issue.record("a WAVE file was read as a bank")
        } catch {
            #expect(error.reasonText.contains("'DLS '"))
        }
        // Every truncation either reads (with warnings) or throws a typed error.
        for cut in stride(from: 0, to: good.count, by: 7) {
            _ = try? SoundFontReader.read(Array(good[0..<cut]))
        }
        // A pool table cue count past its chunk.
        var bad = good
        let ptbl = try #require(find("ptbl", in: bad))
        bad[ptbl + 12] = 0xFF
        bad[ptbl + 13] = 0xFF
        do {
            _ = try SoundFontReader.read(bad)
            Issue.record("an oversized pool table was accepted")
        } catch {
            #expect(error.reasonText.contains("pool table declares"))
            #expect(error.location.chunk == "ptbl")
        }
        // An articulation claiming more blocks than it holds.
        bad = good
        let art = try #require(find("art2", in: bad))
        bad[art + 12] = 0xFF
        #expect(throws: SoundFontError.self) { try SoundFontReader.read(bad) }
        // A region naming a pool entry that does not exist: the region goes, with a warning.
        var w = exampleDLS()
        w.instruments[1].regions[0].waveIndex = 9
        let repaired = try SoundFontReader.read(w.bytes())
        #expect(repaired.bank.preset(bank: 128, program: 0)?.regions.isEmpty == true)
        #expect(repaired.warnings.contains { $0.message.contains("pool entry 9") })
        var strict = SoundFontReadOptions()
        strict.strict = true
        #expect(throws: SoundFontError.self) { try SoundFontReader.read(w.bytes(), options: strict) }
    }

    @Test func randomDamageNeverTraps() {
        let good = exampleDLS().bytes()
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(truncatingIfNeeded: state >> 1)
        }
        for _ in 0..<3000 {
            var bytes = good
            for _ in 0..<(1 + next() % 8) {
                bytes[next() % bytes.count] = UInt8(truncatingIfNeeded: next())
            }
            _ = try? SoundFontReader.read(bytes)
        }
    }

    @Test func pathsAreInErrors() throws {
        let path = NSTemporaryDirectory() + "tactus-dls-\(getpid())-bad.dls"
        var bytes = exampleDLS().bytes()
        let ptbl = try #require(find("ptbl", in: bytes))
        bytes[ptbl + 13] = 0x7F
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try SoundFontReader.read(contentsOf: path)
            Issue.record("damaged bank accepted")
        } catch {
            #expect(error.description.hasPrefix("\(path): ptbl at byte"))
        }
    }
}

/// The banks `fuzz-dls` starts from (Fuzz/seeds/fuzz-dls), which the CLI tests use too: two
/// written by ``DLSWriter`` (kept as it writes them), one libinstpatch wrote back.
@Suite struct DLSFuzzSeedTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/seeds/fuzz-dls")

    @Test func seedsAreTheWritersBanks() throws {
        #expect(try readBytes(Self.folder.appendingPathComponent("level1-made.dls").path) == exampleDLS(level2: false).bytes())
        #expect(try readBytes(Self.folder.appendingPathComponent("level2-plain.dls").path) == exampleDLS(articulation: false).bytes())
        let written = try SoundFontReader.read(contentsOf: Self.folder.appendingPathComponent("level2-written-by-libinstpatch.dls").path)
        #expect(written.warnings.isEmpty && written.bank.presets.map(\.regions.count) == [2, 1])
    }
}
