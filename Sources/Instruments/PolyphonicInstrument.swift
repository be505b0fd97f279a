import AudioGraph
import Foundation
import MIDI

/// The note a voice plays, as ``PolyphonicInstrument`` hands it over.
public struct VoiceNote: Sendable, Hashable {
    /// MIDI channel (0...15).
    public var channel: UInt8
    /// MIDI key (60 is middle C).
    public var key: UInt8
    /// Note-on velocity (1...127).
    public var velocity: UInt8

    /// Creates a note.
    public init(channel: UInt8, key: UInt8, velocity: UInt8) {
        self.channel = channel
        self.key = key
        self.velocity = velocity
    }

    /// The key's frequency in hertz in twelve-tone equal temperament, A4 (key 69) at 440 Hz.
    public var frequency: Double { 440 * pow(2, (Double(key) - 69) / 12) }
    /// Velocity as a fraction from 0 to 1.
    public var gain: Float { Float(velocity) / 127 }
}

/// What a voice may read while rendering: the instrument's parameters and the channel's pitch
/// bend. Valid only during the render call that receives it.
public struct VoiceContext {
    /// The instrument's parameters, at their values for the stretch being rendered (while one
    /// glides or ramps, stretches are one frame long).
    public let parameters: NodeParameters
    /// Frequency ratio of the voice's channel's pitch bend (1 when centred).
    public let pitchBend: Double
    /// Absolute frame of the first frame rendered.
    public let startFrame: Int64
    /// The sample rate the voice was prepared for.
    public let sampleRate: Double
}

/// The one part of an instrument its author writes: a single voice. ``PolyphonicInstrument``
/// does the rest: voice allocation and stealing, note-on and note-off, the sustain pedal,
/// pitch bend, parameters and mixing.
///
/// The voice's methods other than `prepare(sampleRate:)` run on the audio thread and follow
/// `AudioNode`'s real-time contract: no allocation, no locks, no I/O. A voice is a value
/// stored in a pool the instrument allocates up front.
public protocol SynthVoice {
    /// Allocates and computes what depends on the sample rate (control side).
    mutating func prepare(sampleRate: Double)
    /// Starts `note` from silence. The voice may be fresh or reused at any point of its life
    /// (stolen voices stop being rendered when their fade ends), so `start` resets every part
    /// of its state: anything left over would make the output depend on block boundaries.
    mutating func start(_ note: VoiceNote, context: VoiceContext)
    /// The key was let go (or the pedal lifted): begin the release.
    mutating func release()
    /// True once the voice is silent for good and its slot can be reused.
    var isFinished: Bool { get }
    /// Writes `frameCount` mono samples into `output` (overwriting it).
    mutating func render(into output: UnsafeMutablePointer<Float>, frameCount: Int, context: VoiceContext)
}

/// A polyphonic instrument node built from a ``SynthVoice``: the voice is all an instrument
/// author writes.
///
/// It plays up to `voiceLimit` notes at once on any channel. A note-on beyond the limit
/// steals the oldest voice, which fades out over 3 ms in a reserve slot instead of clicking.
/// Note-off releases the oldest voice of that key, or leaves it held while the channel's
/// sustain pedal (controller 64) is down; lifting the pedal releases what it held. Pitch bend
/// (range ``pitchBendSemitones``) reaches voices through ``VoiceContext/pitchBend``.
/// Controllers 120 (all sound off) and 123 (all notes off) and system reset are honoured.
/// The voices' mono output goes equally to both channels.
public final class PolyphonicInstrument<Voice: SynthVoice>: ParameterizedNode {
    public let name: String
    public let inputBusCount = 0
    public let parameters: NodeParameters
    /// Pitch bend range in semitones either way.
    public let pitchBendSemitones: Double

    private struct Slot {
        var note = VoiceNote(channel: 0, key: 0, velocity: 0)
        var active = false
        var released = false
        var sustained = false
        // Stolen voices fade to silence; 1 while not fading.
        var fade: Float = 1
        var fading = false
        var serial: UInt64 = 0
    }

    private let voiceLimit: Int
    private let slotCount: Int
    private let voices: UnsafeMutablePointer<Voice>
    private let slots: UnsafeMutablePointer<Slot>
    private let bend: UnsafeMutablePointer<Double>
    private let pedal: UnsafeMutablePointer<Bool>
    private var scratch: UnsafeMutablePointer<Float>?
    private var scratchCapacity = 0
    private var sampleRate = 44_100.0
    private var fadeStep: Float = 1
    private var serial: UInt64 = 0

    /// An instrument with `voiceLimit` voices made by `makeVoice`, publishing `parameters`
    /// (the voice reads them through its context).
    public init(name: String, parameters: [AudioParameterInfo] = [], voiceLimit: Int = 16,
                pitchBendSemitones: Double = 2, makeVoice: () -> Voice) {
        self.name = name
        self.parameters = NodeParameters(parameters)
        self.pitchBendSemitones = pitchBendSemitones
        self.voiceLimit = max(1, voiceLimit)
        // One reserve slot per voice: every sounding voice may be fading after a steal.
        slotCount = 2 * self.voiceLimit
        voices = .allocate(capacity: slotCount)
        for i in 0..<slotCount { (voices + i).initialize(to: makeVoice()) }
        slots = .allocate(capacity: slotCount)
        slots.initialize(repeating: Slot(), count: slotCount)
        bend = .allocate(capacity: 16)
        bend.initialize(repeating: 1, count: 16)
        pedal = .allocate(capacity: 16)
        pedal.initialize(repeating: false, count: 16)
    }

    deinit {
        voices.deinitialize(count: slotCount)
        voices.deallocate()
        slots.deallocate()
        bend.deallocate()
        pedal.deallocate()
        scratch?.deallocate()
    }

    /// Voices sounding, including ones fading after a steal.
    public var activeVoiceCount: Int {
        (0..<slotCount).reduce(0) { $0 + (slots[$1].active ? 1 : 0) }
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        parameters.prepare(sampleRate: sampleRate)
        scratch?.deallocate()
        scratchCapacity = max(1, maximumFrameCount)
        scratch = .allocate(capacity: scratchCapacity)
        fadeStep = Float(1 / max(1, 0.003 * sampleRate))
        for i in 0..<slotCount { voices[i].prepare(sampleRate: sampleRate) }
        reset()
    }

    public func reset() {
        for i in 0..<slotCount { slots[i] = Slot() }
        for c in 0..<16 { bend[c] = 1; pedal[c] = false }
    }

    private func context(channel: UInt8, startFrame: Int64) -> VoiceContext {
        VoiceContext(parameters: parameters, pitchBend: bend[Int(channel & 15)], startFrame: startFrame, sampleRate: sampleRate)
    }

    public func receive(_ message: MIDIMessage, atFrame frame: Int64) {
        let channel = Int(message.channel)
        switch message.status & 0xF0 {
        case 0x90 where message.data2 > 0:
            noteOn(VoiceNote(channel: message.channel, key: message.data1, velocity: message.data2), frame: frame)
        case 0x80, 0x90:
            noteOff(channel: message.channel, key: message.data1)
        case 0xE0:
            let semitones = (Double(message.pitchBendValue) - 8192) / 8192 * pitchBendSemitones
            bend[channel] = pow(2, semitones / 12)
        case 0xB0:
            switch message.data1 {
            case MIDIController.sustainPedal:
                pedal[channel] = message.data2 >= 64
                if !pedal[channel] {
                    for i in 0..<slotCount where slots[i].active && slots[i].sustained && Int(slots[i].note.channel) == channel {
                        slots[i].sustained = false
                        releaseSlot(i)
                    }
                }
            case 120:
                for i in 0..<slotCount where Int(slots[i].note.channel) == channel { slots[i].active = false }
            case 123:
                for i in 0..<slotCount where slots[i].active && Int(slots[i].note.channel) == channel { releaseSlot(i) }
            case MIDIController.resetAllControllers:
                bend[channel] = 1
                pedal[channel] = false
            default:
                break
            }
        default:
            if message.status == 0xFF { reset() }
        }
    }

    private func releaseSlot(_ i: Int) {
        guard !slots[i].released else { return }
        slots[i].released = true
        voices[i].release()
    }

    private func noteOn(_ note: VoiceNote, frame: Int64) {
        var sounding = 0
        var oldest = -1
        var free = -1
        for i in 0..<slotCount {
            // A voice that went silent inside the last render call is free now, whatever the
            // call's length: what a note-on finds must not depend on the block size.
            if slots[i].active && (voices[i].isFinished || (slots[i].fading && slots[i].fade == 0)) { slots[i].active = false }
            if !slots[i].active {
                if free < 0 { free = i }
                continue
            }
            if slots[i].fading { continue }
            sounding += 1
            if oldest < 0 || slots[i].serial < slots[oldest].serial { oldest = i }
        }
        if sounding >= voiceLimit && oldest >= 0 {
            slots[oldest].fading = true
        }
        if free < 0 {
            // Every slot busy (the reserve full of fades): reuse the quietest fade.
            var best = 0
            for i in 0..<slotCount where slots[i].fade < slots[best].fade { best = i }
            free = best
        }
        serial += 1
        slots[free] = Slot(note: note, active: true, released: false, sustained: false, fade: 1, fading: false, serial: serial)
        voices[free].start(note, context: context(channel: note.channel, startFrame: frame))
    }

    private func noteOff(channel: UInt8, key: UInt8) {
        var target = -1
        for i in 0..<slotCount where slots[i].active && !slots[i].released && !slots[i].sustained && !slots[i].fading
            && slots[i].note.channel == channel && slots[i].note.key == key {
            if target < 0 || slots[i].serial < slots[target].serial { target = i }
        }
        guard target >= 0 else { return }
        if pedal[Int(channel)] {
            slots[target].sustained = true
        } else {
            releaseSlot(target)
        }
    }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.clear(frameCount: frameCount)
        guard let scratch else { return }
        parameters.renderStretches(frameCount: frameCount, changed: {}) { offset, count in
            for i in 0..<slotCount where slots[i].active {
                let ctx = context(channel: slots[i].note.channel, startFrame: startFrame + Int64(offset))
                voices[i].render(into: scratch, frameCount: count, context: ctx)
                let left = output.left + offset, right = output.right + offset
                if slots[i].fading {
                    var fade = slots[i].fade
                    for f in 0..<count {
                        fade = max(0, fade - fadeStep)
                        left[f] += scratch[f] * fade
                        right[f] += scratch[f] * fade
                    }
                    slots[i].fade = fade
                    if fade == 0 { slots[i].active = false }
                } else {
                    for f in 0..<count {
                        left[f] += scratch[f]
                        right[f] += scratch[f]
                    }
                }
                if voices[i].isFinished { slots[i].active = false }
            }
        }
    }
}

/// An ADSR envelope with linear segments, times in seconds, advanced one sample at a time:
/// a ready part for voices.
public struct ADSREnvelope: Sendable {
    /// The stage the envelope is in.
    public enum Stage: Sendable {
        /// Silent: not started, or released to the end.
        case idle
        /// Rising to full level.
        case attack
        /// Falling to the sustain level.
        case decay
        /// Holding the sustain level while the note is held.
        case sustain
        /// Falling to silence after the note ended.
        case release
    }
    /// Attack time in seconds.
    public var attack: Double
    /// Decay time in seconds (to the sustain level).
    public var decay: Double
    /// Level held while the key is down, 0...1.
    public var sustain: Float
    /// Release time in seconds (from the current level to 0).
    public var releaseTime: Double
    /// The stage now.
    public private(set) var stage: Stage = .idle
    /// The level now.
    public private(set) var level: Float = 0
    private var step: Float = 0
    private var sampleRate = 44_100.0

    /// An envelope with these times and sustain level.
    public init(attack: Double, decay: Double, sustain: Float, release: Double) {
        self.attack = attack
        self.decay = decay
        self.sustain = min(max(sustain, 0), 1)
        self.releaseTime = release
    }

    /// Sets the sample rate the times are counted at.
    public mutating func prepare(sampleRate: Double) { self.sampleRate = sampleRate }

    /// Starts the attack from silence.
    public mutating func start() {
        level = 0
        stage = .attack
        step = Float(1 / max(1, attack * sampleRate))
    }

    /// Starts the release from the current level.
    public mutating func release() {
        guard stage != .idle else { return }
        stage = .release
        step = level / Float(max(1, releaseTime * sampleRate))
    }

    /// True once the release has reached silence.
    public var isIdle: Bool { stage == .idle }

    /// Advances one sample and returns the level.
    @inlinable
    public mutating func next() -> Float { advance() }

    @usableFromInline
    mutating func advance() -> Float {
        switch stage {
        case .idle: return 0
        case .attack:
            level += step
            if level >= 1 {
                level = 1
                stage = .decay
                step = (1 - sustain) / Float(max(1, decay * sampleRate))
            }
        case .decay:
            level -= step
            if level <= sustain { level = sustain; stage = .sustain }
        case .sustain:
            level = sustain
        case .release:
            level -= step
            if level <= 0 { level = 0; stage = .idle }
        }
        return level
    }
}
