import AudioGraph
import Foundation
import MIDI
import Playback
import Sequencing
import Testing

/// A custom node that keeps every system exclusive message it is handed, with its frame.
private final class SysexProbe: AudioNode {
    let name = "Sysex probe"
    let inputBusCount = 0
    let parameterInfos: [AudioParameterInfo] = []
    var received: [(frame: Int64, bytes: [UInt8])] = []
    func prepare(sampleRate: Double, maximumFrameCount: Int) {}
    func reset() {}
    func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.clear(frameCount: frameCount)
    }
    func receiveSystemExclusive(_ bytes: UnsafeBufferPointer<UInt8>, atFrame frame: Int64) {
        received.append((frame, Array(bytes)))
    }
}

@Suite struct SystemExclusiveDeliveryTests {
    /// A song's whole sysex messages reach the track's node at their exact frame, whatever the
    /// block size; divided sysex packets do not (they are for MIDI ports).
    @Test(arguments: [[1], [64], [512], randomSizes(count: 500, maximum: 700, seed: 7)])
    func customNodeReceivesSysexAtItsFrame(blockSizes: [Int]) throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 97)), at: 0)
        var track = MusicTrack()
        track.add(.sysex(SysexEvent(payload: [0x7E, 0x7F, 0x09, 0x01, 0xF7])), at: 0)
        track.add(.sysex(SysexEvent(payload: [0x7F, 0x7F, 0x04, 0x01, 0x00, 0x40, 0xF7])), at: 777)
        track.add(.sysex(SysexEvent(payload: [0x43, 0x10, 0x4C])), at: 900)
        track.add(.sysex(SysexEvent(status: 0xF7, payload: [0x00, 0x00, 0x7E, 0x00, 0xF7])), at: 901)
        track.addNote(at: 1_000, channel: 0, key: 60, velocity: 90, duration: 100)
        sequence.tracks.append(track)
        let graph = AudioGraph()
        let output = graph.add(OutputNode())
        let probe = SysexProbe()
        let node = graph.add(probe)
        try graph.connect(node, to: output)
        let schedule = Schedule(sequence: sequence, sampleRate: 48_000, defaultNode: node)
        let engine = Engine(graph: try graph.compile(sampleRate: 48_000, maximumFrameCount: 700), schedule: schedule)
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 700), r = UnsafeMutablePointer<Float>.allocate(capacity: 700)
        defer { l.deallocate(); r.deallocate() }
        var rendered = 0, k = 0
        while rendered < 60_000 {
            let n = blockSizes[k % blockSizes.count]
            engine.render(frameCount: n, into: StereoBuffer(left: l, right: r))
            rendered += n
            k += 1
        }
        let tempo = sequence.makeTempoMap()
        #expect(probe.received.map(\.frame) == [0, tempo.frame(atTick: 777, sampleRate: 48_000)])
        #expect(probe.received.map(\.bytes) == [[0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7], [0xF0, 0x7F, 0x7F, 0x04, 0x01, 0x00, 0x40, 0xF7]])
    }
}

@Suite struct SystemExclusiveChaseTests {
    /// A reset before a transport loop's start puts the instruments in the state the loop
    /// starts from, but a loop jump must not cut what rings over it as the reset itself would:
    /// the song with a GM System On at its start loops exactly as the song without one.
    @Test func loopJumpAfterAResetKeepsTheTails() throws {
        func render(reset: Bool) throws -> [Float] {
            var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
            sequence.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
            var track = MusicTrack()
            if reset { track.add(.sysex(SysexEvent(payload: [0x7E, 0x7F, 0x09, 0x01, 0xF7])), at: 0) }
            track.add(.message(.programChange(channel: 0, program: 48)), at: 0)
            track.addNote(at: 480, channel: 0, key: 60, velocity: 100, duration: 440)
            sequence.tracks.append(track)
            let player = try Player.makeDefault(sequence: sequence, sampleRate: 44_100, maximumFrameCount: 512)
            player.setLoop(from: 480, to: 960, count: .times(2))
            var samples: [Float] = []
            _ = try player.renderToEnd(blockSize: 512, tailSeconds: 0.5) { l, _, n in
                samples.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
            }
            return samples
        }
        let plain = try render(reset: false), withReset = try render(reset: true)
        #expect(plain.count > 44_100)
        #expect(plain.contains { abs($0) > 0.01 })
        let firstDifference = zip(withReset, plain).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(withReset.count == plain.count)
        #expect(firstDifference == nil, "the renders part at frame \(firstDifference ?? -1)")
    }
}
