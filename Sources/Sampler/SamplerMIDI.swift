import AudioGraph
import Foundation
import MIDI
import SoundFont

// MIDI: note on and off, controllers, program and bank selection, pitch wheel and pressures.
extension SamplerNode {
    public func receive(_ message: MIDIMessage, atFrame frame: Int64) {
        position = frame
        let c = Int(message.channel)
        switch message.status & 0xF0 {
        case 0x90 where message.data2 > 0: noteOn(channel: c, key: message.data1 & 0x7F, velocity: message.data2 & 0x7F)
        case 0x80, 0x90: noteOff(channel: c, key: message.data1 & 0x7F)
        case 0xA0:
            polyPressure[c * 128 + Int(message.data1 & 0x7F)] = message.data2 & 0x7F
            channels[c].serial &+= 1
        case 0xB0: controlChange(channel: c, controller: message.data1 & 0x7F, value: message.data2 & 0x7F)
        // A member channel's program is its zone's (MPE 1.0): its own program changes are ignored.
        case 0xC0 where !(mpe.isActive && mpe.isMember(c)):
            channels[c].program = message.data1 & 0x7F
            selectPreset(c)
        case 0xD0:
            channels[c].channelPressure = Float(message.data1 & 0x7F)
            channels[c].serial &+= 1
        case 0xE0:
            channels[c].pitchWheel = Float(message.pitchBendValue)
            channels[c].serial &+= 1
        case 0xF0 where message.status == 0xFF:
            // System reset: silence and return every channel to its initial state.
            for n in 0..<activeCount { beginFade(Int(activeList[n])) }
            drumChannels = 1 << 9
            tuning.reset()
            mpe.reset()
            for ch in 0..<16 {
                resetChannel(ch)
                // No release region starts for a key struck before the reset.
                regionRules?.clearKeys(channel: ch)
            }
        default: break
        }
        if mpe.isActive && mpe.isManager(c) { forwardToZone(message, manager: c) }
    }

    func selectPreset(_ c: Int) {
        let bank = isDrumChannel(c) ? 128 : Int(channels[c].bankMSB)
        channels[c].preset = Int32(compiled.preset(bank: bank, program: Int(channels[c].program)))
        sampleRequests?.ask(Int(channels[c].preset), evenIfPrepared: false)
    }

    func controlChange(channel c: Int, controller: UInt8, value: UInt8) {
        let cc = controllers + c * 128
        cc[Int(controller)] = value
        switch controller {
        case MIDIController.bankSelectMSB:
            // FluidSynth's default "gs" style: the MSB is the bank, the LSB is ignored; it
            // takes effect at the next program change. A system reset message can select
            // another style (SamplerSysex.swift).
            if bankStyle == .gs { channels[c].bankMSB = value } else { selectBankMSB(channel: c, value) }
        case MIDIController.bankSelectLSB where bankStyle == .gm2 || bankStyle == .xg:
            // GM2 and XG banks are numbered by the LSB; drum channels ignore it.
            if !isDrumChannel(c) { channels[c].bankMSB = value }
        case MIDIController.sustainPedal:
            let down = value >= 64
            let lifted = channels[c].sustain && !down
            channels[c].sustain = down
            if !down {
                forEachActive { i in
                    if voices[i].state == .playing, Int(voices[i].channel) == c, voices[i].sustained, !voices[i].sostenuto {
                        voices[i].sustained = false
                        release(i)
                    }
                }
            }
            if lifted, let rules = regionRules { startPendingReleases(channel: c, rules: rules) }
        case MIDIController.sostenutoPedal:
            let down = value >= 64
            if down && !channels[c].sostenuto {
                // Only the notes whose keys are down now are caught.
                forEachActive { i in
                    if voices[i].state == .playing, Int(voices[i].channel) == c, !voices[i].released, !voices[i].sustained {
                        voices[i].sostenuto = true
                    }
                }
            } else if !down && channels[c].sostenuto {
                forEachActive { i in
                    guard voices[i].state == .playing, Int(voices[i].channel) == c, voices[i].sostenuto else { return }
                    voices[i].sostenuto = false
                    // A key released while the pedal held it is released now, unless the
                    // sustain pedal takes over.
                    if voices[i].sustained && !channels[c].sustain {
                        voices[i].sustained = false
                        release(i)
                    }
                }
            }
            channels[c].sostenuto = down
        case MIDIController.rpnMSB: channels[c].rpnMSB = value
        case MIDIController.rpnLSB: channels[c].rpnLSB = value
        case MIDIController.nrpnMSB, MIDIController.nrpnLSB:
            // Data entry after an NRPN must not change the bend range.
            channels[c].rpnMSB = 127
            channels[c].rpnLSB = 127
        case MIDIController.dataEntryMSB:
            if mpeDataEntry(channel: c, value: value, coarse: true) {
                break
            } else if channels[c].rpnMSB == 0 && channels[c].rpnLSB == 0 {
                channels[c].bendRange = MIDIController.bendRange(channels[c].bendRange, afterDataEntry: value, coarse: true)
            } else if channels[c].rpnMSB == 0 && channels[c].rpnLSB == MIDITuningState.programSelectRPN {
                retune(tuning.selectProgram(channel: c, program: value))
            } else if channels[c].rpnMSB == 0 && channels[c].rpnLSB == MIDITuningState.bankSelectRPN {
                tuning.selectBank(channel: c, bank: value)
            }
        case MIDIController.dataEntryLSB:
            if mpe.isActive && mpeDataEntry(channel: c, value: value, coarse: false) {
                break
            } else if channels[c].rpnMSB == 0 && channels[c].rpnLSB == 0 {
                channels[c].bendRange = MIDIController.bendRange(channels[c].bendRange, afterDataEntry: value, coarse: false)
            }
        case MIDIController.timbre: channels[c].timbre = value
        case MIDIController.allSoundOff:
            forEachActive { i in if Int(voices[i].channel) == c { beginFade(i) } }
        case MIDIController.resetAllControllers:
            // RP-015: modulation, expression, pedals, pressures, bend and RPN selection;
            // volume, pan, sends and the bend range stay.
            cc[1] = 0
            cc[11] = 127
            cc[64] = 0
            cc[65] = 0
            cc[66] = 0
            cc[67] = 0
            channels[c].channelPressure = 0
            channels[c].pitchWheel = 8192
            channels[c].rpnMSB = 127
            channels[c].rpnLSB = 127
            // The sustain pedal goes up: release regions it held back start, as when it lifts.
            if channels[c].sustain, let rules = regionRules { startPendingReleases(channel: c, rules: rules) }
            channels[c].sustain = false
            channels[c].sostenuto = false
            (polyPressure + c * 128).update(repeating: 0, count: 128)
            forEachActive { i in
                if voices[i].state == .playing, Int(voices[i].channel) == c {
                    voices[i].sostenuto = false
                    if voices[i].sustained {
                        voices[i].sustained = false
                        release(i)
                    }
                }
            }
        case MIDIController.allNotesOff, 124, 125, 126, 127:
            regionRules?.clearKeys(channel: c)
            forEachActive { i in
                if voices[i].state == .playing, Int(voices[i].channel) == c, !voices[i].released { noteOffVoice(i) }
            }
        default: break
        }
        channels[c].serial &+= 1
    }

    func noteOff(channel c: Int, key: UInt8) {
        forEachActive { i in
            let v = voices + i
            if v.pointee.state == .playing, Int(v.pointee.channel) == c, v.pointee.noteKey == key,
               !v.pointee.released, !v.pointee.sustained, !(regionRules?.ignoresNoteOff(v.pointee.region) ?? false) {
                noteOffVoice(i)
            }
        }
        guard let rules = regionRules, let velocity = rules.keyReleased(channel: c, key: key) else { return }
        if channels[c].sustain {
            // As sfizz: release regions wait for the pedal to lift, release-key regions do not.
            rules.releasePending[c * 128 + Int(key)] = true
            startRegions(channel: c, key: key, velocity: velocity, event: .keyUpPedalDown, rules: rules, otherKeysDown: rules.keysDown[c])
        } else {
            startRegions(channel: c, key: key, velocity: velocity, event: .keyUp, rules: rules, otherKeysDown: rules.keysDown[c])
        }
    }

    /// Starts the release regions of the channel's keys released while the sustain pedal was down.
    func startPendingReleases(channel c: Int, rules: CompiledRegionRules) {
        for key in 0..<128 where rules.releasePending[c * 128 + key] {
            rules.releasePending[c * 128 + key] = false
            startRegions(channel: c, key: UInt8(key), velocity: rules.noteVelocity[c * 128 + key], event: .pedalUp, rules: rules,
                         otherKeysDown: rules.keysDown[c])
        }
    }

    /// Stops the channel's voices whose region names `group` in its `offBy`, except those this
    /// note starts and, in a group that chokes itself, those of the same key (as sfizz: a
    /// repeated note does not choke its own earlier strokes).
    func stopVoices(offBy group: Int, channel c: Int, key: UInt8, rules: CompiledRegionRules) {
        forEachActive { i in
            let v = voices + i
            guard v.pointee.state == .playing, Int(v.pointee.channel) == c, v.pointee.noteID != noteSerial else { return }
            guard rules.stoppedBy(group, region: v.pointee.region),
                  rules.group(Int(v.pointee.region)) != group || v.pointee.noteKey != key else { return }
            stopVoice(i, asRegion: Int(v.pointee.region), rules: rules)
        }
    }

    /// Starts the channel's preset's regions that `key` and `velocity` select (and, with
    /// rules, that the rules let through for `event`).
    func startRegions(channel c: Int, key: UInt8, velocity: UInt8, event: CompiledRegionRules.NoteEvent,
                      rules: CompiledRegionRules?, otherKeysDown: Int32) {
        let p = Int(channels[c].preset)
        guard p >= 0 else { return }
        noteSerial &+= 1
        let draw = rules?.nextDraw() ?? 0
        let (start, count) = compiled.presetRegions[p]
        for r in Int(start)..<Int(start + count) {
            let region = compiled.regions + r
            guard key >= region.pointee.keyLow, key <= region.pointee.keyHigh,
                  velocity >= region.pointee.velocityLow, velocity <= region.pointee.velocityHigh else { continue }
            if let rules {
                guard rules.allows(r, event: event, channel: c, otherKeysDown: otherKeysDown, draw: draw,
                                   controllerValues: controllers + c * 128) else { continue }
                let group = rules.group(r)
                if group != 0 { stopVoices(offBy: group, channel: c, key: key, rules: rules) }
                if !rules.rules[r].paired {
                    if rules.rules[r].notePolyphony > 0 {
                        limitVoices(to: Int(rules.rules[r].notePolyphony), group: group, region: -1, key: Int(key), rules: rules,
                                    maskedAbove: rules.rules[r].noteSelfmask ? Float(velocity) : nil)
                    }
                    if rules.rules[r].polyphony > 0 {
                        limitVoices(to: Int(rules.rules[r].polyphony), group: group, region: group == 0 ? r : -1, key: -1, rules: rules)
                    }
                }
            }
            let held = rules.map { position - $0.noteOnFrame[c * 128 + Int(key)] } ?? 0
            startVoice(channel: c, key: key, velocity: velocity, region: r, heldFrames: event == .keyDown ? 0 : held)
        }
    }

    /// Stops the oldest voices (not released) of `group` (of `region` when it is not -1; on `key`
    /// when it is not -1) until fewer than `limit` sound, making room for one more. A stopped
    /// voice's paired second channel stops with it; each stops as its region's off mode says.
    /// With `maskedAbove` (a velocity), only voices struck at most that hard may stop, the
    /// quietest first, and the limit stays exceeded when none is left (SFZ's `note_selfmask`).
    func limitVoices(to limit: Int, group: Int, region: Int, key: Int, rules: CompiledRegionRules, maskedAbove: Float? = nil) {
        func counts(_ v: UnsafeMutablePointer<SamplerVoice>) -> Bool {
            guard v.pointee.state == .playing, !v.pointee.released, v.pointee.region >= 0, Int(v.pointee.region) < rules.count,
                  !rules.rules[Int(v.pointee.region)].paired else { return false }
            if key >= 0 && Int(v.pointee.noteKey) != key { return false }
            return region >= 0 ? Int(v.pointee.region) == region : rules.group(Int(v.pointee.region)) == group
        }
        var counted = 0
        forEachActive { i in if counts(voices + i) { counted += 1 } }
        while counted >= limit {
            var oldest = -1
            forEachActive { i in
                guard counts(voices + i) else { return }
                if let maskedAbove {
                    guard voices[i].velocity <= maskedAbove else { return }
                    if oldest >= 0, voices[i].velocity != voices[oldest].velocity {
                        if voices[i].velocity < voices[oldest].velocity { oldest = i }
                        return
                    }
                }
                if oldest < 0 || voices[i].serial < voices[oldest].serial { oldest = i }
            }
            guard oldest >= 0 else { return }
            let noteID = voices[oldest].noteID, sister = voices[oldest].region + 1
            let stoppedRegion = Int(voices[oldest].region)
            forEachActive { i in
                let v = voices + i
                guard v.pointee.state == .playing, i == oldest || (v.pointee.noteID == noteID && v.pointee.region == sister
                                                                   && Int(sister) < rules.count && rules.rules[Int(sister)].paired) else { return }
                stopVoice(i, asRegion: stoppedRegion, rules: rules)
            }
            counted -= 1
        }
    }

    /// A key went up for voice `i`: release it unless a pedal holds it.
    func noteOffVoice(_ i: Int) {
        let c = Int(voices[i].channel)
        if channels[c].sustain || voices[i].sostenuto {
            voices[i].sustained = true
        } else {
            release(i)
        }
    }

    /// Moves both envelopes into their release sections. A volume envelope still in its
    /// attack (linear in amplitude) is converted to the equivalent dB-domain value first, so
    /// the level does not jump.
    func release(_ i: Int) {
        let v = voices + i
        guard v.pointee.state == .playing, !v.pointee.released else { return }
        v.pointee.released = true
        v.pointee.sustained = false
        if v.pointee.volumeEnvelope.section == .attack && v.pointee.volumeEnvelope.value > 0 {
            let amp = v.pointee.volumeEnvelope.value
            let cb = -200 * log10(amp)
            v.pointee.volumeEnvelope.value = min(max(1 - cb / 960, 0), 1)
        }
        if v.pointee.modulationEnvelope.section.rawValue <= EnvelopeSection.attack.rawValue && v.pointee.modulationEnvelope.value > 0 {
            v.pointee.modulationEnvelope.value = min(max(tables.lookup(tables.convex, 127 * v.pointee.modulationEnvelope.value), 0), 1)
        }
        v.pointee.volumeEnvelope.enterRelease()
        v.pointee.modulationEnvelope.enterRelease()
    }

    /// Stops voice `i` as region `r`'s off mode says: through its release, over the rule's
    /// ``SamplerRegionRule/offTime``, or with the short fade.
    func stopVoice(_ i: Int, asRegion r: Int, rules: CompiledRegionRules) {
        let rule = rules.rules[r]
        if rule.offReleases {
            release(i)
        } else if rule.offTime > 0 {
            fadeOut(i, seconds: rule.offTime)
        } else {
            beginFade(i)
        }
    }

    /// Releases voice `i`'s volume envelope at sfizz's `off_time` rate: sfizz multiplies the
    /// level by e^(-9 / (seconds x rate)) each frame, 9 nepers (78.2 dB) in `seconds` (at least
    /// its 6 ms), and the envelope's value spans 96 dB, so the same fall is a straight line in it.
    /// A voice already releasing falls at the new rate from where it is, as in sfizz.
    func fadeOut(_ i: Int, seconds: Double) {
        let v = voices + i
        guard v.pointee.state == .playing else { return }
        let stepsPerSecond = sampleRate / Double(Self.controlInterval)
        let nepersInDecibels = 20 / log(10.0)
        let fallPerStep = 9 * nepersInDecibels / 96 / (max(seconds, 0.006) * stepsPerSecond)
        v.pointee.volumeEnvelope.release = EnvelopeSegment(count: .max, coefficient: 1, increment: Float(-fallPerStep),
                                                          minimum: 0, maximum: 1)
        v.pointee.sustained = false
        v.pointee.sostenuto = false
        release(i)
    }

    /// Cuts voice `i` with a short linear fade (steals, all sound off, exclusive classes).
    func beginFade(_ i: Int) {
        let v = voices + i
        guard v.pointee.state == .playing else { return }
        v.pointee.state = .fading
        let n = Float(fadeFrames)
        v.pointee.fadeRemaining = fadeFrames
        v.pointee.stepL = -v.pointee.gainL / n
        v.pointee.stepR = -v.pointee.gainR / n
        let ramped = Float(v.pointee.sendRampFrame)
        v.pointee.gainReverb += v.pointee.stepReverb * ramped
        v.pointee.gainChorus += v.pointee.stepChorus * ramped
        v.pointee.sendRampFrame = 0
        v.pointee.stepReverb = -v.pointee.gainReverb / n
        v.pointee.stepChorus = -v.pointee.gainChorus / n
        v.pointee.da1 = 0
        v.pointee.da2 = 0
        v.pointee.db02 = 0
        v.pointee.db1 = 0
        v.pointee.db0Excess = 0
    }

    @inline(__always)
    func forEachActive(_ body: (Int) -> Void) {
        for n in 0..<activeCount { body(Int(activeList[n])) }
    }

    func noteOn(channel c: Int, key: UInt8, velocity: UInt8) {
        // A key struck again releases what it still sounds, pedals permitting (as FluidSynth),
        // except the voices with sfizz's voicing, which ring on (SamplerSFZVoicing).
        forEachActive { i in
            if voices[i].state == .playing, Int(voices[i].channel) == c, voices[i].noteKey == key,
               !voices[i].released, !voices[i].sustained, voices[i].sfzVoicing == nil {
                noteOffVoice(i)
            }
        }
        let others = regionRules?.keyPressed(channel: c, key: key, velocity: velocity, frame: position) ?? 0
        startRegions(channel: c, key: key, velocity: velocity, event: .keyDown, rules: regionRules, otherKeysDown: others)
    }
}
