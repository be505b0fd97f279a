import MIDI

extension MusicSequence {
    /// The MIDI Polyphonic Expression zones the sequence's MPE Configuration Messages leave
    /// configured, read in time order across every track (RPN 6 on channel 1 or 16, with
    /// parameter selection followed per channel as an instrument follows it).
    ///
    /// Editing consults it so that a member channel is treated as the melodic channel it is in
    /// MPE, even when it is channel 10. A sequence without configuration messages has no zones.
    public var mpeZones: MPEZones {
        var messages: [(tick: Int64, track: Int, index: Int, message: MIDIMessage)] = []
        for (t, track) in tracks.enumerated() {
            for (i, e) in track.events.enumerated() {
                guard case .message(let m) = e.event, m.status & 0xF0 == 0xB0,
                      m.channel == UInt8(MPEZones.lowerManager) || m.channel == UInt8(MPEZones.upperManager) else { continue }
                switch m.data1 {
                case MIDIController.rpnMSB, MIDIController.rpnLSB, MIDIController.nrpnMSB, MIDIController.nrpnLSB, MIDIController.dataEntryMSB:
                    messages.append((e.tick, t, i, m))
                default: break
                }
            }
        }
        guard !messages.isEmpty else { return MPEZones() }
        messages.sort { ($0.tick, $0.track, $0.index) < ($1.tick, $1.track, $1.index) }
        var zones = MPEZones()
        // Selected parameter (MSB, LSB) of the two manager channels.
        var selected: [Int: (UInt8, UInt8)] = [MPEZones.lowerManager: (127, 127), MPEZones.upperManager: (127, 127)]
        for (_, _, _, m) in messages {
            let c = Int(m.channel)
            switch m.data1 {
            case MIDIController.rpnMSB: selected[c]?.0 = m.data2
            case MIDIController.rpnLSB: selected[c]?.1 = m.data2
            case MIDIController.nrpnMSB, MIDIController.nrpnLSB: selected[c] = (127, 127)
            default:
                if let s = selected[c], s.0 == 0, s.1 == MPEZones.configurationRPN {
                    _ = zones.configure(managerChannel: c, memberCount: Int(m.data2))
                }
            }
        }
        return zones
    }
}
