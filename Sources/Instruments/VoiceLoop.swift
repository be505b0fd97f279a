import CFloatConversion

/// An oscillator shape, as a type, so the voice loop is compiled once per combination of
/// shapes instead of choosing the shape on every sample.
protocol WaveShape {
    /// Two-operator FM needs its modulator's phase, which the loop keeps.
    static var isFrequencyModulated: Bool { get }
    /// The second oscillator is off.
    static var isSilent: Bool { get }
    /// The shape's value at `phase` (in [0, 1)) for a phase increment of `increment`.
    static func value(_ phase: Float, _ increment: Float, _ noise: Float, _ tables: VoiceTables) -> Float
    /// ``value(_:_:_:_:)`` for four voices, one a lane, with the same arithmetic per lane.
    static func lanes(_ phase: Lanes, _ increment: Lanes, _ noise: Lanes, _ tables: VoiceTables) -> Lanes
}

extension WaveShape {
    static var isFrequencyModulated: Bool { false }
    static var isSilent: Bool { false }
}

enum SineShape: WaveShape {
    @inline(__always) static func value(_ phase: Float, _ increment: Float, _ noise: Float, _ tables: VoiceTables) -> Float {
        tables.sin(phase)
    }
}

enum SawShape: WaveShape {
    @inline(__always) static func value(_ phase: Float, _ increment: Float, _ noise: Float, _ tables: VoiceTables) -> Float {
        2 * phase - 1 - polyBLEP(phase, increment)
    }
}

enum SquareShape: WaveShape {
    @inline(__always) static func value(_ phase: Float, _ increment: Float, _ noise: Float, _ tables: VoiceTables) -> Float {
        (phase < 0.5 ? 1 : -1) + polyBLEP(phase, increment) - polyBLEP(wrap(phase + 0.5), increment)
    }
}

enum TriangleShape: WaveShape {
    @inline(__always) static func value(_ phase: Float, _ increment: Float, _ noise: Float, _ tables: VoiceTables) -> Float {
        4 * abs(phase - 0.5) - 1
    }
}

enum NoiseShape: WaveShape {
    @inline(__always) static func value(_ phase: Float, _ increment: Float, _ noise: Float, _ tables: VoiceTables) -> Float {
        noise
    }
}

/// The carrier of two-operator FM; the loop applies the modulator (see `isFrequencyModulated`).
enum FMShape: WaveShape {
    static var isFrequencyModulated: Bool { true }
    @inline(__always) static func value(_ phase: Float, _ increment: Float, _ noise: Float, _ tables: VoiceTables) -> Float {
        tables.sin(phase)
    }
}

/// No second oscillator.
enum NoShape: WaveShape {
    static var isSilent: Bool { true }
    @inline(__always) static func value(_ phase: Float, _ increment: Float, _ noise: Float, _ tables: VoiceTables) -> Float { 0 }
}

/// Which output of the state-variable filter a voice takes, as a type.
protocol FilterOutput {
    static func output(input: Float, band: Float, low: Float, k: Float) -> Float
    /// ``output(input:band:low:k:)`` for four voices, one a lane.
    static func lanes(input: Lanes, band: Lanes, low: Lanes, k: Lanes) -> Lanes
}

enum LowPassOutput: FilterOutput {
    @inline(__always) static func output(input: Float, band: Float, low: Float, k: Float) -> Float { low }
}

enum BandPassOutput: FilterOutput {
    @inline(__always) static func output(input: Float, band: Float, low: Float, k: Float) -> Float { band }
}

enum HighPassOutput: FilterOutput {
    @inline(__always) static func output(input: Float, band: Float, low: Float, k: Float) -> Float { input - k * band - low }
}

extension Voice {
    /// True when a glide step leaves every gain unchanged, so it would for the whole chunk:
    /// `gain + (target - gain) * glide` rounds back to `gain` (it may stay an ulp or two
    /// short of the target forever). The steady loop then skips the glides and gives exactly
    /// the same samples.
    @inline(__always)
    func gainsAreSteady(glide: Float) -> Bool {
        gainL + (targetL - gainL) * glide == gainL && gainR + (targetR - gainR) * glide == gainR
            && sendGain + (targetSend - sendGain) * glide == sendGain
    }

    /// Adds `count` frames of the voice's signal to the outputs at its gains: gliding per
    /// sample while they move, or at the settled gains eight frames at a time. Each frame's sum
    /// is the one the gliding loop computes.
    @inline(__always)
    mutating func mix(_ mono: UnsafeMutablePointer<Float>, count: Int, left: UnsafeMutablePointer<Float>,
                      right: UnsafeMutablePointer<Float>, send: UnsafeMutablePointer<Float>, gainGlide: Float) {
        if gainsAreSteady(glide: gainGlide) {
            mixSteady(mono, count: count, left: left, right: right, send: send)
            return
        }
        var gainL = self.gainL, gainR = self.gainR, sendGain = self.sendGain
        let targetL = self.targetL, targetR = self.targetR, targetSend = self.targetSend
        for i in 0..<count {
            gainL += (targetL - gainL) * gainGlide
            gainR += (targetR - gainR) * gainGlide
            sendGain += (targetSend - sendGain) * gainGlide
            left[i] += mono[i] * gainL
            right[i] += mono[i] * gainR
            send[i] += mono[i] * sendGain
        }
        self.gainL = gainL
        self.gainR = gainR
        self.sendGain = sendGain
    }

    @inline(__always)
    func mixSteady(_ mono: UnsafeMutablePointer<Float>, count: Int, left: UnsafeMutablePointer<Float>,
                   right: UnsafeMutablePointer<Float>, send: UnsafeMutablePointer<Float>) {
        let gl = SIMD8<Float>(repeating: gainL), gr = SIMD8<Float>(repeating: gainR), gs = SIMD8<Float>(repeating: sendGain)
        var i = 0
        while i + 8 <= count {
            let out = UnsafeRawPointer(mono + i).loadUnaligned(as: SIMD8<Float>.self)
            let l = UnsafeRawPointer(left + i).loadUnaligned(as: SIMD8<Float>.self) + out * gl
            let r = UnsafeRawPointer(right + i).loadUnaligned(as: SIMD8<Float>.self) + out * gr
            let s = UnsafeRawPointer(send + i).loadUnaligned(as: SIMD8<Float>.self) + out * gs
            UnsafeMutableRawPointer(left + i).storeBytes(of: l, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(right + i).storeBytes(of: r, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(send + i).storeBytes(of: s, as: SIMD8<Float>.self)
            i += 8
        }
        while i < count {
            left[i] += mono[i] * gainL
            right[i] += mono[i] * gainR
            send[i] += mono[i] * sendGain
            i += 1
        }
    }

    /// The voice's sample loop for one combination of shapes and filter output: writes its
    /// signal before the gains into `mono` and returns how many frames it sounded (fewer than
    /// `count` when its envelope ends).
    ///
    /// The state is copied into locals for the loop and stored back at the end: through the
    /// pointer the compiler would otherwise reload and store every field on every sample,
    /// since the output pointer might alias the voice.
    @inline(__always)
    mutating func renderSignal<A: WaveShape, B: WaveShape, F: FilterOutput>(
        count: Int, into mono: UnsafeMutablePointer<Float>, tables: VoiceTables, _ a: A.Type, _ b: B.Type, _ f: F.Type
    ) -> Int {
        let levelB = patch.levelB, noiseLevel = patch.noiseLevel
        let sustainLevel = patch.sustain
        let useNoise = noiseLevel > 0 || patch.waveA == .noise || patch.waveB == .noise
        let addNoise = patch.waveA != .noise ? noiseLevel : 0
        var stage = self.stage, level = self.level
        let attackStep = self.attackStep, decayCoefficient = self.decayCoefficient
        let releaseCoefficient = self.releaseCoefficient, fadeStep = self.fadeStep
        var phaseA = self.phaseA, phaseB = self.phaseB, phaseMod = self.phaseMod
        let incA = self.incA, incB = self.incB, incMod = self.incMod, fmIndex = self.fmIndex
        var noiseState = self.noiseState
        var ic1 = self.ic1, ic2 = self.ic2
        let fa1 = self.fa1, fa2 = self.fa2, fa3 = self.fa3, fk = self.fk
        var rendered = count
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
            if stage == .off {
                rendered = i
                break
            }
            var noise: Float = 0
            if useNoise {
                noiseState ^= noiseState << 13
                noiseState ^= noiseState >> 17
                noiseState ^= noiseState << 5
                noise = Float(Int32(bitPattern: noiseState)) * (1 / 2_147_483_648)
            }
            var s: Float
            if A.isFrequencyModulated {
                // The index stays below 8, so the offset keeps the phase positive (and finite)
                // for truncation.
                var p = phaseA + tables.sin(phaseMod) * fmIndex + 8
                p -= Float(tactus_truncate_float(p))
                s = tables.sin(p)
                phaseMod = wrap(phaseMod + incMod)
            } else {
                s = A.value(phaseA, incA, noise, tables)
            }
            phaseA = wrap(phaseA + incA)
            if !B.isSilent {
                let second = B.value(phaseB, incB, noise, tables)
                phaseB = wrap(phaseB + incB)
                s += second * levelB
            }
            s += noise * addNoise
            let v3 = s - ic2
            let v1 = fa1 * ic1 + fa2 * v3
            let v2 = ic2 + fa2 * ic1 + fa3 * v3
            ic1 = 2 * v1 - ic1
            ic2 = 2 * v2 - ic2
            mono[i] = F.output(input: s, band: v1, low: v2, k: fk) * level
        }
        self.stage = stage
        self.level = level
        self.phaseA = phaseA
        self.phaseB = phaseB
        self.phaseMod = phaseMod
        self.noiseState = noiseState
        self.ic1 = ic1
        self.ic2 = ic2
        return rendered
    }
}
