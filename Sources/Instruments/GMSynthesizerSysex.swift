import AudioGraph
import Foundation
import MIDI

// System exclusive: the GM, GM2, GS and XG resets, GS rhythm-part assignment, master volume
// and master tuning, acted on as FluidSynth acts on them where FluidSynth does; MIDI Tuning
// Standard programs and scale/octave tunings, kept in a ``MIDITuningState``.
extension GMSynthesizer {
    public func receiveSystemExclusive(_ bytes: UnsafeBufferPointer<UInt8>, atFrame frame: Int64) {
        guard let command = SystemExclusiveCommand(bytes) else { return }
        position = frame
        switch command {
        case .generalMIDIOn, .generalMIDI2On, .gsReset, .gsModeGeneralMIDI, .xgOn:
            // FluidSynth's system reset: every sound stops at once and every channel returns
            // to its power-up state, channel 10 the only drum channel.
            forEachActive { beginFastFade($0) }
            for ch in 0..<16 { channels[ch] = Channel() }
            resetSystemExclusiveState()
            // Only a GS reset leaves FluidSynth in the GS bank mode that obeys part messages.
            gsMode = command == .gsReset
            parametersChanged()
        case .gsRhythmPart(let channel, let drums):
            guard gsMode else { return }
            let c = Int(channel)
            if drums { drumChannels |= 1 << c } else { drumChannels &= ~(1 << c) }
            // FluidSynth resets the part's controllers and selects program 0 of the part's
            // new bank, so the kit or instrument is the standard one until a program change.
            channels[c].resetControllers()
            for i in activeIndices where voices[i].isActive && Int(voices[i].channel) == c && voices[i].heldByPedal {
                voices[i].heldByPedal = false
                beginRelease(i)
            }
            channels[c].bankMSB = 0
            channels[c].program = 0
        case .masterVolume(let value):
            sysexVolume = Float(value) / 16383
            parametersChanged()
        case .masterFineTuning(let value):
            fineTuningSemitones = Float(SystemExclusiveCommand.fineTuningCents(value) / 100)
        case .masterCoarseTuning(let semitones):
            coarseTuningSemitones = Float(semitones)
        case .tuningBulkDump, .singleNoteTuningChange, .scaleOctaveTuning:
            if let update = tuning.apply(command) { retune(update) }
        }
    }

    /// Plays every channel in `tuning` (cents for the 128 keys: `KeyboardTuning`, module
    /// `MIDI`) instead of equal temperament, or in equal temperament again for nil; drum
    /// channels stay as they are. MIDI Tuning Standard programs sent later still take over the
    /// channels that select them, and a system reset returns to this tuning, not to equal
    /// temperament.
    ///
    /// Call it before the synthesizer renders or between renders, not while a graph is
    /// rendering it: the audio thread reads the table without a lock. Notes already sounding
    /// keep their pitch.
    public func setTuning(_ tuning: KeyboardTuning?) {
        self.tuning.setBaseTuning(tuning?.cents)
    }

    /// Data entry MSB for registered parameter (0, `parameter`): RPN 3 selects the channel's
    /// tuning program, RPN 4 its tuning bank, as FluidSynth reads them.
    func tuningDataEntry(channel c: Int, parameter: UInt8, value: UInt8) {
        if parameter == MIDITuningState.programSelectRPN {
            retune(tuning.selectProgram(channel: c, program: value))
        } else if parameter == MIDITuningState.bankSelectRPN {
            tuning.selectBank(channel: c, bank: value)
        }
    }

    /// The frequency of tuned voice `i` before bend and vibrato, cached by key like an
    /// equal-tempered one's. It is reckoned in Double: a Float key near 60 resolves only
    /// 0.0004 cent, and a tuning's fractions of a cent are the point.
    func updateTunedFrequency(_ i: Int, transpose: Float) {
        let tuned = voices[i].tunedCents
        let key = Float(tuned / 100) + transpose
        if key != voices[i].baseHzKey {
            voices[i].baseHzKey = key
            voices[i].baseHz = Float(440 * exp2((tuned / 100 + Double(transpose) - 69) / 12))
        }
    }

    /// After a tuning change: with a real-time one, the sounding melodic voices of the
    /// channels it touched take their key's new pitch at the next control update.
    func retune(_ update: MIDITuningState.Update) {
        guard update.realTime, update.channels != 0 else { return }
        for i in activeIndices where voices[i].isActive && !voices[i].isDrum {
            let c = Int(voices[i].channel)
            guard update.channels & (1 << UInt16(c)) != 0 else { continue }
            voices[i].tunedCents = tuning.cents(channel: c, key: Int(voices[i].key)) ?? .nan
            // The cached frequency belongs to the old pitch.
            voices[i].baseHzKey = .nan
        }
    }

    /// The power-up values of everything system exclusive sets. A GM or GM2 System On returns
    /// the master volume and tuning to them as well, as General MIDI 2 asks.
    func resetSystemExclusiveState() {
        drumChannels = 1 << 9
        sysexVolume = 1
        fineTuningSemitones = 0
        coarseTuningSemitones = 0
        gsMode = true
        tuning.reset()
    }
}
