import SoundFont
import Testing
@testable import Sampler

/// The compiled bank's table of the preset a channel plays for each bank and program, built in
/// one pass over the presets, against ``CompiledBank/fallbackPreset(_:bank:program:)`` asked
/// entry by entry.
@Suite struct CompiledBankLookupTests {
    func expectLookupMatchesFallback(_ presets: [(bank: Int, program: Int, regions: [TestRegion])]) {
        let bank = makeBank(samples: [.constant(1_000)], presets: presets)
        let compiled = CompiledBank(bank)
        for b in 0..<CompiledBank.lookupBanks {
            for program in 0..<128 {
                #expect(compiled.preset(bank: b, program: program)
                        == CompiledBank.fallbackPreset(bank, bank: b, program: program) ?? -1,
                        "bank \(b) program \(program)")
            }
        }
    }

    @Test func everyEntryIsTheFallbackPreset() {
        let region = [TestRegion()]
        // Duplicates (the first in file order wins), a kit at 128:0 and another, melodic banks
        // with and without bank 0's program, banks beyond the table, and a program out of range.
        expectLookupMatchesFallback([
            (3, 5, region), (0, 5, region), (0, 7, region), (0, 5, region), (128, 0, region), (128, 25, region),
            (3, 5, region), (7, 127, region), (200, 1, region), (129, 3, region), (1, 130, region),
        ])
        // No preset in bank 0 nor a standard kit: the first preset everywhere else.
        expectLookupMatchesFallback([(2, 9, region), (128, 16, region)])
        // A bank with one preset (an audio file's patch) plays on every channel.
        expectLookupMatchesFallback([(0, 0, region)])
        // No preset at all: -1 throughout.
        expectLookupMatchesFallback([])
    }
}

/// A sampler made with a smaller voice pool takes voice limits up to its ceiling.
@Suite struct VoiceLimitCeilingTests {
    @Test func theVoiceLimitParameterEndsAtTheCeiling() {
        let bank = makeBank(samples: [.constant(1_000)], presets: [(0, 0, [TestRegion()])])
        let full = SamplerNode(bank: bank)
        #expect(full.voiceLimitCeiling == SamplerNode.maximumVoiceLimit)
        #expect(full.parameters[SamplerNode.Parameter.voiceLimit] == Float(SamplerNode.defaultVoiceLimit))
        let small = SamplerNode(bank: bank, maximumVoiceLimit: 16)
        #expect(small.voiceLimitCeiling == 16)
        #expect(small.poolSize == 16 + SamplerNode.fadeReserve)
        #expect(small.parameters[SamplerNode.Parameter.voiceLimit] == 16)
        small.setParameter(SamplerNode.Parameter.voiceLimit, value: 100)
        #expect(small.parameters[SamplerNode.Parameter.voiceLimit] == 16)
        #expect(SamplerNode(bank: bank, maximumVoiceLimit: 100_000).voiceLimitCeiling == SamplerNode.maximumVoiceLimit)
    }
}
