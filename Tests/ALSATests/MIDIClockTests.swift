import ALSA
import MIDI
import Sequencing
import Testing

@Suite("MIDI clock and transport out")
struct MIDIClockTests {
    /// Four bars of 4/4 at `ppq`: 120 BPM, then 60 BPM from the second quarter.
    func song(ppq: Int = 960, tempoChange: Bool = true) -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(ppq))
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 500_000)), at: 0)
        if tempoChange { sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 1_000_000)), at: Int64(ppq)) }
        var track = MusicTrack()
        track.addNote(at: 0, channel: 0, key: 60, velocity: 100, duration: Int64(ppq))
        track.addNote(at: Int64(ppq) * 15, channel: 0, key: 62, velocity: 100, duration: Int64(ppq))
        sequence.tracks = [track]
        return sequence
    }

    func clocks(_ timeline: MIDITimeline) -> [UInt64] {
        timeline.messages.filter { $0.bytes == [0xF8] }.map(\.nanoseconds)
    }

    @Test("24 clocks per quarter at their exact times through a tempo change; Start first, Stop at the end")
    func clocksFollowTheTempoMap() {
        let timeline = MIDITimeline(sequence: song(), clock: true)
        #expect(timeline.sendsClock)
        #expect(timeline.messages.first?.bytes == [0xFA])
        #expect(timeline.messages.last?.bytes == [0xFC])
        #expect(timeline.messages.last?.nanoseconds == timeline.endNanoseconds)
        let times = clocks(timeline)
        #expect(times.count == 16 * 24)
        // The first quarter at 120 BPM: 1/48 s a clock; then 1/24 s.
        for k in 0...24 { #expect(times[k] == UInt64((Double(k) * 1e9 / 48).rounded()), "clock \(k)") }
        for k in 24..<times.count { #expect(times[k] == UInt64((0.5e9 + Double(k - 24) * 1e9 / 24).rounded()), "clock \(k)") }
        // The clock goes before the note that starts with it.
        let firstNote = timeline.messages.firstIndex { $0.bytes.first == 0x90 }!
        #expect(timeline.messages[firstNote - 1].bytes == [0xF8])
    }

    @Test("a resolution that 24 does not divide still gets exact clock times")
    func fractionalTicks() {
        let timeline = MIDITimeline(sequence: song(ppq: 100, tempoChange: false), clock: true)
        let times = clocks(timeline)
        #expect(times.count == 16 * 24)
        for (k, t) in times.enumerated() { #expect(t == UInt64((Double(k) * 1e9 / 48).rounded()), "clock \(k)") }
    }

    @Test("the play rate scales the clock like every other message")
    func rate() {
        let normal = clocks(MIDITimeline(sequence: song(), clock: true))
        let fast = clocks(MIDITimeline(sequence: song(), rate: 2, clock: true))
        #expect(fast.count == normal.count)
        for (a, b) in zip(normal, fast) { #expect(abs(Int64(a) - 2 * Int64(b)) <= 1) }
    }

    @Test("from a later position: Song Position Pointer naming the next sixteenth, Continue, clocks from there")
    func songPositionPointer() {
        // Tick 1000 at 960 per quarter: sixteenths are 240 ticks, so the next one is the 5th (tick 1200).
        let timeline = MIDITimeline(sequence: song(), fromTick: 1000, clock: true)
        #expect(Array(timeline.messages.prefix(2).map(\.bytes)) == [[0xF2, 5, 0], [0xFB]])
        #expect(!timeline.messages.contains { $0.bytes == [0xFA] })
        let times = clocks(timeline)
        // Tick 1000 -> 1200 is 200 ticks at 60 BPM: 200/960 s; then 1/24 s a clock.
        #expect(times.first == UInt64((200.0 / 960 * 1e9).rounded()))
        #expect(times.count == 16 * 24 - 30)
        let position = MIDIClockTimeline(tempo: song().makeTempoMap(), fromTick: 1000, endTick: 15_360, rate: 1)
        #expect(position.startSixteenth == 5)
        // A position past 14 bits' worth of sixteenths is capped, not wrapped.
        let far = MIDIClockTimeline(tempo: song().makeTempoMap(), fromTick: 240 * 20_000, endTick: 240 * 20_001, rate: 1)
        #expect(far.messages(endNanoseconds: 0).first?.bytes == [0xF2, 0x7F, 0x7F])
    }

    @Test("without --midi-clock nothing but the song is sent")
    func off() {
        let timeline = MIDITimeline(sequence: song())
        #expect(!timeline.sendsClock)
        #expect(!timeline.messages.contains { ($0.bytes.first ?? 0) >= 0xF8 || $0.bytes.first == 0xF2 })
    }
}
