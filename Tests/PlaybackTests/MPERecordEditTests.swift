import Foundation
import MIDI
import MIDIFile
import Recording
import Sequencing
import Testing

/// An MPE performance recorded and edited: every member channel's notes and per-note
/// expression (pitch bend, pressure, CC 74) come back on their own channel.
@Suite struct MPERecordEditTests {
    /// A Lower Zone of 15 members, then a note on each member channel 2...16 (indices 1...15,
    /// channel 10 among them) with its own bend, pressure and timbre, a tenth of a second apart.
    static func performance() -> [(seconds: Double, bytes: [UInt8])] {
        var e: [(Double, [UInt8])] = [(0, [0xB0, 101, 0]), (0, [0xB0, 100, 6]), (0, [0xB0, 6, 15])]
        for c in UInt8(1)...15 {
            let t = 0.1 * Double(c)
            e.append((t, [0xE0 | c, 0, 64]))
            e.append((t, [0xB0 | c, 74, 64]))
            e.append((t, [0x90 | c, 40 + c, 100]))
            e.append((t + 0.02, [0xE0 | c, c, 64 + c]))
            e.append((t + 0.03, [0xD0 | c, 10 * c / 2]))
            e.append((t + 0.04, [0xB0 | c, 74, 127 - c]))
            e.append((t + 0.5, [0x80 | c, 40 + c, 0]))
        }
        return e
    }

    /// Per channel: the (kind, data) of every channel message and note, in time order.
    static func byChannel(_ sequence: MusicSequence) -> [UInt8: [[Int]]] {
        var out: [UInt8: [[Int]]] = [:]
        for e in sequence.tracks.flatMap(\.events).sorted(by: { $0.tick < $1.tick }) {
            switch e.event {
            case .note(let n): out[n.channel, default: []].append([0x90, Int(n.key), Int(n.velocity)])
            case .message(let m) where m.isChannelMessage:
                out[m.channel, default: []].append([Int(m.status & 0xF0), Int(m.data1), Int(m.data2)])
            default: break
            }
        }
        return out
    }

    static func recorded() -> MusicSequence {
        var recorder = MIDIRecorder(sequence: MusicSequence())
        for (t, bytes) in performance() { recorder.record(bytes, atSeconds: t) }
        recorder.finish(atSeconds: 3)
        return recorder.merged(into: MusicSequence())
    }

    @Test func recordingKeepsEveryMemberChannel() throws {
        let sequence = Self.recorded()
        let channels = Self.byChannel(sequence)
        #expect(Set(channels.keys) == Set(0...15))
        for c in 1...15 {
            let got = channels[UInt8(c)] ?? []
            #expect(got.count == 6, "channel \(c): \(got)")
            #expect(got.contains([0x90, 40 + c, 100]) && got.contains([0xE0, c, 64 + c]) && got.contains([0xD0, 10 * c / 2, 0])
                    && got.contains([0xB0, 74, 127 - c]), "channel \(c): \(got)")
        }
        #expect(sequence.mpeZones.lowerMemberCount == 15)
        // Through a Standard MIDI File and back, as `record` writes it and `edit` reads it.
        let back = try SMFReader.read(SMFWriter.checkedBytes(of: sequence, layout: .format1)).makeSequence()
        #expect(Self.byChannel(back) == channels)
    }

    @Test func editingKeepsMemberChannelsAndTransposesChannelTenInAZone() throws {
        var sequence = Self.recorded()
        let before = Self.byChannel(sequence)
        sequence.transpose(by: 2)
        sequence.quantize(grid: QuantizeGrid(noteValue: 16))
        sequence.splitTrackByChannel(0)
        sequence.mergeTracks(Array(sequence.tracks.indices))
        let after = Self.byChannel(sequence)
        #expect(Set(after.keys) == Set(before.keys))
        for c in UInt8(1)...15 {
            // Every member channel, channel 10 (index 9) too, is melodic in the zone: its note moves.
            let moved = before[c]!.map { $0[0] == 0x90 ? [0x90, $0[1] + 2, $0[2]] : $0 }
            #expect(after[c]!.sorted { $0.lexicographicallyPrecedes($1) } == moved.sorted { $0.lexicographicallyPrecedes($1) },
                    "channel \(c)")
        }
        // Without the configuration message channel 10 stays drums and is not transposed.
        var plain = Self.recorded()
        for i in plain.tracks.indices {
            plain.tracks[i].removeAll { (e: TimedEvent) -> Bool in if case .message(let m) = e.event { return m.channel == 0 }; return false }
        }
        #expect(!plain.mpeZones.isActive)
        let plainBefore = Self.byChannel(plain)
        plain.transpose(by: 2)
        #expect(Self.byChannel(plain)[9] == plainBefore[9])
    }
}
