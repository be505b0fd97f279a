import AudioGraph
import Foundation
import MIDI
import SoundFont

/// A SoundFont 2 sampler: sixteen MIDI channels playing the presets of a ``SoundFontBank``,
/// voiced to sound like FluidSynth with the same bank.
///
/// Every generator that shapes sound is honoured (sample offsets, loop modes, tuning, both
/// envelopes, both LFOs, the resonant low-pass filter, attenuation, pan, effect sends,
/// exclusive classes, forced key and velocity), and modulators (the ten defaults plus the
/// bank's) are evaluated from velocity, key, pressures, pitch wheel and any controller.
///
/// Rendering follows the ``AudioNode`` contract: sample interpolation (4-point cubic), the
/// filter and gain ramps run per sample; envelopes, LFOs, pitch and filter coefficients are
/// recomputed every ``controlInterval`` frames on a grid of absolute frame numbers, so the
/// output is bit-identical whatever the block size. A note starts at its exact frame. Voices
/// live in a pool allocated when the node is created; nothing allocates while rendering.
///
/// The voices' reverb and chorus sends feed an internal ``ReverbNode`` and ``ChorusNode``,
/// each with a level parameter; level 0 switches an effect off.
public final class SamplerNode: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Output level in dB; 0 dB is FluidSynth's level at its default gain of 0.2.
        public static let volume: UInt32 = 0
        /// Most voices sounding at once (FluidSynth's polyphony); a further voice steals the
        /// quietest released voice, else the oldest, which fades out in a few milliseconds.
        public static let voiceLimit: UInt32 = 1
        /// Wet level of the internal reverb fed by the reverb sends (0 switches it off).
        public static let reverbLevel: UInt32 = 2
        /// Wet level of the internal chorus fed by the chorus sends (0 switches it off).
        public static let chorusLevel: UInt32 = 3
    }

    /// Frames between control updates, on a grid aligned to absolute frame 0; the same step
    /// as FluidSynth's envelopes and LFOs.
    public static let controlInterval = 64
    /// The largest voice limit.
    public static let maximumVoiceLimit = 4096
    /// Slots beyond the limit, where stolen voices fade out.
    static let fadeReserve = 64
    /// FluidSynth's default synth.gain, and the scale of 16-bit sample words.
    static let baseGain: Float = 0.2 / 32_768
    /// FluidSynth's noise floor: a decaying voice below it (at the synth gain) is finished.
    static let noiseFloor: Float = 0.000_03 / 0.2

    public let name = "Sampler"
    public let inputBusCount = 0
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.volume, name: "Volume", range: -60...12, unit: .decibels, defaultValue: 0),
        AudioParameterInfo(id: Parameter.voiceLimit, name: "Voice limit", range: 1...Float(maximumVoiceLimit), unit: .indexed,
                           defaultValue: 256),
        AudioParameterInfo(id: Parameter.reverbLevel, name: "Reverb level", range: 0...1, unit: .fraction, defaultValue: 0.9),
        AudioParameterInfo(id: Parameter.chorusLevel, name: "Chorus level", range: 0...10, unit: .generic, defaultValue: 2),
    ])

    /// The bank the sampler plays.
    public let bank: SoundFontBank
    let compiled: CompiledBank
    let tables = SamplerTables()
    /// Presets a program change selected whose compressed samples are not decoded yet.
    let sampleRequests: PresetSampleRequests?

    private struct Channel {
        var program: UInt8 = 0
        var bankMSB: UInt8 = 0
        var preset: Int32 = -1
        var pitchWheel: Float = 8192
        var bendRange: Float = 2
        var channelPressure: Float = 0
        var sustain = false
        var sostenuto = false
        var rpnMSB: UInt8 = 127, rpnLSB: UInt8 = 127
        /// Bumped whenever a modulator source changes, so voices recompute on the next step.
        var serial: UInt32 = 1
    }

    private let poolSize = maximumVoiceLimit + fadeReserve
    private let voices: UnsafeMutablePointer<SamplerVoice>
    private let activeList: UnsafeMutablePointer<Int32>
    private var activeCount = 0
    private let freeList: UnsafeMutablePointer<Int32>
    private var freeCount = 0
    private let channels: UnsafeMutablePointer<Channel>
    private let controllers: UnsafeMutablePointer<UInt8>
    private let polyPressure: UnsafeMutablePointer<UInt8>
    /// Per generator, the range its final value is clamped to (unbounded where the
    /// specification gives none, or where the value goes on to be combined: pitch tunings take
    /// the pitch wheel, the cutoff is limited after the envelope and LFO add to it, and -1
    /// means "not set" for the forced key, velocity and root key).
    private let rangeLow: UnsafeMutablePointer<Float>
    private let rangeHigh: UnsafeMutablePointer<Float>
    /// Effective generator values of the voice being set up or updated.
    private let effective: UnsafeMutablePointer<Float>
    /// Interpolated points of the four voices being rendered, interleaved (one lane each).
    private let lanes: UnsafeMutablePointer<SIMD4<Float>>
    /// Per-frame sums of the lanes' outputs and sends, reduced once per frame.
    private let sumL: UnsafeMutablePointer<SIMD4<Float>>
    private let sumR: UnsafeMutablePointer<SIMD4<Float>>
    private let sumReverb: UnsafeMutablePointer<SIMD4<Float>>
    private let sumChorus: UnsafeMutablePointer<SIMD4<Float>>
    /// A voice that is never active: the lanes of a group with fewer than four voices.
    private let silentVoice: UnsafeMutablePointer<SamplerVoice>
    /// Catmull-Rom coefficients of the 4-point interpolation by fraction, as FluidSynth
    /// tabulates them (finer: 1024 steps).
    private let interpolationTable: UnsafeMutablePointer<SIMD4<Float>>
    static let fractionBits = 10
    /// Points one interpolation stretch may read (see ``interpolate(_:count:into:)``).
    static let windowCapacity = 4096 + 8
    private let window: UnsafeMutablePointer<Float>
    static let fractionShift = UInt32(32 - fractionBits)
    private var sendFrames = 0
    private var reverbSendBuffer: UnsafeMutablePointer<Float>?
    private var chorusSendBuffer: UnsafeMutablePointer<Float>?
    private var wet: StereoBuffer?
    private let effectInput: UnsafeMutablePointer<StereoBuffer>
    private let reverb = ReverbNode(roomSize: 0.2, damping: 0, wet: 0.9, dry: 0)
    private let chorus = ChorusNode()

    private var sampleRate: Double = 44_100
    private var serial: UInt64 = 0
    private var noteSerial: UInt64 = 0
    private var masterGain: Float = SamplerNode.baseGain
    private var fadeFrames = 132
    /// Frame at which the next `render` starts (the frame of events being received).
    private var position: Int64 = 0

    /// Creates a sampler playing `bank`. Flattening the bank for the audio thread and
    /// allocating the voice pool happen here, on the caller's thread.
    public init(bank: SoundFontBank) {
        self.bank = bank
        compiled = CompiledBank(bank)
        sampleRequests = compiled.compressed == nil ? nil : PresetSampleRequests(presetCount: compiled.presetCount)
        voices = .allocate(capacity: poolSize)
        voices.initialize(repeating: SamplerVoice(), count: poolSize)
        activeList = .allocate(capacity: poolSize)
        activeList.initialize(repeating: 0, count: poolSize)
        freeList = .allocate(capacity: poolSize)
        freeList.initialize(repeating: 0, count: poolSize)
        channels = .allocate(capacity: 16)
        channels.initialize(repeating: Channel(), count: 16)
        controllers = .allocate(capacity: 16 * 128)
        controllers.initialize(repeating: 0, count: 16 * 128)
        polyPressure = .allocate(capacity: 16 * 128)
        polyPressure.initialize(repeating: 0, count: 16 * 128)
        rangeLow = .allocate(capacity: SoundFontGenerator.count)
        rangeHigh = .allocate(capacity: SoundFontGenerator.count)
        let unclamped: Set<SoundFontGenerator> = [.coarseTune, .fineTune, .initialFilterCutoff, .keyNumber, .velocity,
                                                  .overridingRootKey]
        for g in SoundFontGenerator.allCases {
            let range = unclamped.contains(g) ? nil : g.specificationRange
            rangeLow[g.rawValue] = range.map { Float($0.lowerBound) } ?? -.infinity
            rangeHigh[g.rawValue] = range.map { Float($0.upperBound) } ?? .infinity
        }
        effective = .allocate(capacity: SoundFontGenerator.count)
        effective.initialize(repeating: 0, count: SoundFontGenerator.count)
        let chunk = Self.controlInterval
        lanes = .allocate(capacity: chunk)
        lanes.initialize(repeating: SIMD4(), count: chunk)
        sumL = .allocate(capacity: chunk)
        sumL.initialize(repeating: SIMD4(), count: chunk)
        sumR = .allocate(capacity: chunk)
        sumR.initialize(repeating: SIMD4(), count: chunk)
        sumReverb = .allocate(capacity: chunk)
        sumReverb.initialize(repeating: SIMD4(), count: chunk)
        sumChorus = .allocate(capacity: chunk)
        sumChorus.initialize(repeating: SIMD4(), count: chunk)
        window = .allocate(capacity: Self.windowCapacity)
        window.initialize(repeating: 0, count: Self.windowCapacity)
        silentVoice = .allocate(capacity: 1)
        silentVoice.initialize(to: SamplerVoice())
        let steps = 1 << Self.fractionBits
        interpolationTable = .allocate(capacity: steps)
        for i in 0..<steps {
            let x = Double(i) / Double(steps)
            interpolationTable[i] = SIMD4(Float(x * (-0.5 + x * (1 - 0.5 * x))), Float(1 + x * x * (1.5 * x - 2.5)),
                                          Float(x * (0.5 + x * (2 - 1.5 * x))), Float(0.5 * x * x * (x - 1)))
        }
        effectInput = .allocate(capacity: 1)
        reverb.setParameter(ReverbNode.Parameter.width, value: 0.5)
        resetState()
    }

    deinit {
        voices.deinitialize(count: poolSize)
        voices.deallocate()
        activeList.deallocate()
        freeList.deallocate()
        channels.deinitialize(count: 16)
        channels.deallocate()
        controllers.deallocate()
        polyPressure.deallocate()
        effective.deallocate()
        rangeLow.deallocate()
        rangeHigh.deallocate()
        lanes.deallocate()
        sumL.deallocate()
        sumR.deallocate()
        sumReverb.deallocate()
        sumChorus.deallocate()
        silentVoice.deallocate()
        window.deallocate()
        interpolationTable.deallocate()
        effectInput.deallocate()
        freeSendBuffers()
    }

    private func freeSendBuffers() {
        reverbSendBuffer?.deallocate()
        chorusSendBuffer?.deallocate()
        wet?.left.deallocate()
        wet?.right.deallocate()
        reverbSendBuffer = nil
        chorusSendBuffer = nil
        wet = nil
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        parameters.prepare(sampleRate: sampleRate)
        fadeFrames = max(1, Int((0.003 * sampleRate).rounded()))
        freeSendBuffers()
        sendFrames = max(1, maximumFrameCount)
        reverbSendBuffer = .allocate(capacity: sendFrames)
        reverbSendBuffer!.initialize(repeating: 0, count: sendFrames)
        chorusSendBuffer = .allocate(capacity: sendFrames)
        chorusSendBuffer!.initialize(repeating: 0, count: sendFrames)
        let w = StereoBuffer(left: .allocate(capacity: sendFrames), right: .allocate(capacity: sendFrames))
        w.left.initialize(repeating: 0, count: sendFrames)
        w.right.initialize(repeating: 0, count: sendFrames)
        wet = w
        reverb.prepare(sampleRate: sampleRate, maximumFrameCount: sendFrames)
        chorus.prepare(sampleRate: sampleRate, maximumFrameCount: sendFrames)
        reset()
    }

    public func reset() {
        resetState()
        reverb.reset()
        chorus.reset()
    }

    private func resetState() {
        for i in 0..<poolSize { voices[i] = SamplerVoice() }
        activeCount = 0
        freeCount = poolSize
        // Lowest slots first, so the pool is used in a fixed order.
        for i in 0..<poolSize { freeList[i] = Int32(poolSize - 1 - i) }
        for c in 0..<16 { resetChannel(c) }
        serial = 0
        noteSerial = 0
        position = 0
        applyParameters()
    }

    private func resetChannel(_ c: Int) {
        channels[c] = Channel()
        let cc = controllers + c * 128
        cc.update(repeating: 0, count: 128)
        cc[7] = 100
        cc[10] = 64
        cc[11] = 127
        cc[Int(MIDIController.rpnMSB)] = 127
        cc[Int(MIDIController.rpnLSB)] = 127
        (polyPressure + c * 128).update(repeating: 0, count: 128)
        channels[c].preset = Int32(compiled.preset(bank: c == 9 ? 128 : 0, program: 0))
    }

    private func applyParameters() {
        masterGain = Self.baseGain * decibelsToGain(parameters[Parameter.volume])
        reverb.setParameter(ReverbNode.Parameter.wet, value: parameters[Parameter.reverbLevel])
        chorus.setParameter(ChorusNode.Parameter.level, value: parameters[Parameter.chorusLevel])
    }

    public func parametersChanged() { applyParameters() }

    /// Number of voices sounding, including ones fading out after a steal.
    public var activeVoiceCount: Int {
        var n = 0
        for m in 0..<activeCount where voices[Int(activeList[m])].state != .off { n += 1 }
        return n
    }

    /// The sounding voices' keys and states, for tests (allocates).
    func voiceSummary() -> [(key: UInt8, channel: UInt8, fading: Bool, released: Bool)] {
        (0..<activeCount).map { voices[Int(activeList[$0])] }.filter { $0.state != .off }.map { v in
            (v.noteKey, v.channel, v.state == .fading, v.released)
        }
    }

    // MARK: MIDI

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
        case 0xC0:
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
            for ch in 0..<16 { resetChannel(ch) }
        default: break
        }
    }

    private func selectPreset(_ c: Int) {
        let bank = c == 9 ? 128 : Int(channels[c].bankMSB)
        channels[c].preset = Int32(compiled.preset(bank: bank, program: Int(channels[c].program)))
        sampleRequests?.ask(Int(channels[c].preset), evenIfPrepared: false)
    }

    private func controlChange(channel c: Int, controller: UInt8, value: UInt8) {
        let cc = controllers + c * 128
        cc[Int(controller)] = value
        switch controller {
        case MIDIController.bankSelectMSB:
            // FluidSynth's default "gs" style: the MSB is the bank, the LSB is ignored; it
            // takes effect at the next program change.
            channels[c].bankMSB = value
        case MIDIController.sustainPedal:
            let down = value >= 64
            channels[c].sustain = down
            if !down {
                forEachActive { i in
                    if voices[i].state == .playing, Int(voices[i].channel) == c, voices[i].sustained, !voices[i].sostenuto {
                        voices[i].sustained = false
                        release(i)
                    }
                }
            }
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
            if channels[c].rpnMSB == 0 && channels[c].rpnLSB == 0 {
                let cents = channels[c].bendRange - channels[c].bendRange.rounded(.down)
                channels[c].bendRange = Float(value) + cents
            }
        case MIDIController.dataEntryLSB:
            if channels[c].rpnMSB == 0 && channels[c].rpnLSB == 0 {
                channels[c].bendRange = channels[c].bendRange.rounded(.down) + Float(min(value, 99)) / 100
            }
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
            forEachActive { i in
                if voices[i].state == .playing, Int(voices[i].channel) == c, !voices[i].released { noteOffVoice(i) }
            }
        default: break
        }
        channels[c].serial &+= 1
    }

    private func noteOff(channel c: Int, key: UInt8) {
        forEachActive { i in
            let v = voices + i
            if v.pointee.state == .playing, Int(v.pointee.channel) == c, v.pointee.noteKey == key,
               !v.pointee.released, !v.pointee.sustained {
                noteOffVoice(i)
            }
        }
    }

    /// A key went up for voice `i`: release it unless a pedal holds it.
    private func noteOffVoice(_ i: Int) {
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
    private func release(_ i: Int) {
        let v = voices + i
        guard v.pointee.state == .playing, !v.pointee.released else { return }
        v.pointee.released = true
        v.pointee.sustained = false
        if v.pointee.volumeEnvelope.section == .attack && v.pointee.volumeEnvelope.value > 0 {
            let amp = v.pointee.volumeEnvelope.value
            let cb = -200 * log10(amp)
            v.pointee.volumeEnvelope.value = min(max(1 - cb / 960, 0), 1)
        }
        if v.pointee.modulationEnvelope.section == .attack && v.pointee.modulationEnvelope.value > 0 {
            v.pointee.modulationEnvelope.value = min(max(tables.lookup(tables.convex, 127 * v.pointee.modulationEnvelope.value), 0), 1)
        }
        v.pointee.volumeEnvelope.enterRelease()
        v.pointee.modulationEnvelope.enterRelease()
    }

    /// Cuts voice `i` with a short linear fade (steals, all sound off, exclusive classes).
    private func beginFade(_ i: Int) {
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
    }

    @inline(__always)
    private func forEachActive(_ body: (Int) -> Void) {
        for n in 0..<activeCount { body(Int(activeList[n])) }
    }

    private func noteOn(channel c: Int, key: UInt8, velocity: UInt8) {
        // A key struck again releases what it still sounds, pedals permitting (as FluidSynth).
        forEachActive { i in
            if voices[i].state == .playing, Int(voices[i].channel) == c, voices[i].noteKey == key,
               !voices[i].released, !voices[i].sustained {
                noteOffVoice(i)
            }
        }
        let p = Int(channels[c].preset)
        guard p >= 0 else { return }
        noteSerial &+= 1
        let (start, count) = compiled.presetRegions[p]
        for r in Int(start)..<Int(start + count) {
            let region = compiled.regions + r
            guard key >= region.pointee.keyLow, key <= region.pointee.keyHigh,
                  velocity >= region.pointee.velocityLow, velocity <= region.pointee.velocityHigh else { continue }
            startVoice(channel: c, key: key, velocity: velocity, region: r)
        }
    }

    // MARK: Voice setup

    /// Fills ``effective`` with the region's generators plus its modulators' contributions
    /// for voice `i`.
    private func computeEffective(_ i: Int) {
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
        // The specification's ranges apply to the final sums.
        for g in 0..<SoundFontGenerator.count {
            effective[g] = min(max(effective[g], rangeLow[g]), rangeHigh[g])
        }
    }

    @inline(__always)
    private func sourceValue(_ s: ModulatorSource, channel c: Int, voice v: UnsafeMutablePointer<SamplerVoice>) -> Float {
        let raw: Float
        var range: Float = 128
        if s.isCC {
            raw = Float(controllers[c * 128 + Int(s.index)])
        } else {
            switch s.index {
            case 2: raw = v.pointee.velocity
            case 3: raw = v.pointee.key
            case 10: raw = Float(polyPressure[c * 128 + Int(v.pointee.noteKey)])
            case 13: raw = channels[c].channelPressure
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

    private func startVoice(channel c: Int, key: UInt8, velocity: UInt8, region r: Int) {
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
        let i = takeSlot()
        serial &+= 1
        let v = voices + i
        v.pointee = SamplerVoice()
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
        v.pointee.controlSerial = channels[c].serial
        computeEffective(i)
        setUpVoice(v, sampleIndex: sampleIndex, decoded: decoded)
        applyModulatedValues(v)
        v.pointee.volumeEnvelope.step()
        v.pointee.modulationEnvelope.step()
        updateDynamics(v, frame: position)
    }

    /// Fast release of a voice cut by a newer note of its exclusive class (FluidSynth's
    /// -200 timecent release).
    private func killExclusive(_ i: Int) {
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
    private func setUpVoice(_ v: UnsafeMutablePointer<SamplerVoice>, sampleIndex: Int, decoded: DecodedSample?) {
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
            releaseMaximum: 1)
        v.pointee.modulationEnvelope.configure(
            delaySteps: steps(g(.delayModEnv), -12_000, 5000),
            attackSteps: 1 + steps(g(.attackModEnv), -12_000, 8000),
            holdSteps: holdDecay(.holdModEnv, .keyNumberToModEnvHold, isDecay: false),
            decaySteps: holdDecay(.decayModEnv, .keyNumberToModEnvDecay, isDecay: true),
            sustainValue: min(max(1 - 0.001 * g(.sustainModEnv), 0), 1),
            releaseSteps: 1 + steps(g(.releaseModEnv), -12_000, 8000),
            releaseMaximum: 2)
        func delayFrames(_ gen: SoundFontGenerator) -> Int64 {
            Int64(sampleRate * SoundFontUnits.seconds(timecents: min(max(Double(g(gen)), -12_000), 5000)))
        }
        v.pointee.modLFODelay = delayFrames(.delayModLFO)
        v.pointee.vibLFODelay = delayFrames(.delayVibLFO)
        v.pointee.minimumAttenuation = min(max(g(.initialAttenuation), 0), 1440)
    }

    /// Values that follow modulator sources during the note: pitch, level, pan, sends,
    /// filter, LFO and envelope depths and LFO rates. Reads ``effective``.
    private func applyModulatedValues(_ v: UnsafeMutablePointer<SamplerVoice>) {
        let e = effective
        func g(_ gen: SoundFontGenerator) -> Float { e[gen.rawValue] }
        let key = Double(v.pointee.key)
        let root = v.pointee.rootPitch
        let scale = Double(g(.scaleTuning))
        v.pointee.pitch = scale * (key - root / 100) + root + 100 * Double(g(.coarseTune)) + Double(g(.fineTune))
        v.pointee.attenuation = min(max(g(.initialAttenuation), 0), 1440)
        let pan = min(max(g(.pan), -500), 500)
        v.pointee.panLeft = Float(sin(Double(500 - pan) / 1000 * Double.pi / 2))
        v.pointee.panRight = Float(sin(Double(500 + pan) / 1000 * Double.pi / 2))
        v.pointee.reverbSend = min(max(g(.reverbEffectsSend) / 1000, 0), 1)
        v.pointee.chorusSend = min(max(g(.chorusEffectsSend) / 1000, 0), 1)
        v.pointee.filterCents = g(.initialFilterCutoff)
        let qDB = min(max(g(.initialFilterQ) / 10, 0), 96) - 3.01
        v.pointee.filterQ = Float(pow(10, Double(qDB) / 20))
        v.pointee.filterGain = 1 / v.pointee.filterQ.squareRoot()
        v.pointee.modLFOToPitch = min(max(g(.modLFOToPitch), -12_000), 12_000)
        v.pointee.vibLFOToPitch = min(max(g(.vibLFOToPitch), -12_000), 12_000)
        v.pointee.modEnvToPitch = min(max(g(.modEnvToPitch), -12_000), 12_000)
        v.pointee.modLFOToFilter = min(max(g(.modLFOToFilterCutoff), -12_000), 12_000)
        v.pointee.modEnvToFilter = min(max(g(.modEnvToFilterCutoff), -12_000), 12_000)
        v.pointee.modLFOToVolume = min(max(g(.modLFOToVolume), -960), 960)
        v.pointee.modLFOFrequency = SoundFontUnits.hertz(absoluteCents: min(max(Double(g(.freqModLFO)), -16_000), 4500)) / sampleRate
        v.pointee.vibLFOFrequency = SoundFontUnits.hertz(absoluteCents: min(max(Double(g(.freqVibLFO)), -16_000), 4500)) / sampleRate
    }

    // MARK: Voice pool

    private func takeSlot() -> Int {
        if freeCount == 0 {
            // Even the fade reserve is full: reuse a voice that ended, else cut the fading
            // voice closest to silence.
            var victim = -1
            forEachActive { i in
                if voices[i].state == .off { victim = i }
            }
            if victim < 0 {
                forEachActive { i in
                    if victim < 0 || voices[i].fadeRemaining < voices[victim].fadeRemaining { victim = i }
                }
            }
            removeActive(victim)
        }
        freeCount -= 1
        let i = Int(freeList[freeCount])
        activeList[activeCount] = Int32(i)
        activeCount += 1
        return i
    }

    private func removeActive(_ slot: Int) {
        for n in 0..<activeCount where Int(activeList[n]) == slot {
            activeList[n] = activeList[activeCount - 1]
            activeCount -= 1
            break
        }
        voices[slot].state = .off
        freeList[freeCount] = Int32(slot)
        freeCount += 1
    }

    /// Steals voices until fewer than the limit are counted (one fewer when a voice is about
    /// to start).
    private func enforceLimit(leavingRoomForOne: Bool) {
        let limit = Int(parameters[Parameter.voiceLimit]) - (leavingRoomForOne ? 1 : 0)
        var counted = 0
        forEachActive { i in if voices[i].isCounted { counted += 1 } }
        while counted > limit {
            var victim = -1
            var best = Double.infinity
            forEachActive { i in
                guard voices[i].isCounted else { return }
                let p = stealPriority(i)
                if p < best { best = p; victim = i }
            }
            guard victim >= 0 else { return }
            beginFade(victim)
            counted -= 1
        }
    }

    /// Lower is stolen first: released voices by their level (quietest first), then held
    /// voices by age (oldest first).
    private func stealPriority(_ i: Int) -> Double {
        let v = voices + i
        if v.pointee.released {
            let level = Double(abs(v.pointee.gainL) + abs(v.pointee.gainR)) / Double(masterGain)
            return -2 + min(level, 1)
        }
        return Double(v.pointee.serial)
    }

    // MARK: Control rate

    /// Recomputes voice `v`'s pitch, filter and gain targets for the control step at `frame`.
    private func updateDynamics(_ v: UnsafeMutablePointer<SamplerVoice>, frame: Int64) {
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
        let modEnvelope = v.pointee.modulationEnvelope.section == .attack
            ? tables.lookup(tables.convex, 127 * v.pointee.modulationEnvelope.value)
            : v.pointee.modulationEnvelope.value

        // Pitch.
        let cents = v.pointee.pitch + Double(modLFO * v.pointee.modLFOToPitch + vibLFO * v.pointee.vibLFOToPitch
                                             + modEnvelope * v.pointee.modEnvToPitch)
        if cents != v.pointee.incrementCents {
            // Most voices hold their pitch: the exponential only runs when it moves.
            v.pointee.incrementCents = cents
            let ratio = exp2((cents - v.pointee.rootPitch) / 1200) * v.pointee.sampleRatio
            v.pointee.increment = max(1, Int64(min(ratio, 256) * 4_294_967_296))
        }

        // Filter: FluidSynth's RBJ low-pass with the cutoff limited to 1500...13500 cents,
        // 5 Hz...0.45 x the sample rate, and the gain lowered by half the resonance peak.
        let fcCents = min(max(Double(v.pointee.filterCents + modLFO * v.pointee.modLFOToFilter
                                     + modEnvelope * v.pointee.modEnvToFilter), 1500), 13_500)
        if fcCents != v.pointee.targetCents || v.pointee.filterQ != v.pointee.targetQ {
            // Recomputed only when the cutoff or resonance moved.
            v.pointee.targetCents = fcCents
            v.pointee.targetQ = v.pointee.filterQ
            let fc = min(max(SoundFontUnits.hertz(absoluteCents: fcCents), 5), 0.45 * sampleRate)
            let omega = 2 * Double.pi * fc / sampleRate
            let sinW = Float(sin(omega)), cosW = Float(cos(omega))
            let alpha = sinW / (2 * v.pointee.filterQ)
            let a0Inverse = 1 / (1 + alpha)
            let b1 = (1 - cosW) * a0Inverse * v.pointee.filterGain
            v.pointee.target = SIMD4(b1 * 0.5, b1, -2 * cosW * a0Inverse, (1 - alpha) * a0Inverse)
        }
        let tb02 = v.pointee.target[0], tb1 = v.pointee.target[1], ta1 = v.pointee.target[2], ta2 = v.pointee.target[3]
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
            if SoundFontUnits.amplitude(centibels: v.pointee.minimumAttenuation) * volumeEnvelope.value < Self.noiseFloor {
                v.pointee.state = .fading
                v.pointee.fadeRemaining = 0
                return
            }
        }
        amplitude *= masterGain
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
    private func centibelsToAmplitude(_ v: UnsafeMutablePointer<SamplerVoice>, _ cb: Float) -> Float {
        if cb != v.pointee.amplitudeCentibels {
            v.pointee.amplitudeCentibels = cb
            v.pointee.amplitudeOfCentibels = SoundFontUnits.amplitude(centibels: cb)
        }
        return v.pointee.amplitudeOfCentibels
    }

    /// FluidSynth's triangle LFO: starts at 0 rising, peaks of +-1; 0 during its delay.
    @inline(__always)
    private func lfoValue(_ frames: Int64, _ frequency: Double) -> Float {
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
    private func compactActiveList() {
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

    private func controlStep(frame: Int64) {
        compactActiveList()
        for n in 0..<activeCount {
            let v = voices + Int(activeList[n])
            guard v.pointee.state == .playing else { continue }
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

    // MARK: Render

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        // Ramps of volume and send levels step every 32 frames: a render call has a fixed cost
        // (effect sends, voice groups) too high to pay per frame.
        renderFollowingParameters(startFrame: startFrame, frameCount: frameCount, inputs: inputs, output: output,
                                  controlInterval: 32,
                                  renderSteady: { self.renderSteady(startFrame: $0, frameCount: $1, inputs: $2, output: $3) })
    }

    private func renderSteady(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.clear(frameCount: frameCount)
        guard let reverbSend = reverbSendBuffer, let chorusSend = chorusSendBuffer, let wet else { return }
        let reverbOn = parameters[Parameter.reverbLevel] > 0
        let chorusOn = parameters[Parameter.chorusLevel] > 0
        let interval = Int64(Self.controlInterval)
        var done = 0
        while done < frameCount {
            let frame = startFrame + Int64(done)
            let intoGrid = Int(((frame % interval) + interval) % interval)
            if intoGrid == 0 {
                position = frame
                controlStep(frame: frame)
            }
            let count = min(frameCount - done, Self.controlInterval - intoGrid)
            renderChunk(count: count, sends: reverbOn || chorusOn)
            for k in 0..<count {
                output.left[done + k] = sumL[k].sum()
                output.right[done + k] = sumR[k].sum()
            }
            if reverbOn { for k in 0..<count { reverbSend[done + k] = sumReverb[k].sum() } }
            if chorusOn { for k in 0..<count { chorusSend[done + k] = sumChorus[k].sum() } }
            done += count
        }
        position = startFrame + Int64(frameCount)
        // The effects run even when no voice sounds, so their tails ring out.
        if reverbOn {
            effectInput.pointee = StereoBuffer(left: reverbSend, right: reverbSend)
            reverb.render(startFrame: startFrame, frameCount: frameCount, inputs: UnsafeBufferPointer(start: effectInput, count: 1),
                          output: wet)
            for f in 0..<frameCount {
                output.left[f] += wet.left[f]
                output.right[f] += wet.right[f]
            }
        }
        if chorusOn {
            effectInput.pointee = StereoBuffer(left: chorusSend, right: chorusSend)
            chorus.render(startFrame: startFrame, frameCount: frameCount, inputs: UnsafeBufferPointer(start: effectInput, count: 1),
                          output: wet)
            for f in 0..<frameCount {
                output.left[f] += wet.left[f]
                output.right[f] += wet.right[f]
            }
        }
    }

    /// Renders `count` frames (inside one control interval) of every active voice into the
    /// lane sums, four voices at a time: each voice's interpolated points go to one lane of
    /// ``lanes``, then filter, gains and mixing run on the four lanes at once. Voices whose
    /// sample, envelope or fade ends are freed.
    private func renderChunk(count: Int, sends: Bool) {
        let zero = SIMD4<Float>(repeating: 0)
        sumL.update(repeating: zero, count: count)
        sumR.update(repeating: zero, count: count)
        if sends {
            sumReverb.update(repeating: zero, count: count)
            sumChorus.update(repeating: zero, count: count)
        }
        var n = 0
        while n < activeCount {
            let width = min(4, activeCount - n)
            // Lanes without a voice read a silent, gainless dummy.
            var group = (Int32(-1), Int32(-1), Int32(-1), Int32(-1))
            withUnsafeMutableBytes(of: &group) { raw in
                let g = raw.bindMemory(to: Int32.self)
                for lane in 0..<width { g[lane] = activeList[n + lane] }
            }
            renderGroup(group, count: count, sends: sends)
            n += width
        }
    }

    @inline(__always)
    private func laneVoice(_ group: (Int32, Int32, Int32, Int32), _ lane: Int) -> UnsafeMutablePointer<SamplerVoice> {
        let index: Int32
        switch lane {
        case 0: index = group.0
        case 1: index = group.1
        case 2: index = group.2
        default: index = group.3
        }
        return index >= 0 ? voices + Int(index) : silentVoice
    }

    private func renderGroup(_ group: (Int32, Int32, Int32, Int32), count: Int, sends: Bool) {
        let points = UnsafeMutableRawPointer(lanes).assumingMemoryBound(to: Float.self)
        // Each lane's voice (the silent voice for an empty lane, a voice that ended earlier in
        // this control interval, or one still in its delay) and its number of real frames.
        var voiceOf = (silentVoice, silentVoice, silentVoice, silentVoice)
        var validOf: (Float, Float, Float, Float) = (0, 0, 0, 0)
        for lane in 0..<4 {
            let v = laneVoice(group, lane)
            var produced = 0
            var live = false
            if v != silentVoice, v.pointee.state != .off,
               !(v.pointee.volumeEnvelope.section == .delay && v.pointee.state == .playing) {
                live = true
                var frames = count
                if v.pointee.state == .fading {
                    frames = min(count, v.pointee.fadeRemaining)
                    v.pointee.fadeRemaining -= frames
                }
                produced = interpolate(v, count: frames, into: points + lane)
                // An unlooped sample that ended, or a fade that ends in this chunk.
                if produced < frames || (v.pointee.state == .fading && v.pointee.fadeRemaining == 0) {
                    v.pointee.state = .off
                }
            }
            for k in produced..<count { points[4 * k + lane] = 0 }
            switch lane {
            case 0: if live { voiceOf.0 = v }; validOf.0 = Float(produced)
            case 1: if live { voiceOf.1 = v }; validOf.1 = Float(produced)
            case 2: if live { voiceOf.2 = v }; validOf.2 = Float(produced)
            default: if live { voiceOf.3 = v }; validOf.3 = Float(produced)
            }
        }
        let v0 = voiceOf.0, v1 = voiceOf.1, v2 = voiceOf.2, v3 = voiceOf.3
        // Whole vectors built at once: inserting lanes one by one goes through memory and
        // stalls on every insert.
        @inline(__always) func gather(_ read: (UnsafeMutablePointer<SamplerVoice>) -> Float) -> SIMD4<Float> {
            SIMD4(read(v0), read(v1), read(v2), read(v3))
        }
        let valid = SIMD4<Float>(validOf.0, validOf.1, validOf.2, validOf.3)
        var h1 = gather { $0.pointee.history1 }, h2 = gather { $0.pointee.history2 }
        var b02 = gather { $0.pointee.b02 }, b1 = gather { $0.pointee.b1 }
        var a1 = gather { $0.pointee.a1 }, a2 = gather { $0.pointee.a2 }
        let db02 = gather { $0.pointee.db02 }, db1 = gather { $0.pointee.db1 }
        let da1 = gather { $0.pointee.da1 }, da2 = gather { $0.pointee.da2 }
        var gl = gather { $0.pointee.gainL }, gr = gather { $0.pointee.gainR }
        let sl = gather { $0.pointee.stepL }, sr = gather { $0.pointee.stepR }
        let ramping = (db02 * db02 + db1 * db1 + da1 * da1 + da2 * da2).max() != 0
        let zero = SIMD4<Float>()
        let truncated = valid.min() < Float(count)
        // FluidSynth's direct form II low-pass; the feedback term on the older history comes
        // first, which shortens the chain each sample waits on.
        if ramping || truncated {
            for k in 0..<count {
                let centre = lanes[k] - a2 * h2 - a1 * h1
                var y = b02 * (centre + h2) + b1 * h1
                h2 = h1
                h1 = centre
                b02 += db02
                b1 += db1
                a1 += da1
                a2 += da2
                // A lane past its end (a sample or fade that ended) is silent, so the
                // filter's ringing never depends on where blocks were split.
                y.replace(with: zero, where: SIMD4<Float>(repeating: Float(k)) .>= valid)
                lanes[k] = y
                // Step first, so a note's first frame is already heard (its onset is exact).
                gl += sl
                gr += sr
                sumL[k] += y * gl
                sumR[k] += y * gr
            }
        } else {
            for k in 0..<count {
                let centre = lanes[k] - a2 * h2 - a1 * h1
                let y = b02 * (centre + h2) + b1 * h1
                h2 = h1
                h1 = centre
                lanes[k] = y
                gl += sl
                gr += sr
                sumL[k] += y * gl
                sumR[k] += y * gr
            }
        }
        if sends {
            // Send gains are a function of the frames since the last control step, so a send
            // that is switched off can skip its loop and still be where it should afterwards.
            let reverbBase = gather { $0.pointee.gainReverb }, reverbStep = gather { $0.pointee.stepReverb }
            let chorusBase = gather { $0.pointee.gainChorus }, chorusStep = gather { $0.pointee.stepChorus }
            let rampFrame = gather { Float($0.pointee.sendRampFrame) }
            for k in 0..<count {
                let frames = rampFrame + Float(k + 1)
                let y = lanes[k]
                sumReverb[k] += y * (reverbBase + reverbStep * frames)
                sumChorus[k] += y * (chorusBase + chorusStep * frames)
            }
        }
        // Written back lane by lane (a local function capturing these variables would box them).
        for lane in 0..<4 {
            let v = lane == 0 ? v0 : lane == 1 ? v1 : lane == 2 ? v2 : v3
            guard v != silentVoice else { continue }
            v.pointee.history1 = h1[lane]
            v.pointee.history2 = h2[lane]
            v.pointee.b02 = b02[lane]
            v.pointee.b1 = b1[lane]
            v.pointee.a1 = a1[lane]
            v.pointee.a2 = a2[lane]
            v.pointee.gainL = gl[lane]
            v.pointee.gainR = gr[lane]
            v.pointee.sendRampFrame += count
        }
    }

    /// Reads `count` interpolated sample points of voice `v` into every fourth float from
    /// `out`; returns fewer when an unlooped sample ends.
    ///
    /// The points a stretch of outputs reads are first copied, as floats, into ``window`` in
    /// the order playback meets them (through the loop, clamped at the start, silence past an
    /// unlooped end), so each output is one vector load and a dot product with its row of
    /// the coefficient table.
    @inline(__always)
    private func interpolate(_ v: UnsafeMutablePointer<SamplerVoice>, count: Int, into out: UnsafeMutablePointer<Float>) -> Int {
        let coefficients = interpolationTable
        var phase = v.pointee.phase
        let increment = v.pointee.increment
        let end = v.pointee.end
        let loopStart = v.pointee.loopStart, loopEnd = v.pointee.loopEnd
        let looping = v.pointee.loopMode == 1 || (v.pointee.loopMode == 3 && !v.pointee.released)
        let loopLength = Int64(loopEnd - loopStart) << 32
        var produced = 0
        while produced < count {
            if looping {
                while phase >> 32 >= Int64(loopEnd) {
                    phase -= loopLength
                    v.pointee.hasLooped = true
                }
            }
            let first = Int(phase >> 32)
            var n = count - produced
            // The divisions below are costly next to a stretch of 64 outputs: they run only
            // when the stretch would pass an unlooped end or overflow the window.
            let span = Int64(n - 1) * increment
            if !looping {
                if first >= end { break }
                if phase + span >= Int64(end) << 32 {
                    // Outputs left before the position reaches the end.
                    n = min(n, Int(((Int64(end) << 32) - phase + increment - 1) / increment))
                }
            }
            if (phase & 0xFFFF_FFFF) + span >= Int64(Self.windowCapacity - 4) << 32 {
                // As many outputs as the window holds.
                n = max(1, min(n, Int((Int64(Self.windowCapacity - 4) << 32) / increment)))
            }
            let last = Int((phase + Int64(n - 1) * increment) >> 32)
            fillWindow(v, from: first - 1, count: last - first + 4, looping: looping)
            let origin = Int64(first) << 32
            let w = UnsafeRawPointer(window)
            @inline(__always) func product(_ p: Int64) -> SIMD4<Float> {
                let s = w.loadUnaligned(fromByteOffset: 4 * Int((p - origin) >> 32), as: SIMD4<Float>.self)
                return s * coefficients[Int(UInt32(truncatingIfNeeded: p) >> Self.fractionShift)]
            }
            // Four outputs at a time: their four products are summed across by a transpose,
            // which costs less than four horizontal sums.
            var k = 0
            while k + 4 <= n {
                let m0 = product(phase), m1 = product(phase + increment)
                let m2 = product(phase + 2 * increment), m3 = product(phase + 3 * increment)
                let low01 = SIMD4(m0[0], m1[0], m0[1], m1[1]), high01 = SIMD4(m0[2], m1[2], m0[3], m1[3])
                let low23 = SIMD4(m2[0], m3[0], m2[1], m3[1]), high23 = SIMD4(m2[2], m3[2], m2[3], m3[3])
                let a = low01 + high01, b = low23 + high23
                let sums = SIMD4(a[0], a[1], b[0], b[1]) + SIMD4(a[2], a[3], b[2], b[3])
                let o = out + 4 * (produced + k)
                o[0] = sums[0]
                o[4] = sums[1]
                o[8] = sums[2]
                o[12] = sums[3]
                phase += 4 * increment
                k += 4
            }
            while k < n {
                // The same order of additions as the transpose, so an output does not depend
                // on which loop computed it (that depends on block splits).
                let m = product(phase)
                out[4 * (produced + k)] = (m[0] + m[2]) + (m[1] + m[3])
                phase += increment
                k += 1
            }
            produced += n
        }
        if looping {
            // Stored inside the loop, so a release (loop mode 3) continues from the point
            // playback has really reached.
            while phase >> 32 >= Int64(loopEnd) {
                phase -= loopLength
                v.pointee.hasLooped = true
            }
        }
        v.pointee.phase = phase
        return produced
    }

    /// Copies `count` points starting at playback index `first` into ``window``.
    @inline(__always)
    private func fillWindow(_ v: UnsafeMutablePointer<SamplerVoice>, from first: Int, count: Int, looping: Bool) {
        guard let words = v.pointee.words else {
            window.update(repeating: 0, count: count)
            return
        }
        let start = v.pointee.start, end = v.pointee.end
        let loopStart = v.pointee.loopStart, loopEnd = v.pointee.loopEnd
        let loopLength = loopEnd - loopStart
        let hasLooped = v.pointee.hasLooped
        let low = v.pointee.lowBytes
        var index = first
        var i = 0
        while i < count {
            var p = index
            if looping {
                if p >= loopEnd {
                    p = loopStart + (p - loopEnd) % loopLength
                } else if hasLooped && p < loopStart {
                    // The point before the loop start, once looping: the loop's last point.
                    p += loopLength
                }
            } else if p >= end {
                (window + i).update(repeating: 0, count: count - i)
                return
            }
            if p < start {
                window[i] = point(start, words: words, low: low)
                i += 1
                index += 1
                continue
            }
            let runEnd = looping && p < loopEnd ? loopEnd : end
            let run = min(count - i, max(1, runEnd - p))
            let destination = window + i
            if let low {
                for r in 0..<run { destination[r] = Float(Int32(words[p + r]) << 8 | Int32(low[p + r])) * (1 / 256) }
            } else {
                let source = words + p
                for r in 0..<run { destination[r] = Float(source[r]) }
            }
            i += run
            index += run
        }
    }

    /// Sample point `j` as a 16-bit-scaled float (24-bit banks add their low byte).
    @inline(__always)
    private func point(_ j: Int, words: UnsafePointer<Int16>, low: UnsafePointer<UInt8>?) -> Float {
        if let low {
            return Float(Int32(words[j]) << 8 | Int32(low[j])) * (1 / 256)
        }
        return Float(words[j])
    }
}
