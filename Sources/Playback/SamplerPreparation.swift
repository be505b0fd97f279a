import MIDI
import Sampler
import Sequencing

extension MusicSequence {
    /// Every program a channel selects in the sequence, with the bank select in force at that
    /// moment: what a ``SamplerNode`` needs decoded before the song plays
    /// (``SamplerNode/prepareSamples(for:)``). Muted tracks count too (they may be unmuted
    /// while playing).
    public func samplerProgramSelections() -> Set<SamplerNode.ProgramSelection> {
        // Bank selects and program changes of every track in playback order (tick, then the
        // same-tick rank: bank select before program change).
        var changes: [(tick: Int64, rank: UInt8, message: MIDIMessage)] = []
        for track in tracks {
            for timed in track.events {
                guard case .message(let m) = timed.event else { continue }
                let kind = m.status & 0xF0
                if kind == 0xC0 || (kind == 0xB0 && m.data1 == 0) {
                    changes.append((timed.tick, timed.event.playbackRank, m))
                }
            }
        }
        changes.sort { ($0.tick, $0.rank) < ($1.tick, $1.rank) }
        var bankMSB = [UInt8](repeating: 0, count: 16)
        var selections = Set<SamplerNode.ProgramSelection>()
        for change in changes {
            let channel = Int(change.message.channel)
            if change.message.status & 0xF0 == 0xB0 {
                bankMSB[channel] = change.message.data2 & 0x7F
            } else {
                selections.insert(SamplerNode.ProgramSelection(channel: UInt8(channel), bankMSB: bankMSB[channel],
                                                               program: change.message.data1 & 0x7F))
            }
        }
        return selections
    }
}
