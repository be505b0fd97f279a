/// Envelope sections, in order.
enum EnvelopeSection: Int32 {
    case delay = 0, attack, hold, decay, sustain, release, finished
}

/// One section of an envelope: a value `x` becomes `coefficient * x + increment` each control
/// step, for at most `count` steps or until it leaves `minimum...maximum`.
struct EnvelopeSegment {
    var count: UInt32 = .max
    var coefficient: Float = 1
    var increment: Float = 0
    var minimum: Float = -1
    var maximum: Float = 2
}

/// A DAHDSR envelope advanced once per control step, with FluidSynth's section machine: the
/// value rises linearly in the attack and falls linearly in decay and release. For the volume
/// envelope the value is read as a level in dB (96 dB across the range), so decay and release
/// are exponential in amplitude as the specification asks.
struct Envelope {
    var delay = EnvelopeSegment(), attack = EnvelopeSegment(), hold = EnvelopeSegment()
    var decay = EnvelopeSegment(), sustain = EnvelopeSegment(), release = EnvelopeSegment()
    var section = EnvelopeSection.delay
    var count: UInt32 = 0
    var value: Float = 0

    @inline(__always)
    func segment(_ s: EnvelopeSection) -> EnvelopeSegment {
        switch s {
        case .delay: return delay
        case .attack: return attack
        case .hold: return hold
        case .decay: return decay
        case .sustain: return sustain
        case .release: return release
        case .finished: return EnvelopeSegment(count: .max, coefficient: 0, increment: 0, minimum: -1, maximum: 1)
        }
    }

    /// Fills the sections from durations in control steps and a sustain value (0...1); the
    /// attack rises from `startValue` (0...1).
    mutating func configure(delaySteps: UInt32, attackSteps: UInt32, holdSteps: UInt32, decaySteps: UInt32,
                            sustainValue: Float, releaseSteps: UInt32, releaseMaximum: Float, startValue: Float = 0) {
        // The delay holds the start value, so the attack's first step rises from it.
        delay = EnvelopeSegment(count: delaySteps, coefficient: 0, increment: startValue, minimum: -1, maximum: 1)
        attack = EnvelopeSegment(count: attackSteps, coefficient: 1, increment: (1 - startValue) / Float(attackSteps),
                                 minimum: -1, maximum: 1)
        hold = EnvelopeSegment(count: holdSteps, coefficient: 1, increment: 0, minimum: -1, maximum: 2)
        decay = EnvelopeSegment(count: decaySteps, coefficient: 1, increment: decaySteps > 0 ? -1 / Float(decaySteps) : 0,
                                minimum: sustainValue, maximum: 2)
        sustain = EnvelopeSegment(count: .max, coefficient: 1, increment: 0, minimum: -1, maximum: 2)
        release = EnvelopeSegment(count: releaseSteps, coefficient: 1, increment: -1 / Float(releaseSteps), minimum: 0,
                                  maximum: releaseMaximum)
        section = .delay
        count = 0
        value = startValue
    }

    /// Advances one control step.
    @inline(__always)
    mutating func step() {
        var seg = segment(section)
        while count >= seg.count {
            if section == .decay { value = seg.minimum * seg.coefficient }
            guard let next = EnvelopeSection(rawValue: section.rawValue + 1) else { return }
            section = next
            count = 0
            seg = segment(section)
        }
        let x = seg.coefficient * value + seg.increment
        if x < seg.minimum {
            value = seg.minimum
            if let next = EnvelopeSection(rawValue: section.rawValue + 1) { section = next }
            count = 0
        } else if x > seg.maximum {
            value = seg.maximum
            if let next = EnvelopeSection(rawValue: section.rawValue + 1) { section = next }
            count = 0
        } else {
            value = x
            count += 1
        }
    }

    /// Enters the release section from wherever the envelope is.
    @inline(__always)
    mutating func enterRelease() {
        guard section.rawValue < EnvelopeSection.release.rawValue else { return }
        section = .release
        count = 0
    }
}
