import AudioGraph
import MIDI

// System exclusive: the GM, GM2, GS and XG resets, GS rhythm-part assignment, master volume
// and master tuning, acted on as FluidSynth acts on them where FluidSynth does.
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
    }
}
