import Testing
@testable import SoundFont

typealias W = SF2Writer

func read(_ writer: SF2Writer, options: SoundFontReadOptions = SoundFontReadOptions()) throws(SoundFontError) -> SoundFontFile {
    try SoundFontReader.read(writer.bytes(), name: "test.sf2", options: options)
}

/// Every region of every preset in `bank`, in preset and file order.
func allRegions(_ bank: SoundFontBank) -> [SoundFontRegion] { bank.presets.flatMap(\.regions) }

@Suite("Preset resolution (SoundFont 2.04 sections 8.5, 9.4, 9.5)")
struct ResolutionTests {
    @Test("Instrument level: defaults, then the global zone, then the zone, which replaces the global value")
    func instrumentLevel() throws {
        var writer = W.minimal()
        writer.instruments = [W.Instrument(name: "Two", zones: [
            W.Zone([W.gen(.pan, 100), W.gen(.attackVolEnv, -1000)]),
            W.Zone([W.keys(0, 63), W.gen(.pan, 200), W.sample(0)]),
            W.Zone([W.keys(64, 127), W.sample(0)]),
        ])]
        let file = try read(writer)
        #expect(file.warnings.isEmpty, "\(file.warnings)")
        let regions = allRegions(file.bank)
        try #require(regions.count == 2)
        #expect(regions[0].keyRange == 0...63)
        #expect(regions[0].generators[.pan] == 200)
        #expect(regions[0].generators[.attackVolEnv] == -1000)
        #expect(regions[1].keyRange == 64...127)
        #expect(regions[1].generators[.pan] == 100)
        #expect(regions[1].generators[.attackVolEnv] == -1000)
        for g in SoundFontGenerator.allCases where ![.pan, .attackVolEnv].contains(g) {
            #expect(regions[0].generators[g] == SoundFontGenerators.defaults[g], "\(g)")
        }
        #expect(regions[0].velocityRange == 0...127)
        #expect(regions[0].modulators == SoundFontModulator.defaults)
    }

    @Test("Preset level: values add to the instrument's; a preset zone's value replaces its global zone's")
    func presetOffsetsAdd() throws {
        var writer = W.minimal()
        writer.instruments = [W.Instrument(name: "I", zones: [W.Zone([W.gen(.coarseTune, 1), W.gen(.pan, 100), W.sample(0)])])]
        writer.presets = [W.Preset(name: "P", zones: [
            W.Zone([W.gen(.coarseTune, 2), W.gen(.pan, 50), W.gen(.attackVolEnv, 1200)]),
            W.Zone([W.gen(.pan, 30), W.gen(.fineTune, 10), W.instrument(0)]),
        ])]
        let file = try read(writer)
        #expect(file.warnings.isEmpty, "\(file.warnings)")
        let region = try #require(allRegions(file.bank).first)
        #expect(region.generators[.coarseTune] == 3)
        #expect(region.generators[.pan] == 130, "the zone's 30 replaces the global zone's 50, then adds to 100")
        #expect(region.generators[.fineTune] == 10)
        #expect(region.generators[.attackVolEnv] == -12_000 + 1200, "preset values add to the instrument's defaults too")
    }

    @Test("Generators a preset may not set are ignored there, with a warning naming the pgen record")
    func presetForbiddenGenerators() throws {
        var writer = W.minimal()
        writer.instruments = [W.Instrument(name: "I", zones: [W.Zone([W.gen(.overridingRootKey, 64), W.gen(.sampleModes, 1), W.sample(0)])])]
        let forbidden: [SoundFontGenerator] = [.startAddressOffset, .endAddressOffset, .startLoopAddressOffset, .endLoopAddressOffset,
                                               .startAddressCoarseOffset, .endAddressCoarseOffset, .startLoopAddressCoarseOffset,
                                               .keyNumber, .velocity, .endLoopAddressCoarseOffset, .sampleModes, .exclusiveClass,
                                               .overridingRootKey]
        writer.presets = [W.Preset(name: "P", zones: [W.Zone(forbidden.map { W.gen($0, 3) } + [W.instrument(0)])])]
        let file = try read(writer)
        let region = try #require(allRegions(file.bank).first)
        #expect(region.generators[.overridingRootKey] == 64)
        #expect(region.generators[.sampleModes] == 1)
        #expect(region.generators[.keyNumber] == -1)
        #expect(region.generators[.velocity] == -1)
        #expect(region.generators[.exclusiveClass] == 0)
        #expect(region.generators[.startAddressOffset] == 0)
        #expect(file.warnings.count == forbidden.count, "\(file.warnings)")
        for (i, warning) in file.warnings.enumerated() {
            #expect(warning.location.chunk == "pdta/pgen")
            #expect(warning.location.record == i)
            #expect(warning.message.contains("may not be set in a preset zone"))
            #expect(warning.message.contains("preset 'P' zone 0"))
        }
    }

    @Test("Key and velocity ranges intersect; zones whose ranges do not meet give no region")
    func rangesIntersect() throws {
        var writer = W.minimal()
        writer.instruments = [W.Instrument(name: "I", zones: [
            W.Zone([W.keys(0, 50), W.sample(0)]),
            W.Zone([W.keys(51, 60), W.velocities(0, 63), W.sample(0)]),
            W.Zone([W.keys(90, 127), W.sample(0)]),
            W.Zone([W.keys(40, 80), W.velocities(110, 127), W.sample(0)]),
        ])]
        writer.presets = [W.Preset(name: "P", zones: [W.Zone([W.keys(40, 80), W.velocities(32, 100), W.instrument(0)])])]
        let file = try read(writer)
        #expect(file.warnings.isEmpty)
        let regions = allRegions(file.bank)
        #expect(regions.map(\.keyRange) == [40...50, 51...60])
        #expect(regions.map(\.velocityRange) == [32...100, 32...63])
    }

    @Test("Modulators: zone modulators replace identical default and global ones; preset modulators follow")
    func modulatorPrecedence() throws {
        let volumeOff = SoundFontModulator(source: 0x0587, destination: 48, amount: 0, amountSource: 0, transform: 0)
        let wheelToCutoff = SoundFontModulator(source: 0x0081, destination: 8, amount: -1200, amountSource: 0, transform: 0)
        var wheelToCutoffLocal = wheelToCutoff
        wheelToCutoffLocal.amount = -2400
        let brightness = SoundFontModulator(source: 0x00CA, destination: 8, amount: 600, amountSource: 0, transform: 0)
        let wheelToPan = SoundFontModulator(source: 0x0081, destination: 17, amount: 100, amountSource: 0, transform: 0)
        var wheelToPanLocal = wheelToPan
        wheelToPanLocal.amount = 200
        let expressionBoost = SoundFontModulator(source: 0x008B, destination: 48, amount: 100, amountSource: 0, transform: 0)
        var writer = W.minimal()
        writer.instruments = [W.Instrument(name: "I", zones: [
            W.Zone([], modulators: [volumeOff, wheelToCutoff]),
            W.Zone([W.sample(0)], modulators: [wheelToCutoffLocal, brightness]),
        ])]
        writer.presets = [W.Preset(name: "P", zones: [
            W.Zone([], modulators: [wheelToPan, expressionBoost]),
            W.Zone([W.instrument(0)], modulators: [wheelToPanLocal]),
        ])]
        let file = try read(writer)
        #expect(file.warnings.isEmpty, "\(file.warnings)")
        var expected = SoundFontModulator.defaults
        expected[4] = volumeOff
        expected += [wheelToCutoffLocal, brightness, wheelToPanLocal, expressionBoost]
        #expect(allRegions(file.bank).first?.modulators == expected)
    }

    @Test("Linked modulators, invalid sources and duplicates within a zone are dropped with warnings")
    func invalidModulators() throws {
        let linked = SoundFontModulator(source: 0x0081, destination: 0x8001, amount: 10, amountSource: 0, transform: 0)
        let dataEntry = SoundFontModulator(source: 0x0086, destination: 17, amount: 10, amountSource: 0, transform: 0)
        let badTransform = SoundFontModulator(source: 0x0081, destination: 17, amount: 10, amountSource: 0, transform: 7)
        let good = SoundFontModulator(source: 0x0081, destination: 17, amount: 10, amountSource: 0, transform: 0)
        var writer = W.minimal()
        writer.instruments = [W.Instrument(name: "I", zones: [W.Zone([W.sample(0)], modulators: [linked, dataEntry, badTransform, good, good])])]
        let file = try read(writer)
        #expect(allRegions(file.bank).first?.modulators == SoundFontModulator.defaults + [good])
        #expect(file.warnings.map(\.location.record) == [0, 1, 2, 4])
        #expect(file.warnings.allSatisfy { $0.location.chunk == "pdta/imod" })
        #expect(file.warnings[0].message.contains("linked modulators are not supported"))
        #expect(file.warnings[1].message.contains("controller 6"))
        #expect(file.warnings[3].message.contains("identical"))
    }

    @Test("Layered presets give a region per layer; split presets a region per split")
    func layeredAndSplit() throws {
        var writer = W.minimal()
        writer.samples.append(W.Sample(name: "second", points: W.sinePoints(80, amplitude: 5000)))
        writer.instruments = [
            W.Instrument(name: "A", zones: [W.Zone([W.sample(0)])]),
            W.Instrument(name: "B", zones: [W.Zone([W.sample(1)])]),
        ]
        writer.presets = [
            W.Preset(name: "Layer", program: 0, zones: [W.Zone([W.instrument(0)]), W.Zone([W.instrument(1)])]),
            W.Preset(name: "Split", program: 1, zones: [W.Zone([W.keys(0, 59), W.instrument(0)]), W.Zone([W.keys(60, 127), W.instrument(1)])]),
            W.Preset(name: "Drums", program: 0, bank: 128, zones: [W.Zone([W.keys(35, 35), W.instrument(1)])]),
        ]
        let bank = try read(writer).bank
        let layer = try #require(bank.preset(bank: 0, program: 0))
        #expect(layer.regions.map(\.sampleIndex) == [0, 1])
        #expect(layer.regions.allSatisfy { $0.keyRange == 0...127 })
        let split = try #require(bank.preset(bank: 0, program: 1))
        #expect(split.regions.map(\.sampleIndex) == [0, 1])
        #expect(split.regions.map(\.keyRange) == [0...59, 60...127])
        let drums = try #require(bank.preset(bank: 128, program: 0))
        #expect(drums.name == "Drums")
        #expect(drums.regions.map(\.keyRange) == [35...35])
        #expect(bank.preset(bank: 0, program: 2) == nil)
    }

    @Test("Generator order: a late key range and generators after the sample are ignored; a repeated generator's last value wins")
    func generatorOrder() throws {
        var writer = W.minimal()
        writer.instruments = [W.Instrument(name: "I", zones: [
            W.Zone([W.gen(.pan, 10), W.keys(0, 10), W.gen(.pan, 20), W.sample(0), W.gen(.pan, 30), W.gen(.coarseTune, 5)]),
        ])]
        let file = try read(writer)
        let region = try #require(allRegions(file.bank).first)
        #expect(region.keyRange == 0...127, "a key range that is not first is ignored")
        #expect(region.generators[.pan] == 20)
        #expect(region.generators[.coarseTune] == 0)
        let messages = file.warnings.map(\.message)
        #expect(messages.count == 3, "\(messages)")
        #expect(messages.contains { $0.contains("key range is not the zone's first generator") })
        #expect(messages.contains { $0.contains("pan given twice") })
        #expect(messages.contains { $0.contains("2 generator(s) after the sample generator ignored") })
    }

    @Test("A zone without a sample is global only when first; later ones are ignored")
    func globalZoneOnlyFirst() throws {
        var writer = W.minimal()
        writer.instruments = [W.Instrument(name: "I", zones: [W.Zone([W.sample(0)]), W.Zone([W.gen(.pan, 300)])])]
        writer.presets = [W.Preset(name: "P", zones: [W.Zone([W.instrument(0)]), W.Zone([W.gen(.pan, 100)])])]
        let file = try read(writer)
        #expect(allRegions(file.bank).map { $0.generators[.pan] } == [0])
        #expect(file.warnings.count == 2)
        #expect(file.warnings.contains { $0.location.chunk == "pdta/ibag" && $0.message.contains("instrument 'I' zone 1 has no sample and is not the first zone") })
        #expect(file.warnings.contains { $0.location.chunk == "pdta/pbag" && $0.message.contains("preset 'P' zone 1 has no instrument") })
    }

    @Test("Stereo pairs keep their link and kind; a link past the samples is dropped")
    func stereoLinks() throws {
        var writer = W.minimal()
        writer.samples = [
            W.Sample(name: "L", points: W.sinePoints(60), type: 4, link: 1),
            W.Sample(name: "R", points: W.sinePoints(60), type: 2, link: 0),
            W.Sample(name: "lost", points: W.sinePoints(60), type: 4, link: 9),
        ]
        writer.instruments = [W.Instrument(name: "Stereo", zones: [
            W.Zone([W.gen(.pan, -500), W.sample(0)]), W.Zone([W.gen(.pan, 500), W.sample(1)]), W.Zone([W.sample(2)]),
        ])]
        let file = try read(writer)
        let samples = file.bank.samples
        #expect(samples.map(\.kind) == [.left, .right, .left])
        #expect(samples.map(\.link) == [1, 0, nil])
        #expect(file.warnings.count == 1)
        #expect(file.warnings.first?.location == SoundFontLocation(chunk: "pdta/shdr", record: 2, offset: file.warnings.first!.location.offset))
        #expect(file.warnings.first?.message.contains("links to sample 9") == true)
        #expect(allRegions(file.bank).map(\.sampleIndex) == [0, 1, 2])
    }
}
