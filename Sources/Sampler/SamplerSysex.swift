import AudioGraph
import MIDI

// System exclusive: the GM, GM2, GS and XG resets, GS rhythm-part assignment, master volume
// and master tuning, acted on as FluidSynth's `fluid_synth_sysex` acts on them; MIDI Tuning
// Standard programs and scale/octave tunings, kept in a ``MIDITuningState``.
extension SamplerNode {
    public func receiveSystemExclusive(_ bytes: UnsafeBufferPointer<UInt8>, atFrame frame: Int64) {
        guard let command = SystemExclusiveCommand(bytes) else { return }
        position = frame
        switch command {
        case .generalMIDIOn, .generalMIDI2On, .gsReset, .gsModeGeneralMIDI, .xgOn:
            // FluidSynth's system reset: all sounds off, every channel back to its power-up
            // state (program 0, default controllers), channel 10 the only drum channel.
            for n in 0..<activeCount { beginFade(Int(activeList[n])) }
            resetSystemExclusiveState()
            // Each reset selects FluidSynth's bank-select style of its standard; only GS
            // obeys part messages.
            switch command {
            case .generalMIDIOn, .gsModeGeneralMIDI: bankStyle = .gm
            case .generalMIDI2On: bankStyle = .gm2
            case .xgOn: bankStyle = .xg
            default: bankStyle = .gs
            }
            for ch in 0..<16 {
                resetChannel(ch)
                regionRules?.clearKeys(channel: ch)
            }
            applyParameters()
        case .gsRhythmPart(let channel, let drums):
            guard bankStyle == .gs else { return }
            let c = Int(channel)
            if drums { drumChannels |= 1 << c } else { drumChannels &= ~(1 << c) }
            // As FluidSynth: the part's controllers are reset and program 0 of its new bank
            // (the standard kit, or the first melodic instrument) is selected at once.
            controlChange(channel: c, controller: MIDIController.resetAllControllers, value: 0)
            channels[c].bankMSB = 0
            channels[c].program = 0
            selectPreset(c)
        case .masterVolume(let value):
            sysexVolume = Float(value) / 16383
            applyParameters()
        case .masterFineTuning(let value):
            fineTuningCents = SystemExclusiveCommand.fineTuningCents(value)
        case .masterCoarseTuning(let semitones):
            coarseTuningCents = Double(semitones) * 100
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
    /// Call it before the sampler renders or between renders, not while a graph is rendering it:
    /// the audio thread reads the table without a lock. Notes already sounding keep their pitch.
    public func setTuning(_ tuning: KeyboardTuning?) {
        self.tuning.setBaseTuning(tuning?.cents)
    }

    /// The tuned pitch of `key` on channel `c` for a new voice: NaN on a drum channel (a kit's
    /// notes are not a scale) and in plain equal temperament.
    func tunedCents(channel c: Int, key: Float) -> Double {
        guard !isDrumChannel(c) else { return .nan }
        return tuning.cents(channel: c, key: Int(key)) ?? .nan
    }

    /// After a tuning change: with a real-time one, the sounding voices of the channels it
    /// touched take their key's new pitch at the next control step.
    func retune(_ update: MIDITuningState.Update) {
        guard update.realTime, update.channels != 0 else { return }
        for n in 0..<activeCount {
            let v = voices + Int(activeList[n])
            let c = Int(v.pointee.channel)
            guard v.pointee.state != .off, update.channels & (1 << UInt16(c)) != 0 else { continue }
            v.pointee.tunedCents = tunedCents(channel: c, key: v.pointee.key)
        }
        for c in 0..<16 where update.channels & (1 << UInt16(c)) != 0 { channels[c].serial &+= 1 }
    }

    /// True when channel `c` plays the drum bank.
    @inline(__always)
    func isDrumChannel(_ c: Int) -> Bool {
        // A member channel of an MPE zone is melodic, even channel 10.
        drumChannels & ~mpe.memberMask & (1 << UInt16(c & 15)) != 0
    }

    /// The power-up values of everything system exclusive sets. A GM or GM2 System On returns
    /// the master volume and tuning to them as well, as General MIDI 2 asks.
    func resetSystemExclusiveState() {
        drumChannels = 1 << 9
        sysexVolume = 1
        fineTuningCents = 0
        coarseTuningCents = 0
        bankStyle = .gs
        tuning.reset()
    }

    /// Bank select MSB in the GM, GM2 and XG styles, as FluidSynth's
    /// `fluid_channel_set_bank_msb`: GM ignores it; GM2's 120 and 121 make the channel a drum
    /// or a melodic one; XG's 120, 126 and 127 make it a drum channel and anything else a
    /// melodic one. The preset changes at the next program change.
    func selectBankMSB(channel c: Int, _ value: UInt8) {
        let bit: UInt16 = 1 << UInt16(c & 15)
        switch bankStyle {
        case .gs: channels[c].bankMSB = value
        case .gm: break
        case .gm2:
            if value == 120 { drumChannels |= bit } else if value == 121 { drumChannels &= ~bit }
        case .xg:
            if value == 120 || value == 126 || value == 127 { drumChannels |= bit } else { drumChannels &= ~bit }
        }
    }
}

/// How bank select messages choose a bank: FluidSynth's `synth.midi-bank-select` styles,
/// which its system reset messages switch between.
enum BankSelectStyle {
    /// Roland GS (the default): the MSB is the bank, the LSB is ignored.
    case gs
    /// General MIDI: bank select is ignored.
    case gm
    /// General MIDI 2: MSB 120 and 121 choose drums or melody, the LSB is the bank.
    case gm2
    /// Yamaha XG: MSB 120, 126 and 127 choose drums, the LSB is the melodic bank.
    case xg
}
