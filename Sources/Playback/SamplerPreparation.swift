import MIDI
import Sampler
import Sequencing

extension MusicSequence {
    /// The program choices the sequence's notes play with: for every note-on, its channel's
    /// program and the bank select in force at that moment (a channel without a program change
    /// plays program 0); programs no note plays are left out. Muted tracks count too (they may
    /// be unmuted while playing).
    public func samplerProgramSelections() -> Set<SamplerNode.ProgramSelection> {
        Set(samplerPlayedNotes().map(\.selection))
    }

    /// Every distinct note the sequence plays (key, velocity) with its channel's program choice:
    /// what a `SamplerNode` needs decoded before the song plays
    /// (`SamplerNode.prepareSamples(forNotes:)`).
    public func samplerPlayedNotes() -> Set<SamplerNode.PlayedNote> {
        // Bank selects, program changes and note-ons of every track in playback order: tick,
        // then the same-tick rank (bank select, then program change, then note-ons).
        var events: [(tick: Int64, rank: UInt8, message: MIDIMessage)] = []
        for track in tracks {
            for timed in track.events {
                switch timed.event {
                case .note(let note):
                    if note.velocity > 0 { events.append((timed.tick, timed.event.playbackRank, note.onMessage)) }
                case .message(let m):
                    let kind = m.status & 0xF0
                    if kind == 0xC0 || (kind == 0xB0 && m.data1 == 0) || (kind == 0x90 && m.data2 > 0) {
                        events.append((timed.tick, timed.event.playbackRank, m))
                    }
                default:
                    break
                }
            }
        }
        events.sort { ($0.tick, $0.rank) < ($1.tick, $1.rank) }
        var bankMSB = [UInt8](repeating: 0, count: 16)
        var program = [UInt8](repeating: 0, count: 16)
        var selectedBank = [UInt8](repeating: 0, count: 16)
        var notes = Set<SamplerNode.PlayedNote>()
        for event in events {
            let m = event.message, channel = Int(m.channel)
            switch m.status & 0xF0 {
            case 0xB0:
                bankMSB[channel] = m.data2 & 0x7F
            case 0xC0:
                // The bank select takes effect at the program change, as in the sampler.
                program[channel] = m.data1 & 0x7F
                selectedBank[channel] = bankMSB[channel]
            default:
                let selection = SamplerNode.ProgramSelection(channel: UInt8(channel), bankMSB: selectedBank[channel],
                                                             program: program[channel])
                notes.insert(SamplerNode.PlayedNote(selection: selection, key: m.data1 & 0x7F, velocity: m.data2 & 0x7F))
            }
        }
        return notes
    }
}
