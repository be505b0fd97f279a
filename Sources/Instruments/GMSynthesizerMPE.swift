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

    /// Handles data entry MSB when it means something in MPE: the configuration message
    /// (RPN 6 on a manager channel) and the bend range (RPN 0) on a member channel, which the
    /// specification applies to every member of the zone. Returns false to let the ordinary
    /// handling run.
    func mpeDataEntryMSB(channel c: Int, value: UInt8) -> Bool {
        guard channels[c].rpnMSB == 0 else { return false }
        if channels[c].rpnLSB == MPEZones.configurationRPN {
            guard mpe.configure(managerChannel: c, memberCount: Int(value)) != nil else { return false }
            if mpe.isManager(c) { channels[c].bendRange = MPEZones.managerBendRange }
            forEachMember(of: c) { m in
                channels[m].bendRange = MPEZones.memberBendRange
                channels[m].program = channels[c].program
                channels[m].bankMSB = channels[c].bankMSB
            }
            return true
        }
        guard channels[c].rpnLSB == 0, mpe.isMember(c) else { return false }
        let range = Float(value) + (channels[c].bendRange - channels[c].bendRange.rounded(.down))
        forEachMember(of: c) { channels[$0].bendRange = range }
        return true
    }

    /// Data entry LSB of RPN 0 (the bend range's cents) on a member channel, zone-wide.
    func mpeDataEntryLSB(channel c: Int, value: UInt8) -> Bool {
        guard channels[c].rpnMSB == 0, channels[c].rpnLSB == 0, mpe.isMember(c) else { return false }
        let range = channels[c].bendRange.rounded(.down) + Float(min(value, 99)) / 100
        forEachMember(of: c) { channels[$0].bendRange = range }
        return true
    }

    /// A message on a manager channel speaks for its whole zone: program changes and
    /// controllers reach every member channel; its pitch bend is added to each member's when
    /// their voices update. Parameter selection and data entry stay the manager's own, and so
    /// do its pressure and CC 74, which would otherwise overwrite the members' per-note values.
    func forwardToZone(_ message: MIDIMessage, manager m: Int) {
        switch message.status & 0xF0 {
        case 0xB0:
            let controller = message.data1 & 0x7F
            switch controller {
            case MIDIController.dataEntryMSB, MIDIController.dataEntryLSB, MIDIController.nrpnLSB, MIDIController.nrpnMSB,
                 MIDIController.rpnLSB, MIDIController.rpnMSB, MIDIController.timbre:
                return
            default:
                forEachMember(of: m) { controlChange(channel: $0, controller: controller, value: message.data2 & 0x7F) }
            }
        case 0xC0:
            forEachMember(of: m) { c in
                channels[c].program = message.data1 & 0x7F
                channels[c].bankMSB = channels[m].bankMSB
            }
        default: break
        }
    }

    /// Runs `body` on every member channel of the zone `c` manages or belongs to.
    @inline(__always)
    func forEachMember(of c: Int, _ body: (Int) -> Void) {
        let members = mpe.members(ofZoneWith: c)
        for m in 0..<16 where members & (1 << UInt16(m)) != 0 { body(m) }
    }
}
