import Foundation
import Tactus

/// AudioKit's synth tutorial, the Tactus way: a sawtooth oscillator into a resonant low-pass
/// filter into an ADSR envelope. The voice is all there is to write; ``PolyphonicInstrument``
/// does voices, stealing, sustain and pitch bend.
public enum SubtractiveSynth {
    /// Parameter identifiers.
    public enum Parameter {
        /// Filter cutoff in hertz.
        public static let cutoff: UInt32 = 0
        /// Filter resonance (Q).
        public static let resonance: UInt32 = 1
    }

    /// The instrument, with `voices` voices.
    public static func make(voices: Int = 8) -> PolyphonicInstrument<SubtractiveVoice> {
        PolyphonicInstrument(name: "Subtractive synth", parameters: [
            AudioParameterInfo(id: Parameter.cutoff, name: "Cutoff", range: 20...16_000, unit: .hertz,
                               defaultValue: 1_000, smoothingSeconds: 0.005),
            AudioParameterInfo(id: Parameter.resonance, name: "Resonance", range: 0.5...12, unit: .generic,
                               defaultValue: 2, smoothingSeconds: 0.005),
        ], voiceLimit: voices) { SubtractiveVoice() }
    }
}

/// One voice: band-limited sawtooth -> state-variable low-pass -> ADSR.
public struct SubtractiveVoice: SynthVoice {
    private var phase = 0.0, increment = 0.0, level: Float = 0, sampleRate = 44_100.0
    // Filter state (Zavalishin's trapezoidal state-variable filter: stable at any cutoff).
    private var s1: Float = 0, s2: Float = 0
    private var envelope = ADSREnvelope(attack: 0.01, decay: 0.3, sustain: 0.7, release: 0.4)

    public init() {}

    public mutating func prepare(sampleRate: Double) {
        self.sampleRate = sampleRate
        envelope.prepare(sampleRate: sampleRate)
    }

    public mutating func start(_ note: VoiceNote, context: VoiceContext) {
        increment = note.frequency / sampleRate
        level = 0.1 * note.gain
        phase = 0
        s1 = 0
        s2 = 0
        envelope.start()
    }

    public mutating func release() { envelope.release() }

    public var isFinished: Bool { envelope.isIdle }

    public mutating func render(into output: UnsafeMutablePointer<Float>, frameCount: Int, context: VoiceContext) {
        // The cutoff is constant within a stretch (a ramp renders one frame at a time).
        let cutoff = min(Double(context.parameters[SubtractiveSynth.Parameter.cutoff]), 0.45 * sampleRate)
        let g = Float(tan(Double.pi * cutoff / sampleRate))
        let k = 1 / context.parameters[SubtractiveSynth.Parameter.resonance]
        let a1 = 1 / (1 + g * (g + k)), a2 = g * a1, a3 = g * a2
        let dt = increment * context.pitchBend
        for i in 0..<frameCount {
            // Naive sawtooth minus a polyBLEP step correction, so it does not alias.
            var saw = Float(2 * phase - 1)
            let t = Float(phase), d = Float(dt)
            if t < d { let x = t / d; saw -= x + x - x * x - 1 } else if t > 1 - d { let x = (t - 1) / d; saw -= x * x + x + x + 1 }
            phase += dt
            if phase >= 1 { phase -= 1 }
            let v3 = saw - s2
            let v1 = a1 * s1 + a2 * v3
            let v2 = s2 + a2 * s1 + a3 * v3
            s1 = 2 * v1 - s1
            s2 = 2 * v2 - s2
            output[i] = v2 * level * envelope.next()
        }
    }
}
