import AudioGraph
import Foundation
import MIDI
import SoundFont

// Control rate: every control interval, on a grid of absolute frames, each voice's envelopes and LFOs step and its pitch, filter and gain targets are recomputed.
extension SamplerNode {
    /// Recomputes voice `v`'s pitch, filter and gain targets for the control step at `frame`.
    func updateDynamics(_ v: UnsafeMutablePointer<SamplerVoice>, frame: Int64) {
        let interval = Float(Self.controlInterval)
        let volumeEnvelope = v.pointee.volumeEnvelope
        if volumeEnvelope.section == .finished {
            v.pointee.state = .fading
            v.pointee.fadeRemaining = 0
            return
        }
        // Denormal guard on the grid: a silent filter tail would otherwise slow every sample.
        if abs(v.pointee.history1) < 1e-20 { v.pointee.history1 = 0 }
        if abs(v.pointee.history2) < 1e-20 { v.pointee.history2 = 0 }
        let elapsed = frame - v.pointee.startFrame
        let modLFO = lfoValue(elapsed - v.pointee.modLFODelay, v.pointee.modLFOFrequency)
        let vibLFO = lfoValue(elapsed - v.pointee.vibLFODelay, v.pointee.vibLFOFrequency)
        // The delay holds the attack's start value (0 unless a region rule's start says otherwise), read as the attack reads it.
        let modEnvelope = v.pointee.modulationEnvelope.section.rawValue <= EnvelopeSection.attack.rawValue
            ? tables.lookup(tables.convex, 127 * v.pointee.modulationEnvelope.value)
            : v.pointee.modulationEnvelope.value

        // Pitch.
        let tuning = isDrumChannel(Int(v.pointee.channel)) ? 0 : fineTuningCents + coarseTuningCents
        let cents = v.pointee.pitch + tuning + Double(modLFO * v.pointee.modLFOToPitch + vibLFO * v.pointee.vibLFOToPitch
                                             + modEnvelope * v.pointee.modEnvToPitch)
        if cents != v.pointee.incrementCents {
            // Most voices hold their pitch: the exponential only runs when it moves.
            v.pointee.incrementCents = cents
            let ratio = exp2((cents - v.pointee.rootPitch) / 1200) * v.pointee.sampleRatio
            v.pointee.increment = max(1, Int64(min(ratio, 256) * 4_294_967_296))
        }

        // Filter: FluidSynth's RBJ low-pass (or a region rule's shape) with the cutoff limited to 1500...13500 cents,
        // 5 Hz...0.45 x the sample rate, and the two-pole gain lowered by half the resonance peak.
        let fcCents = min(max(Double(v.pointee.filterCents + modLFO * v.pointee.modLFOToFilter
                                     + modEnvelope * v.pointee.modEnvToFilter), 1500), 13_500)
        if fcCents != v.pointee.targetCents || v.pointee.filterQ != v.pointee.targetQ {
            // Recomputed only when the cutoff or resonance moved.
            v.pointee.targetCents = fcCents
            v.pointee.targetQ = v.pointee.filterQ
            let fc = min(max(SoundFontUnits.hertz(absoluteCents: fcCents), 5), 0.45 * sampleRate)
            let omega = 2 * Double.pi * fc / sampleRate
            switch v.pointee.filterKind {
            case .lowPassTwoPole, .sfzLowPassTwoPole, .sfzHighPassTwoPole:
                let sinW = Float(sin(omega)), cosW = Float(cos(omega))
                let alpha = sinW / (2 * v.pointee.filterQ)
                let a0Inverse = 1 / (1 + alpha)
                if v.pointee.filterKind == .sfzHighPassTwoPole {
                    // RBJ's high-pass: b0 = b2 = (1 + cos w) / 2, b1 = -(1 + cos w).
                    let b1 = -(1 + cosW) * a0Inverse * v.pointee.filterGain
                    v.pointee.target = SIMD4(b1 * -0.5, b1, -2 * cosW * a0Inverse, (1 - alpha) * a0Inverse)
                } else {
                    let b1 = (1 - cosW) * a0Inverse * v.pointee.filterGain
                    v.pointee.target = SIMD4(b1 * 0.5, b1, -2 * cosW * a0Inverse, (1 - alpha) * a0Inverse)
                }
            case .lowPassOnePole:
                // sfizz's lp1Smooth: y = (1 - p) x + p y[-1]. Its b0 goes in the excess (b2 = 0).
                let pole = exp(-omega)
                v.pointee.target = SIMD4(0, 0, Float(-pole), 0)
                v.pointee.targetB0Excess = Float(1 - pole)
            case .highPassOnePole:
                // sfizz's hp1Smooth: b0 = -b1 = (1 + p) / 2, a1 = -p.
                let pole = exp(-omega)
                let b0 = Float((1 + pole) / 2)
                v.pointee.target = SIMD4(0, -b0, Float(-pole), 0)
                v.pointee.targetB0Excess = b0
            case .unfiltered:
                // y = x: b0 (in the excess) 1, every other coefficient 0.
                v.pointee.target = SIMD4(0, 0, 0, 0)
                v.pointee.targetB0Excess = 1
            }
        }
        let tb02 = v.pointee.target[0], tb1 = v.pointee.target[1], ta1 = v.pointee.target[2], ta2 = v.pointee.target[3]
        if v.pointee.filterKind.isOnePole {
            // Only one-pole voices have an excess; a two-pole voice's stays zero, unramped.
            let tb0Excess = v.pointee.targetB0Excess
            if v.pointee.filterStarted {
                v.pointee.b0Excess = v.pointee.previousTargetB0Excess
                v.pointee.db0Excess = (tb0Excess - v.pointee.b0Excess) / interval
            } else {
                v.pointee.b0Excess = tb0Excess
            }
            v.pointee.previousTargetB0Excess = tb0Excess
        }
        if v.pointee.filterStarted {
            // The previous ramp has ended: start from its exact target, so a steady filter
            // has no ramp at all.
            v.pointee.b02 = v.pointee.previousTarget[0]
            v.pointee.b1 = v.pointee.previousTarget[1]
            v.pointee.a1 = v.pointee.previousTarget[2]
            v.pointee.a2 = v.pointee.previousTarget[3]
            v.pointee.db02 = (tb02 - v.pointee.b02) / interval
            v.pointee.db1 = (tb1 - v.pointee.b1) / interval
            v.pointee.da1 = (ta1 - v.pointee.a1) / interval
            v.pointee.da2 = (ta2 - v.pointee.a2) / interval
        } else {
            v.pointee.filterStarted = true
            v.pointee.b02 = tb02
            v.pointee.b1 = tb1
            v.pointee.a1 = ta1
            v.pointee.a2 = ta2
        }
        v.pointee.previousTarget = v.pointee.target

        // Amplitude: linear in the attack, dB-linear after it (96 dB across the value range).
        let lfoCentibels = -modLFO * v.pointee.modLFOToVolume
        var amplitude: Float
        switch volumeEnvelope.section {
        case .delay:
            amplitude = 0
        case .attack:
            amplitude = centibelsToAmplitude(v, v.pointee.attenuation + lfoCentibels) * volumeEnvelope.value
        default:
            amplitude = centibelsToAmplitude(v, v.pointee.attenuation + 960 * (1 - volumeEnvelope.value) + lfoCentibels)
            if v.pointee.maximumAmplitude * volumeEnvelope.value < Self.noiseFloor {
                v.pointee.state = .fading
                v.pointee.fadeRemaining = 0
                return
            }
        }
        amplitude *= masterGain
        amplitude *= v.pointee.regionGain
        v.pointee.stepL = (amplitude * v.pointee.panLeft - v.pointee.gainL) / interval
        v.pointee.stepR = (amplitude * v.pointee.panRight - v.pointee.gainR) / interval
        let ramped = Float(v.pointee.sendRampFrame)
        v.pointee.gainReverb += v.pointee.stepReverb * ramped
        v.pointee.gainChorus += v.pointee.stepChorus * ramped
        v.pointee.sendRampFrame = 0
        v.pointee.stepReverb = (amplitude * v.pointee.reverbSend - v.pointee.gainReverb) / interval
        v.pointee.stepChorus = (amplitude * v.pointee.chorusSend - v.pointee.gainChorus) / interval
    }

    /// A voice's attenuation as an amplitude, recomputed only when it changed (a sustaining
    /// voice keeps it for thousands of steps).
    @inline(__always)
    func centibelsToAmplitude(_ v: UnsafeMutablePointer<SamplerVoice>, _ cb: Float) -> Float {
        if cb != v.pointee.amplitudeCentibels {
            v.pointee.amplitudeCentibels = cb
            v.pointee.amplitudeOfCentibels = SoundFontUnits.amplitude(centibels: cb)
        }
        return v.pointee.amplitudeOfCentibels
    }

    /// FluidSynth's triangle LFO: starts at 0 rising, peaks of +-1; 0 during its delay.
    @inline(__always)
    func lfoValue(_ frames: Int64, _ frequency: Double) -> Float {
        guard frames > 0 else { return 0 }
        var p = Double(frames) * frequency
        p -= p.rounded(.down)
        let x = Float(p)
        if x < 0.25 { return 4 * x }
        if x < 0.75 { return 2 - 4 * x }
        return 4 * x - 4
    }

    /// Frees the voices that ended. Only on the grid: between grid points the groups of four
    /// voices must stay the same whatever the block splits, so the sums keep their order.
    func compactActiveList() {
        var kept = 0
        for m in 0..<activeCount {
            let i = Int(activeList[m])
            if voices[i].state != .off {
                activeList[kept] = Int32(i)
                kept += 1
            } else {
                freeList[freeCount] = Int32(i)
                freeCount += 1
            }
        }
        activeCount = kept
    }

    func controlStep(frame: Int64) {
        compactActiveList()
        for n in 0..<activeCount {
            let v = voices + Int(activeList[n])
            guard v.pointee.state == .playing else { continue }
            // An SFZ voice that started on this grid point took its first step then.
            if v.pointee.sfzVoicing != nil, v.pointee.startFrame == frame { continue }
            let c = Int(v.pointee.channel)
            if v.pointee.controlSerial != channels[c].serial {
                v.pointee.controlSerial = channels[c].serial
                computeEffective(Int(activeList[n]))
                applyModulatedValues(v)
            }
            v.pointee.volumeEnvelope.step()
            v.pointee.modulationEnvelope.step()
            updateDynamics(v, frame: frame)
        }
    }
}
