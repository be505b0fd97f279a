import Foundation

/// Amplitude envelope stages.
enum EnvelopeStage: UInt8 {
    case attack, decay, sustain, release, fastFade, off
}

/// Fixed values a voice's sample loop needs, shared by all voices of a synthesizer.
struct VoiceTables {
    /// 2048-point sine table with a guard point, for interpolated lookup.
    let sine: UnsafeMutablePointer<Float>
    static let sineSize = 2048

    init() {
        sine = .allocate(capacity: Self.sineSize + 1)
        for i in 0...Self.sineSize { sine[i] = Float(Foundation.sin(2 * Double.pi * Double(i) / Double(Self.sineSize))) }
    }

    func free() { sine.deallocate() }

    /// sin(2π·phase) for phase in [0, 1).
    @inline(__always)
    func sin(_ phase: Float) -> Float {
        let x = phase * Float(Self.sineSize)
        let i = Int(x)
        let f = x - Float(i)
        let a = sine[i & (Self.sineSize - 1)], b = sine[(i & (Self.sineSize - 1)) + 1]
        return a + (b - a) * f
    }
}

/// PolyBLEP residual that removes most aliasing from a waveform step at phase 0.
@inline(__always)
func polyBLEP(_ t: Float, _ dt: Float) -> Float {
    if t < dt {
        let x = t / dt
        return x + x - x * x - 1
    } else if t > 1 - dt {
        let x = (t - 1) / dt
        return x * x + x + x + 1
    }
    return 0
}

@inline(__always)
func wrap(_ phase: Float) -> Float {
    phase >= 1 ? phase - 1 : phase
}

/// One sounding note. Plain value stored in the synthesizer's preallocated pool.
struct Voice {
    var stage = EnvelopeStage.off
    var channel: UInt8 = 0
    var key: UInt8 = 0
    var velocity: Float = 0
    /// True once a note-off arrived while the sustain pedal was down.
    var heldByPedal = false
    var isDrum = false
    /// Start order, for stealing the oldest.
    var serial: UInt64 = 0
    var startFrame: Int64 = 0
    var releaseFrame: Int64 = -1
    var releaseLevel: Float = 0
    var patch = SynthPatch()

    // Oscillators (phases in [0, 1)) and per-sample increments, updated on the control grid.
    var phaseA: Float = 0, phaseB: Float = 0, phaseMod: Float = 0
    var incA: Float = 0, incB: Float = 0, incMod: Float = 0
    var fmIndex: Float = 0
    var noiseState: UInt32 = 1

    // Amplitude envelope, per sample.
    var level: Float = 0
    var attackStep: Float = 0
    var decayCoefficient: Float = 0
    var releaseCoefficient: Float = 0
    var fadeStep: Float = 0

    // State-variable filter (Cytomic / Simper trapezoidal form).
    var ic1: Float = 0, ic2: Float = 0
    var fa1: Float = 0, fa2: Float = 0, fa3: Float = 0, fk: Float = 0

    // Output gains, gliding per sample towards the targets set on the grid.
    var gainL: Float = 0, gainR: Float = 0
    var targetL: Float = 0, targetR: Float = 0
    // Level sent to the synthesizer's reverb, gliding like the output gains.
    var sendGain: Float = 0, targetSend: Float = 0

    var isActive: Bool { stage != .off }
    /// A voice that counts against the polyphony limit (not already fading out after a steal).
    var isCounted: Bool { stage != .off && stage != .fastFade }
    var isReleased: Bool { stage == .release || stage == .fastFade }

    /// Renders `count` frames, adding into `left`/`right`.
    ///
    /// The state is copied into locals for the loop and stored back at the end: through the
    /// pointer the compiler would otherwise reload and store every field on every sample,
    /// since the output pointers might alias the voice.
    @inline(__always)
    mutating func render(count: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                         send: UnsafeMutablePointer<Float>, tables: VoiceTables, gainGlide: Float) {
        let waveA = patch.waveA, waveB = patch.waveB
        let levelB = patch.levelB, noiseLevel = patch.noiseLevel
        let sustainLevel = patch.sustain
        let mode = patch.filterMode
        let useB = levelB > 0
        let useNoise = noiseLevel > 0 || waveA == .noise || waveB == .noise
        let addNoise = waveA != .noise ? noiseLevel : 0
        var stage = self.stage, level = self.level
        let attackStep = self.attackStep, decayCoefficient = self.decayCoefficient
        let releaseCoefficient = self.releaseCoefficient, fadeStep = self.fadeStep
        var phaseA = self.phaseA, phaseB = self.phaseB, phaseMod = self.phaseMod
        let incA = self.incA, incB = self.incB, incMod = self.incMod, fmIndex = self.fmIndex
        var noiseState = self.noiseState
        var ic1 = self.ic1, ic2 = self.ic2
        let fa1 = self.fa1, fa2 = self.fa2, fa3 = self.fa3, fk = self.fk
        var gainL = self.gainL, gainR = self.gainR
        let targetL = self.targetL, targetR = self.targetR
        var sendGain = self.sendGain
        let targetSend = self.targetSend
        for i in 0..<count {
            switch stage {
            case .attack:
                level += attackStep
                if level >= 1 { level = 1; stage = .decay }
            case .decay:
                level = sustainLevel + (level - sustainLevel) * decayCoefficient
                if sustainLevel <= 0 && level < 1e-4 { stage = .off; level = 0 }
            case .sustain:
                break
            case .release:
                level *= releaseCoefficient
                if level < 1e-4 { stage = .off; level = 0 }
            case .fastFade:
                level -= fadeStep
                if level <= 0 { stage = .off; level = 0 }
            case .off:
                break
            }
            if stage == .off { break }
            var noise: Float = 0
            if useNoise {
                noiseState ^= noiseState << 13
                noiseState ^= noiseState >> 17
                noiseState ^= noiseState << 5
                noise = Float(Int32(bitPattern: noiseState)) * (1 / 2_147_483_648)
            }
            var s: Float
            switch waveA {
            case .sine: s = tables.sin(phaseA)
            case .saw: s = 2 * phaseA - 1 - polyBLEP(phaseA, incA)
            case .square:
                s = (phaseA < 0.5 ? 1 : -1) + polyBLEP(phaseA, incA) - polyBLEP(wrap(phaseA + 0.5), incA)
            case .triangle: s = 4 * abs(phaseA - 0.5) - 1
            case .noise: s = noise
            case .fm:
                // The index stays below 8, so the offset keeps the phase positive for truncation.
                var p = phaseA + tables.sin(phaseMod) * fmIndex + 8
                p -= Float(Int(p))
                s = tables.sin(p)
                phaseMod = wrap(phaseMod + incMod)
            }
            phaseA = wrap(phaseA + incA)
            if useB {
                var b: Float
                switch waveB {
                case .saw: b = 2 * phaseB - 1 - polyBLEP(phaseB, incB)
                case .square: b = (phaseB < 0.5 ? 1 : -1) + polyBLEP(phaseB, incB) - polyBLEP(wrap(phaseB + 0.5), incB)
                case .triangle: b = 4 * abs(phaseB - 0.5) - 1
                case .noise: b = noise
                default: b = tables.sin(phaseB)
                }
                phaseB = wrap(phaseB + incB)
                s += b * levelB
            }
            s += noise * addNoise
            let v3 = s - ic2
            let v1 = fa1 * ic1 + fa2 * v3
            let v2 = ic2 + fa2 * ic1 + fa3 * v3
            ic1 = 2 * v1 - ic1
            ic2 = 2 * v2 - ic2
            let y: Float
            switch mode {
            case .lowPass: y = v2
            case .bandPass: y = v1
            case .highPass: y = s - fk * v1 - v2
            }
            let out = y * level
            gainL += (targetL - gainL) * gainGlide
            gainR += (targetR - gainR) * gainGlide
            sendGain += (targetSend - sendGain) * gainGlide
            left[i] += out * gainL
            right[i] += out * gainR
            send[i] += out * sendGain
        }
        self.stage = stage
        self.level = level
        self.phaseA = phaseA
        self.phaseB = phaseB
        self.phaseMod = phaseMod
        self.noiseState = noiseState
        self.ic1 = ic1
        self.ic2 = ic2
        self.gainL = gainL
        self.gainR = gainR
        self.sendGain = sendGain
    }
}
