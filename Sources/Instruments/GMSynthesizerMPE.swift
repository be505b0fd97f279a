import AudioGraph
import Foundation
import MIDI

// MIDI Polyphonic Expression in the built-in synthesizer: zones from MPE Configuration
// Messages, zone-wide bend ranges, the manager channel's messages applied across its zone,
// and each member channel's bend, pressure and timbre shaping its note alone. Nothing here acts
// before a configuration message, so every other channel sounds exactly as before.
extension GMSynthesizer {
    /// Vibrato depth, in cents, that full channel pressure adds on an MPE member channel (as
    /// the SoundFont default modulator does in the sampler). Pressure outside MPE does nothing.
    static let pressureVibratoCents: Float = 50
    /// Octaves of filter cutoff per step of CC 74 away from its centre (64) on an MPE member
    /// channel: 0 closes the filter 4 octaves, 127 opens it almost as far (the cutoff is held
    /// to 30 Hz...0.45 x the sample rate).
    static let timbreOctavesPerStep: Float = 4.0 / 64

    struct Channel {
        var program: UInt8 = 0
        var bankMSB: UInt8 = 0
        var volume: Float = 100 / 127
        var expression: Float = 1
        var pan: Float = 0
        var modulation: Float = 0
        var sustain = false
        var bend: Float = 0
        var bendRange: Float = 2
        var rpnMSB: UInt8 = 127, rpnLSB: UInt8 = 127
        /// CC 91; General MIDI's default is 40. Reset All Controllers leaves it alone (RP-015).
        var reverbSend: Float = 40 / 127
        /// Channel pressure, 0...1; heard only on MPE member channels.
        var pressure: Float = 0
        /// CC 74; heard only on MPE member channels, where 64 leaves the filter alone.
        var timbre: UInt8 = 64

        mutating func resetControllers() {
            expression = 1
            modulation = 0
            sustain = false
            bend = 0
            pressure = 0
            rpnMSB = 127
            rpnLSB = 127
        }
    }

    /// Data entry that MPE defines (see `MPEZones.dataEntry`), acted on for this synthesizer's
    /// channels; false when it is not MPE's and the ordinary handling runs.
    func mpeDataEntry(channel c: Int, value: UInt8, coarse: Bool) -> Bool {
        let meaning = mpe.dataEntry(channel: c, rpnMSB: channels[c].rpnMSB, rpnLSB: channels[c].rpnLSB, value: value, coarse: coarse,
                                    currentBendRange: channels[c].bendRange)
        if case .zonesChanged(let changed) = meaning { zonesChanged(changed, manager: c) }
        if case .memberBendRange(let range) = meaning { forEachMember(of: c) { channels[$0].bendRange = range } }
        return meaning != .notMPE
    }

    /// After a configuration message: every channel whose role changed releases its notes (a
    /// note started under one role must not go on under another), the zone's members bend 48
    /// semitones and its manager 2, and the members take the manager's program.
    func zonesChanged(_ changed: UInt16, manager m: Int) {
        for c in 0..<16 where changed & (1 << UInt16(c)) != 0 { controlChange(channel: c, controller: MIDIController.allNotesOff, value: 0) }
        if mpe.isManager(m) { channels[m].bendRange = MPEZones.managerBendRange }
        forEachMember(of: m) { c in
            channels[c].bendRange = MPEZones.memberBendRange
            channels[c].program = channels[m].program
            channels[c].bankMSB = channels[m].bankMSB
        }
    }

    /// A message on a manager channel speaks for its whole zone (see `MPEZones.zoneMessage`):
    /// controllers and program changes reach every member channel; the manager's pitch bend,
    /// pressure and CC 74 are read when the members' voices update.
    func forwardToZone(_ message: MIDIMessage, manager m: Int) {
        switch MPEZones.zoneMessage(for: message) {
        case .controller(let controller, let value):
            forEachMember(of: m) { controlChange(channel: $0, controller: controller, value: value) }
        case .program(let program):
            forEachMember(of: m) { c in
                channels[c].program = program
                channels[c].bankMSB = channels[m].bankMSB
            }
        case .expression, .none:
            break
        }
    }

    /// Runs `body` on every member channel of the zone `c` manages or belongs to.
    @inline(__always)
    func forEachMember(of c: Int, _ body: (Int) -> Void) {
        let members = mpe.members(ofZoneWith: c)
        for m in 0..<16 where members & (1 << UInt16(m)) != 0 { body(m) }
    }
}
