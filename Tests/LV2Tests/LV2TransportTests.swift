import AudioGraph
import Foundation
import LV2
import Playback
import Sequencing
import TactusTestSupport
import Testing

/// lv2-examples' metronome: it has no MIDI input and clicks only from the `time:Position` its
/// host sends (tempo, bar beat, speed), a 880 Hz click that starts on each beat.
private let metronome = "http://lv2plug.in/plugins/eg-metro"
private let hasMetronome: Bool = (try? LV2Catalogue())?.plugins.contains { $0.uri == metronome } ?? false

/// The metronome's `cleanup` frees its instance but not the 200-byte wave table it allocated
/// (a leak in the plugin, not in Tactus). lilv unloads a plugin's library with its last
/// instance, and LeakSanitizer then cannot say whose leak it was; with the library kept
/// mapped it names `/usr/lib/lv2/...`, which Tests/lsan-suppressions.txt suppresses as plugin
/// memory. Debian's path; elsewhere nothing is kept and only a LeakSanitizer run would tell.
private let metronomeLibraryKeptLoaded: Bool = dlopen("/usr/lib/lv2/eg-metro.lv2/metro.so", RTLD_NOW | RTLD_NODELETE) != nil

@Suite(.enabled(if: hasMetronome, "needs lilv and lv2-examples (Debian packages liblilv-0-0, lv2-examples)"))
struct LV2TransportTests {
    /// Two bars at 120 BPM, then 90 BPM from bar 3 (beats of 22,050 then 29,400 frames, which
    /// the metronome counts exactly), six bars in all.
    static func song() -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
        sequence.tempoTrack.add(.meta(.tempo(bpm: 90)), at: 2 * 1_920)
        var track = MusicTrack()
        track.addNote(at: 6 * 1_920 - 1, channel: 0, key: 60, velocity: 1, duration: 1)
        sequence.tracks = [track]
        return sequence
    }

    /// The song frames of its 24 beats.
    static let beatFrames: [Int] = (0..<8).map { $0 * 22_050 } + (0..<16).map { 176_400 + $0 * 29_400 }

    static func player(maximumFrameCount: Int) throws -> Player {
        _ = metronomeLibraryKeptLoaded
        let node = try LV2PluginNode(uri: metronome, catalogue: LV2Catalogue())
        #expect(node.followsTransport)
        let graph = AudioGraph()
        graph.add(node, id: 1)
        graph.add(OutputNode(), id: 2)
        try graph.connect(1, to: 2)
        return Player(sequence: song(), graph: try graph.compile(sampleRate: 44_100, maximumFrameCount: maximumFrameCount), defaultNode: 1)
    }

    /// The frames where a click starts: the first sounding frame after at least 1,000 silent
    /// ones (a click lasts 80 ms, a beat at least 660 ms).
    static func onsets(_ samples: [Float]) -> [Int] {
        var result: [Int] = [], silent = 1_000
        for (i, sample) in samples.enumerated() {
            if sample == 0 {
                silent += 1
            } else {
                if silent >= 1_000 { result.append(i) }
                silent = 0
            }
        }
        return result
    }

    /// Each click starts on its beat: the metronome's envelope is 0 on the beat's frame and
    /// sounds from the next (two frames on when its sine table is at its zero there).
    static func expectClicks(_ onsets: [Int], at beats: [Int], _ what: String) {
        #expect(onsets.count == beats.count, "\(what): \(onsets.count) clicks for \(beats.count) beats: \(onsets.prefix(30))")
        let late = zip(onsets, beats).filter { !(1...2).contains($0.0 - $0.1) }
        #expect(late.isEmpty, "\(what): clicks off their beats (click, beat): \(late.prefix(5))")
    }

    @Test(arguments: [1, 64, 65, 512])
    func theMetronomeClicksOnEveryBeatThroughATempoChange(blockSize: Int) throws {
        let player = try Self.player(maximumFrameCount: 4096)
        var left: [Float] = []
        _ = try player.renderToEnd(blockSize: blockSize, tail: .seconds(0)) { l, _, n in
            left.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
        }
        Self.expectClicks(Self.onsets(left), at: Self.beatFrames.filter { $0 < left.count }, "block size \(blockSize)")
    }

    /// Telling the plugin the transport (a tempo change, a stop, a locate, a start) allocates
    /// nothing on the render thread.
    @Test func followingTheTransportAllocatesNothing() throws {
        let player = try Self.player(maximumFrameCount: 256)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256), right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { left.deallocate(); right.deallocate() }
        let buffer = StereoBuffer(left: left, right: right)
        player.start()
        player.render(frameCount: 256, into: buffer)
        // Across the tempo change at 176,400, then a stop, a locate and a start.
        player.locate(toSongFrame: 170_000)
        player.render(frameCount: 256, into: buffer)
        let counted = AllocationCounter.count {
            for _ in 0..<100 { player.engine.render(frameCount: 256, into: buffer) }
        }
        player.stop()
        player.locate(toSongFrame: 100_000)
        player.start()
        let afterCommands = AllocationCounter.count {
            for _ in 0..<4 { player.engine.render(frameCount: 256, into: buffer) }
        }
        if AllocationCounter.isWorking {
            #expect(counted.isZero, "\(counted)")
            #expect(afterCommands.isZero, "\(afterCommands)")
        }
    }

    /// Stopped, the metronome is silent (speed 0); a locate into the middle of a beat and a
    /// start bring the next click on the next beat of the song, in output frames.
    @Test func aStopAndALocateMoveTheClicksWithTheSong() throws {
        let player = try Self.player(maximumFrameCount: 512)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 512), right = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { left.deallocate(); right.deallocate() }
        var output: [Float] = []
        func render(_ frames: Int) {
            var done = 0
            while done < frames {
                let n = min(512, frames - done)
                player.render(frameCount: n, into: StereoBuffer(left: left, right: right))
                output.append(contentsOf: UnsafeBufferPointer(start: left, count: n))
                done += n
            }
        }
        player.start()
        render(30_000) // beats at 0 and 22,050
        player.stop()
        render(30_000)
        #expect(output[(30_000 + 4_000)...].allSatisfy { $0 == 0 }, "silent while stopped")
        // Into bar 3's second beat by half a beat: 90 BPM, the next beat at 176,400 + 2 x 29,400.
        let target = 176_400 + 29_400 + 14_700
        player.locate(toSongFrame: Int64(target))
        player.start()
        let resumed = output.count
        render(50_000)
        // Played live, the node's output is one 64-frame grid late (offline renders drop it).
        let grid = LV2PluginNode.gridFrames
        let expected = [0, 22_050, 176_400 + 2 * 29_400, 176_400 + 3 * 29_400].enumerated().map { index, beat in
            index < 2 ? beat + grid : resumed + beat - target + grid
        }
        Self.expectClicks(Self.onsets(output), at: expected, "stop, locate, start")
    }
}
