import AudioGraph
import Foundation
import MIDI
import SoundFont

// Voice setup: a region's generators and modulators turned into a voice's sample, loop, envelopes, LFOs, filter and gains.
extension SamplerNode {
    /// Fills ``effective`` with the region's generators plus its modulators' contributions
    /// for voice `i`.
    func computeEffective(_ i: Int) {
        let v = voices + i
        let region = compiled.regions + Int(v.pointee.region)
        let base = compiled.generators + Int(region.pointee.generatorOffset)
        effective.update(from: base, count: SoundFontGenerator.count)
        // FluidSynth (after the EMU hardware) scales the bank's attenuation by 0.4.
        effective[SoundFontGenerator.initialAttenuation.rawValue] *= 0.4
        let c = Int(v.pointee.channel)
        let mods = compiled.modulators + Int(region.pointee.modulatorStart)
        for m in 0..<Int(region.pointee.modulatorCount) {
            let mod = mods + m
            guard mod.pointee.source.isValid, mod.pointee.amountSource.isValid, !mod.pointee.source.isNone else { continue }
            let v1 = sourceValue(mod.pointee.source, channel: c, voice: v)
            let v2 = mod.pointee.amountSource.isNone ? 1 : sourceValue(mod.pointee.amountSource, channel: c, voice: v)
            var value = v1 * v2 * mod.pointee.amount
            if mod.pointee.absolute { value = abs(value) }
            effective[Int(mod.pointee.destination)] += value
        }
        if mpe.isActive { addMPEContributions(channel: c) }
        // The specification's ranges apply to the final sums.
        for g in 0..<SoundFontGenerator.count {
            effective[g] = min(max(effective[g], rangeLow[g]), rangeHigh[g])
        }
    }

    @inline(__always)
    func sourceValue(_ s: ModulatorSource, channel c: Int, voice v: UnsafeMutablePointer<SamplerVoice>) -> Float {
        let raw: Float
        var range: Float = 128
        if s.isCC {
            raw = Float(controllers[c * 128 + Int(s.index)])
        } else {
            switch s.index {
            case 2: raw = v.pointee.velocity
            case 3: raw = v.pointee.key
            case 10: raw = Float(polyPressure[c * 128 + Int(v.pointee.noteKey)])
            case 13:
                // A member's pressure combines with its zone's (the manager's): the larger.
                let manager = mpe.isActive ? mpe.manager(of: c) : nil
                raw = manager.map { max(channels[c].channelPressure, channels[$0].channelPressure) } ?? channels[c].channelPressure
            case 14:
                raw = channels[c].pitchWheel
                range = 16_384
            case 16:
                // Normalised by 127 so that the default modulator's 12700 cents give exactly
                // 100 cents per semitone of range.
                raw = channels[c].bendRange
                range = 127
            default: raw = 0
            }
        }
        return tables.transform(s, value: raw, range: range)
    }

    func startVoice(channel c: Int, key: UInt8, velocity: UInt8, region r: Int, heldFrames: Int64 = 0) {
        let base = compiled.generators + Int(compiled.regions[r].generatorOffset)
        let sampleIndex = Int(compiled.regions[r].sampleIndex)
        guard sampleIndex >= 0, sampleIndex < compiled.sampleCount else { return }
        // A compressed sample plays once it is decoded; until then the region is silent.
        var decoded: DecodedSample?
        if compiled.samples[sampleIndex].compressed {
            guard let d = compiled.compressed?.decoded(sampleIndex) else {
                sampleRequests?.ask(Int(channels[c].preset), evenIfPrepared: true)
                return
            }
            decoded = d
        } else if compiled.words == nil {
            return
        }
        let exclusive = Int32(base[SoundFontGenerator.exclusiveClass.rawValue])
        if exclusive != 0 {
            // Cut the class's earlier voices on this channel, not the ones this note-on starts.
            forEachActive { i in
                let v = voices + i
                if v.pointee.state == .playing, Int(v.pointee.channel) == c, v.pointee.exclusiveClass == exclusive,
                   v.pointee.noteID != noteSerial {
                    killExclusive(i)
                }
            }
        }
        enforceLimit(leavingRoomForOne: true)
        let slot = lowestFreeOverflowSlot()
        let i = takeSlot()
        serial &+= 1
        let v = voices + i
        v.pointee = SamplerVoice()
        v.pointee.overflowSlot = slot
        v.pointee.state = .playing
        v.pointee.channel = UInt8(c)
        v.pointee.noteKey = key
        v.pointee.region = Int32(r)
        v.pointee.serial = serial
        v.pointee.noteID = noteSerial
        v.pointee.startFrame = position
        v.pointee.exclusiveClass = exclusive
        let forcedKey = base[SoundFontGenerator.keyNumber.rawValue]
        let forcedVelocity = base[SoundFontGenerator.velocity.rawValue]
        v.pointee.key = forcedKey >= 0 && forcedKey <= 127 ? forcedKey : Float(key)
        v.pointee.velocity = forcedVelocity >= 1 && forcedVelocity <= 127 ? forcedVelocity : Float(velocity)
        v.pointee.tunedCents = tunedCents(channel: c, key: v.pointee.key)
        v.pointee.controlSerial = channels[c].serial
        computeEffective(i)
        var amplitudeStart: Float = 0, modulationStart: Float = 0
        if let rules = regionRules {
            v.pointee.regionGain = rules.gain(r, velocity: velocity, heldFrames: heldFrames, sampleRate: sampleRate)
            v.pointee.filterKind = rules.filter(r)
            v.pointee.sfzVoicing = rules.sfzVoicing(r)
            let (amplitude, modulation) = rules.envelopes(r)
            if let amplitude {
                let e = amplitude.pointee.values(velocity: velocity)
                effective[SoundFontGenerator.delayVolEnv.rawValue] = Float(e.delay)
                effective[SoundFontGenerator.attackVolEnv.rawValue] = Float(e.attack)
                effective[SoundFontGenerator.holdVolEnv.rawValue] = Float(e.hold)
                effective[SoundFontGenerator.decayVolEnv.rawValue] = Float(e.decay)
                effective[SoundFontGenerator.releaseVolEnv.rawValue] = Float(e.release)
                effective[SoundFontGenerator.sustainVolEnv.rawValue] = Float(SamplerEnvelopeRule.volumeSustain(e.sustain))
                amplitudeStart = Float(min(max(amplitude.pointee.start / 100, 0), 1))
            }
            if let modulation {
                let e = modulation.pointee.values(velocity: velocity)
                effective[SoundFontGenerator.delayModEnv.rawValue] = Float(e.delay)
                effective[SoundFontGenerator.attackModEnv.rawValue] = Float(e.attack)
                effective[SoundFontGenerator.holdModEnv.rawValue] = Float(e.hold)
                effective[SoundFontGenerator.decayModEnv.rawValue] = Float(e.decay)
                effective[SoundFontGenerator.releaseModEnv.rawValue] = Float(e.release)
                effective[SoundFontGenerator.sustainModEnv.rawValue] = Float(SamplerEnvelopeRule.modulationSustain(e.sustain))
                // The attack reads its value through the convex curve: start where the curve gives the level asked.
                modulationStart = tables.convexPosition(of: Float(min(max(modulation.pointee.start / 100, 0), 1)))
            }
        }
        setUpVoice(v, sampleIndex: sampleIndex, decoded: decoded, amplitudeStart: amplitudeStart, modulationStart: modulationStart)
        applyModulatedValues(v)
        if v.pointee.sfzVoicing != nil {
            startOnNoteFrame(v)
        } else {
            v.pointee.volumeEnvelope.step()
            v.pointee.modulationEnvelope.step()
            updateDynamics(v, frame: position)
        }
    }

    /// sfizz's note start for a voice that starts at `position`, between two points of the
    /// control grid: its delay ends and its attack rises on their own frames, and a voice
    /// without delay or attack sounds at its level from its first frame. SoundFont's voices
    /// instead fade in over a whole control interval, as FluidSynth's, and keep their delays
    /// and attacks on the grid.
    ///
    /// Step j of the voice (1 = the one taken here) reaches its value at the grid point
    /// `framesToGrid + (j − 1) · interval` frames after the note. The attack rises by its
    /// exact slope per step (FluidSynth's rounds its length up to whole steps) until its
    /// maximum ends it; its first step, the first to end after the delay, is shortened by the
    /// fraction of its interval the delay still covers.
    func startOnNoteFrame(_ v: UnsafeMutablePointer<SamplerVoice>) {
        let interval = Int64(Self.controlInterval)
        let intoGrid = ((position % interval) + interval) % interval
        let framesToGrid = interval - intoGrid
        let delayTimecents = Double(effective[SoundFontGenerator.delayVolEnv.rawValue])
        let delay = delayTimecents <= -12_000 ? 0 : sampleRate * SoundFontUnits.seconds(timecents: min(delayTimecents, 5000))
        let delaySteps: Int64, fraction: Double
        if delay < Double(framesToGrid) {
            (delaySteps, fraction) = (0, (Double(intoGrid) + delay) / Double(interval))
        } else {
            let afterFirst = (delay - Double(framesToGrid)) / Double(interval)
            (delaySteps, fraction) = (Int64(afterFirst) + 1, afterFirst - afterFirst.rounded(.down))
        }
        let attackTimecents = Double(effective[SoundFontGenerator.attackVolEnv.rawValue])
        let instant = delay == 0 && attackTimecents <= -12_000
        v.pointee.volumeEnvelope.delay.count = UInt32(clamping: delaySteps)
        if !instant {
            let attack = max(1, sampleRate * SoundFontUnits.seconds(timecents: min(max(attackTimecents, -12_000), 8000)))
            let startValue = v.pointee.volumeEnvelope.delay.increment
            v.pointee.volumeEnvelope.attack.increment = (1 - startValue) * Float(Double(interval) / attack)
            v.pointee.volumeEnvelope.attack.count = UInt32(attack / Double(interval)) + 2
        }
        if fraction > 0, !instant {
            let shortfall = v.pointee.volumeEnvelope.attack.increment * Float(fraction)
            if delaySteps == 0 {
                v.pointee.volumeEnvelope.value -= shortfall
            } else {
                v.pointee.volumeEnvelope.delay.increment -= shortfall
            }
        }
        v.pointee.volumeEnvelope.step()
        v.pointee.modulationEnvelope.step()
        updateDynamics(v, frame: position)
        let whole = Float(interval)
        if instant {
            // The ramp's target, reached at once.
            v.pointee.gainL += v.pointee.stepL * whole
            v.pointee.gainR += v.pointee.stepR * whole
            v.pointee.gainReverb += v.pointee.stepReverb * whole
            v.pointee.gainChorus += v.pointee.stepChorus * whole
            (v.pointee.stepL, v.pointee.stepR, v.pointee.stepReverb, v.pointee.stepChorus) = (0, 0, 0, 0)
        } else {
            // The ramp reaches its target at the next grid point.
            let scale = whole / Float(framesToGrid)
            v.pointee.stepL *= scale
            v.pointee.stepR *= scale
            v.pointee.stepReverb *= scale
            v.pointee.stepChorus *= scale
        }
    }

    /// Fast release of a voice cut by a newer note of its exclusive class (FluidSynth's
    /// -200 timecent release).
    func killExclusive(_ i: Int) {
        let v = voices + i
        v.pointee.exclusiveClass = 0
        let steps = 1 + UInt32(sampleRate * SoundFontUnits.seconds(timecents: -200) / Double(Self.controlInterval))
        v.pointee.volumeEnvelope.release = EnvelopeSegment(count: steps, coefficient: 1, increment: -1 / Float(steps),
                                                          minimum: 0, maximum: 1)
        v.pointee.modulationEnvelope.release = EnvelopeSegment(count: steps, coefficient: 1, increment: -1 / Float(steps),
                                                              minimum: 0, maximum: 2)
        v.pointee.released = false
        v.pointee.sustained = false
        v.pointee.sostenuto = false
        release(i)
    }

    /// Sample points, loop, root pitch and envelopes: what is fixed when a voice starts.
    func setUpVoice(_ v: UnsafeMutablePointer<SamplerVoice>, sampleIndex: Int, decoded: DecodedSample?, amplitudeStart: Float = 0,
                    modulationStart: Float = 0) {
        let e = effective
        var s = compiled.samples[sampleIndex]
        var lastWord = compiled.wordCount
        if let decoded {
            (s.start, s.end, s.loopStart, s.loopEnd) = (0, decoded.count, decoded.loopStart, decoded.loopEnd)
            lastWord = decoded.count
            v.pointee.words = decoded.points
            v.pointee.lowBytes = nil
        } else {
            v.pointee.words = compiled.words
            v.pointee.lowBytes = compiled.lowBytes
        }
        func g(_ gen: SoundFontGenerator) -> Float { e[gen.rawValue] }
        func offset(_ fine: SoundFontGenerator, _ coarse: SoundFontGenerator) -> Int {
            Int(g(fine)) + 32_768 * Int(g(coarse))
        }
        var start = min(max(s.start + offset(.startAddressOffset, .startAddressCoarseOffset), 0), lastWord)
        var end = min(max(s.end + offset(.endAddressOffset, .endAddressCoarseOffset), 0), lastWord)
        // Keep the points inside the sample's own data, as FluidSynth does.
        start = min(max(start, s.start), s.end)
        end = min(max(end, s.start), s.end)
        if start > end { swap(&start, &end) }
        var loopStart = s.loopStart + offset(.startLoopAddressOffset, .startLoopAddressCoarseOffset)
        var loopEnd = s.loopEnd + offset(.endLoopAddressOffset, .endLoopAddressCoarseOffset)
        loopStart = min(max(loopStart, s.start), s.end)
        loopEnd = min(max(loopEnd, s.start), s.end)
        if loopStart > loopEnd { swap(&loopStart, &loopEnd) }
        var mode = Int32(g(.sampleModes)) & 3
        if mode == 2 { mode = 0 }
        if loopEnd - loopStart < 2 { mode = 0 }
        v.pointee.start = start
        v.pointee.end = end
        v.pointee.loopStart = loopStart
        v.pointee.loopEnd = loopEnd
        v.pointee.loopMode = mode
        v.pointee.phase = Int64(start) << 32
        if end - start < 1 { v.pointee.state = .fading; v.pointee.fadeRemaining = 0 }
        v.pointee.sampleRatio = s.sampleRate / sampleRate
        let overridingRoot = g(.overridingRootKey)
        let rootKey = overridingRoot >= 0 && overridingRoot <= 127 ? Double(overridingRoot) : Double(s.originalPitch)
        v.pointee.rootPitch = rootKey * 100 - Double(s.pitchCorrection)

        // Envelopes, in control steps.
        let rate = sampleRate / Double(Self.controlInterval)
        let key = Double(v.pointee.key)
        func steps(_ tc: Float, _ low: Double, _ high: Double) -> UInt32 {
            UInt32(rate * SoundFontUnits.seconds(timecents: min(max(Double(tc), low), high)))
        }
        func holdDecay(_ time: SoundFontGenerator, _ keyScale: SoundFontGenerator, isDecay: Bool) -> UInt32 {
            var tc = Double(g(time)) + Double(g(keyScale)) * (60 - key)
            if isDecay {
                tc = min(tc, 8000)
            } else {
                tc = min(tc, 5000)
                if tc <= -32_768 { return 0 }
            }
            tc = max(tc, -12_000)
            return UInt32(rate * SoundFontUnits.seconds(timecents: tc) + 0.5)
        }
        v.pointee.volumeEnvelope.configure(
            delaySteps: steps(g(.delayVolEnv), -12_000, 5000),
            attackSteps: 1 + steps(g(.attackVolEnv), -12_000, 8000),
            holdSteps: holdDecay(.holdVolEnv, .keyNumberToVolEnvHold, isDecay: false),
            decaySteps: holdDecay(.decayVolEnv, .keyNumberToVolEnvDecay, isDecay: true),
            sustainValue: min(max(1 - 0.001 * g(.sustainVolEnv), 0), 1),
            // FluidSynth never releases faster than -7200 timecents (15 ms), which avoids clicks.
            releaseSteps: 1 + steps(g(.releaseVolEnv), -7200, 8000),
            releaseMaximum: 1, startValue: amplitudeStart)
        v.pointee.modulationEnvelope.configure(
            delaySteps: steps(g(.delayModEnv), -12_000, 5000),
            attackSteps: 1 + steps(g(.attackModEnv), -12_000, 8000),
            holdSteps: holdDecay(.holdModEnv, .keyNumberToModEnvHold, isDecay: false),
            decaySteps: holdDecay(.decayModEnv, .keyNumberToModEnvDecay, isDecay: true),
            sustainValue: min(max(1 - 0.001 * g(.sustainModEnv), 0), 1),
            releaseSteps: 1 + steps(g(.releaseModEnv), -12_000, 8000),
            releaseMaximum: 2, startValue: modulationStart)
        func delayFrames(_ gen: SoundFontGenerator) -> Int64 {
            Int64(sampleRate * SoundFontUnits.seconds(timecents: min(max(Double(g(gen)), -12_000), 5000)))
        }
        v.pointee.modLFODelay = delayFrames(.delayModLFO)
        v.pointee.vibLFODelay = delayFrames(.delayVibLFO)
        v.pointee.maximumAmplitude = SoundFontUnits.amplitude(centibels: min(max(g(.initialAttenuation), 0), 1440))
    }

    /// Values that follow modulator sources during the note: pitch, level, pan, sends,
    /// filter, LFO and envelope depths and LFO rates. Reads ``effective``.
    func applyModulatedValues(_ v: UnsafeMutablePointer<SamplerVoice>) {
        let e = effective
        func g(_ gen: SoundFontGenerator) -> Float { e[gen.rawValue] }
        let key = Double(v.pointee.key)
        let root = v.pointee.rootPitch
        let scale = Double(g(.scaleTuning))
        let tuned = v.pointee.tunedCents
        // In a tuning, the scale tuning generator scales the tuned key's distance from the
        // root as it scales an equal-tempered key's, so 100 plays the tuned pitch exactly.
        let nominal = tuned.isNaN ? scale * (key - root / 100) + root : scale / 100 * (tuned - root) + root
        v.pointee.pitch = nominal + 100 * Double(g(.coarseTune)) + Double(g(.fineTune))
        v.pointee.attenuation = min(max(g(.initialAttenuation), 0), 1440)
        let pan = min(max(g(.pan), -500), 500)
        if let voicing = v.pointee.sfzVoicing {
            let c = Int(v.pointee.channel) * 128
            (v.pointee.panLeft, v.pointee.panRight) = voicing.gains(pan: Double(pan) / 500, volume: controllers[c + 7],
                                                                    expression: controllers[c + 11])
        } else {
            v.pointee.panLeft = Float(sin(Double(500 - pan) / 1000 * Double.pi / 2))
            v.pointee.panRight = Float(sin(Double(500 + pan) / 1000 * Double.pi / 2))
        }
        v.pointee.reverbSend = min(max(g(.reverbEffectsSend) / 1000, 0), 1)
        v.pointee.chorusSend = min(max(g(.chorusEffectsSend) / 1000, 0), 1)
        v.pointee.filterCents = g(.initialFilterCutoff)
        let resonance = min(max(g(.initialFilterQ) / 10, 0), 96)
        if v.pointee.filterKind.hasSFZResonance {
            v.pointee.filterQ = Float(pow(10, Double(resonance) / 20))
            v.pointee.filterGain = 1
        } else {
            v.pointee.filterQ = Float(pow(10, Double(resonance - 3.01) / 20))
            v.pointee.filterGain = 1 / v.pointee.filterQ.squareRoot()
        }
        v.pointee.modLFOToPitch = min(max(g(.modLFOToPitch), -12_000), 12_000)
        v.pointee.vibLFOToPitch = min(max(g(.vibLFOToPitch), -12_000), 12_000)
        v.pointee.modEnvToPitch = min(max(g(.modEnvToPitch), -12_000), 12_000)
        v.pointee.modLFOToFilter = min(max(g(.modLFOToFilterCutoff), -12_000), 12_000)
        v.pointee.modEnvToFilter = min(max(g(.modEnvToFilterCutoff), -12_000), 12_000)
        v.pointee.modLFOToVolume = min(max(g(.modLFOToVolume), -960), 960)
        v.pointee.modLFOFrequency = SoundFontUnits.hertz(absoluteCents: min(max(Double(g(.freqModLFO)), -16_000), 4500)) / sampleRate
        v.pointee.vibLFOFrequency = SoundFontUnits.hertz(absoluteCents: min(max(Double(g(.freqVibLFO)), -16_000), 4500)) / sampleRate
    }
}
