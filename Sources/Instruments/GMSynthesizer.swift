import AudioEffects
import AudioGraph
import Foundation
import MIDI

/// The built-in General MIDI synthesizer: sixteen channels, a patch per GM family chosen by
/// program change, and a synthesized drum kit on channel 10.
///
/// Rendering is deterministic and independent of block size: amplitude envelopes, filters and
/// oscillators advance per sample, while pitch, vibrato, filter envelopes and gains are
/// recomputed every ``controlInterval`` frames on a grid of absolute frame numbers. Every voice
/// lives in a pool allocated by ``prepare(sampleRate:maximumFrameCount:)``; nothing allocates
/// while rendering.
public final class GMSynthesizer: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Output level in dB.
        public static let volume: UInt32 = 0
        /// Most voices sounding at once; further notes steal the quietest released or oldest voice.
        public static let voiceLimit: UInt32 = 1
        /// Transposition of melodic channels in semitones.
        public static let transpose: UInt32 = 2
        /// Level of the built-in room reverb that the channels' reverb sends (CC 91) feed.
        public static let reverbLevel: UInt32 = 3
    }

    /// Frames between control updates; the grid is aligned to absolute frame 0.
    public static let controlInterval = 32
    /// Voices kept beyond the limit so stolen voices can fade out instead of clicking.
    static let fadeReserve = 32
    static let maximumVoiceLimit = 256

    public let name = "GM Synthesizer"
    public let inputBusCount = 0
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.volume, name: "Volume", range: -60...12, unit: .decibels, defaultValue: 0),
        AudioParameterInfo(id: Parameter.voiceLimit, name: "Voice limit", range: 1...Float(maximumVoiceLimit), unit: .indexed, defaultValue: 64),
        AudioParameterInfo(id: Parameter.transpose, name: "Transpose", range: -48...48, unit: .generic, defaultValue: 0),
        AudioParameterInfo(id: Parameter.reverbLevel, name: "Reverb level", range: 0...1, unit: .fraction, defaultValue: 0.3),
    ])

    private let tables = VoiceTables()
    let voices: UnsafeMutablePointer<Voice>
    // Indices of the sounding voices, so rendering and control updates touch only those
    // instead of scanning the whole pool every few frames.
    private let activeList: UnsafeMutablePointer<Int>
    private var activeCount = 0
    private let poolSize = maximumVoiceLimit + fadeReserve
    // A pointer rather than an array: the control update reads a channel for every voice
    // every few frames, and an array stored in a class pays an exclusivity check each time.
    let channels: UnsafeMutablePointer<Channel>
    private let melodicPatches: [SynthPatch]
    private let drumPatches: [SynthPatch]
    private var sampleRate: Float = 44_100
    private var serial: UInt64 = 0
    var masterGain: Float = 1
    /// What system exclusive set (GMSynthesizerSysex.swift): drum channels as a bit mask,
    /// master volume as a linear gain, master tuning in semitones, and whether GS part
    /// messages are obeyed.
    var drumChannels: UInt16 = 1 << 9
    var sysexVolume: Float = 1
    var fineTuningSemitones: Float = 0
    var coarseTuningSemitones: Float = 0
    var gsMode = true
    /// MIDI Tuning Standard programs, each channel's choice, and the base (Scala) tuning.
    let tuning = MIDITuningState()
    var mpe = MPEZones()
    private var gainGlide: Float = 0.01
    private var fadeStep: Float = 1
    /// Frame at which the next `render` starts.
    var position: Int64 = 0
    // The shared reverb: voices add into `send`, the reverb turns it into `wet`, a stretch of
    // up to `reverbStretch` frames at a time (many control intervals: the reverb's work per
    // call is paid once for all of them, and its samples do not depend on how calls split).
    private let reverb = ReverbNode(roomSize: 0.55, damping: 0.5, wet: 0.3, dry: 0)
    private static let reverbStretch = 1024
    private let send: UnsafeMutablePointer<Float>
    /// Each sounding voice's signal for one control interval, before its gains mix it: the
    /// voice at `activeList[n]` writes `controlInterval` floats from `signals + n * controlInterval`.
    private let signals: UnsafeMutablePointer<Float>
    /// Where the padding lanes of a group of fewer than four voices write.
    private let paddingSignal: UnsafeMutablePointer<Float>
    /// Frames each voice (by position in `activeList`) sounded in the interval.
    private let renderedFrames: UnsafeMutablePointer<Int>
    // Grouping by signature (a counting sort of `activeList` positions): each position's
    // signature, the positions in signature order, and per signature a count and a start
    // (-1 when unused; both are restored after each interval).
    private let signatureOf: UnsafeMutablePointer<UInt8>
    private let bySignature: UnsafeMutablePointer<Int>
    private let signatureCount: UnsafeMutablePointer<Int>
    private let signatureStart: UnsafeMutablePointer<Int>
    /// Off, every voice renders alone (tests compare the two ways).
    var rendersVoicesInLanes = true
    /// Voice intervals rendered in a group of two to four lanes (tests check the lanes ran).
    private(set) var voicesRenderedInLanes = 0
    private let wet: StereoBuffer
    private let reverbInput: UnsafeMutablePointer<StereoBuffer>

    /// Creates a synthesizer; call `prepare` (the graph does) before rendering.
    public init() {
        voices = .allocate(capacity: poolSize)
        voices.initialize(repeating: Voice(), count: poolSize)
        channels = .allocate(capacity: 16)
        channels.initialize(repeating: Channel(), count: 16)
        activeList = .allocate(capacity: poolSize)
        activeList.initialize(repeating: 0, count: poolSize)
        let chunk = Self.controlInterval
        send = .allocate(capacity: Self.reverbStretch)
        send.initialize(repeating: 0, count: Self.reverbStretch)
        signals = .allocate(capacity: chunk * poolSize)
        signals.initialize(repeating: 0, count: chunk * poolSize)
        paddingSignal = .allocate(capacity: chunk)
        paddingSignal.initialize(repeating: 0, count: chunk)
        renderedFrames = .allocate(capacity: poolSize)
        renderedFrames.initialize(repeating: 0, count: poolSize)
        signatureOf = .allocate(capacity: poolSize)
        signatureOf.initialize(repeating: 0, count: poolSize)
        bySignature = .allocate(capacity: poolSize)
        bySignature.initialize(repeating: 0, count: poolSize)
        signatureCount = .allocate(capacity: 256)
        signatureCount.initialize(repeating: 0, count: 256)
        signatureStart = .allocate(capacity: 256)
        signatureStart.initialize(repeating: -1, count: 256)
        wet = StereoBuffer(left: .allocate(capacity: Self.reverbStretch), right: .allocate(capacity: Self.reverbStretch))
        wet.left.initialize(repeating: 0, count: Self.reverbStretch)
        wet.right.initialize(repeating: 0, count: Self.reverbStretch)
        reverbInput = .allocate(capacity: 1)
        // Freeverb sums its two inputs, so the mono send feeds both.
        reverbInput.initialize(to: StereoBuffer(left: send, right: send))
        melodicPatches = (0..<128).map { GMPatches.melodic(program: $0) }
        drumPatches = (0..<128).map { GMPatches.drum(key: $0) }
        for i in 0..<poolSize { voices[i].noiseState = UInt32(0x9E37_79B9 &* UInt32(i + 1)) | 1 }
    }

    deinit {
        voices.deinitialize(count: poolSize)
        voices.deallocate()
        channels.deinitialize(count: 16)
        channels.deallocate()
        activeList.deallocate()
        send.deallocate()
        signals.deallocate()
        paddingSignal.deallocate()
        renderedFrames.deallocate()
        signatureOf.deallocate()
        bySignature.deallocate()
        signatureCount.deallocate()
        signatureStart.deallocate()
        wet.left.deallocate()
        wet.right.deallocate()
        reverbInput.deallocate()
        tables.free()
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = Float(sampleRate)
        parameters.prepare(sampleRate: sampleRate)
        gainGlide = SmoothedValue.coefficient(seconds: 0.004, sampleRate: sampleRate)
        fadeStep = 1 / Float(0.003 * sampleRate)
        reverb.prepare(sampleRate: sampleRate, maximumFrameCount: Self.reverbStretch)
        reset()
    }

    public func reset() {
        for i in 0..<poolSize {
            let seed = UInt32(0x9E37_79B9 &* UInt32(i + 1)) | 1
            voices[i] = Voice()
            voices[i].noiseState = seed
        }
        for c in 0..<16 { channels[c] = Channel() }
        activeCount = 0
        serial = 0
        position = 0
        resetSystemExclusiveState()
        tuning.clear()
        mpe.reset()
        masterGain = decibelsToGain(parameters[Parameter.volume]) * sysexVolume
        reverb.reset()
        reverb.setParameter(ReverbNode.Parameter.wet, value: parameters[Parameter.reverbLevel])
    }

    public func parametersChanged() {
        masterGain = decibelsToGain(parameters[Parameter.volume]) * sysexVolume
        reverb.setParameter(ReverbNode.Parameter.wet, value: parameters[Parameter.reverbLevel])
    }

    /// Number of voices sounding (including ones fading out).
    public var activeVoiceCount: Int {
        activeCount
    }

    // MARK: MIDI

    public func receive(_ message: MIDIMessage, atFrame frame: Int64) {
        position = frame
        let c = Int(message.channel)
        switch message.status & 0xF0 {
        case 0x90 where message.data2 > 0: noteOn(channel: c, key: message.data1, velocity: message.data2)
        case 0x80, 0x90: noteOff(channel: c, key: message.data1)
        case 0xB0: controlChange(channel: c, controller: message.data1, value: message.data2)
        // A member channel's program is its zone's (MPE 1.0): its own program changes are ignored.
        case 0xC0 where !(mpe.isActive && mpe.isMember(c)): channels[c].program = message.data1 & 0x7F
        case 0xD0: channels[c].pressure = Float(message.data1 & 0x7F) / 127
        case 0xE0: channels[c].bend = (Float(message.pitchBendValue) - 8192) / 8192
        case 0xF0 where message.status == 0xFF:
            forEachActive { beginFastFade($0) }
            for ch in 0..<16 { channels[ch] = Channel() }
            drumChannels = 1 << 9
            tuning.reset()
            mpe.reset()
        default: break
        }
        if mpe.isActive && mpe.isManager(c) { forwardToZone(message, manager: c) }
    }

    func controlChange(channel c: Int, controller: UInt8, value: UInt8) {
        let v = Float(value) / 127
        switch controller {
        case MIDIController.bankSelectMSB: channels[c].bankMSB = value
        case MIDIController.modulationWheel: channels[c].modulation = v
        case MIDIController.volume: channels[c].volume = v
        case MIDIController.pan: channels[c].pan = (Float(value) - 64) / 63.5
        case MIDIController.expression: channels[c].expression = v
        case MIDIController.reverbSend: channels[c].reverbSend = v
        case MIDIController.sustainPedal:
            let down = value >= 64
            channels[c].sustain = down
            if !down {
                for i in activeIndices where voices[i].isActive && Int(voices[i].channel) == c && voices[i].heldByPedal {
                    voices[i].heldByPedal = false
                    beginRelease(i)
                }
            }
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
            } else if channels[c].rpnMSB == 0 {
                tuningDataEntry(channel: c, parameter: channels[c].rpnLSB, value: value)
            }
        case MIDIController.dataEntryLSB:
            if mpe.isActive && mpeDataEntry(channel: c, value: value, coarse: false) {
                break
            } else if channels[c].rpnMSB == 0 && channels[c].rpnLSB == 0 {
                channels[c].bendRange = MIDIController.bendRange(channels[c].bendRange, afterDataEntry: value, coarse: false)
            }
        case MIDIController.timbre: channels[c].timbre = value
        case MIDIController.allSoundOff:
            for i in activeIndices where Int(voices[i].channel) == c { beginFastFade(i) }
        case MIDIController.resetAllControllers:
            channels[c].resetControllers()
            for i in activeIndices where voices[i].isActive && Int(voices[i].channel) == c && voices[i].heldByPedal {
                voices[i].heldByPedal = false
                beginRelease(i)
            }
        case MIDIController.allNotesOff, 124, 125, 126, 127:
            for i in activeIndices where voices[i].isActive && Int(voices[i].channel) == c && !voices[i].isReleased {
                if channels[c].sustain { voices[i].heldByPedal = true } else { beginRelease(i) }
            }
        default: break
        }
    }

    private func noteOff(channel c: Int, key: UInt8) {
        // Release the oldest held voice of this key, so overlapping repeats end in order.
        var chosen = -1
        for i in activeIndices {
            let v = UnsafePointer(voices + i).pointee
            guard v.isActive, !v.isReleased, !v.heldByPedal, Int(v.channel) == c, v.key == key else { continue }
            if chosen < 0 || v.serial < voices[chosen].serial { chosen = i }
        }
        guard chosen >= 0, !voices[chosen].patch.oneShot else { return }
        if channels[c].sustain { voices[chosen].heldByPedal = true } else { beginRelease(chosen) }
    }

    private func noteOn(channel c: Int, key: UInt8, velocity: UInt8) {
        // A member channel of an MPE zone is melodic, even channel 10.
        let isDrum = drumChannels & ~mpe.memberMask & (1 << c) != 0
        let patch = isDrum ? drumPatches[Int(key)] : melodicPatches[Int(channels[c].program)]
        if isDrum && patch.exclusiveGroup != 0 {
            for i in activeIndices where voices[i].isCounted && voices[i].isDrum && Int(voices[i].channel) == c
                && voices[i].patch.exclusiveGroup == patch.exclusiveGroup {
                beginFastFade(i)
            }
        }
        enforceLimit(leavingRoomForOne: true)
        let slot = freeSlot()
        if !voices[slot].isActive {
            activeList[activeCount] = slot
            activeCount += 1
        }
        serial &+= 1
        var v = Voice()
        v.noiseState = voices[slot].noiseState
        v.stage = .attack
        v.channel = UInt8(c)
        v.key = key
        v.tunedCents = isDrum ? .nan : tuning.cents(channel: c, key: Int(key)) ?? .nan
        v.velocity = Float(velocity) / 127
        v.isDrum = isDrum
        v.serial = serial
        v.startFrame = position
        v.patch = patch
        v.signature = Voice.signature(of: patch)
        v.attackStep = 1 / max(1, patch.attack * sampleRate)
        v.decayCoefficient = Float(exp(log(1e-4) / Double(max(0.005, patch.decay) * sampleRate)))
        v.releaseCoefficient = Float(exp(log(1e-4) / Double(max(0.008, patch.release) * sampleRate)))
        voices[slot] = v
        voices[slot].detuneFactorB = exp2(patch.detuneCentsB / 1200)
        updateControl(slot, atFrame: position, transpose: parameters[Parameter.transpose])
        voices[slot].gainL = voices[slot].targetL
        voices[slot].gainR = voices[slot].targetR
        voices[slot].sendGain = voices[slot].targetSend
    }

    func beginRelease(_ i: Int) {
        guard voices[i].stage != .off, voices[i].stage != .fastFade, voices[i].stage != .release else { return }
        voices[i].releaseLevel = voices[i].level
        voices[i].releaseFrame = position
        voices[i].stage = .release
    }

    func beginFastFade(_ i: Int) {
        guard voices[i].isActive else { return }
        voices[i].stage = .fastFade
        voices[i].fadeStep = fadeStep
        voices[i].heldByPedal = false
    }

    /// The indices of the sounding voices, as a collection that does not allocate.
    var activeIndices: UnsafeBufferPointer<Int> {
        UnsafeBufferPointer(start: activeList, count: activeCount)
    }

    func forEachActive(_ body: (Int) -> Void) {
        for n in 0..<activeCount { body(activeList[n]) }
    }

    /// Steals voices until fewer than the limit count (one fewer when a note is about to start).
    private func enforceLimit(leavingRoomForOne: Bool) {
        let limit = Int(parameters[Parameter.voiceLimit]) - (leavingRoomForOne ? 1 : 0)
        while true {
            var counted = 0
            var victim = -1
            for i in activeIndices where voices[i].isCounted {
                counted += 1
                if victim < 0 || stealPriority(i) < stealPriority(victim) { victim = i }
            }
            if counted <= limit || victim < 0 { return }
            beginFastFade(victim)
        }
    }

    /// Lower is stolen first: released voices by level, then held voices by age.
    private func stealPriority(_ i: Int) -> Double {
        let v = voices + i
        if v.pointee.isReleased || v.pointee.patch.oneShot { return Double(v.pointee.level) - 2 }
        return Double(v.pointee.serial)
    }

    private func freeSlot() -> Int {
        var quietest = 0
        for i in 0..<poolSize {
            if !voices[i].isActive { return i }
            if voices[i].level < voices[quietest].level { quietest = i }
        }
        // Every slot is busy even with the reserve: cut the quietest, which is nearly silent.
        return quietest
    }

    // MARK: Control rate

    /// Recomputes pitch, vibrato, FM index (FM voices only), filter coefficients and gains
    /// for `frame`.
    ///
    /// Values that depend only on the note, the transposition, the pan or the cutoff are kept
    /// in the voice from the update that computed them, by the same expressions, so the result
    /// is the same to the bit while the update skips their `exp2`, `tan`, `cos` and `sin`.
    private func updateControl(_ i: Int, atFrame frame: Int64, transpose: Float) {
        let ch = channels[Int(voices[i].channel)]
        let p = UnsafePointer(voices + i).pointer(to: \.patch)!
        let t = Float(frame - voices[i].startFrame) / sampleRate
        // Pitch.
        var semitones: Float = 0
        var baseHz: Float
        if p.pointee.fixedFrequency > 0 {
            baseHz = p.pointee.fixedFrequency
        } else {
            if voices[i].tunedCents.isNaN {
                let key = Float(voices[i].key) + (voices[i].isDrum ? 0 : transpose)
                if key != voices[i].baseHzKey {
                    voices[i].baseHzKey = key
                    voices[i].baseHz = 440 * exp2((key - 69) / 12)
                }
            } else {
                updateTunedFrequency(i, transpose: transpose)
            }
            baseHz = voices[i].baseHz
            semitones += ch.bend * ch.bendRange + fineTuningSemitones + coarseTuningSemitones
            if mpe.isActive, let m = mpe.manager(of: Int(voices[i].channel)) { semitones += channels[m].bend * channels[m].bendRange }
        }
        if p.pointee.pitchEnvSemitones != 0 { semitones += p.pointee.pitchEnvSemitones * exp(-t / p.pointee.pitchEnvDecay) }
        let manager = mpe.isActive ? mpe.manager(of: Int(voices[i].channel)) : nil
        let pressure = manager.map { max(ch.pressure, channels[$0].pressure) } ?? 0
        let depth = p.pointee.vibratoCents + ch.modulation * 50 + pressure * Self.pressureVibratoCents
        if depth > 0 {
            let fadeIn = p.pointee.vibratoDelay > 0 ? min(1, max(0, (t - p.pointee.vibratoDelay) / p.pointee.vibratoDelay)) : 1
            let lfo = sin(2 * Float.pi * p.pointee.vibratoRate * t)
            semitones += lfo * depth * fadeIn / 100
        }
        // exp2(0) is exactly 1: a voice without bend or vibrato skips the call.
        let hz = semitones == 0 ? baseHz : baseHz * exp2(semitones / 12)
        let nyquistGuard: Float = 0.45
        voices[i].incA = min(hz / sampleRate, nyquistGuard)
        voices[i].incB = min(hz * p.pointee.ratioB * voices[i].detuneFactorB / sampleRate, nyquistGuard)
        voices[i].incMod = min(hz * p.pointee.fmRatio / sampleRate, nyquistGuard)
        // Only oscillator A modulates by FM; other voices never read the index.
        if p.pointee.waveA == .fm {
            voices[i].fmIndex = p.pointee.fmIndexSustain + (p.pointee.fmIndex - p.pointee.fmIndexSustain) * exp(-t / max(0.001, p.pointee.fmDecay))
        }
        // Filter envelope, evaluated from the time since the note started (or was released).
        // Without envelope octaves it does not move the cutoff (0 times its finite value is
        // the 0 computed here) and is not evaluated.
        var envelopeOctaves = p.pointee.filterEnvOctaves * 0
        if p.pointee.filterEnvOctaves != 0 {
            var filterEnv: Float
            if t < p.pointee.filterAttack {
                filterEnv = t / p.pointee.filterAttack
            } else {
                filterEnv = p.pointee.filterSustain + (1 - p.pointee.filterSustain) * exp(-(t - p.pointee.filterAttack) / max(0.001, p.pointee.filterDecay / 4))
            }
            if voices[i].releaseFrame >= 0 {
                let tr = Float(frame - voices[i].releaseFrame) / sampleRate
                filterEnv *= exp(-tr / max(0.01, p.pointee.release / 4))
            }
            envelopeOctaves = p.pointee.filterEnvOctaves * filterEnv
        }
        let baseCutoff = p.pointee.cutoffHz > 0 ? p.pointee.cutoffHz : baseHz * p.pointee.cutoffRatio
        var cutoffOctaves = envelopeOctaves + p.pointee.velocityToCutoff * (voices[i].velocity - 1)
        if let manager { cutoffOctaves += (Float(ch.timbre) + Float(channels[manager].timbre) - 128) * Self.timbreOctavesPerStep }
        // The same cutoff gives the same coefficients (the resonance is the patch's, fixed for
        // the note): a filter without envelope is computed once a note.
        if baseCutoff != voices[i].filterBaseCutoff || cutoffOctaves != voices[i].filterCutoffOctaves {
            voices[i].filterBaseCutoff = baseCutoff
            voices[i].filterCutoffOctaves = cutoffOctaves
            var cutoff = baseCutoff * exp2(cutoffOctaves)
            cutoff = min(max(cutoff, 30), sampleRate * 0.45)
            let g = tan(Float.pi * cutoff / sampleRate)
            let k = 2 - 1.9 * min(max(p.pointee.resonance, 0), 1)
            let a1 = 1 / (1 + g * (g + k))
            voices[i].fa1 = a1
            voices[i].fa2 = g * a1
            voices[i].fa3 = g * g * a1
            voices[i].fk = k
        }
        // Gains: velocity (squared, with a floor so soft notes stay audible), GM volume and
        // expression (squared, 40·log10), equal-power pan.
        let vel = voices[i].velocity
        let velocityGain = 0.2 + 0.8 * vel * vel
        let amplitude = 0.25 * p.pointee.gain * velocityGain * ch.volume * ch.volume * ch.expression * ch.expression * masterGain
        let pan = min(max(ch.pan + p.pointee.pan, -1), 1)
        if pan != voices[i].panOfGains {
            let angle = (pan + 1) * Float.pi / 4
            voices[i].panOfGains = pan
            voices[i].panGainL = cos(angle)
            voices[i].panGainR = sin(angle)
        }
        voices[i].targetL = amplitude * voices[i].panGainL
        voices[i].targetR = amplitude * voices[i].panGainR
        voices[i].targetSend = amplitude * ch.reverbSend
    }

    // MARK: Render

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        // Ramps step on the control grid the voices already update on.
        renderFollowingParameters(startFrame: startFrame, frameCount: frameCount, inputs: inputs, output: output,
                                  controlInterval: Self.controlInterval,
                                  renderSteady: { self.renderSteady(startFrame: $0, frameCount: $1, inputs: $2, output: $3) })
    }

    /// Renders every sounding voice's signal for `count` frames into `signals`. Voices of one
    /// signature run up to four at a time, a SIMD lane each; a voice's signal is the same to
    /// the bit however it is grouped, and the mixing that follows goes in `activeList` order,
    /// so the output does not depend on the grouping either.
    private func renderSignals(count: Int) {
        let interval = Self.controlInterval
        for n in 0..<activeCount {
            let signature = voices[activeList[n]].signature
            signatureOf[n] = signature
            signatureCount[Int(signature)] += 1
        }
        var next = 0
        for n in 0..<activeCount {
            let signature = Int(signatureOf[n])
            if signatureStart[signature] < 0 {
                signatureStart[signature] = next
                next += signatureCount[signature]
            }
        }
        for n in 0..<activeCount {
            let signature = Int(signatureOf[n])
            bySignature[signatureStart[signature]] = n
            signatureStart[signature] += 1
        }
        for n in 0..<activeCount {
            let signature = Int(signatureOf[n])
            signatureCount[signature] = 0
            signatureStart[signature] = -1
        }
        var first = 0
        while first < activeCount {
            let signature = signatureOf[bySignature[first]]
            var end = first + 1
            while rendersVoicesInLanes && end < activeCount && end - first < 4 && signatureOf[bySignature[end]] == signature {
                end += 1
            }
            if end - first == 1 {
                let n = bySignature[first]
                renderedFrames[n] = voices[activeList[n]].renderSignal(count: count, into: signals + n * interval, tables: tables)
            } else {
                var group = VoiceLaneGroup(padding: paddingSignal)
                group.count = end - first
                let n0 = bySignature[first], n1 = bySignature[first + 1]
                let n2 = group.count > 2 ? bySignature[first + 2] : -1, n3 = group.count > 3 ? bySignature[first + 3] : -1
                group.slots = (activeList[n0], activeList[n1], n2 >= 0 ? activeList[n2] : 0, n3 >= 0 ? activeList[n3] : 0)
                group.signals = (signals + n0 * interval, signals + n1 * interval,
                                 n2 >= 0 ? signals + n2 * interval : paddingSignal, n3 >= 0 ? signals + n3 * interval : paddingSignal)
                let rendered = voices.renderLanes(group, count: count, tables: tables)
                voicesRenderedInLanes += group.count
                renderedFrames[n0] = Int(rendered[0])
                renderedFrames[n1] = Int(rendered[1])
                if n2 >= 0 { renderedFrames[n2] = Int(rendered[2]) }
                if n3 >= 0 { renderedFrames[n3] = Int(rendered[3]) }
            }
            first = end
        }
    }

    private func renderSteady(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.clear(frameCount: frameCount)
        var done = 0
        let interval = Int64(Self.controlInterval)
        let reverbActive = parameters[Parameter.reverbLevel] > 0
        while done < frameCount {
            let stretchStart = done
            let stretchEnd = done + min(frameCount - done, Self.reverbStretch)
            send.update(repeating: 0, count: stretchEnd - stretchStart)
            while done < stretchEnd {
                let frame = startFrame + Int64(done)
                let intoGrid = Int(((frame % interval) + interval) % interval)
                if intoGrid == 0 {
                    position = frame
                    let transpose = parameters[Parameter.transpose]
                    for n in 0..<activeCount { updateControl(activeList[n], atFrame: frame, transpose: transpose) }
                }
                let count = min(stretchEnd - done, Self.controlInterval - intoGrid)
                let left = output.left + done, right = output.right + done
                renderSignals(count: count)
                var kept = 0
                for n in 0..<activeCount {
                    let i = activeList[n]
                    voices[i].mix(signals + n * Self.controlInterval, count: renderedFrames[n], left: left, right: right,
                                  send: send + (done - stretchStart), gainGlide: gainGlide)
                    if voices[i].isActive {
                        activeList[kept] = i
                        kept += 1
                    }
                }
                activeCount = kept
                done += count
            }
            // The reverb runs even when no voice sounds, so its tail rings out; at level 0 it
            // is skipped (a parameter, so the result is still the same at any block size).
            if reverbActive {
                let count = stretchEnd - stretchStart
                reverb.render(startFrame: startFrame + Int64(stretchStart), frameCount: count,
                              inputs: UnsafeBufferPointer(start: reverbInput, count: 1), output: wet)
                let left = output.left + stretchStart, right = output.right + stretchStart
                for f in 0..<count {
                    left[f] += wet.left[f]
                    right[f] += wet.right[f]
                }
            }
        }
        position = startFrame + Int64(frameCount)
    }
}
