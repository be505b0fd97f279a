import MIDI
import Testing
@testable import Sequencing

@Suite("Tracks, iterator and bar:beat:tick")
struct TrackTests {
    @Test("Events stay sorted by tick, then insertion order")
    func ordering() {
        var track = MusicTrack()
        track.add(.message(.controlChange(channel: 0, controller: 7, value: 100)), at: 480)
        track.addNote(at: 0, channel: 0, key: 60, velocity: 90, duration: 240)
        track.add(.message(.programChange(channel: 0, program: 5)), at: 480)
        track.add(.meta(.text(MetaType.marker, "A")), at: 240)
        #expect(track.events.map(\.tick) == [0, 240, 480, 480])
        if case .message(let m) = track.events[2].event { #expect(m.status == 0xB0) } else { Issue.record("expected CC first") }
        if case .message(let m) = track.events[3].event { #expect(m.status == 0xC0) } else { Issue.record("expected program second") }
        #expect(track.length == 480)
        track.explicitLength = 1000
        #expect(track.length == 1000)
    }

    @Test("Iterator seeks, steps both ways, edits and deletes")
    func iterator() {
        var track = MusicTrack()
        for i in 0..<10 {
            track.addNote(at: Int64(i) * 100, channel: 0, key: UInt8(60 + i), velocity: 80, duration: 50)
        }
        var it = EventIterator(track: track)
        it.seek(toTick: 450)
        #expect(it.current?.tick == 500)
        let moved = it.movePrevious()
        #expect(moved)
        #expect(it.current?.tick == 400)
        it.moveNext()
        it.moveNext()
        #expect(it.current?.tick == 600)
        // Edit: make the note at 600 louder.
        if case .note(var n) = it.current!.event {
            n.velocity = 127
            it.setCurrentEvent(.note(n))
        }
        // Move it to 50; the iterator follows it.
        it.setCurrentTick(50)
        #expect(it.current?.tick == 50)
        #expect(it.index == 1)
        // Delete the event at 0.
        it.movePrevious()
        it.deleteCurrent()
        #expect(it.current?.tick == 50)
        let edited = it.track
        #expect(edited.count == 9)
        #expect(edited.events.map(\.tick) == [50, 100, 200, 300, 400, 500, 700, 800, 900])
        if case .note(let n) = edited.events[0].event { #expect(n.velocity == 127 && n.key == 66) } else { Issue.record("moved note lost") }
        // Past the end.
        var end = EventIterator(track: edited)
        end.seek(toTick: 10_000)
        #expect(end.current == nil)
        #expect(!end.hasNext)
    }

    @Test("bar:beat:tick across time signature changes")
    func barBeatTick() {
        // 4/4 for 2 bars, then 3/4 for 2 bars, then 6/8.
        let ppq = 480
        let meter = MeterMap(ticksPerQuarter: ppq, changes: [
            (tick: 0, signature: TimeSignature(4, 4)),
            (tick: 3840, signature: TimeSignature(3, 4)),
            (tick: 3840 + 2880, signature: TimeSignature(6, 8)),
        ])
        #expect(meter.barBeatTick(atTick: 0) == BarBeatTick(bar: 1, beat: 1, tick: 0))
        #expect(meter.barBeatTick(atTick: 479) == BarBeatTick(bar: 1, beat: 1, tick: 479))
        #expect(meter.barBeatTick(atTick: 1920 + 480 * 3 + 10) == BarBeatTick(bar: 2, beat: 4, tick: 10))
        #expect(meter.barBeatTick(atTick: 3840) == BarBeatTick(bar: 3, beat: 1, tick: 0))
        #expect(meter.barBeatTick(atTick: 3840 + 1440 + 960) == BarBeatTick(bar: 4, beat: 3, tick: 0))
        // 6/8: beats are eighths of 240 ticks.
        #expect(meter.barBeatTick(atTick: 6720 + 240 * 5) == BarBeatTick(bar: 5, beat: 6, tick: 0))
        #expect(meter.barBeatTick(atTick: 6720 + 1440) == BarBeatTick(bar: 6, beat: 1, tick: 0))
        for tick in stride(from: Int64(0), to: 20_000, by: 37) {
            #expect(meter.tick(at: meter.barBeatTick(atTick: tick)) == tick)
        }
        #expect(meter.signature(atTick: 5000) == TimeSignature(3, 4))
    }

    @Test("A time signature in the middle of a bar starts a new bar")
    func midBarSignature() {
        let meter = MeterMap(ticksPerQuarter: 100, changes: [(tick: 250, signature: TimeSignature(2, 4))])
        #expect(meter.barBeatTick(atTick: 250) == BarBeatTick(bar: 2, beat: 1, tick: 0))
        #expect(meter.barBeatTick(atTick: 450) == BarBeatTick(bar: 3, beat: 1, tick: 0))
    }

    @Test("Splitting channels to tracks keeps every event")
    func channelsToTracks() {
        var track = MusicTrack()
        track.name = "mixed"
        track.addNote(at: 0, channel: 9, key: 36, velocity: 100, duration: 10)
        track.addNote(at: 0, channel: 0, key: 60, velocity: 100, duration: 10)
        track.add(.message(.programChange(channel: 0, program: 3)), at: 0)
        var sequence = MusicSequence()
        sequence.tracks = [track]
        let split = sequence.splittingChannelsToTracks()
        #expect(split.tracks.count == 3)
        #expect(split.tracks[0].name == "mixed")
        #expect(split.tracks[1].events.count == 2)
        #expect(split.tracks[2].events.count == 1)
        #expect(split.tracks.reduce(0) { $0 + $1.count } == track.count)
    }

    @Test("Rescaling keeps note ends on the rescaled grid")
    func rescale() {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(96))
        var track = MusicTrack()
        track.addNote(at: 96, channel: 0, key: 60, velocity: 100, duration: 48)
        track.explicitLength = 192
        sequence.tracks = [track]
        let scaled = sequence.rescaled(toTicksPerQuarter: 960, from: 96)
        #expect(scaled.tracks[0].events[0].tick == 960)
        if case .note(let n) = scaled.tracks[0].events[0].event { #expect(n.duration == 480) }
        #expect(scaled.tracks[0].explicitLength == 1920)
    }

    @Test("A stored event takes 24 bytes, and a packed note keeps every field apart")
    func compactNote() {
        // Loaded files hold millions of events: the stride is their memory.
        #expect(MemoryLayout<TimedEvent>.stride == 24)
        var n = NoteEvent(channel: 15, key: 127, velocity: 127, duration: NoteEvent.maximumDuration,
                          releaseVelocity: 127, releasedByZeroVelocityNoteOn: true, releaseOrder: .max)
        #expect(n.channel == 15 && n.key == 127 && n.velocity == 127 && n.releaseVelocity == 127)
        #expect(n.duration == 268_435_455 && n.releasedByZeroVelocityNoteOn && n.releaseOrder == .max)
        n.channel = 3
        n.releasedByZeroVelocityNoteOn = false
        #expect(n.duration == 268_435_455 && n.releaseVelocity == 127 && n.channel == 3)
        n.duration = NoteEvent.maximumDuration + 1000
        #expect(n.duration == NoteEvent.maximumDuration && n.channel == 3)
        n.duration = -5
        #expect(n.duration == 0)
        #expect(n.offMessage == .noteOff(channel: 3, key: 127, velocity: 127))
    }
}
