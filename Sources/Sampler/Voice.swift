/// What a pool slot is doing.
enum VoiceState: UInt8 {
    /// Free.
    case off
    /// Sounding under its envelope.
    case playing
    /// Stolen or cut: gains ramp to zero over a few milliseconds, then the slot is freed.
    case fading
}

/// One sounding region of a note: a plain value in the sampler's preallocated pool.
struct SamplerVoice {
    var state = VoiceState.off
    var channel: UInt8 = 0
    /// The key of the note-on (note-offs match it), and the key and velocity the region
    /// hears (forced by the keynum and velocity generators).
    var noteKey: UInt8 = 0
    var key: Float = 0
    var velocity: Float = 0
    /// Note-off received (or forced): the envelopes are releasing.
    var released = false
    /// Note-off arrived while the sustain pedal was down.
    var sustained = false
    /// Key was down when the sostenuto pedal went down: held until the pedal goes up.
    var sostenuto = false
    var exclusiveClass: Int32 = 0
    var region: Int32 = 0
    /// Start order: stealing takes older voices first; a note-on's voices share a note id.
    var serial: UInt64 = 0
    /// The voice's place in FluidSynth's voice array, were FluidSynth playing: where a tie
    /// between equally scored voices is broken when polyphony overflows.
    var overflowSlot: Int32 = 0
    var noteID: UInt64 = 0
    var startFrame: Int64 = 0
    /// The channel's controller serial the modulated values were computed for.
    var controlSerial: UInt32 = 0

    // Sample playback. The phase is an absolute index into the bank's sample words in 32.32
    // fixed point, so long samples keep sub-sample precision.
    var phase: Int64 = 0
    /// The points the voice plays: the bank's sample words, or a decoded SoundFont 3 sample.
    var words: UnsafePointer<Int16>?
    /// The low bytes of 24-bit points, index for index with ``words``.
    var lowBytes: UnsafePointer<UInt8>?
    var increment: Int64 = 0
    var start = 0, end = 0, loopStart = 0, loopEnd = 0
    /// 0 unlooped, 1 loops, 3 loops until release then plays to the end.
    var loopMode: Int32 = 0
    var hasLooped = false
    var sampleRatio: Double = 1
    var rootPitch: Double = 6000
    /// Cents before LFOs and the modulation envelope.
    var pitch: Double = 6000
    /// The key's pitch in the channel's tuning (cents above key 0), or NaN in plain equal
    /// temperament, where the pitch keeps FluidSynth's untuned arithmetic to the bit.
    var tunedCents: Double = .nan
    /// The cents ``increment`` was computed for.
    var incrementCents: Double = .nan

    var volumeEnvelope = Envelope()
    var modulationEnvelope = Envelope()

    // LFOs: delay in frames, frequency in cycles per frame; evaluated from the frames since
    // the voice started, so they need no state.
    var modLFODelay: Int64 = 0, modLFOFrequency: Double = 0
    var vibLFODelay: Int64 = 0, vibLFOFrequency: Double = 0
    var modLFOToPitch: Float = 0, vibLFOToPitch: Float = 0, modEnvToPitch: Float = 0
    var modLFOToFilter: Float = 0, modEnvToFilter: Float = 0, modLFOToVolume: Float = 0

    // Low-pass filter (direct form II biquad after FluidSynth) whose coefficients glide
    // linearly across a control interval.
    var filterCents: Float = 13_500
    var filterQ: Float = 1
    var filterGain: Float = 1
    var b02: Float = 0, b1: Float = 0, a1: Float = 0, a2: Float = 0
    var db02: Float = 0, db1: Float = 0, da1: Float = 0, da2: Float = 0
    /// b0 − b2, zero for the two-pole kinds (their b0 = b2): a one-pole filter's b0, its b2
    /// (``b02``) being zero.
    var b0Excess: Float = 0, db0Excess: Float = 0
    var history1: Float = 0, history2: Float = 0
    /// Coefficients (b02, b1, a1, a2) and b0 − b2 the ramp heads for and the ones it started
    /// from, and the cutoff and resonance they were computed for.
    var target = SIMD4<Float>(), previousTarget = SIMD4<Float>()
    var targetB0Excess: Float = 0, previousTargetB0Excess: Float = 0
    var targetCents: Double = -1
    var targetQ: Float = -1
    var filterStarted = false
    /// A region rule's filter shape; SoundFont's low-pass without rules.
    var filterKind = SamplerFilterKind.lowPassTwoPole

    // Levels: attenuation in centibels, and the largest amplitude the voice can reach (the
    // noise-floor test; computed once, as its attenuation floor never moves).
    var attenuation: Float = 0
    /// The last centibels turned into an amplitude, and that amplitude.
    var amplitudeCentibels: Float = .nan
    var amplitudeOfCentibels: Float = 0
    var maximumAmplitude: Float = 1
    /// The region rule's gain for the note (velocity curve, release decay); 1 without rules.
    var regionGain: Float = 1
    var panLeft: Float = 0.707, panRight: Float = 0.707
    /// The region rule's sfizz level, pan and note start; nil for SoundFont's.
    var sfzVoicing: SamplerSFZVoicing?
    var reverbSend: Float = 0, chorusSend: Float = 0
    // Output gains (amplitude times pan or send), ramping linearly to the grid's targets.
    var gainL: Float = 0, gainR: Float = 0, gainReverb: Float = 0, gainChorus: Float = 0
    var stepL: Float = 0, stepR: Float = 0, stepReverb: Float = 0, stepChorus: Float = 0
    /// Frames since the send gains' ramp began.
    var sendRampFrame = 0
    var fadeRemaining = 0

    /// Counts against the voice limit.
    var isCounted: Bool { state == .playing }
}

