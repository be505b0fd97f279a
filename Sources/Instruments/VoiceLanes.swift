import CFloatConversion

// The built-in synthesizer's voices, up to four at a time, one a SIMD lane. Voices whose
// patches share oscillator shapes, filter output and the use of noise run the same operations
// on different values, so four of them advance together. Every lane does exactly the
// arithmetic of the one-voice loop (`Voice.renderSignal`), in the same order, so each voice's
// signal is the same to the bit; only the mixing into the outputs, which stays one voice at a
// time in voice order, touches more than one voice.

typealias Lanes = SIMD4<Float>

extension VoiceTables {
    /// ``sin(_:)`` for four phases.
    @inline(__always)
    func sin(_ phase: Lanes) -> Lanes {
        let x = phase * Float(Self.sineSize)
        let i = tactus_truncate_float4(x)
        let f = x - tactus_int4_to_float4(i)
        let m = i & Int32(Self.sineSize - 1)
        let a = Lanes(sine[Int(m[0])], sine[Int(m[1])], sine[Int(m[2])], sine[Int(m[3])])
        let b = Lanes(sine[Int(m[0]) + 1], sine[Int(m[1]) + 1], sine[Int(m[2]) + 1], sine[Int(m[3]) + 1])
        return a + (b - a) * f
    }
}

/// ``polyBLEP(_:_:)`` for four lanes: both branches computed, the lane's own chosen.
@inline(__always)
func polyBLEP(_ t: Lanes, _ dt: Lanes) -> Lanes {
    // Most samples lie away from both edges in all four lanes: the result is 0 then, as each
    // lane's own test would give, and the divisions (the slowest instructions of the loop)
    // are not needed.
    guard tactus_any_near_edge4(t, dt) != 0 else { return Lanes(repeating: 0) }
    let x = t / dt
    let rising = x + x - x * x - 1
    let y = (t - 1) / dt
    let falling = y * y + y + y + 1
    var result = Lanes(repeating: 0)
    result.replace(with: falling, where: t .> 1 - dt)
    result.replace(with: rising, where: t .< dt)
    return result
}

/// ``wrap(_:)`` for four lanes.
@inline(__always)
func wrap(_ phase: Lanes) -> Lanes {
    phase.replacing(with: phase - 1, where: phase .>= 1)
}

extension SineShape {
    @inline(__always) static func lanes(_ phase: Lanes, _ increment: Lanes, _ noise: Lanes, _ tables: VoiceTables) -> Lanes {
        tables.sin(phase)
    }
}

extension SawShape {
    @inline(__always) static func lanes(_ phase: Lanes, _ increment: Lanes, _ noise: Lanes, _ tables: VoiceTables) -> Lanes {
        2 * phase - 1 - polyBLEP(phase, increment)
    }
}

extension SquareShape {
    @inline(__always) static func lanes(_ phase: Lanes, _ increment: Lanes, _ noise: Lanes, _ tables: VoiceTables) -> Lanes {
        let level = Lanes(repeating: -1).replacing(with: 1, where: phase .< 0.5)
        return level + polyBLEP(phase, increment) - polyBLEP(wrap(phase + 0.5), increment)
    }
}

extension TriangleShape {
    @inline(__always) static func lanes(_ phase: Lanes, _ increment: Lanes, _ noise: Lanes, _ tables: VoiceTables) -> Lanes {
        let centred = phase - 0.5
        // abs: the sign bit cleared, as Swift's abs does for a Float.
        let magnitude = unsafeBitCast(unsafeBitCast(centred, to: SIMD4<UInt32>.self) & 0x7FFF_FFFF, to: Lanes.self)
        return 4 * magnitude - 1
    }
}

extension NoiseShape {
    @inline(__always) static func lanes(_ phase: Lanes, _ increment: Lanes, _ noise: Lanes, _ tables: VoiceTables) -> Lanes {
        noise
    }
}

extension FMShape {
    @inline(__always) static func lanes(_ phase: Lanes, _ increment: Lanes, _ noise: Lanes, _ tables: VoiceTables) -> Lanes {
        tables.sin(phase)
    }
}

extension NoShape {
    @inline(__always) static func lanes(_ phase: Lanes, _ increment: Lanes, _ noise: Lanes, _ tables: VoiceTables) -> Lanes {
        Lanes(repeating: 0)
    }
}

extension LowPassOutput {
    @inline(__always) static func lanes(input: Lanes, band: Lanes, low: Lanes, k: Lanes) -> Lanes { low }
}

extension BandPassOutput {
    @inline(__always) static func lanes(input: Lanes, band: Lanes, low: Lanes, k: Lanes) -> Lanes { band }
}

extension HighPassOutput {
    @inline(__always) static func lanes(input: Lanes, band: Lanes, low: Lanes, k: Lanes) -> Lanes { input - k * band - low }
}

/// The amplitude envelopes of four lanes. Every stage's step is `((level - subtract) * multiply)
/// + add`, which gives exactly the one-voice loop's result: attack `level + step` (subtract 0,
/// multiply 1), decay `sustain + (level - sustain) * coefficient`, release `level * coefficient`
/// (plus +0, and the level is never -0), fast fade `level + (-step)`, and sustain and off leave
/// it (plus +0). A stage ends when the level reaches `upper` or falls below `lower`, which one
/// test a sample checks for all four lanes.
struct EnvelopeLanes {
    var subtract = Lanes(repeating: 0), multiply = Lanes(repeating: 1), add = Lanes(repeating: 0)
    var upper = Lanes(repeating: .infinity), lower = Lanes(repeating: -.infinity)
    private var stages: (EnvelopeStage, EnvelopeStage, EnvelopeStage, EnvelopeStage) = (.off, .off, .off, .off)

    @inline(__always)
    func stage(_ lane: Int) -> EnvelopeStage {
        switch lane {
        case 0: stages.0
        case 1: stages.1
        case 2: stages.2
        default: stages.3
        }
    }

    /// Puts `lane` in `stage`, with the rates of `voice`.
    @inline(__always)
    mutating func enter(_ stage: EnvelopeStage, lane: Int, voice: UnsafeMutablePointer<Voice>) {
        subtract[lane] = 0
        multiply[lane] = 1
        add[lane] = 0
        upper[lane] = .infinity
        lower[lane] = -.infinity
        switch stage {
        case .attack:
            add[lane] = voice.pointee.attackStep
            upper[lane] = 1
        case .decay:
            let sustain = voice.pointee.patch.sustain
            subtract[lane] = sustain
            multiply[lane] = voice.pointee.decayCoefficient
            add[lane] = sustain
            if sustain <= 0 { lower[lane] = 1e-4 }
        case .release:
            multiply[lane] = voice.pointee.releaseCoefficient
            lower[lane] = 1e-4
        case .fastFade:
            add[lane] = -voice.pointee.fadeStep
            // level <= 0, as the one-voice loop tests it.
            lower[lane] = .leastNonzeroMagnitude
        case .sustain, .off:
            break
        }
        switch lane {
        case 0: stages.0 = stage
        case 1: stages.1 = stage
        case 2: stages.2 = stage
        default: stages.3 = stage
        }
    }
}

/// Up to four voices of one signature (``Voice/signature``) to render together: their slots in
/// the pool and where each one's signal goes. Lanes past `count` are padding: they start silent
/// (stage off), write to a scratch buffer and are never read back.
struct VoiceLaneGroup {
    var slots: (Int, Int, Int, Int) = (0, 0, 0, 0)
    var signals: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)
    var count = 0

    init(padding: UnsafeMutablePointer<Float>) {
        signals = (padding, padding, padding, padding)
    }

    @inline(__always)
    func slot(_ lane: Int) -> Int {
        switch lane {
        case 0: slots.0
        case 1: slots.1
        case 2: slots.2
        default: slots.3
        }
    }
}

extension UnsafeMutablePointer where Pointee == Voice {
    /// One value of each of the group's voices, padding lanes taking `padding`.
    @inline(__always)
    private func gather(_ group: VoiceLaneGroup, padding: Float = 0, _ read: (UnsafeMutablePointer<Voice>) -> Float) -> Lanes {
        var lanes = Lanes(repeating: padding)
        for lane in 0..<group.count { lanes[lane] = read(self + group.slot(lane)) }
        return lanes
    }

    /// Renders the signals (before gains) of a group's voices for `count` frames, each into its
    /// own buffer, and returns how many frames each one sounded: the one-voice loop
    /// (``Voice/renderSignal(count:into:tables:_:_:_:)``) four lanes wide. A voice whose envelope
    /// ends stops there, as in that loop: the state it had at that frame is what is stored back,
    /// whatever its lane computes afterwards.
    @inline(__always)
    func renderLanes<A: WaveShape, B: WaveShape, F: FilterOutput>(
        _ group: VoiceLaneGroup, count: Int, tables: VoiceTables, useNoise: Bool, _ a: A.Type, _ b: B.Type, _ f: F.Type
    ) -> SIMD4<Int32> {
        let levelB = gather(group) { $0.pointee.patch.levelB }
        let addNoise = gather(group) { $0.pointee.patch.waveA != .noise ? $0.pointee.patch.noiseLevel : 0 }
        var level = gather(group) { $0.pointee.level }
        var phaseA = gather(group) { $0.pointee.phaseA }, phaseB = gather(group) { $0.pointee.phaseB }
        var phaseMod = gather(group) { $0.pointee.phaseMod }
        let incA = gather(group, padding: 0.25) { $0.pointee.incA }, incB = gather(group, padding: 0.25) { $0.pointee.incB }
        let incMod = gather(group) { $0.pointee.incMod }, fmIndex = gather(group) { $0.pointee.fmIndex }
        var noiseState = SIMD4<UInt32>(repeating: 1)
        for lane in 0..<group.count { noiseState[lane] = self[group.slot(lane)].noiseState }
        var ic1 = gather(group) { $0.pointee.ic1 }, ic2 = gather(group) { $0.pointee.ic2 }
        let fa1 = gather(group) { $0.pointee.fa1 }, fa2 = gather(group) { $0.pointee.fa2 }
        let fa3 = gather(group) { $0.pointee.fa3 }, fk = gather(group) { $0.pointee.fk }
        let out0 = group.signals.0, out1 = group.signals.1, out2 = group.signals.2, out3 = group.signals.3

        var envelope = EnvelopeLanes()
        for lane in 0..<group.count { envelope.enter(self[group.slot(lane)].stage, lane: lane, voice: self + group.slot(lane)) }

        // A lane whose envelope has ended keeps computing (its results unused); its state as it
        // ended is kept here.
        var endedPhaseA = phaseA, endedPhaseB = phaseB, endedPhaseMod = phaseMod
        var endedNoise = noiseState, endedIC1 = ic1, endedIC2 = ic2
        var ended = SIMDMask<SIMD4<Int32>>(repeating: true)
        var rendered = SIMD4<Int32>(repeating: 0)
        var sounding = 0
        for lane in 0..<group.count where envelope.stage(lane) != .off {
            ended[lane] = false
            rendered[lane] = Int32(count)
            sounding += 1
        }
        var i = 0
        while i < count && sounding > 0 {
            level = (level - envelope.subtract) * envelope.multiply + envelope.add
            if tactus_any_outside4(level, envelope.upper, envelope.lower) != 0 {
                var endsNow = SIMDMask<SIMD4<Int32>>(repeating: false)
                for lane in 0..<group.count where level[lane] >= envelope.upper[lane] || level[lane] < envelope.lower[lane] {
                    let voice = self + group.slot(lane)
                    if envelope.stage(lane) == .attack {
                        level[lane] = 1
                        envelope.enter(.decay, lane: lane, voice: voice)
                    } else {
                        level[lane] = 0
                        envelope.enter(.off, lane: lane, voice: voice)
                        endsNow[lane] = true
                        rendered[lane] = Int32(i)
                        sounding -= 1
                    }
                }
                endedPhaseA.replace(with: phaseA, where: endsNow)
                endedPhaseB.replace(with: phaseB, where: endsNow)
                endedPhaseMod.replace(with: phaseMod, where: endsNow)
                endedNoise.replace(with: noiseState, where: endsNow)
                endedIC1.replace(with: ic1, where: endsNow)
                endedIC2.replace(with: ic2, where: endsNow)
                ended = ended .| endsNow
                if sounding == 0 { break }
            }
            var noise = Lanes(repeating: 0)
            if useNoise {
                noiseState ^= noiseState &<< 13
                noiseState ^= noiseState &>> 17
                noiseState ^= noiseState &<< 5
                noise = tactus_int4_to_float4(unsafeBitCast(noiseState, to: SIMD4<Int32>.self)) * (1 / 2_147_483_648)
            }
            var s: Lanes
            if A.isFrequencyModulated {
                var p = phaseA + tables.sin(phaseMod) * fmIndex + 8
                p -= tactus_int4_to_float4(tactus_truncate_float4(p))
                s = tables.sin(p)
                phaseMod = wrap(phaseMod + incMod)
            } else {
                s = A.lanes(phaseA, incA, noise, tables)
            }
            phaseA = wrap(phaseA + incA)
            if !B.isSilent {
                let second = B.lanes(phaseB, incB, noise, tables)
                phaseB = wrap(phaseB + incB)
                s += second * levelB
            }
            s += noise * addNoise
            let v3 = s - ic2
            let v1 = fa1 * ic1 + fa2 * v3
            let v2 = ic2 + fa2 * ic1 + fa3 * v3
            ic1 = 2 * v1 - ic1
            ic2 = 2 * v2 - ic2
            let out = F.lanes(input: s, band: v1, low: v2, k: fk) * level
            out0[i] = out[0]
            out1[i] = out[1]
            out2[i] = out[2]
            out3[i] = out[3]
            i += 1
        }
        phaseA.replace(with: endedPhaseA, where: ended)
        phaseB.replace(with: endedPhaseB, where: ended)
        phaseMod.replace(with: endedPhaseMod, where: ended)
        noiseState.replace(with: endedNoise, where: ended)
        ic1.replace(with: endedIC1, where: ended)
        ic2.replace(with: endedIC2, where: ended)
        for lane in 0..<group.count {
            let voice = self + group.slot(lane)
            voice.pointee.stage = envelope.stage(lane)
            voice.pointee.level = level[lane]
            voice.pointee.phaseA = phaseA[lane]
            voice.pointee.phaseB = phaseB[lane]
            voice.pointee.phaseMod = phaseMod[lane]
            voice.pointee.noiseState = noiseState[lane]
            voice.pointee.ic1 = ic1[lane]
            voice.pointee.ic2 = ic2[lane]
        }
        return rendered
    }
}

extension UnsafeMutablePointer where Pointee == Voice {
    /// ``renderLanes(_:count:tables:useNoise:_:_:_:)`` for the group's signature: its first
    /// voice's patch chooses the loop, as ``Voice/renderSignal(count:into:tables:)`` does.
    func renderLanes(_ group: VoiceLaneGroup, count: Int, tables: VoiceTables) -> SIMD4<Int32> {
        let patch = UnsafePointer(self + group.slot(0)).pointee.patch
        let useNoise = patch.noiseLevel > 0 || patch.waveA == .noise || patch.waveB == .noise
        switch patch.waveA {
        case .sine: return lanesChoosingB(SineShape.self, group, count, tables, useNoise, patch)
        case .saw: return lanesChoosingB(SawShape.self, group, count, tables, useNoise, patch)
        case .square: return lanesChoosingB(SquareShape.self, group, count, tables, useNoise, patch)
        case .triangle: return lanesChoosingB(TriangleShape.self, group, count, tables, useNoise, patch)
        case .noise: return lanesChoosingB(NoiseShape.self, group, count, tables, useNoise, patch)
        case .fm: return lanesChoosingB(FMShape.self, group, count, tables, useNoise, patch)
        }
    }

    private func lanesChoosingB<A: WaveShape>(_ a: A.Type, _ group: VoiceLaneGroup, _ count: Int, _ tables: VoiceTables,
                                              _ useNoise: Bool, _ patch: SynthPatch) -> SIMD4<Int32> {
        guard patch.levelB > 0 else { return lanesChoosingFilter(a, NoShape.self, group, count, tables, useNoise, patch) }
        switch patch.waveB {
        case .saw: return lanesChoosingFilter(a, SawShape.self, group, count, tables, useNoise, patch)
        case .square: return lanesChoosingFilter(a, SquareShape.self, group, count, tables, useNoise, patch)
        case .triangle: return lanesChoosingFilter(a, TriangleShape.self, group, count, tables, useNoise, patch)
        case .noise: return lanesChoosingFilter(a, NoiseShape.self, group, count, tables, useNoise, patch)
        case .sine, .fm: return lanesChoosingFilter(a, SineShape.self, group, count, tables, useNoise, patch)
        }
    }

    private func lanesChoosingFilter<A: WaveShape, B: WaveShape>(
        _ a: A.Type, _ b: B.Type, _ group: VoiceLaneGroup, _ count: Int, _ tables: VoiceTables, _ useNoise: Bool, _ patch: SynthPatch
    ) -> SIMD4<Int32> {
        switch patch.filterMode {
        case .lowPass: renderLanes(group, count: count, tables: tables, useNoise: useNoise, a, b, LowPassOutput.self)
        case .bandPass: renderLanes(group, count: count, tables: tables, useNoise: useNoise, a, b, BandPassOutput.self)
        case .highPass: renderLanes(group, count: count, tables: tables, useNoise: useNoise, a, b, HighPassOutput.self)
        }
    }
}
