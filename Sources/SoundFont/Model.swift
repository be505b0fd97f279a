// The SoundFont 2.04 data model shared by the bank reader and the sampler.
//
// The reader resolves the hydra (preset -> instrument -> zones) into flat ``SoundFontRegion``s
// when a bank is opened, so starting a voice on the audio thread is a lookup and a copy: no
// precedence rules and no allocation at note-on.

/// SoundFont 2.04 generator operators (specification section 8.1.2). The raw value is the
/// generator's index in a ``SoundFontGenerators`` set.
public enum SoundFontGenerator: Int, CaseIterable, Sendable {
    /// Sample frames added to the sample's start.
    case startAddressOffset = 0
    /// Sample frames added to the sample's end.
    case endAddressOffset = 1
    /// Sample frames added to the loop's start.
    case startLoopAddressOffset = 2
    /// Sample frames added to the loop's end.
    case endLoopAddressOffset = 3
    /// Units of 32,768 frames added to the sample's start.
    case startAddressCoarseOffset = 4
    /// Modulation LFO to pitch, in cents at full excursion.
    case modLFOToPitch = 5
    /// Vibrato LFO to pitch, in cents at full excursion.
    case vibLFOToPitch = 6
    /// Modulation envelope to pitch, in cents at full level.
    case modEnvToPitch = 7
    /// The low-pass filter's cutoff, in absolute cents (13,500: open).
    case initialFilterCutoff = 8
    /// The filter's resonance, in centibels above the DC gain.
    case initialFilterQ = 9
    /// Modulation LFO to the filter cutoff, in cents.
    case modLFOToFilterCutoff = 10
    /// Modulation envelope to the filter cutoff, in cents.
    case modEnvToFilterCutoff = 11
    /// Units of 32,768 frames added to the sample's end.
    case endAddressCoarseOffset = 12
    /// Modulation LFO to volume, in centibels (tremolo).
    case modLFOToVolume = 13
    /// Unused (14).
    case unused1 = 14
    /// Chorus send, in 0.1 % units.
    case chorusEffectsSend = 15
    /// Reverb send, in 0.1 % units.
    case reverbEffectsSend = 16
    /// Pan, in 0.1 % units from -500 (left) to 500 (right).
    case pan = 17
    /// Unused (18).
    case unused2 = 18
    /// Unused (19).
    case unused3 = 19
    /// Unused (20).
    case unused4 = 20
    /// Delay before the modulation LFO starts, in timecents.
    case delayModLFO = 21
    /// The modulation LFO's frequency, in absolute cents.
    case freqModLFO = 22
    /// Delay before the vibrato LFO starts, in timecents.
    case delayVibLFO = 23
    /// The vibrato LFO's frequency, in absolute cents.
    case freqVibLFO = 24
    /// The modulation envelope's delay, in timecents.
    case delayModEnv = 25
    /// The modulation envelope's attack, in timecents.
    case attackModEnv = 26
    /// The modulation envelope's hold, in timecents.
    case holdModEnv = 27
    /// The modulation envelope's decay, in timecents.
    case decayModEnv = 28
    /// The modulation envelope's sustain level, in 0.1 % below full.
    case sustainModEnv = 29
    /// The modulation envelope's release, in timecents.
    case releaseModEnv = 30
    /// Timecents per key added to the modulation envelope's hold (from key 60).
    case keyNumberToModEnvHold = 31
    /// Timecents per key added to the modulation envelope's decay (from key 60).
    case keyNumberToModEnvDecay = 32
    /// The volume envelope's delay, in timecents.
    case delayVolEnv = 33
    /// The volume envelope's attack, in timecents.
    case attackVolEnv = 34
    /// The volume envelope's hold, in timecents.
    case holdVolEnv = 35
    /// The volume envelope's decay, in timecents.
    case decayVolEnv = 36
    /// The volume envelope's sustain level, in centibels of attenuation.
    case sustainVolEnv = 37
    /// The volume envelope's release, in timecents.
    case releaseVolEnv = 38
    /// Timecents per key added to the volume envelope's hold (from key 60).
    case keyNumberToVolEnvHold = 39
    /// Timecents per key added to the volume envelope's decay (from key 60).
    case keyNumberToVolEnvDecay = 40
    /// The instrument a preset zone plays (terminal generator of preset zones).
    case instrument = 41
    /// Reserved (42).
    case reserved1 = 42
    /// The keys a zone plays: low and high byte.
    case keyRange = 43
    /// The velocities a zone plays: low and high byte.
    case velocityRange = 44
    /// Units of 32,768 frames added to the loop's start.
    case startLoopAddressCoarseOffset = 45
    /// A fixed key the zone plays every note as (-1: the played key).
    case keyNumber = 46
    /// A fixed velocity the zone plays every note with (-1: the played velocity).
    case velocity = 47
    /// Attenuation, in centibels.
    case initialAttenuation = 48
    /// Reserved (49).
    case reserved2 = 49
    /// Units of 32,768 frames added to the loop's end.
    case endLoopAddressCoarseOffset = 50
    /// Transposition, in semitones.
    case coarseTune = 51
    /// Tuning, in cents.
    case fineTune = 52
    /// The sample an instrument zone plays (terminal generator of instrument zones).
    case sampleID = 53
    /// Looping: 0 none, 1 continuous, 3 until the key is released.
    case sampleModes = 54
    /// Reserved (55).
    case reserved3 = 55
    /// Cents of pitch per key (100: the equal-tempered scale).
    case scaleTuning = 56
    /// Notes of one non-zero class cut each other off (open and closed hi-hat).
    case exclusiveClass = 57
    /// The key the sample sounds at unshifted, overriding the sample's (-1: not set).
    case overridingRootKey = 58
    /// Unused (59).
    case unused5 = 59
    /// The end of a generator list (60).
    case endOperator = 60

    /// Number of generator operators the specification defines.
    public static let count = 61
}

/// One value per generator operator: the effective generator values of a region.
///
/// Values are the specification's units (cents, timecents, centibels, 0.1 %, samples...);
/// `-1` in ``SoundFontGenerator/keyNumber``, ``SoundFontGenerator/velocity`` and
/// ``SoundFontGenerator/overridingRootKey`` means "not set". Ranges are kept separately in
/// ``SoundFontRegion``.
public struct SoundFontGenerators: Sendable, Hashable {
    /// The values, index = the `rawValue` of a ``SoundFontGenerator``.
    public var values: [Int32]

    /// The specification's default values (section 8.1.3).
    public static let defaults: SoundFontGenerators = {
        var values = [Int32](repeating: 0, count: SoundFontGenerator.count)
        values[SoundFontGenerator.initialFilterCutoff.rawValue] = 13_500
        for g in [SoundFontGenerator.delayModLFO, .delayVibLFO, .delayModEnv, .attackModEnv, .holdModEnv,
                  .decayModEnv, .releaseModEnv, .delayVolEnv, .attackVolEnv, .holdVolEnv, .decayVolEnv,
                  .releaseVolEnv] {
            values[g.rawValue] = -12_000
        }
        values[SoundFontGenerator.keyNumber.rawValue] = -1
        values[SoundFontGenerator.velocity.rawValue] = -1
        values[SoundFontGenerator.scaleTuning.rawValue] = 100
        values[SoundFontGenerator.overridingRootKey.rawValue] = -1
        return SoundFontGenerators(values: values)
    }()

    /// Wraps `values`, which must hold ``SoundFontGenerator/count`` entries.
    public init(values: [Int32]) {
        precondition(values.count == SoundFontGenerator.count, "a generator set has 61 values")
        self.values = values
    }

    /// The value of generator `g`.
    @inlinable
    public subscript(_ g: SoundFontGenerator) -> Int32 {
        get { values[g.rawValue] }
        set { values[g.rawValue] = newValue }
    }
}

/// A modulator record (specification section 8.2): a source, an optional amount source, a
/// destination generator, an amount and a transform.
///
/// Sources are the raw 16-bit `SFModulator` words: index in bits 0-6, CC flag bit 7, direction
/// bit 8, polarity bit 9, curve type bits 10-15.
public struct SoundFontModulator: Sendable, Hashable {
    /// The primary source.
    public var source: UInt16
    /// The destination generator operator. (A destination with bit 15 set links to another
    /// modulator; such links are resolved by the reader or dropped.)
    public var destination: UInt16
    /// The amount, in the destination's units, at full source value.
    public var amount: Int16
    /// The secondary source scaling `amount`; 0 (no controller) means 1.
    public var amountSource: UInt16
    /// 0 = linear, 2 = absolute value.
    public var transform: UInt16

    /// Creates a modulator record.
    public init(source: UInt16, destination: UInt16, amount: Int16, amountSource: UInt16, transform: UInt16) {
        self.source = source
        self.destination = destination
        self.amount = amount
        self.amountSource = amountSource
        self.transform = transform
    }

    /// Two modulators are identical (and the later one replaces the earlier) when everything
    /// but the amount matches (specification section 9.5.1).
    public func isIdentical(to other: SoundFontModulator) -> Bool {
        source == other.source && destination == other.destination
            && amountSource == other.amountSource && transform == other.transform
    }

    /// Where each of the ten default modulators (section 8.4) sits in ``defaults``.
    public enum Default: Int, CaseIterable, Sendable {
        /// 8.4.1: note-on velocity to initial attenuation.
        case velocityToAttenuation
        /// 8.4.2: note-on velocity to filter cutoff.
        case velocityToFilterCutoff
        /// 8.4.3: channel pressure to vibrato LFO pitch depth.
        case channelPressureToVibrato
        /// 8.4.4: the modulation wheel (CC 1) to vibrato LFO pitch depth.
        case modulationWheelToVibrato
        /// 8.4.5: volume (CC 7) to initial attenuation.
        case volumeToAttenuation
        /// 8.4.6: pan (CC 10) to pan.
        case panToPan
        /// 8.4.7: expression (CC 11) to initial attenuation.
        case expressionToAttenuation
        /// 8.4.8: CC 91 to the reverb send.
        case reverbSend
        /// 8.4.9: CC 93 to the chorus send.
        case chorusSend
        /// 8.4.10: the pitch wheel to initial pitch, scaled by its sensitivity.
        case pitchWheelToPitch
    }

    /// The ten default modulators every instrument zone starts with (section 8.4), in the
    /// order of ``Default``.
    ///
    /// Velocity-to-filter-cutoff follows FluidSynth rather than the letter of the
    /// specification (whose secondary source makes the modulator a no-op in most players):
    /// a linear negative velocity source gated by a velocity switch. Banks are voiced against
    /// FluidSynth, and that is the sound users compare with.
    public static let defaults: [SoundFontModulator] = [
        // 8.4.1 MIDI note-on velocity to initial attenuation: negative, concave, 960 cB.
        SoundFontModulator(source: 0x0502, destination: 48, amount: 960, amountSource: 0, transform: 0),
        // 8.4.2 velocity to filter cutoff: negative linear, -2400 cents, switched by velocity.
        SoundFontModulator(source: 0x0102, destination: 8, amount: -2400, amountSource: 0x0C02, transform: 0),
        // 8.4.3 channel pressure to vibrato LFO pitch depth: 50 cents.
        SoundFontModulator(source: 0x000D, destination: 6, amount: 50, amountSource: 0, transform: 0),
        // 8.4.4 CC1 (modulation wheel) to vibrato LFO pitch depth: 50 cents.
        SoundFontModulator(source: 0x0081, destination: 6, amount: 50, amountSource: 0, transform: 0),
        // 8.4.5 CC7 (volume) to initial attenuation: negative concave, 960 cB.
        SoundFontModulator(source: 0x0587, destination: 48, amount: 960, amountSource: 0, transform: 0),
        // 8.4.6 CC10 (pan) to pan: bipolar linear, 1000 (0.1 % units).
        SoundFontModulator(source: 0x028A, destination: 17, amount: 1000, amountSource: 0, transform: 0),
        // 8.4.7 CC11 (expression) to initial attenuation: negative concave, 960 cB.
        SoundFontModulator(source: 0x058B, destination: 48, amount: 960, amountSource: 0, transform: 0),
        // 8.4.8 CC91 (reverb send) to reverb send: 200 (0.1 % units).
        SoundFontModulator(source: 0x00DB, destination: 16, amount: 200, amountSource: 0, transform: 0),
        // 8.4.9 CC93 (chorus send) to chorus send: 200.
        SoundFontModulator(source: 0x00DD, destination: 15, amount: 200, amountSource: 0, transform: 0),
        // 8.4.10 pitch wheel to initial pitch, scaled by pitch wheel sensitivity: 12700 cents.
        SoundFontModulator(source: 0x020E, destination: 52, amount: 12_700, amountSource: 0x0010, transform: 0),
    ]
}

/// A sample header (`shdr` record) with its points as absolute indices into the bank's
/// sample data, or, for a SoundFont 3 compressed sample (``isCompressed``), the byte range of
/// its Ogg Vorbis stream in the `smpl` chunk and loop points relative to the decoded sample.
public struct SoundFontSample: Sendable, Hashable {
    /// The sample's name.
    public var name: String
    /// First data point (compressed: first byte of the stream in `smpl`).
    public var start: Int
    /// One past the last data point (compressed: one past the stream's last byte).
    public var end: Int
    /// First point of the loop (compressed: counted from the decoded sample's first point).
    public var loopStart: Int
    /// First point after the loop (compressed: counted from the decoded sample's first point).
    public var loopEnd: Int
    /// Recording sample rate in hertz.
    public var sampleRate: Int
    /// MIDI key the sample sounds at unshifted.
    public var originalPitch: UInt8
    /// Pitch correction in cents.
    public var pitchCorrection: Int8
    /// Index of the other half of a stereo pair (`linkedSample`), if any.
    public var link: Int?
    /// How the sample plays in a stereo pair.
    public var kind: Kind
    /// True for an Ogg Vorbis compressed sample of a SoundFont 3 bank (sample type bit 0x10);
    /// its points come from ``SoundFontBank/compressedSamples``.
    public var isCompressed = false

    /// Stereo role of a sample (`sfSampleLink`, ROM flag removed).
    public enum Kind: Sendable, Hashable {
        /// A sample of its own.
        case mono
        /// The left half of a stereo pair.
        case left
        /// The right half of a stereo pair.
        case right
        /// A sample of a linked chain (`sfSampleLink` 8), which the specification defines but
        /// does not describe further.
        case linked
    }

    /// Creates a sample header.
    public init(name: String, start: Int, end: Int, loopStart: Int, loopEnd: Int, sampleRate: Int,
                originalPitch: UInt8, pitchCorrection: Int8, link: Int? = nil, kind: Kind = .mono,
                isCompressed: Bool = false) {
        self.name = name
        self.start = start
        self.end = end
        self.loopStart = loopStart
        self.loopEnd = loopEnd
        self.sampleRate = sampleRate
        self.originalPitch = originalPitch
        self.pitchCorrection = pitchCorrection
        self.link = link
        self.kind = kind
        self.isCompressed = isCompressed
    }
}

/// One playable region of a preset: an instrument zone as seen through one preset zone, with
/// everything resolved. A note plays every region whose key and velocity ranges contain it.
public struct SoundFontRegion: Sendable, Hashable {
    /// Keys the region answers (the intersection of the preset zone's and instrument zone's
    /// ranges).
    public var keyRange: ClosedRange<UInt8>
    /// Velocities the region answers (intersection as for keys).
    public var velocityRange: ClosedRange<UInt8>
    /// Index into ``SoundFontBank/samples``.
    public var sampleIndex: Int
    /// Effective generator values: the instrument level (defaults, then global zone, then the
    /// zone) plus the preset level's offsets (global zone, then the zone) for every generator
    /// the specification lets a preset offset.
    public var generators: SoundFontGenerators
    /// Every modulator that applies, in order: the instrument level's (defaults replaced by
    /// identical global-zone and zone modulators) followed by the preset level's, whose
    /// contributions add.
    public var modulators: [SoundFontModulator]

    /// Creates a region.
    public init(keyRange: ClosedRange<UInt8>, velocityRange: ClosedRange<UInt8>, sampleIndex: Int,
                generators: SoundFontGenerators, modulators: [SoundFontModulator]) {
        self.keyRange = keyRange
        self.velocityRange = velocityRange
        self.sampleIndex = sampleIndex
        self.generators = generators
        self.modulators = modulators
    }
}

/// A preset (`phdr` record) with its resolved regions.
public struct SoundFontPreset: Sendable, Hashable {
    /// The preset's name.
    public var name: String
    /// MIDI bank: 0-127 for melodic banks, 128 for percussion.
    public var bank: Int
    /// MIDI program, 0-127.
    public var program: Int
    /// Playable regions in file order.
    public var regions: [SoundFontRegion]

    /// Creates a preset.
    public init(name: String, bank: Int, program: Int, regions: [SoundFontRegion]) {
        self.name = name
        self.bank = bank
        self.program = program
        self.regions = regions
    }
}

/// Sample points of a bank: 16-bit words, plus the optional low bytes of 24-bit samples
/// (`sm24`). The memory is owned by whoever created the bank (a file mapping or an array kept
/// alive by ``SoundFontBank``) and never changes after loading, so the audio thread may read it.
public struct SoundFontSampleData: @unchecked Sendable {
    /// The 16-bit sample words.
    public let words: UnsafeBufferPointer<Int16>
    /// The low bytes of 24-bit samples, same length as `words`, or nil.
    public let lowBytes: UnsafeBufferPointer<UInt8>?

    /// Wraps sample memory.
    public init(words: UnsafeBufferPointer<Int16>, lowBytes: UnsafeBufferPointer<UInt8>?) {
        self.words = words
        self.lowBytes = lowBytes
    }
}

/// A loaded bank: presets resolved into regions, sample headers and sample memory.
///
/// Immutable after loading and safe to share between the control and audio threads. The
/// reader creates banks from files; tests and audio-file patches create them from parts.
public final class SoundFontBank: Sendable {
    /// The bank's name (`INAM`), or the file name when it has none.
    public let name: String
    /// Presets in file order.
    public let presets: [SoundFontPreset]
    /// Sample headers, index = `shdr` record (terminal record excluded).
    public let samples: [SoundFontSample]
    /// The sample points every uncompressed ``SoundFontSample`` indexes into.
    public let sampleData: SoundFontSampleData
    /// The Ogg Vorbis samples of a SoundFont 3 bank, decoded on request; nil when the bank
    /// has none.
    public let compressedSamples: SoundFontCompressedSamples?
    /// Presets by `bank << 7 | program`, first one in file order wins.
    private let presetIndex: [Int: Int]
    /// Keeps the memory behind ``sampleData`` alive (a mapping or an allocation).
    private let storage: SampleStorage

    /// Owner of sample memory; releases it when the bank goes away.
    public protocol SampleStorage: AnyObject, Sendable {
        /// Lets the operating system drop the pages of sample memory it can read again from
        /// the file (a memory-mapped bank's); does nothing for memory the storage allocated.
        func releaseReloadablePages()
    }

    /// Creates a bank over sample memory owned by `storage`.
    public init(name: String, presets: [SoundFontPreset], samples: [SoundFontSample],
                sampleData: SoundFontSampleData, storage: SampleStorage,
                compressedSamples: SoundFontCompressedSamples? = nil) {
        self.name = name
        self.presets = presets
        self.samples = samples
        self.sampleData = sampleData
        self.storage = storage
        self.compressedSamples = compressedSamples
        var index: [Int: Int] = [:]
        for (i, p) in presets.enumerated() where index[p.bank << 7 | p.program] == nil {
            index[p.bank << 7 | p.program] = i
        }
        presetIndex = index
    }

    /// Creates a bank that owns a copy of `words` (and `lowBytes` for 24-bit data).
    public convenience init(name: String, presets: [SoundFontPreset], samples: [SoundFontSample],
                            words: [Int16], lowBytes: [UInt8]? = nil) {
        let owned = OwnedSamples(words: words, lowBytes: lowBytes)
        self.init(name: name, presets: presets, samples: samples, sampleData: owned.data, storage: owned)
    }

    /// Drops from this process's resident memory the sample pages of a memory-mapped bank.
    ///
    /// The pages stay in the system's file cache and come back, unchanged, when a voice reads
    /// them again; sample data the bank allocated (copied or decoded) is kept. A program that
    /// renders many songs with one bank calls this between songs, so its memory holds what the
    /// current song plays rather than every sample any song touched. Safe while voices play
    /// (they fault the pages back in), but a real-time player should not call it, as those
    /// page faults take time on the render thread.
    public func releaseReloadableSampleMemory() {
        storage.releaseReloadablePages()
    }

    /// The preset for `bank` and `program`, if the bank has one.
    public func preset(bank: Int, program: Int) -> SoundFontPreset? {
        presetIndex[bank << 7 | program].map { presets[$0] }
    }

    /// Index into ``presets`` of the preset for `bank` and `program`, if any.
    public func presetPosition(bank: Int, program: Int) -> Int? {
        presetIndex[bank << 7 | program]
    }
}

extension SoundFontBank.SampleStorage {
    /// Allocated memory cannot be read again from a file: kept.
    public func releaseReloadablePages() {}
}

/// Sample memory allocated and owned by a bank.
final class OwnedSamples: SoundFontBank.SampleStorage, @unchecked Sendable {
    let data: SoundFontSampleData

    init(words: [Int16], lowBytes: [UInt8]?) {
        let w = UnsafeMutableBufferPointer<Int16>.allocate(capacity: max(words.count, 1))
        _ = w.initialize(from: words)
        var low: UnsafeBufferPointer<UInt8>?
        if let lowBytes {
            let l = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(lowBytes.count, 1))
            _ = l.initialize(from: lowBytes)
            low = UnsafeBufferPointer(rebasing: l[0..<lowBytes.count])
        }
        data = SoundFontSampleData(words: UnsafeBufferPointer(rebasing: w[0..<words.count]), lowBytes: low)
    }

    deinit {
        UnsafeMutableRawPointer(mutating: data.words.baseAddress)?.deallocate()
        if let low = data.lowBytes { UnsafeMutableRawPointer(mutating: low.baseAddress)?.deallocate() }
    }
}
