import Foundation
import MIDI

/// When a region may start, beyond its key and velocity ranges: the selection rules of
/// formats such as SFZ that SoundFont generators cannot express. ``SamplerNode`` consults one
/// rule per region of its bank (in the order of the presets' regions) at every note-on and
/// note-off, on the render thread, without allocating.
public struct SamplerRegionRule: Sendable, Hashable {
    /// What starts the region.
    public enum Trigger: UInt8, Sendable, Hashable {
        /// Note-on (the default).
        case attack
        /// Note-off, with the note-on's velocity; while the sustain pedal is down, when it lifts.
        case release
        /// Note-on when no other key is down on the channel.
        case first
        /// Note-on while another key is down on the channel.
        case legato
        /// Note-off, with the note-on's velocity, even while the sustain pedal is down.
        case releaseKey
    }

    /// What starts the region.
    public var trigger = Trigger.attack
    /// MIDI channels (0-15) on which the region plays.
    public var channels: ClosedRange<UInt8> = 0...15
    /// Round robin: the region plays on note-ons number `sequencePosition`, `sequencePosition`
    /// + `sequenceLength`... among those that match its key and velocity ranges (both from 1).
    public var sequenceLength = 1
    /// This region's place in the round robin, 1...`sequenceLength`.
    public var sequencePosition = 1
    /// The region plays when the note's random draw (0 ≤ draw < 1, one per note, from a
    /// seeded generator so renders repeat exactly) lies in `randomLow..<randomHigh` (a high of
    /// 1 includes 1).
    public var randomLow = 0.0
    /// The draw's upper bound (exclusive below 1).
    public var randomHigh = 1.0
    /// Keys that switch articulations; a note-on in the range becomes the channel's last key
    /// switch (nil: the region names none).
    public var keyswitchRange: ClosedRange<UInt8>?
    /// The key switch the region needs (nil: it plays whatever was switched).
    public var keyswitch: UInt8?
    /// The key switch in force before any is pressed (nil: none).
    public var keyswitchDefault: UInt8?
    /// Controller conditions: the region plays while each controller's value lies in its range.
    public var controllerRanges: [SamplerControllerRange] = []
    /// The region's polyphony group (0: none); starting the region stops the voices whose
    /// ``offBy`` names it.
    public var group = 0
    /// The group whose start stops this region's voices on the same channel (nil: none).
    public var offBy: Int?
    /// True to stop those voices through their release, false for a fade of a few milliseconds
    /// (or of ``offTime``).
    public var offReleases = false
    /// When not nil (and ``offReleases`` is false), those voices fade out over this many seconds
    /// instead of a few milliseconds, as sfizz's `off_mode=time`: their volume envelope releases
    /// at a rate that falls 78 dB (9 nepers, sfizz's exponential release) in that time, at least
    /// 6 ms, from the level they had. Nil: the sampler's 3 ms fade.
    public var offTime: Double?
    /// True when note-off (and the pedals) leave the region's voices alone: they play to the
    /// sample's end (SFZ's `loop_mode=one_shot`, for drums struck with short notes).
    public var ignoresNoteOff = false
    /// The region's gain (amplitude, 0-1) for each note-on velocity 0...127, multiplied into its
    /// level at note-on: 128 values, or empty for none. Formats whose velocity curve SoundFont
    /// cannot express (SFZ's `amp_veltrack`, `amp_velcurve_N`) give it and leave the bank's
    /// velocity-to-attenuation modulator at 0.
    public var velocityGains: [Float] = []
    /// Decibels a ``Trigger/release`` or ``Trigger/releaseKey`` voice is quieter per second its
    /// key was held, from note-on to the voice's start (SFZ's `rt_decay`).
    public var releaseDecibelsPerSecond = 0.0
    /// The amplitude envelope as seconds and percentages with velocity terms, applied at
    /// note-on over the bank's volume-envelope generators; nil to play the bank's.
    public var amplitudeEnvelope: SamplerEnvelopeRule?
    /// The same for the modulation envelope, whose ``SamplerEnvelopeRule/start`` is a
    /// percentage of its depth (SFZ's `fileg_start`).
    public var modulationEnvelope: SamplerEnvelopeRule?
    /// The most voices sounding at once (not released) of the region's ``group``, or of this
    /// region when its group is 0; starting the region past it stops the oldest such voice (fast,
    /// through its release or over its ``offTime``, as ``offReleases`` and ``offTime`` of that
    /// voice's region say), as sfizz's `polyphony`. Nil: no limit.
    public var polyphony: Int?
    /// The same limit for the voices of the region's ``group`` on the note's key (sfizz's
    /// `note_polyphony`). Nil: no limit.
    public var notePolyphony: Int?
    /// How ``notePolyphony`` chooses the voices it stops. True (SFZ's `note_selfmask`
    /// default): only voices struck no louder than the new note, the quietest first and the
    /// oldest among equals, so a soft note never cuts a loud one (the limit is then exceeded).
    /// False: the oldest first.
    public var noteSelfmask = true
    /// True when the region sounds with the region before it as one voice (the second channel
    /// of a stereo sample): it is not counted against ``polyphony`` and stops with it.
    public var pairedWithPreviousRegion = false
    /// The shape the region's filter plays its cutoff (generators, modulators and envelope)
    /// with: SoundFont's resonant low-pass unless SFZ's `fil_type` says otherwise.
    public var filter = SamplerFilterKind.lowPassTwoPole
    /// Level, panning, note start and restrikes as sfizz (SFZ's reference player) makes them,
    /// in place of SoundFont's (FluidSynth's); nil for SoundFont's.
    public var sfzVoicing: SamplerSFZVoicing?

    /// A rule that lets the region play on every note-on (SoundFont's behaviour).
    public init() {}
}

/// How sfizz, SFZ's reference player, voices a region where SoundFont's (FluidSynth's) rules
/// differ:
/// - **Level:** sfizz's output gain (−7.35 dB, its `Default::globalVolume`) in place of
///   FluidSynth's gain of 0.2 (−13.98 dB).
/// - **Panning:** sfizz's constant-power pan, `cos(x · π/2)` on each side with x = (pan + 1) / 2,
///   followed by +3 dB for a mono sample. A stereo sample's two channels are panned as a pair
///   by `pan`, mixed toward each other by `width` (100 % keeps them apart, 0 % sums them,
///   negative swaps them), placed by `position`, then raised 6 dB. The pan includes the bank's
///   pan generators and modulators (CC 10), as sfizz adds CC 10 to `pan`.
/// - **Volume and expression:** CC 7 and CC 11 each scale the level by (value / 127)², sfizz's
///   default connections, in place of SoundFont's concave attenuation curves (the bank's
///   modulators for them should be 0).
/// - **Note start:** a voice with no attack starts at its level on its first frame, and an
///   attack rises from the note's own frame, where FluidSynth's voices fade in over the
///   sampler's control interval.
/// - **Restrikes:** a key struck again leaves the voice sounding until its own note-off (the
///   region's `note_polyphony` and `polyphony` limit the layers), where FluidSynth releases it.
public struct SamplerSFZVoicing: Sendable, Hashable {
    /// Which channel of its sample a region's voice plays.
    public enum Channel: UInt8, Sendable, Hashable {
        /// The one channel of a mono sample, heard on both sides.
        case mono
        /// The left channel of a stereo sample.
        case left
        /// The right channel of a stereo sample.
        case right
    }

    /// Which channel of its sample the voice plays.
    public var channel: Channel
    /// Stereo width, percent (SFZ's `width`, −100...100); a mono sample ignores it.
    public var width: Double
    /// Where the stereo image sits after ``width``, −100 (left) to 100 (right) (SFZ's
    /// `position`); a mono sample ignores it.
    public var position: Double

    /// A voice playing `channel` of its sample, with sfizz's defaults: full width, centred.
    public init(channel: Channel, width: Double = 100, position: Double = 0) {
        self.channel = channel
        self.width = width
        self.position = position
    }

    /// sfizz's output gain against the sampler's (FluidSynth's 0.2): −7.35 dB over −13.98 dB.
    static let levelAgainstSoundFont = Float(pow(10, -7.35 / 20) / 0.2)
    /// The +3 dB (mono) and +6 dB (stereo) sfizz adds after its pan stages.
    static let monoCompensation = Float(pow(10, 3.0 / 20)), stereoCompensation = Float(pow(10, 6.0 / 20))

    /// sfizz's pan law: the gain of the left side at x in 0...1 (the right side's is at 1 − x),
    /// exactly 0 at 1 where cos(π/2) would leave 6e-17.
    @inline(__always)
    static func panGain(_ x: Double) -> Double { x >= 1 ? 0 : cos(max(x, 0) * Double.pi / 2) }

    /// The voice's left and right gains (before the sampler's master gain) for `pan` in
    /// −1...1 and the channel's volume and expression (0...127), with the level ratio to
    /// SoundFont's included.
    func gains(pan: Double, volume: UInt8, expression: UInt8) -> (left: Float, right: Float) {
        let v = Double(volume) / 127, e = Double(expression) / 127
        let (left, right) = gains(pan: pan)
        let controllers = Float(v * v * e * e)
        return (left * controllers, right * controllers)
    }

    private func gains(pan: Double) -> (left: Float, right: Float) {
        let p = (min(max(pan, -1), 1) + 1) / 2
        let panLeft = Self.panGain(p), panRight = Self.panGain(1 - p)
        switch channel {
        case .mono:
            let g = Self.levelAgainstSoundFont * Self.monoCompensation
            return (Float(panLeft) * g, Float(panRight) * g)
        case .left, .right:
            // The channel's own pan gain, then the width matrix's two coefficients, then the position.
            let w = (min(max(width / 100, -1), 1) + 1) / 2
            let toOwnSide = Self.panGain(1 - w), toOtherSide = Self.panGain(w)
            let q = (min(max(position / 100, -1), 1) + 1) / 2
            let positionLeft = Self.panGain(q), positionRight = Self.panGain(1 - q)
            let g = Double(Self.levelAgainstSoundFont * Self.stereoCompensation)
            if channel == .left {
                return (Float(panLeft * toOwnSide * positionLeft * g), Float(panLeft * toOtherSide * positionRight * g))
            }
            return (Float(panRight * toOtherSide * positionLeft * g), Float(panRight * toOwnSide * positionRight * g))
        }
    }
}

/// The shape of a region's filter. Every kind follows the same cutoff in cents (its
/// generator, modulators, modulation envelope and LFO), limited as the low-pass's is.
///
/// The one-pole kinds are sfizz's (`lp1Smooth` and `hp1Smooth` in its Faust filter library):
/// with the pole p = e^(−2π fc / fs),
/// - low-pass: y[n] = (1 − p) x[n] + p y[n − 1], unity gain at DC, 3 dB down near the cutoff
///   and 6 dB down per octave above it;
/// - high-pass: H(z) = (1 + p) / 2 · (1 − z⁻¹) / (1 − p z⁻¹), silent at DC, unity gain at
///   the Nyquist frequency.
///
/// They have no resonance: the region's resonance neither peaks them nor lowers their gain.
public enum SamplerFilterKind: UInt8, Sendable, Hashable, CaseIterable {
    /// FluidSynth's resonant two-pole low-pass: RBJ's, with Q = resonance − 3.01 dB and its
    /// gain lowered by half the resonance peak (so 1.5 dB above unity with no resonance).
    /// SoundFont's filter.
    case lowPassTwoPole
    /// sfizz's resonant two-pole low-pass (SFZ's `lpf_2p`): RBJ's, with Q = the resonance in
    /// dB as a ratio (1 with none) and unity gain in the pass band, so the resonance peaks in full.
    case sfzLowPassTwoPole
    /// sfizz's resonant two-pole high-pass (SFZ's `hpf_2p`): RBJ's, with Q and gain as
    /// ``sfzLowPassTwoPole``.
    case sfzHighPassTwoPole
    /// sfizz's one-pole low-pass (SFZ's `lpf_1p`).
    case lowPassOnePole
    /// sfizz's one-pole high-pass (SFZ's `hpf_1p`).
    case highPassOnePole
    /// No filter: the voice's samples pass unchanged (an SFZ region without `cutoff`).
    case unfiltered

    /// True for the kinds whose numerator is not symmetric (b0 ≠ b2): the one-pole filters,
    /// and the pass-through (b0 = 1, b2 = 0).
    @inline(__always)
    var isOnePole: Bool {
        switch self {
        case .lowPassOnePole, .highPassOnePole, .unfiltered: true
        case .lowPassTwoPole, .sfzLowPassTwoPole, .sfzHighPassTwoPole: false
        }
    }

    /// True for the kinds that take Q from the resonance as sfizz does, at unity gain.
    @inline(__always)
    var hasSFZResonance: Bool { self == .sfzLowPassTwoPole || self == .sfzHighPassTwoPole }
}

/// An envelope whose times and sustain follow the note-on velocity, as SFZ's `ampeg_*` and
/// `fileg_*` opcodes describe it: each `velocityTo...` term is added at full velocity, scaled
/// by velocity / 127 (as sfizz).
public struct SamplerEnvelopeRule: Sendable, Hashable {
    /// Seconds before the attack.
    public var delay = 0.0
    /// The level the delay holds and the attack starts from, percent: of full amplitude for the
    /// volume envelope, of the envelope's depth (its full swing of the filter cutoff or pitch)
    /// for the modulation envelope.
    public var start = 0.0
    /// Attack seconds.
    public var attack = 0.0
    /// Hold seconds.
    public var hold = 0.0
    /// Decay seconds.
    public var decay = 0.0
    /// Sustain level, percent.
    public var sustain = 100.0
    /// Release seconds.
    public var release = 0.0
    /// Seconds added to ``delay`` at full velocity.
    public var velocityToDelay = 0.0
    /// Seconds added to ``attack`` at full velocity.
    public var velocityToAttack = 0.0
    /// Seconds added to ``hold`` at full velocity.
    public var velocityToHold = 0.0
    /// Seconds added to ``decay`` at full velocity.
    public var velocityToDecay = 0.0
    /// Percent added to ``sustain`` at full velocity.
    public var velocityToSustain = 0.0
    /// Seconds added to ``release`` at full velocity.
    public var velocityToRelease = 0.0

    /// An envelope with no delay, instant attack, hold, decay and release, full sustain.
    public init() {}

    /// `seconds` as SoundFont timecents (-12,000 for 0 or less, at most 8,000).
    public static func timecents(_ seconds: Double) -> Int32 {
        guard seconds > 0 else { return -12_000 }
        return Int32(min(max((1200 * log2(seconds)).rounded(), -12_000), 8_000))
    }

    /// A sustain of `percent` of full amplitude as the volume envelope's sustain generator:
    /// centibels of attenuation, scaled for the sampler's 96 dB envelope range (FluidSynth's).
    public static func volumeSustain(_ percent: Double) -> Int32 {
        percent <= 0 ? 1000 : Int32(min(max((-200 * log10(percent / 100) / 0.96).rounded(), 0), 1000))
    }

    /// A sustain of `percent` as the modulation envelope's sustain generator (0.1 % units below full).
    public static func modulationSustain(_ percent: Double) -> Int32 {
        Int32(min(max((100 - percent) * 10, 0), 1000).rounded())
    }

    /// The generators' values at `velocity` (0-127): delay, attack, hold, decay and release
    /// timecents, and the sustain percentage.
    func values(velocity: UInt8) -> (delay: Int32, attack: Int32, hold: Int32, decay: Int32, release: Int32, sustain: Double) {
        let v = Double(velocity) / 127
        return (Self.timecents(delay + velocityToDelay * v), Self.timecents(attack + velocityToAttack * v),
                Self.timecents(hold + velocityToHold * v), Self.timecents(decay + velocityToDecay * v),
                Self.timecents(release + velocityToRelease * v), min(max(sustain + velocityToSustain * v, 0), 100))
    }
}

/// A controller condition of a ``SamplerRegionRule``.
public struct SamplerControllerRange: Sendable, Hashable {
    /// The controller number, 0-127.
    public var controller: UInt8
    /// The values, 0-127, at which the region plays.
    public var values: ClosedRange<UInt8>

    /// A condition.
    public init(controller: UInt8, values: ClosedRange<UInt8>) {
        self.controller = controller
        self.values = values
    }
}

/// The rules flattened for the render thread, and the state they keep: round-robin counters,
/// the random generator, the last key switch, the keys down and their note-on velocities.
final class CompiledRegionRules {
    struct Rule {
        var trigger: SamplerRegionRule.Trigger
        var channelLow: UInt8, channelHigh: UInt8
        var sequenceLength: Int32, sequencePosition: Int32
        var randomLow: Double, randomHigh: Double
        /// -1: no key switch needed.
        var keyswitch: Int16
        var controllerStart: Int32, controllerCount: Int32
        var ignoresNoteOff: Bool
        var group: Int
        /// `Int.min`: stopped by no group.
        var offBy: Int
        var offReleases: Bool
        /// Seconds of ``SamplerRegionRule/offTime``, 0 for the short fade.
        var offTime: Double
        /// Index of the region's first velocity gain in ``CompiledRegionRules/gains``, -1 for none.
        var gainStart: Int32
        var releaseDecibelsPerSecond: Double
        /// Indices into ``CompiledRegionRules/envelopes``, -1 for the bank's envelope.
        var amplitudeEnvelope: Int32, modulationEnvelope: Int32
        var filter: SamplerFilterKind
        /// `hasSFZVoicing` false: SoundFont's level, pan and note start.
        var hasSFZVoicing: Bool
        var sfzVoicing: SamplerSFZVoicing
        /// 0: no limit.
        var polyphony: Int32, notePolyphony: Int32
        var noteSelfmask: Bool
        var paired: Bool
    }

    /// What a note did, for the triggers that answer it.
    enum NoteEvent {
        /// A key went down.
        case keyDown
        /// A key went up with the sustain pedal up: release and release-key regions start.
        case keyUp
        /// A key went up while the sustain pedal is down: only release-key regions start.
        case keyUpPedalDown
        /// The sustain pedal lifted after the key went up: release regions start.
        case pedalUp
    }

    let count: Int
    let rules: UnsafeMutablePointer<Rule>
    let controllers: UnsafeMutablePointer<(controller: UInt8, low: UInt8, high: UInt8)>
    /// The velocity gains of the regions that have them, 128 each.
    let gains: UnsafeMutablePointer<Float>
    let envelopes: UnsafeMutablePointer<SamplerEnvelopeRule>
    let envelopeCount: Int
    /// Per region: note-ons that matched its ranges so far (the round robin's position).
    let sequenceCounters: UnsafeMutablePointer<Int32>
    /// Keys that are key switches.
    let isKeyswitch: UnsafeMutablePointer<Bool>
    let defaultKeyswitch: Int16
    /// Per channel: the last key switch pressed (-1: none yet, the default applies).
    let lastKeyswitch: UnsafeMutablePointer<Int16>
    /// Per channel and key: down, and the velocity it was struck with.
    let keyDown: UnsafeMutablePointer<Bool>
    let noteVelocity: UnsafeMutablePointer<UInt8>
    /// Per channel and key: the frame of its last note-on.
    let noteOnFrame: UnsafeMutablePointer<Int64>
    /// Per channel and key: released while the sustain pedal was down, its release regions
    /// waiting for the pedal to lift.
    let releasePending: UnsafeMutablePointer<Bool>
    /// Per channel: keys down.
    let keysDown: UnsafeMutablePointer<Int32>
    var random = SplitMix64(seed: 0)
    static let randomSeed: UInt64 = 0x5EED_5F2B_0000_0001

    init(_ list: [SamplerRegionRule]) {
        count = list.count
        rules = .allocate(capacity: max(1, count))
        let conditions = list.flatMap(\.controllerRanges)
        controllers = .allocate(capacity: max(1, conditions.count))
        for (i, c) in conditions.enumerated() { controllers[i] = (c.controller, c.values.lowerBound, c.values.upperBound) }
        let gainTables = list.filter { $0.velocityGains.count == 128 }
        gains = .allocate(capacity: max(1, 128 * gainTables.count))
        let envelopeList = list.flatMap { [$0.amplitudeEnvelope, $0.modulationEnvelope].compactMap { $0 } }
        envelopeCount = envelopeList.count
        let envelopeStore = UnsafeMutablePointer<SamplerEnvelopeRule>.allocate(capacity: max(1, envelopeList.count))
        envelopeStore.initialize(repeating: SamplerEnvelopeRule(), count: max(1, envelopeList.count))
        envelopes = envelopeStore
        var gainCount: Int32 = 0, envelopeIndex: Int32 = 0
        var start: Int32 = 0
        isKeyswitch = .allocate(capacity: 128)
        isKeyswitch.initialize(repeating: false, count: 128)
        var fallback: Int16 = -1
        for (i, rule) in list.enumerated() {
            var gainStart: Int32 = -1
            if rule.velocityGains.count == 128 {
                gainStart = 128 * gainCount
                for (v, gain) in rule.velocityGains.enumerated() { gains[Int(gainStart) + v] = gain }
                gainCount += 1
            }
            func place(_ envelope: SamplerEnvelopeRule?) -> Int32 {
                guard let envelope else { return -1 }
                envelopeStore[Int(envelopeIndex)] = envelope
                envelopeIndex += 1
                return envelopeIndex - 1
            }
            let amplitudeEnvelope = place(rule.amplitudeEnvelope), modulationEnvelope = place(rule.modulationEnvelope)
            rules[i] = Rule(trigger: rule.trigger, channelLow: rule.channels.lowerBound, channelHigh: rule.channels.upperBound,
                            sequenceLength: Int32(max(1, rule.sequenceLength)), sequencePosition: Int32(max(1, rule.sequencePosition)),
                            randomLow: rule.randomLow, randomHigh: rule.randomHigh,
                            keyswitch: rule.keyswitch.map { Int16($0) } ?? -1,
                            controllerStart: start, controllerCount: Int32(rule.controllerRanges.count),
                            ignoresNoteOff: rule.ignoresNoteOff, group: rule.group, offBy: rule.offBy ?? Int.min,
                            offReleases: rule.offReleases, offTime: max(0, rule.offTime ?? 0), gainStart: gainStart,
                            releaseDecibelsPerSecond: rule.releaseDecibelsPerSecond,
                            amplitudeEnvelope: amplitudeEnvelope, modulationEnvelope: modulationEnvelope,
                            filter: rule.filter, hasSFZVoicing: rule.sfzVoicing != nil,
                            sfzVoicing: rule.sfzVoicing ?? SamplerSFZVoicing(channel: .mono),
                            polyphony: Int32(clamping: max(0, rule.polyphony ?? 0)),
                            notePolyphony: Int32(clamping: max(0, rule.notePolyphony ?? 0)),
                            noteSelfmask: rule.noteSelfmask,
                            paired: rule.pairedWithPreviousRegion)
            start += Int32(rule.controllerRanges.count)
            if let range = rule.keyswitchRange { for k in range where k < 128 { isKeyswitch[Int(k)] = true } }
            if let k = rule.keyswitch, rule.keyswitchRange == nil, k < 128 { isKeyswitch[Int(k)] = true }
            if fallback < 0, let d = rule.keyswitchDefault { fallback = Int16(d) }
        }
        defaultKeyswitch = fallback
        sequenceCounters = .allocate(capacity: max(1, count))
        lastKeyswitch = .allocate(capacity: 16)
        keyDown = .allocate(capacity: 16 * 128)
        noteVelocity = .allocate(capacity: 16 * 128)
        noteOnFrame = .allocate(capacity: 16 * 128)
        releasePending = .allocate(capacity: 16 * 128)
        keysDown = .allocate(capacity: 16)
        reset()
    }

    deinit {
        rules.deallocate()
        controllers.deallocate()
        gains.deallocate()
        envelopes.deinitialize(count: max(1, envelopeCount))
        envelopes.deallocate()
        noteOnFrame.deallocate()
        releasePending.deallocate()
        sequenceCounters.deallocate()
        isKeyswitch.deallocate()
        lastKeyswitch.deallocate()
        keyDown.deallocate()
        noteVelocity.deallocate()
        keysDown.deallocate()
    }

    func reset() {
        sequenceCounters.initialize(repeating: 0, count: max(1, count))
        lastKeyswitch.initialize(repeating: -1, count: 16)
        keyDown.initialize(repeating: false, count: 16 * 128)
        noteVelocity.initialize(repeating: 0, count: 16 * 128)
        noteOnFrame.initialize(repeating: 0, count: 16 * 128)
        releasePending.initialize(repeating: false, count: 16 * 128)
        keysDown.initialize(repeating: 0, count: 16)
        random = SplitMix64(seed: Self.randomSeed)
    }

    /// The next draw, 0 ≤ draw < 1 (a fixed sequence from the seed).
    func nextDraw() -> Double { random.nextUnit() }

    /// Records a key going down (call before matching regions): key switches, keys down.
    /// Returns how many other keys were down on the channel.
    func keyPressed(channel c: Int, key: UInt8, velocity: UInt8, frame: Int64) -> Int32 {
        if isKeyswitch[Int(key)] { lastKeyswitch[c] = Int16(key) }
        let slot = c * 128 + Int(key)
        noteOnFrame[slot] = frame
        let others = keysDown[c] - (keyDown[slot] ? 1 : 0)
        if !keyDown[slot] { keysDown[c] += 1 }
        keyDown[slot] = true
        noteVelocity[slot] = velocity
        return others
    }

    /// Region `r`'s polyphony group (0: none).
    @inline(__always)
    func group(_ r: Int) -> Int { r < count ? rules[r].group : 0 }

    /// Whether region `r`'s voices stop when group `g` starts.
    @inline(__always)
    func stoppedBy(_ g: Int, region r: Int32) -> Bool {
        r >= 0 && Int(r) < count && rules[Int(r)].offBy == g
    }

    /// True when region `r`'s voices play on through note-off.
    @inline(__always)
    func ignoresNoteOff(_ r: Int32) -> Bool { Int(r) < count && r >= 0 && rules[Int(r)].ignoresNoteOff }

    /// Forgets the channel's keys (all notes off): no release regions start for them.
    func clearKeys(channel c: Int) {
        (keyDown + c * 128).update(repeating: false, count: 128)
        (releasePending + c * 128).update(repeating: false, count: 128)
        keysDown[c] = 0
    }

    /// Region `r`'s gain for a note of `velocity` whose key went down `heldFrames` frames ago
    /// (counted for release triggers only).
    @inline(__always)
    func gain(_ r: Int, velocity: UInt8, heldFrames: Int64, sampleRate: Double) -> Float {
        guard r < count else { return 1 }
        let rule = rules + r
        var gain: Float = 1
        if rule.pointee.gainStart >= 0 { gain = gains[Int(rule.pointee.gainStart) + Int(velocity & 0x7F)] }
        if rule.pointee.releaseDecibelsPerSecond != 0, rule.pointee.trigger == .release || rule.pointee.trigger == .releaseKey {
            let decibels = -rule.pointee.releaseDecibelsPerSecond * Double(max(0, heldFrames)) / sampleRate
            gain *= Float(pow(10, decibels / 20))
        }
        return gain
    }

    /// Region `r`'s filter shape.
    @inline(__always)
    func filter(_ r: Int) -> SamplerFilterKind { r < count ? rules[r].filter : .lowPassTwoPole }

    /// Region `r`'s sfizz output rule, if it has one.
    @inline(__always)
    func sfzVoicing(_ r: Int) -> SamplerSFZVoicing? {
        r < count && rules[r].hasSFZVoicing ? rules[r].sfzVoicing : nil
    }

    /// Region `r`'s amplitude and modulation envelope rules, if it has them.
    @inline(__always)
    func envelopes(_ r: Int) -> (amplitude: UnsafeMutablePointer<SamplerEnvelopeRule>?, modulation: UnsafeMutablePointer<SamplerEnvelopeRule>?) {
        guard r < count else { return (nil, nil) }
        let rule = rules[r]
        return (rule.amplitudeEnvelope >= 0 ? envelopes + Int(rule.amplitudeEnvelope) : nil,
                rule.modulationEnvelope >= 0 ? envelopes + Int(rule.modulationEnvelope) : nil)
    }

    /// Records a key going up; returns the velocity it was struck with, or nil when it was not down.
    func keyReleased(channel c: Int, key: UInt8) -> UInt8? {
        let slot = c * 128 + Int(key)
        guard keyDown[slot] else { return nil }
        keyDown[slot] = false
        keysDown[c] -= 1
        return noteVelocity[slot]
    }

    /// Whether region `r`, whose key and velocity ranges matched, starts now. Advances its
    /// round-robin counter when the trigger matches.
    func allows(_ r: Int, event: NoteEvent, channel c: Int, otherKeysDown: Int32, draw: Double,
                controllerValues: UnsafePointer<UInt8>) -> Bool {
        guard r < count else { return event == .keyDown }
        let rule = rules + r
        switch rule.pointee.trigger {
        case .attack: guard event == .keyDown else { return false }
        case .release: guard event == .keyUp || event == .pedalUp else { return false }
        case .releaseKey: guard event == .keyUp || event == .keyUpPedalDown else { return false }
        case .first: guard event == .keyDown, otherKeysDown == 0 else { return false }
        case .legato: guard event == .keyDown, otherKeysDown > 0 else { return false }
        }
        // As sfizz, every note that matches the ranges moves the round robin on, whatever else decides.
        let position = sequenceCounters[r] % rule.pointee.sequenceLength
        sequenceCounters[r] &+= 1
        guard position == rule.pointee.sequencePosition - 1 else { return false }
        guard UInt8(c) >= rule.pointee.channelLow, UInt8(c) <= rule.pointee.channelHigh else { return false }
        if rule.pointee.keyswitch >= 0 {
            let current = lastKeyswitch[c] >= 0 ? lastKeyswitch[c] : defaultKeyswitch
            guard current == rule.pointee.keyswitch else { return false }
        }
        for i in 0..<Int(rule.pointee.controllerCount) {
            let condition = controllers[Int(rule.pointee.controllerStart) + i]
            let value = controllerValues[Int(condition.controller & 0x7F)]
            guard value >= condition.low, value <= condition.high else { return false }
        }
        return draw >= rule.pointee.randomLow && (draw < rule.pointee.randomHigh || rule.pointee.randomHigh >= 1)
    }
}
