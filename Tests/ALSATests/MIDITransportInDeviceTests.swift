import ALSA
import AudioGraph
import Foundation
import Playback
import Sequencing
import Testing

/// MIDI transport in through the real ALSA sequencer, inside the QEMU VM of
/// `Tests/VM/run-vm-tests.sh`: raw bytes written to /dev/snd/midiC1D1 come out of VirMIDI 1-1
/// (client 21), which Tactus's input port is connected from, as `tactus play --transport-in 21:0` does.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["TACTUS_REAL_ALSA"] == "1",
                             "runs inside the QEMU VM with the real ALSA drivers (Tests/VM/run-vm-tests.sh sets TACTUS_REAL_ALSA=1)"))
struct MIDITransportInDeviceTests {
    @Test("Start, Stop, Song Position Pointer and Continue sent as raw bytes start, stop and move the player")
    func rawTransportMovesThePlayer() throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        for beat in 0..<64 { track.addNote(at: Int64(beat) * 480, channel: 0, key: 60, velocity: 90, duration: 240) }
        sequence.tracks = [track]
        let graph = AudioGraph()
        graph.add(EventRecordingNode(), id: 1)
        graph.add(OutputNode(), id: 2)
        try graph.connect(1, to: 2)
        let player = Player(sequence: sequence, graph: try graph.compile(sampleRate: 48_000, maximumFrameCount: 512), defaultNode: 1)
        let follower = MIDITransportFollower(player, ticksPerQuarter: 480)

        let client = try SequencerClient(name: "transport-in")
        try client.connectInput(from: "21:0")
        let input = try client.startInput { _, bytes in follower.receive(bytes) }
        defer { input.stop() }
        let fd = open("/dev/snd/midiC1D1", O_WRONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 512), right = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { left.deallocate(); right.deallocate() }
        /// Renders blocks (as the audio thread would) until `condition` holds or 3 s pass.
        func render(until condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(3)
            while Date() < deadline {
                player.render(frameCount: 512, into: StereoBuffer(left: left, right: right))
                if condition() { return true }
                usleep(2_000)
            }
            return false
        }
        func send(_ bytes: [UInt8]) { #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count) }

        #expect(!player.isPlaying)
        send([0xFA])
        #expect(render { player.isPlaying && player.tick > 0 }, "Start plays")
        send([0xFC])
        #expect(render { !player.isPlaying }, "Stop stops")
        let stoppedAt = player.tick
        #expect(render { true } && player.tick == stoppedAt)
        // Bar 5 in 4/4: sixteenth 64, tick 7680.
        send([0xF2, 64, 0])
        #expect(render { player.tick == 7680 }, "Song Position Pointer moves (tick \(player.tick))")
        #expect(!player.isPlaying)
        send([0xFB])
        #expect(render { player.isPlaying && player.tick > 7680 }, "Continue plays on from there")
    }
}
