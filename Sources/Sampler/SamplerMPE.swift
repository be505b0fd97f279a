import AudioGraph
import Foundation
import MIDI
import SoundFont

// MIDI Polyphonic Expression: zones from MPE Configuration Messages, zone-wide bend ranges,
// the manager channel's messages applied across its zone, and a member channel's bend,
// pressure and timbre (CC 74) shaping its note alone. Nothing here acts before a
// configuration message, so channels outside MPE keep FluidSynth's behaviour exactly.
extension SamplerNode {
    /// Cents of filter cutoff per step of CC 74 away from its centre (64) on a member channel:
    /// 0 closes the filter four octaves (4800 cents), 127 opens it as far (the cutoff is still
    /// held to the sampler's 1500...13500 cents).
    static let timbreCentsPerStep: Float = 75

    /// Data entry that MPE defines (see `MPEZones.dataEntry`): a new zone layout picks presets
    /// again, a member's bend range reaches its zone; false to let the ordinary handling run.
    func mpeDataEntry(channel c: Int, value: UInt8, coarse: Bool) -> Bool {
        let meaning = mpe.dataEntry(channel: c, rpnMSB: channels[c].rpnMSB, rpnLSB: channels[c].rpnLSB, value: value, coarse: coarse,
                                    currentBendRange: channels[c].bendRange)
        if case .zonesChanged(let changed) = meaning { zonesChanged(changed, manager: c) }
        if case .memberBendRange(let range) = meaning { forEachMember(of: c) { channels[$0].bendRange = range } }
        return meaning != .notMPE
    }

    /// After a configuration message: every channel whose role changed releases its notes (a
    /// note started under one role must not go on under another), the zone's members bend 48
    /// semitones and its manager 2, the members take the manager's program, and every channel
    /// whose role changed picks its preset again (a member channel is melodic even when it is
    /// channel 10).
    func zonesChanged(_ changed: UInt16, manager m: Int) {
        for c in 0..<16 where changed & (1 << UInt16(c)) != 0 { controlChange(channel: c, controller: MIDIController.allNotesOff, value: 0) }
        if mpe.isManager(m) { channels[m].bendRange = MPEZones.managerBendRange }
        let members = mpe.members(ofZoneWith: m)
        for c in 0..<16 {
            let bit: UInt16 = 1 << UInt16(c)
            if members & bit != 0 {
                channels[c].bendRange = MPEZones.memberBendRange
                channels[c].program = channels[m].program
                channels[c].bankMSB = channels[m].bankMSB
            }
            if (members | changed) & bit != 0 {
                selectPreset(c)
                channels[c].serial &+= 1
            }
        }
    }

    /// A message on a manager channel speaks for its whole zone (see `MPEZones.zoneMessage`):
    /// controllers and program changes reach every member channel; the manager's pitch bend,
    /// pressure and CC 74 mark the members' voices for an update, which reads them.
    func forwardToZone(_ message: MIDIMessage, manager m: Int) {
        switch MPEZones.zoneMessage(for: message) {
        case .controller(let controller, let value):
            forEachMember(of: m) { controlChange(channel: $0, controller: controller, value: value) }
        case .program(let program):
            forEachMember(of: m) { c in
                channels[c].program = program
                channels[c].bankMSB = channels[m].bankMSB
                selectPreset(c)
            }
        case .expression:
            // forEachMember marks each member's voices for an update.
            forEachMember(of: m) { _ in }
        case .none:
            break
        }
    }

    /// Adds what MPE gives a member channel's voice to its generators: the manager channel's
    /// pitch bend (over the manager's range), and the channel's and the manager's timbre (their
    /// CC 74 offsets from 64 added) as a filter cutoff offset.
    /// The member's own bend and pressure already reach it through the SoundFont default
    /// modulators, which read the voice's channel.
    func addMPEContributions(channel c: Int) {
        guard let m = mpe.manager(of: c) else { return }
        let managerBend = (channels[m].pitchWheel - 8192) / 8192 * channels[m].bendRange * 100
        effective[SoundFontGenerator.fineTune.rawValue] += managerBend
        let timbre = Float(channels[c].timbre) + Float(channels[m].timbre) - 128
        effective[SoundFontGenerator.initialFilterCutoff.rawValue] += timbre * Self.timbreCentsPerStep
    }

    /// Runs `body` on every member channel of the zone `c` manages or belongs to.
    @inline(__always)
    func forEachMember(of c: Int, _ body: (Int) -> Void) {
        let members = mpe.members(ofZoneWith: c)
        for m in 0..<16 where members & (1 << UInt16(m)) != 0 {
            body(m)
            channels[m].serial &+= 1
        }
    }
}
