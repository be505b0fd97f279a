import AudioGraph
import MIDI
import Playback
import Sequencing
import Testing

@Suite struct MPEChaseTests {
    /// An MPE song: at tick 100 a Lower Zone of 15 members (then the RPN selection nulled, as
    /// senders do), at tick 130 a bend range of 24 on member channel 2, notes at 1000.
    static func song() -> MusicSequence {
        var seq = MusicSequence(timeBase: .ticksPerQuarter(480))
        var t = MusicTrack()
        func control(_ controller: UInt8, _ value: UInt8, channel: UInt8 = 0, at tick: Int64) {
            t.add(.message(.controlChange(channel: channel, controller: controller, value: value)), at: tick)
        }
        control(101, 0, at: 100); control(100, 6, at: 100); control(6, 15, at: 100); control(101, 127, at: 100); control(100, 127, at: 100)
        control(101, 0, channel: 1, at: 130); control(100, 0, channel: 1, at: 130); control(6, 24, channel: 1, at: 130)
        t.addNote(at: 1000, channel: 1, key: 60, velocity: 100, duration: 100)
        seq.tracks = [t]
        return seq
    }

    /// A locate after the configuration message restores it though the RPN selection was
    /// nulled after it, before the member channel's own bend range; a locate before it
    /// removes the zone (a configuration of 0 members).
    @Test func locateRestoresTheZoneOrRemovesIt() throws {
        let x: Int64 = 0
        let (player, recorder, _) = try recorderPlayer(Self.song())
        player.locate(toTick: 500)
        player.start()
        play(player, frames: 1000)
        #expect(heard(recorder) == [
            cc(x, 121, 0),
            cc(x, 101, 0), cc(x, 100, 6), cc(x, 6, 15),
            cc(x, 101, 127), cc(x, 100, 127),
            cc(x, 101, 127), cc(x, 100, 127), cc(x, 6, 15),
            cc(x, 121, 0, channel: 1),
            cc(x, 101, 0, channel: 1), cc(x, 100, 0, channel: 1), cc(x, 6, 24, channel: 1),
        ])
        let (early, earlyRecorder, _) = try recorderPlayer(Self.song())
        early.locate(toTick: 50)
        early.start()
        play(early, frames: 100)
        #expect(heard(earlyRecorder) == [
            cc(x, 121, 0),
            cc(x, 101, 0), cc(x, 100, 6), cc(x, 6, 0),
            cc(x, 101, 127), cc(x, 100, 127),
            cc(x, 121, 0, channel: 1),
        ])
    }
}
