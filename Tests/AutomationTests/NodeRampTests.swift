import AudioGraph
import Foundation
import MIDI
import Playback
import Sequencing
import TactusTestSupport
import Testing

/// Ramps on the nodes that implement their parameter members by hand: the mixer (per-bus
/// volume and pan, a master volume) and the event recorder's probe.
@Suite struct NodeRampTests {
    static let volumeRamp = ParameterRamp(from: 0.5, to: 2, length: 3000, shape: .linear)
    static let masterRamp = ParameterRamp(from: 1, to: 0.25, length: 2001, shape: .exponential)

    static func volume(atFrame f: Int) -> Float { f < 500 ? 1 : volumeRamp.value(atElapsed: Int64(f - 500)) }
    static func master(atFrame f: Int) -> Float { f < 5000 ? 1 : masterRamp.value(atElapsed: Int64(f - 5000)) }

    @Test(arguments: rampBlockSizes)
    func aMixerFollowsVolumeAndMasterRampsOnTheirExactValues(sizes: [Int]) throws {
        // One input bus, centred: each output sample is the input times volume times master.
        let dry = try NodeRenderer(node: MixerNode(inputCount: 1), frameCount: 9000, blockSizes: [512]).render()
        let events = [
            FramedNodeEvent(frame: 500, event: .parameterRamp(id: MixerNode.Parameter.volume, scope: .input, element: 0,
                                                              ramp: Self.volumeRamp)),
            FramedNodeEvent(frame: 5000, event: .parameterRamp(id: MixerNode.Parameter.masterVolume, scope: .global, element: 0,
                                                               ramp: Self.masterRamp)),
        ]
        let mixer = MixerNode(inputCount: 1)
        let out = try NodeRenderer(node: mixer, events: events, frameCount: 9000, blockSizes: sizes).render()
        for f in 0..<9000 {
            let expected = dry.left[f] * (Self.volume(atFrame: f) * Self.master(atFrame: f))
            if out.left[f] != expected || out.right[f] != dry.right[f] * (Self.volume(atFrame: f) * Self.master(atFrame: f)) {
                Issue.record("frame \(f): \(out.left[f]) != \(expected) (sizes \(sizes.prefix(3)))")
                return
            }
        }
        #expect(Self.volume(atFrame: 3500) == 2 && Self.master(atFrame: 7001) == 0.25, "both ramps reach their ends")
        #expect(mixer.parameterValue(MixerNode.Parameter.volume, scope: .input, element: 0) == 2)
        #expect(mixer.parameterValue(MixerNode.Parameter.masterVolume) == 0.25)
    }

    @Test func aMixerPanRampMovesTheBalanceFrameByFrameAndAPlainChangeEndsIt() throws {
        let events = [
            FramedNodeEvent(frame: 100, event: .parameterRamp(id: MixerNode.Parameter.pan, scope: .input, element: 1,
                                                              ramp: ParameterRamp(from: -1, to: 1, length: 1000))),
            FramedNodeEvent(frame: 600, event: .parameter(id: MixerNode.Parameter.pan, scope: .input, element: 1, value: -1)),
        ]
        let mixer = MixerNode(inputCount: 2)
        let out = try NodeRenderer(node: mixer, events: events, frameCount: 4000, blockSizes: [1]).render()
        let again = try NodeRenderer(node: MixerNode(inputCount: 2), events: events, frameCount: 4000,
                                     blockSizes: randomBlockSizes(count: 100, maximum: 200, seed: 3)).render()
        #expect(out.left == again.left && out.right == again.right, "bit-identical at any block size")
        // Bus 1 starts hard left: the right channel carries bus 0 alone until the ramp moves.
        let single = try NodeRenderer(node: MixerNode(inputCount: 1), frameCount: 4000, blockSizes: [512]).render()
        #expect(out.right[100] == single.right[100], "hard left at the ramp's first frame")
        #expect(out.right[350] != single.right[350], "moving by frame 350")
        // The plain change at 600 ended the ramp: the pan glides back to hard left and stays.
        #expect(mixer.parameterValue(MixerNode.Parameter.pan, scope: .input, element: 1) == -1)
        #expect(abs(out.right[3999] - single.right[3999]) < 1e-6)
    }

    @Test(arguments: rampBlockSizes)
    func theEventRecordersProbeFollowsARampOnTheRightChannel(sizes: [Int]) throws {
        let ramp = ParameterRamp(from: -300, to: 900, length: 777, shape: .linear)
        let recorder = EventRecordingNode(capacity: 16)
        let out = try NodeRenderer(node: recorder, events: [
            FramedNodeEvent(frame: 1234, event: .parameterRamp(id: 0, scope: .global, element: 0, ramp: ramp)),
        ], frameCount: 3000, blockSizes: sizes).render()
        for f in 0..<3000 {
            let expected: Float = f < 1234 ? 0 : ramp.value(atElapsed: Int64(f - 1234))
            if out.right[f] != expected {
                Issue.record("frame \(f): \(out.right[f]) != \(expected) (sizes \(sizes.prefix(3)))")
                return
            }
        }
        #expect(recorder.parameterRamps.map(\.frame) == [1234])
        #expect(recorder.parameterRamps.first?.ramp == ramp)
        #expect(recorder.parameterValue(0) == 900)
    }
}

/// A ramp that runs past a transport loop's end is clipped there.
@Suite struct LoopRampClipTests {
    /// The automation lane's first ramp: 200 at tick 960 to 4000 at tick 1937.
    static func rampFrames(_ sequence: MusicSequence) -> (start: Int, ramp: ParameterRamp) {
        let tempo = sequence.makeTempoMap()
        let start = tempo.frame(atTick: 960, sampleRate: 48_000)
        let end = tempo.frame(atTick: 2 * 960 + 17, sampleRate: 48_000)
        return (Int(start), ParameterRamp(from: 200, to: 4000, length: end - start))
    }

    @Test(arguments: rampBlockSizes)
    func aRampCrossingTheLoopEndHoldsItsValueThereUntilThePassReplaysIt(sizes: [Int]) throws {
        let (graph, sequence) = try AutomationLaneTests.rig(points: AutomationLaneTests.points)
        let player = Player(sequence: sequence, graph: try graph.compile(sampleRate: 48_000, maximumFrameCount: 1024), defaultNode: 5)
        // The loop [0, 1440) ends halfway through the ramp; two passes, then the song goes on.
        player.setLoop(from: 0, to: 1440, count: .times(2))
        player.preroll()
        player.start()
        let loopEnd = Int(sequence.makeTempoMap().frame(atTick: 1440, sampleRate: 48_000))
        let (rampStart, ramp) = Self.rampFrames(sequence)
        let out = renderLeft({ player.render(frameCount: $0, into: $1) }, frames: 2 * loopEnd + 5000, sizes: sizes)
        let clipped = ramp.value(atElapsed: Int64(loopEnd - rampStart))
        #expect(out[0..<rampStart].allSatisfy { $0 == 0 }, "nothing set before the ramp")
        #expect(out[loopEnd - 1] == ramp.value(atElapsed: Int64(loopEnd - 1 - rampStart)), "the first pass follows the ramp")
        // Before clipping, the ramp went on rising after the jump: out[loopEnd + k] was the
        // ramp's value k frames past the loop end, through the second pass's opening bars.
        for f in loopEnd..<(loopEnd + rampStart) where out[f] != clipped {
            Issue.record("output frame \(f): \(out[f]) != \(clipped), the ramp's value at the loop end (sizes \(sizes.prefix(3)))")
            return
        }
        #expect(out[loopEnd + rampStart] == 200, "the second pass replays the ramp from its start")
        #expect(out[2 * loopEnd - 1] == ramp.value(atElapsed: Int64(loopEnd - 1 - rampStart)))
        // After the last pass the song plays on through the loop end: the ramp continues.
        for k in [0, 1, 999, 4999] {
            #expect(out[2 * loopEnd + k] == ramp.value(atElapsed: Int64(loopEnd - rampStart + k)), "frame \(2 * loopEnd + k)")
        }
    }

    @Test func aParameterSetBeforeTheLoopStartIsChasedInsteadOfClipped() throws {
        var points = AutomationLaneTests.points
        points.insert(AutomationPoint(tick: 100, value: -7, curveToNext: nil), at: 0)
        let (graph, sequence) = try AutomationLaneTests.rig(points: points)
        let player = Player(sequence: sequence, graph: try graph.compile(sampleRate: 48_000, maximumFrameCount: 512), defaultNode: 5)
        player.setLoop(from: 480, to: 1440, count: .times(2))
        player.preroll()
        player.start()
        let tempo = sequence.makeTempoMap()
        let loopEnd = Int(tempo.frame(atTick: 1440, sampleRate: 48_000))
        let out = renderLeft({ player.render(frameCount: $0, into: $1) }, frames: loopEnd + 2000, sizes: [333])
        #expect(out[loopEnd - 1] > 200, "ramping at the end of the first pass")
        #expect(out[loopEnd] == -7 && out[loopEnd + 1999] == -7, "the value the song has at the loop start")
    }
}
