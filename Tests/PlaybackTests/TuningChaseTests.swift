import AudioGraph
import MIDI
import Playback
import Sequencing
import Testing

@Suite struct TuningChaseTests {
    /// A locate restores the tuning bank and program a channel selected by RPN 4 and 3 even
    /// when another RPN (the bend range) came later, then the song's own last RPN selection and
    /// data entry; a channel that never selected a tuning is chased as before.
    @Test func locateRestoresTheTuningSelectionUnderLaterRPNs() throws {
        var seq = MusicSequence(timeBase: .ticksPerQuarter(480))
        var t = MusicTrack()
        func control(_ controller: UInt8, _ value: UInt8, channel: UInt8 = 0, at tick: Int64) {
            t.add(.message(.controlChange(channel: channel, controller: controller, value: value)), at: tick)
        }
        control(101, 0, at: 0); control(100, 4, at: 0); control(6, 1, at: 0)   // tuning bank 1
        control(101, 0, at: 10); control(100, 3, at: 10); control(6, 5, at: 10) // tuning program 5
        control(101, 0, at: 20); control(100, 0, at: 20); control(6, 7, at: 20) // bend range 7
        control(101, 0, channel: 1, at: 30); control(100, 0, channel: 1, at: 30); control(6, 12, channel: 1, at: 30)
        t.addNote(at: 1000, channel: 0, key: 60, velocity: 100, duration: 100)
        t.addNote(at: 1000, channel: 1, key: 60, velocity: 100, duration: 100)
        seq.tracks = [t]
        let (player, recorder, _) = try recorderPlayer(seq)
        player.locate(toTick: 500)
        player.start()
        play(player, frames: 1000)
        let x: Int64 = 0
        #expect(heard(recorder) == [
            cc(x, 121, 0),
            cc(x, 101, 0), cc(x, 100, 4), cc(x, 6, 1),
            cc(x, 101, 0), cc(x, 100, 3), cc(x, 6, 5),
            cc(x, 101, 127), cc(x, 100, 127),
            cc(x, 101, 0), cc(x, 100, 0), cc(x, 6, 7),
            cc(x, 121, 0, channel: 1),
            cc(x, 101, 0, channel: 1), cc(x, 100, 0, channel: 1), cc(x, 6, 12, channel: 1),
        ])
    }
}
