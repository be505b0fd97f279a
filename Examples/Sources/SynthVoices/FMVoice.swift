import Foundation
import Tactus

/// An envelope driven by rates rather than times, as in classic FM synthesizers: each stage
/// moves the level towards its target by a fixed amount per second, so a louder start takes
/// longer to fall.
public struct RateEnvelope: Sendable {
    /// Level change per second while rising to 1.
    public var attackRate: Float
    /// Level change per second while falling to `sustainLevel`.
    public var decayRate: Float
    /// Level held while the key is down.
    public var sustainLevel: Float
    /// Level change per second after the key is let go.
    public var releaseRate: Float
    private enum Stage { case idle, attack, decay, release }
    private var stage = Stage.idle
    private(set) var level: Float = 0
    private var perSample: Float = 1 / 44_100

    /// An envelope with these rates (per second) and sustain level.
    public init(attackRate: Float, decayRate: Float, sustainLevel: Float, releaseRate: Float) {
        self.attackRate = attackRate
        self.decayRate = decayRate
        self.sustainLevel = sustainLevel
        self.releaseRate = releaseRate
    }

    mutating func prepare(sampleRate: Double) { perSample = Float(1 / sampleRate) }
    mutating func start() { level = 0; stage = .attack }
    mutating func release() { if stage != .idle { stage = .release } }
    var isIdle: Bool { stage == .idle }

    mutating func next() -> Float {
        switch stage {
        case .idle: break
        case .attack:
            level += attackRate * perSample
            if level >= 1 { level = 1; stage = .decay }
        case .decay:
            level = max(sustainLevel, level - decayRate * perSample)
        case .release:
            level -= releaseRate * perSample
            if level <= 0 { level = 0; stage = .idle }
        }
        return level
    }
}

/// A two-operator FM instrument: a modulator sine bends the phase of a carrier sine; the
/// modulator's own envelope sweeps the timbre from bright to mellow.
public enum FMSynth {
    /// Parameter identifiers.
    public enum Parameter {
        /// Modulator frequency as a multiple of the carrier's.
        public static let ratio: UInt32 = 0
        /// Peak modulation index (radians of phase deviation).
        public static let index: UInt32 = 1
    }

    /// The instrument, with `voices` voices.
    public static func make(voices: Int = 8) -> PolyphonicInstrument<FMVoice> {
        PolyphonicInstrument(name: "FM synth", parameters: [
            AudioParameterInfo(id: Parameter.ratio, name: "Ratio", range: 0.25...16, unit: .ratio, defaultValue: 2),
            AudioParameterInfo(id: Parameter.index, name: "Index", range: 0...20, unit: .generic, defaultValue: 5,
                               smoothingSeconds: 0.01),
        ], voiceLimit: voices) { FMVoice() }
    }
}

/// One FM voice: carrier and modulator, each with a rate-based envelope.
public struct FMVoice: SynthVoice {
    private var carrierPhase = 0.0, modulatorPhase = 0.0, frequency = 0.0, sampleRate = 44_100.0
    private var velocity: Float = 0
    private var carrier = RateEnvelope(attackRate: 200, decayRate: 0.6, sustainLevel: 0.5, releaseRate: 2)
    private var modulator = RateEnvelope(attackRate: 400, decayRate: 1.5, sustainLevel: 0.1, releaseRate: 1)

    public init() {}

    public mutating func prepare(sampleRate: Double) {
        self.sampleRate = sampleRate
        carrier.prepare(sampleRate: sampleRate)
        modulator.prepare(sampleRate: sampleRate)
    }

    public mutating func start(_ note: VoiceNote, context: VoiceContext) {
        frequency = note.frequency
        velocity = 0.3 * note.gain
        carrierPhase = 0
        modulatorPhase = 0
        carrier.start()
        modulator.start()
    }

    public mutating func release() {
        carrier.release()
        modulator.release()
    }

    public var isFinished: Bool { carrier.isIdle }

    public mutating func render(into output: UnsafeMutablePointer<Float>, frameCount: Int, context: VoiceContext) {
        let f = frequency * context.pitchBend
        let carrierStep = f / sampleRate
        let modulatorStep = f * Double(context.parameters[FMSynth.Parameter.ratio]) / sampleRate
        let index = Double(context.parameters[FMSynth.Parameter.index])
        for i in 0..<frameCount {
            let m = sin(2 * Double.pi * modulatorPhase) * index * Double(modulator.next())
            output[i] = Float(sin(2 * Double.pi * carrierPhase + m)) * velocity * carrier.next()
            carrierPhase += carrierStep
            if carrierPhase >= 1 { carrierPhase -= 1 }
            modulatorPhase += modulatorStep
            if modulatorPhase >= 1 { modulatorPhase -= 1 }
        }
    }
}
