extension SoundFontGenerator {
    /// The range the specification gives the generator's value (section 8.1.3), or nil where it
    /// gives none (sample address offsets, which only the sample's bounds limit; sample modes;
    /// the instrument and sample indices; unused and reserved operators).
    ///
    /// The reader stores generator values as summed from the bank, without clamping: the
    /// specification clamps the final value of a voice, after modulators have added to it, and
    /// the sampler does that with this range.
    public var specificationRange: ClosedRange<Int32>? {
        switch self {
        case .modLFOToPitch, .vibLFOToPitch, .modEnvToPitch, .modLFOToFilterCutoff, .modEnvToFilterCutoff:
            return -12_000...12_000
        case .initialFilterCutoff: return 1_500...13_500
        case .initialFilterQ: return 0...960
        case .modLFOToVolume: return -960...960
        case .chorusEffectsSend, .reverbEffectsSend, .sustainModEnv: return 0...1_000
        case .pan: return -500...500
        case .delayModLFO, .delayVibLFO, .delayModEnv, .holdModEnv, .delayVolEnv, .holdVolEnv: return -12_000...5_000
        case .freqModLFO, .freqVibLFO: return -16_000...4_500
        case .attackModEnv, .decayModEnv, .releaseModEnv, .attackVolEnv, .decayVolEnv, .releaseVolEnv: return -12_000...8_000
        case .keyNumberToModEnvHold, .keyNumberToModEnvDecay, .keyNumberToVolEnvHold, .keyNumberToVolEnvDecay: return -1_200...1_200
        case .sustainVolEnv, .initialAttenuation: return 0...1_440
        case .keyRange, .velocityRange, .keyNumber, .velocity, .exclusiveClass, .overridingRootKey: return 0...127
        case .coarseTune: return -120...120
        case .fineTune: return -99...99
        case .scaleTuning: return 0...1_200
        case .startAddressOffset, .endAddressOffset, .startLoopAddressOffset, .endLoopAddressOffset,
             .startAddressCoarseOffset, .endAddressCoarseOffset, .startLoopAddressCoarseOffset, .endLoopAddressCoarseOffset,
             .instrument, .sampleID, .sampleModes, .unused1, .unused2, .unused3, .unused4, .unused5,
             .reserved1, .reserved2, .reserved3, .endOperator:
            return nil
        }
    }
}
