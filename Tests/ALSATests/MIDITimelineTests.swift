import ALSA
import MIDI
import Sequencing
import Testing

@Suite("MIDI timeline for sequencer playback")
struct MIDITimelineTests {
    /// 480 ticks per quarter; 120 BPM, then 240 BPM from tick 960 (one second in).
    func song() -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 500_000)), at: 0)
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 250_000)), at: 960)
        var drums = MusicTrack()
        drums.add(.message(.controlChange(channel: 9, controller: 7, value: 90)), at: 0)
        drums.addNote(at: 0, channel: 9, key: 36, velocity: 100, duration: 960)
        drums.addNote(at: 960, channel: 9, key: 38, velocity: 90, duration: 480)
        drums.add(.message(.programChange(channel: 9, program: 3)), at: 480)
        drums.add(.sysex(SysexEvent(payload: [0x7E, 0x7F, 0x09, 0x01, 0xF7])), at: 1440)
        var lead = MusicTrack()
        lead.addNote(at: 1440, channel: 2, key: 72, velocity: 64, duration: 240)
        sequence.tracks = [drums, lead]
        return sequence
    }

    func pairs(_ timeline: MIDITimeline) -> [(Double, [UInt8])] {
        timeline.messages.map { (Double($0.nanoseconds) / 1e9, $0.bytes) }
    }

    @Test func timesComeFromTheTempoMapInPlaybackOrder() {
        let t = MIDITimeline(sequence: song())
        let expected: [(Double, [UInt8])] = [
            (0, [0xB9, 7, 90]), (0, [0x99, 36, 100]), (0.5, [0xC9, 3]),
            (1.0, [0x89, 36, 0]), (1.0, [0x99, 38, 90]),
            (1.25, [0x89, 38, 0]), (1.25, [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]), (1.25, [0x92, 72, 64]),
            (1.375, [0x82, 72, 0]),
        ]
        let got = pairs(t)
        #expect(got.count == expected.count)
        for (g, e) in zip(got, expected) {
            #expect(abs(g.0 - e.0) < 1e-9 && g.1 == e.1, "\(g) vs \(e)")
        }
        #expect(t.endNanoseconds == 1_375_000_000)
        #expect(t.channelsUsed == [2, 9])
    }

    @Test func rateScalesEveryTime() {
        let normal = MIDITimeline(sequence: song()), fast = MIDITimeline(sequence: song(), rate: 2)
        #expect(normal.messages.map(\.bytes) == fast.messages.map(\.bytes))
        #expect(zip(normal.messages, fast.messages).allSatisfy { $0.nanoseconds == 2 * $1.nanoseconds })
        #expect(fast.endNanoseconds * 2 == normal.endNanoseconds)
    }

    @Test func fromChasesControllersAndToCutsNotes() {
        let t = MIDITimeline(sequence: song(), fromTick: 960, toTick: 1500)
        let expected: [(Double, [UInt8])] = [
            (0, [0xB9, 7, 90]), (0, [0xC9, 3]), (0, [0x99, 38, 90]),
            (0.25, [0x89, 38, 0]), (0.25, [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]), (0.25, [0x92, 72, 64]),
            (0.28125, [0x82, 72, 0]),
        ]
        let got = pairs(t)
        #expect(got.count == expected.count, "\(got)")
        for (g, e) in zip(got, expected) {
            #expect(abs(g.0 - e.0) < 1e-9 && g.1 == e.1, "\(g) vs \(e)")
        }
        #expect(t.endNanoseconds == 281_250_000)
    }

    @Test func muteAndSoloLeaveTracksOut() {
        var muted = song()
        muted.tracks[0].isMuted = true
        #expect(MIDITimeline(sequence: muted).messages.map(\.bytes) == [[0x92, 72, 64], [0x82, 72, 0]])
        var soloed = song()
        soloed.tracks[0].isSoloed = true
        #expect(!MIDITimeline(sequence: soloed).messages.contains { $0.bytes.first == 0x92 })
        #expect(MIDITimeline(sequence: soloed).messages.count == 7)
    }
}
