import AudioEffects
import AudioGraph
import Foundation
import MIDI
import SoundFont

/// A SoundFont 2 sampler: sixteen MIDI channels playing the presets of a `SoundFontBank`,
/// voiced to sound like FluidSynth with the same bank.
///
/// Every generator that shapes sound is honoured (sample offsets, loop modes, tuning, both
/// envelopes, both LFOs, the resonant low-pass filter, attenuation, pan, effect sends,
/// exclusive classes, forced key and velocity), and modulators (the ten defaults plus the
/// bank's) are evaluated from velocity, key, pressures, pitch wheel and any controller.
///
/// Rendering follows the `AudioNode` contract: sample interpolation (4-point cubic), the
/// filter and gain ramps run per sample; envelopes, LFOs, pitch and filter coefficients are
/// recomputed every ``controlInterval`` frames on a grid of absolute frame numbers, so the
/// output is bit-identical whatever the block size. A note starts at its exact frame. Voices
/// live in a pool allocated when the node is created; nothing allocates while rendering.
///
/// The voices' reverb and chorus sends feed an internal `ReverbNode` and `ChorusNode`,
/// each with a level parameter; level 0 switches an effect off.
public final class SamplerNode: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Output level in dB; 0 dB is FluidSynth's level at its default gain of 0.2.
        public static let volume: UInt32 = 0
        /// Most voices sounding at once (FluidSynth's polyphony); a further voice steals the
        /// quietest released voice, else the oldest, which fades out in a few milliseconds.
        public static let voiceLimit: UInt32 = 1
        /// Wet level of the internal reverb fed by the reverb sends (0 switches it off).
        public static let reverbLevel: UInt32 = 2
        /// Wet level of the internal chorus fed by the chorus sends (0 switches it off).
        public static let chorusLevel: UInt32 = 3
    }

    /// Frames between control updates, on a grid aligned to absolute frame 0; the same step
    /// as FluidSynth's envelopes and LFOs.
    public static let controlInterval = 64
    /// The largest voice limit a sampler can be made with (``init(bank:regionRules:maximumVoiceLimit:)``).
    public static let maximumVoiceLimit = 4096
    /// The default voice limit (FluidSynth's polyphony).
    public static let defaultVoiceLimit = 256
    /// Slots beyond the limit, where stolen voices fade out.
    static let fadeReserve = 64
    /// FluidSynth's default synth.gain, and the scale of 16-bit sample words.
    static let baseGain: Float = 0.2 / 32_768
    /// FluidSynth's noise floor: a decaying voice below it (at the synth gain) is finished.
    static let noiseFloor: Float = 0.000_03 / 0.2

    public let name = "Sampler"
    public let inputBusCount = 0
    public let parameters: NodeParameters
    /// The largest value of the voice-limit parameter this sampler takes; its voice pool holds
    /// that many voices and the fade reserve.
    public let voiceLimitCeiling: Int

    /// The bank the sampler plays.
    public let bank: SoundFontBank
    let compiled: CompiledBank
    /// Selection rules beyond key and velocity ranges, one per region, or nil for SoundFont's.
    let regionRules: CompiledRegionRules?
    /// Some region rule plays a one-pole filter. Without one (every SoundFont bank), groups
    /// of four voices take the symmetric filter form without looking at their voices.
    let playsOnePoleFilters: Bool
    /// Whether groups of four voices none of which sends to the chorus skip the chorus sums;
    /// tests switch it off to check that the output stays the same to the bit.
    var skipsSilentChorusSends = true
    /// Groups of four voices (one per control interval) that skipped the chorus sums.
    var groupsWithoutChorusSend = 0
    let tables = SamplerTables()
    /// Presets a program change selected whose compressed samples are not decoded yet.
    let sampleRequests: PresetSampleRequests?

    struct Channel {
        var program: UInt8 = 0
        var bankMSB: UInt8 = 0
        var preset: Int32 = -1
        var pitchWheel: Float = 8192
        var bendRange: Float = 2
        var channelPressure: Float = 0
        /// CC 74, read only on MPE member channels, where its centre leaves the filter alone.
        var timbre: UInt8 = 64
        var sustain = false
        var sostenuto = false
        var rpnMSB: UInt8 = 127, rpnLSB: UInt8 = 127
        /// Bumped whenever a modulator source changes, so voices recompute on the next step.
        var serial: UInt32 = 1
    }

    let poolSize: Int
    let voices: UnsafeMutablePointer<SamplerVoice>
    let activeList: UnsafeMutablePointer<Int32>
    var activeCount = 0
    /// One past the highest slot taken since the pool was last reset: the slots from here on
    /// still hold a fresh `SamplerVoice()`, so a reset rewrites only the ones below.
    var slotsTouched = 0
    let freeList: UnsafeMutablePointer<Int32>
    /// Scratch for the lowest overflow slot no sounding voice holds (one per slot).
    let overflowSlotTaken: UnsafeMutablePointer<Bool>
    var freeCount = 0
    let channels: UnsafeMutablePointer<Channel>
    let controllers: UnsafeMutablePointer<UInt8>
    let polyPressure: UnsafeMutablePointer<UInt8>
    /// Per generator, the range its final value is clamped to (unbounded where the
    /// specification gives none, or where the value goes on to be combined: pitch tunings take
    /// the pitch wheel, the cutoff is limited after the envelope and LFO add to it, and -1
    /// means "not set" for the forced key, velocity and root key).
    let rangeLow: UnsafeMutablePointer<Float>
    let rangeHigh: UnsafeMutablePointer<Float>
    /// Effective generator values of the voice being set up or updated.
    let effective: UnsafeMutablePointer<Float>
    /// Interpolated points of the four voices being rendered, interleaved (one lane each).
    let lanes: UnsafeMutablePointer<SIMD4<Float>>
    /// The same points as each voice's interpolation writes them: one contiguous run of
    /// ``controlInterval`` floats a lane, so four outputs leave as one vector store.
    let lanePoints: UnsafeMutablePointer<Float>
    /// The filter and gain state of the four voices being rendered.
    let groupState: UnsafeMutablePointer<SamplerLaneState>
    /// Per-frame sums of the lanes' outputs and sends, reduced once per frame.
    let sumL: UnsafeMutablePointer<SIMD4<Float>>
    let sumR: UnsafeMutablePointer<SIMD4<Float>>
    let sumReverb: UnsafeMutablePointer<SIMD4<Float>>
    let sumChorus: UnsafeMutablePointer<SIMD4<Float>>
    /// A voice that is never active: the lanes of a group with fewer than four voices.
    let silentVoice: UnsafeMutablePointer<SamplerVoice>
    /// Catmull-Rom coefficients of the 4-point interpolation by fraction, as FluidSynth
    /// tabulates them (finer: 1024 steps).
    let interpolationTable: UnsafeMutablePointer<SIMD4<Float>>
    static let fractionBits = 10
    /// Points one interpolation stretch may read (see ``interpolate(_:count:into:)``).
    static let windowCapacity = 4096 + 8
    let window: UnsafeMutablePointer<Float>
    static let fractionShift = UInt32(32 - fractionBits)
    var sendFrames = 0
    var reverbSendBuffer: UnsafeMutablePointer<Float>?
    var chorusSendBuffer: UnsafeMutablePointer<Float>?
    var wet: StereoBuffer?
    let effectInput: UnsafeMutablePointer<StereoBuffer>
    let reverb = ReverbNode(roomSize: 0.2, damping: 0, wet: 0.9, dry: 0)
    let chorus = ChorusNode()

    var sampleRate: Double = 44_100
    var serial: UInt64 = 0
    var noteSerial: UInt64 = 0
    var masterGain: Float = SamplerNode.baseGain
    /// What system exclusive set (SamplerSysex.swift): drum channels as a bit mask, master
    /// volume as a linear gain, master tuning in cents, and how bank select is read.
    var drumChannels: UInt16 = 1 << 9
    var sysexVolume: Float = 1
    var fineTuningCents: Double = 0
    var coarseTuningCents: Double = 0
    var bankStyle = BankSelectStyle.gs
    /// MIDI Tuning Standard programs, each channel's choice, and the base (Scala) tuning.
    let tuning = MIDITuningState()
    /// The MPE zones; without a configuration message there are none and nothing changes.
    var mpe = MPEZones()
    var fadeFrames = 132
    /// Frame at which the next `render` starts (the frame of events being received).
    var position: Int64 = 0

    /// Creates a sampler playing `bank`. Flattening the bank for the audio thread and
    /// allocating the voice pool happen here, on the caller's thread. `regionRules`, when not
    /// empty, gives one ``SamplerRegionRule`` per region of the bank's presets in order (a
    /// region beyond the list plays on note-on as in SoundFont).
    ///
    /// `maximumVoiceLimit` (1 to ``maximumVoiceLimit``) is the largest voice limit the
    /// ``Parameter/voiceLimit`` parameter accepts, and sizes the voice pool, which is allocated
    /// and written here in full: the default pool of 4,096 voices and the fade reserve takes
    /// about 2 MB. A smaller one suits a sampler that never raises its limit past it; such a
    /// sampler renders the same as the default one as long as no more voices fade out at once
    /// than its pool has room for beside the sounding ones (stolen voices fade in the slots
    /// beyond the limit; with none free, the fading voice closest to silence is cut).
    public init(bank: SoundFontBank, regionRules: [SamplerRegionRule] = [], maximumVoiceLimit: Int = SamplerNode.maximumVoiceLimit) {
        let ceiling = min(max(maximumVoiceLimit, 1), Self.maximumVoiceLimit)
        voiceLimitCeiling = ceiling
        poolSize = ceiling + Self.fadeReserve
        parameters = NodeParameters([
            AudioParameterInfo(id: Parameter.volume, name: "Volume", range: -60...12, unit: .decibels, defaultValue: 0),
            AudioParameterInfo(id: Parameter.voiceLimit, name: "Voice limit", range: 1...Float(ceiling), unit: .indexed,
                               defaultValue: Float(min(Self.defaultVoiceLimit, ceiling))),
            AudioParameterInfo(id: Parameter.reverbLevel, name: "Reverb level", range: 0...1, unit: .fraction, defaultValue: 0.9),
            AudioParameterInfo(id: Parameter.chorusLevel, name: "Chorus level", range: 0...10, unit: .generic, defaultValue: 2),
        ])
        self.bank = bank
        compiled = CompiledBank(bank)
        self.regionRules = regionRules.isEmpty ? nil : CompiledRegionRules(regionRules)
        playsOnePoleFilters = regionRules.contains { $0.filter.isOnePole }
        sampleRequests = compiled.compressed == nil ? nil : PresetSampleRequests(presetCount: compiled.presetCount)
        voices = .allocate(capacity: poolSize)
        voices.initialize(repeating: SamplerVoice(), count: poolSize)
        activeList = .allocate(capacity: poolSize)
        activeList.initialize(repeating: 0, count: poolSize)
        freeList = .allocate(capacity: poolSize)
        overflowSlotTaken = .allocate(capacity: poolSize)
        overflowSlotTaken.initialize(repeating: false, count: poolSize)
        freeList.initialize(repeating: 0, count: poolSize)
        channels = .allocate(capacity: 16)
        channels.initialize(repeating: Channel(), count: 16)
        controllers = .allocate(capacity: 16 * 128)
        controllers.initialize(repeating: 0, count: 16 * 128)
        polyPressure = .allocate(capacity: 16 * 128)
        polyPressure.initialize(repeating: 0, count: 16 * 128)
        rangeLow = .allocate(capacity: SoundFontGenerator.count)
        rangeHigh = .allocate(capacity: SoundFontGenerator.count)
        let unclamped: Set<SoundFontGenerator> = [.coarseTune, .fineTune, .initialFilterCutoff, .keyNumber, .velocity,
                                                  .overridingRootKey]
        for g in SoundFontGenerator.allCases {
            let range = unclamped.contains(g) ? nil : g.specificationRange
            rangeLow[g.rawValue] = range.map { Float($0.lowerBound) } ?? -.infinity
            rangeHigh[g.rawValue] = range.map { Float($0.upperBound) } ?? .infinity
        }
        effective = .allocate(capacity: SoundFontGenerator.count)
        effective.initialize(repeating: 0, count: SoundFontGenerator.count)
        let chunk = Self.controlInterval
        lanes = .allocate(capacity: chunk)
        lanes.initialize(repeating: SIMD4(), count: chunk)
        lanePoints = .allocate(capacity: 4 * chunk)
        lanePoints.initialize(repeating: 0, count: 4 * chunk)
        groupState = .allocate(capacity: 1)
        groupState.initialize(to: .silent)
        sumL = .allocate(capacity: chunk)
        sumL.initialize(repeating: SIMD4(), count: chunk)
        sumR = .allocate(capacity: chunk)
        sumR.initialize(repeating: SIMD4(), count: chunk)
        sumReverb = .allocate(capacity: chunk)
        sumReverb.initialize(repeating: SIMD4(), count: chunk)
        sumChorus = .allocate(capacity: chunk)
        sumChorus.initialize(repeating: SIMD4(), count: chunk)
        window = .allocate(capacity: Self.windowCapacity)
        window.initialize(repeating: 0, count: Self.windowCapacity)
        silentVoice = .allocate(capacity: 1)
        silentVoice.initialize(to: SamplerVoice())
        let steps = 1 << Self.fractionBits
        interpolationTable = .allocate(capacity: steps)
        for i in 0..<steps {
            let x = Double(i) / Double(steps)
            interpolationTable[i] = SIMD4(Float(x * (-0.5 + x * (1 - 0.5 * x))), Float(1 + x * x * (1.5 * x - 2.5)),
                                          Float(x * (0.5 + x * (2 - 1.5 * x))), Float(0.5 * x * x * (x - 1)))
        }
        effectInput = .allocate(capacity: 1)
        reverb.setParameter(ReverbNode.Parameter.width, value: 0.5)
        resetState()
    }

    deinit {
        voices.deinitialize(count: poolSize)
        voices.deallocate()
        activeList.deallocate()
        freeList.deallocate()
        overflowSlotTaken.deallocate()
        channels.deinitialize(count: 16)
        channels.deallocate()
        controllers.deallocate()
        polyPressure.deallocate()
        effective.deallocate()
        rangeLow.deallocate()
        rangeHigh.deallocate()
        lanes.deallocate()
        lanePoints.deallocate()
        groupState.deallocate()
        sumL.deallocate()
        sumR.deallocate()
        sumReverb.deallocate()
        sumChorus.deallocate()
        silentVoice.deallocate()
        window.deallocate()
        interpolationTable.deallocate()
        effectInput.deallocate()
        freeSendBuffers()
    }

    func freeSendBuffers() {
        reverbSendBuffer?.deallocate()
        chorusSendBuffer?.deallocate()
        wet?.left.deallocate()
        wet?.right.deallocate()
        reverbSendBuffer = nil
        chorusSendBuffer = nil
        wet = nil
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        parameters.prepare(sampleRate: sampleRate)
        fadeFrames = max(1, Int((0.003 * sampleRate).rounded()))
        freeSendBuffers()
        sendFrames = max(1, maximumFrameCount)
        reverbSendBuffer = .allocate(capacity: sendFrames)
        reverbSendBuffer!.initialize(repeating: 0, count: sendFrames)
        chorusSendBuffer = .allocate(capacity: sendFrames)
        chorusSendBuffer!.initialize(repeating: 0, count: sendFrames)
        let w = StereoBuffer(left: .allocate(capacity: sendFrames), right: .allocate(capacity: sendFrames))
        w.left.initialize(repeating: 0, count: sendFrames)
        w.right.initialize(repeating: 0, count: sendFrames)
        wet = w
        reverb.prepare(sampleRate: sampleRate, maximumFrameCount: sendFrames)
        chorus.prepare(sampleRate: sampleRate, maximumFrameCount: sendFrames)
        reset()
    }

    public func reset() {
        resetState()
        reverb.reset()
        chorus.reset()
    }

    func resetState() {
        // Every write to a voice goes through a slot `takeSlot` handed out, and the free list
        // starts lowest slot first: the slots past `slotsTouched` are untouched since the last
        // reset (or since `init` initialized them).
        voices.update(repeating: SamplerVoice(), count: slotsTouched)
        slotsTouched = 0
        activeCount = 0
        freeCount = poolSize
        // Lowest slots first, so the pool is used in a fixed order.
        for i in 0..<poolSize { freeList[i] = Int32(poolSize - 1 - i) }
        resetSystemExclusiveState()
        tuning.clear()
        mpe.reset()
        for c in 0..<16 { resetChannel(c) }
        serial = 0
        noteSerial = 0
        position = 0
        regionRules?.reset()
        applyParameters()
    }

    func resetChannel(_ c: Int) {
        channels[c] = Channel()
        let cc = controllers + c * 128
        cc.update(repeating: 0, count: 128)
        cc[7] = 100
        cc[10] = 64
        cc[11] = 127
        cc[Int(MIDIController.rpnMSB)] = 127
        cc[Int(MIDIController.rpnLSB)] = 127
        (polyPressure + c * 128).update(repeating: 0, count: 128)
        channels[c].preset = Int32(compiled.preset(bank: isDrumChannel(c) ? 128 : 0, program: 0))
    }

    func applyParameters() {
        masterGain = Self.baseGain * decibelsToGain(parameters[Parameter.volume]) * sysexVolume
        reverb.setParameter(ReverbNode.Parameter.wet, value: parameters[Parameter.reverbLevel])
        chorus.setParameter(ChorusNode.Parameter.level, value: parameters[Parameter.chorusLevel])
    }

    public func parametersChanged() { applyParameters() }

    /// Number of voices sounding, including ones fading out after a steal.
    public var activeVoiceCount: Int {
        var n = 0
        for m in 0..<activeCount where voices[Int(activeList[m])].state != .off { n += 1 }
        return n
    }

    /// The sounding voices' keys and states, for tests (allocates).
    func voiceSummary() -> [(key: UInt8, channel: UInt8, fading: Bool, released: Bool)] {
        (0..<activeCount).map { voices[Int(activeList[$0])] }.filter { $0.state != .off }.map { v in
            (v.noteKey, v.channel, v.state == .fading, v.released)
        }
    }
}
