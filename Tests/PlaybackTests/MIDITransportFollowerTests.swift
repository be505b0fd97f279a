import Playback
import Sequencing
import Testing

@Suite("MIDI transport in: Start, Stop, Continue and Song Position Pointer move the player")
struct MIDITransportFollowerTests {
    @Test("the four messages parse; everything else is not transport")
    func parsing() {
        #expect(MIDITransportMessage(bytes: [0xFA]) == .start)
        #expect(MIDITransportMessage(bytes: [0xFC]) == .stop)
        #expect(MIDITransportMessage(bytes: [0xFB]) == .continue)
        #expect(MIDITransportMessage(bytes: [0xF2, 0x10, 0x01]) == .songPosition(sixteenths: 0x90))
        #expect(MIDITransportMessage(bytes: [0xF2, 0x7F, 0x7F]) == .songPosition(sixteenths: 16_383))
        for other: [UInt8] in [[0xF8], [0xF2, 0x80, 0], [0xF2, 1], [0x90, 60, 100], [0xFA, 0], []] {
            #expect(MIDITransportMessage(bytes: other) == nil, "\(other)")
        }
    }

    @Test("Start plays from the top, Stop stops, SPP moves, Continue plays on from there")
    func followsTheTransport() throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        for bar in 0..<8 { track.addNote(at: Int64(bar) * 1920, channel: 0, key: 60, velocity: 100, duration: 480) }
        sequence.tracks = [track]
        let (player, recorder, _) = try recorderPlayer(sequence)
        let follower = MIDITransportFollower(player, ticksPerQuarter: 480)

        #expect(follower.receive([0xFA]))
        play(player, frames: 4800)
        #expect(player.isPlaying)
        #expect(player.tick == 96)  // 4,800 frames at 50 frames a tick
        #expect(heard(recorder).contains(on(0, 60)))

        follower.receive([0xFC])
        play(player, frames: 4800)
        #expect(!player.isPlaying)
        #expect(player.tick == 96, "stopped where it was")

        // Bar 3 (sixteenth 32 in 4/4) while stopped, then Continue.
        follower.receive([0xF2, 32, 0])
        play(player, frames: 512)
        #expect(player.tick == 3840)
        #expect(!player.isPlaying)
        let before = recorder.records.count
        follower.receive([0xFB])
        play(player, frames: 512)
        #expect(player.isPlaying)
        #expect(recorder.records.dropFirst(before).contains { $0.message == .noteOn(channel: 0, key: 60, velocity: 100) },
                "the note at bar 3 plays at once")

        // Start again goes back to the top.
        follower.receive([0xFA])
        play(player, frames: 512)
        #expect(player.tick < 480 && player.isPlaying)
        #expect(!follower.receive([0xF8]), "clock is not transport")
    }

    @Test("a resolution that 4 does not divide still lands on the sixteenth's tick")
    func oddResolution() throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(90))
        sequence.tracks = [MusicTrack()]
        let (player, _, _) = try recorderPlayer(sequence)
        let follower = MIDITransportFollower(player, ticksPerQuarter: 90)
        #expect(follower.tick(ofSixteenth: 2) == 45)
        #expect(follower.tick(ofSixteenth: 3) == 67)
    }
}
