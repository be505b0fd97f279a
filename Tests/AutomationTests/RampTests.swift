import AudioGraph
import Foundation
import MIDI
import Playback
import Sequencing
import TactusTestSupport
import Testing

let rampBlockSizes: [[Int]] = [[1], [64], [65], [512], randomBlockSizes(count: 400, maximum: 700, seed: 12)]

@Suite struct RampTests {
    // Two ramps on one parameter, delivered straight to a node: linear 100 -> 2000 over 3000
    // frames from frame 1000, then exponential 2000 -> 50 over 5001 frames from frame 6000.
    static let linear = ParameterRamp(from: 100, to: 2000, length: 3000, shape: .linear)
    static let exponential = ParameterRamp(from: 2000, to: 50, length: 5001, shape: .exponential)

    static func expected(frame f: Int64) -> Float {
        if f < 1000 { return 0 }
        if f < 6000 { return linear.value(atElapsed: f - 1000) }
        return exponential.value(atElapsed: f - 6000)
    }

    @Test(arguments: rampBlockSizes)
    func aParameterFollowsARampsExactValuesAtTheExactFrames(sizes: [Int]) throws {
        let events = [
            FramedNodeEvent(frame: 1000, event: .parameterRamp(id: 7, scope: .global, element: 0, ramp: Self.linear)),
            FramedNodeEvent(frame: 6000, event: .parameterRamp(id: 7, scope: .global, element: 0, ramp: Self.exponential)),
        ]
        let out = try NodeRenderer(node: ParameterEchoNode(), events: events, frameCount: 12_000, blockSizes: sizes).render()
        for f in 0..<12_000 where out.left[f] != Self.expected(frame: Int64(f)) {
            Issue.record("frame \(f): \(out.left[f]) != \(Self.expected(frame: Int64(f))) (sizes \(sizes.prefix(3)))")
            return
        }
        // The ends are exact, and the curves are what their names say.
        #expect(out.left[1000] == 100 && out.left[4000] == 2000 && out.left[11_001] == 50)
        #expect(abs(out.left[2500] - 1050) < 0.01)
        let mid = Double(out.left[6000 + 2500])
        #expect(abs(mid - (2000 * pow(50.0 / 2000, 2500.0 / 5001))) < 0.01)
    }

    @Test func aRampStartedPartWayResumesOnTheUninterruptedValues() throws {
        var resumed = Self.linear
        resumed.elapsed = 1234
        let out = try NodeRenderer(node: ParameterEchoNode(),
                                   events: [FramedNodeEvent(frame: 10, event: .parameterRamp(id: 7, scope: .global, element: 0, ramp: resumed))],
                                   frameCount: 4000, blockSizes: [97]).render()
        for k in 0..<3000 {
            #expect(out.left[10 + k] == Self.linear.value(atElapsed: Int64(1234 + k)), "frame \(10 + k)")
            if out.left[10 + k] != Self.linear.value(atElapsed: Int64(1234 + k)) { break }
        }
    }

    @Test func aDeclaredSmoothingTimeGlidesAPlainChangeTheSameWayAtEveryBlockSize() throws {
        let events = [FramedNodeEvent(frame: 100, event: .parameter(id: 7, scope: .global, element: 0, value: 1000))]
        let reference = try NodeRenderer(node: ParameterEchoNode(smoothingSeconds: 0.01), events: events, frameCount: 5000,
                                         blockSizes: [1]).render().left
        #expect(reference[100] < 100, "a smoothed change does not jump")
        #expect(reference[100 + 441] > 600 && reference[100 + 441] < 650, "one time constant covers about 63%")
        #expect(reference[4999] > 999.9)
        for sizes in rampBlockSizes.dropFirst() {
            let out = try NodeRenderer(node: ParameterEchoNode(smoothingSeconds: 0.01), events: events, frameCount: 5000,
                                       blockSizes: sizes).render().left
            #expect(out == reference, "sizes \(sizes.prefix(3))")
        }
    }

    @Test func valuesAreClampedToTheDeclaredRangeAndUnknownIDsIgnored() {
        let node = ParameterEchoNode()
        node.setParameter(7, value: 50_000)
        #expect(node.parameterValue(7) == 10_000)
        node.setParameter(8, value: 1)
        #expect(node.parameterValue(8) == nil)
        node.rampParameter(7, ramp: ParameterRamp(from: 0, to: -20_000, length: 10), scope: .global, element: 0)
        #expect(node.parameterValue(7) == -10_000, "a ramp reports its end value")
        #expect(node.parameterInfo(named: "level")?.id == 7)
    }
}

@Suite struct AutomationLaneTests {
    /// A sequence at 120 BPM whose track automates the echo node (id 5) of a graph.
    static func rig(points: [AutomationPoint], sampleRate: Int = 48_000) throws -> (AudioGraph, MusicSequence) {
        let graph = AudioGraph()
        graph.add(ParameterEchoNode(), id: 5)
        graph.add(OutputNode(), id: 1)
        try graph.connect(5, to: 1)
        var track = MusicTrack()
        track.addAutomation(try graph.parameterAddress(node: 5, named: "Level"), points: points)
        track.addNote(at: 20 * 960, channel: 0, key: 60, velocity: 100, duration: 10)
        return (graph, MusicSequence(tracks: [track]))
    }

    static let points = [
        AutomationPoint(tick: 960, value: 200, curveToNext: .linear),
        AutomationPoint(tick: 2 * 960 + 17, value: 4000, curveToNext: .exponential),
        AutomationPoint(tick: 5 * 960, value: 30, curveToNext: nil),
        AutomationPoint(tick: 6 * 960, value: -5),
    ]

    @Test(arguments: rampBlockSizes)
    func aLaneHitsEveryPointsValueOnItsTicksFrameAtEveryBlockSize(sizes: [Int]) throws {
        let (graph, sequence) = try Self.rig(points: Self.points)
        let compiled = try graph.compile(sampleRate: 48_000, maximumFrameCount: 1024)
        let schedule = Schedule(sequence: sequence, sampleRate: 48_000, defaultNode: 5)
        let engine = Engine(graph: compiled, schedule: schedule)
        let frames = 4 * 48_000
        let out = renderLeft({ engine.render(frameCount: $0, into: $1) }, frames: frames, sizes: sizes)
        let tempo = sequence.makeTempoMap()
        func frame(_ tick: Int64) -> Int { Int(tempo.frame(atTick: tick, sampleRate: 48_000)) }
        #expect(out[frame(960) - 1] == 0)
        #expect(out[frame(960)] == 200)
        #expect(out[frame(2 * 960 + 17)] == 4000)
        #expect(out[frame(5 * 960)] == 30)
        #expect(out[frame(6 * 960) - 1] == 30, "a point without a curve holds")
        #expect(out[frame(6 * 960)] == -5)
        let linear = ParameterRamp(from: 200, to: 4000, length: Int64(frame(2 * 960 + 17) - frame(960)))
        for k in stride(from: 0, to: Int(linear.length), by: 37) {
            #expect(out[frame(960) + k] == linear.value(atElapsed: Int64(k)))
        }
        let reference = renderReference()
        #expect(out == reference, "bit-identical to block size 1")
    }

    private func renderReference() -> [Float] {
        let (graph, sequence) = try! Self.rig(points: Self.points)
        let engine = Engine(graph: try! graph.compile(sampleRate: 48_000, maximumFrameCount: 1),
                            schedule: Schedule(sequence: sequence, sampleRate: 48_000, defaultNode: 5))
        return renderLeft({ engine.render(frameCount: $0, into: $1) }, frames: 4 * 48_000, sizes: [1])
    }

    static let locateTicks: [Int64] = [961, 1660, 1937, 2880, 4803, 6720]

    @Test(arguments: locateTicks)
    func aLocateChasesTheValueTheSongHasThere(tick: Int64) throws {
        let (graph, sequence) = try Self.rig(points: Self.points)
        let player = Player(sequence: sequence, graph: try graph.compile(sampleRate: 48_000, maximumFrameCount: 512), defaultNode: 5)
        player.preroll()
        player.locate(toTick: tick)
        player.start()
        let out = renderLeft({ player.render(frameCount: $0, into: $1) }, frames: 3000, sizes: [64])
        // The uninterrupted song from its start, at the same song frames.
        let engine = Engine(graph: try Self.rig(points: Self.points).0.compile(sampleRate: 48_000, maximumFrameCount: 512),
                            schedule: Schedule(sequence: sequence, sampleRate: 48_000, defaultNode: 5))
        let target = Int(sequence.makeTempoMap().frame(atTick: tick, sampleRate: 48_000))
        let whole = renderLeft({ engine.render(frameCount: $0, into: $1) }, frames: target + 3000, sizes: [512])
        #expect(Array(out) == Array(whole[target..<(target + 3000)]))
    }

    @Test func atPlayRateTwoARampTakesHalfTheOutputFrames() throws {
        let (graph, sequence) = try Self.rig(points: Self.points)
        let player = Player(sequence: sequence, graph: try graph.compile(sampleRate: 48_000, maximumFrameCount: 512), defaultNode: 5)
        player.setPlayRate(2, atOutputFrame: nil)
        player.preroll()
        player.start()
        let out = renderLeft({ player.render(frameCount: $0, into: $1) }, frames: 48_000, sizes: [100])
        let tempo = sequence.makeTempoMap()
        let start = tempo.frame(atTick: 960, sampleRate: 48_000), end = tempo.frame(atTick: 2 * 960 + 17, sampleRate: 48_000)
        let outputStart = Int(start / 2), outputLength = Int((end - start + 1) / 2)
        #expect(out[outputStart - 1] == 0 && out[outputStart] == 200)
        #expect(out[outputStart + outputLength - 1] < 4000)
        #expect(out[outputStart + outputLength] == 4000)
    }

    @Test func anUnknownParameterNameIsATypedError() throws {
        let graph = AudioGraph()
        graph.add(ParameterEchoNode(), id: 5)
        #expect(throws: AudioGraphError.unknownParameter(node: 5, name: "Cutoff")) { try graph.parameterAddress(node: 5, named: "Cutoff") }
        #expect(throws: AudioGraphError.unknownNode(6)) { try graph.parameterAddress(node: 6, named: "Level") }
        #expect(try graph.parameterAddress(node: 5, named: "LEVEL") == ParameterAddress(node: 5, parameter: 7))
    }

    @Test func aLaneReadsBackAsItsEvents() throws {
        let (_, sequence) = try Self.rig(points: Self.points)
        let lane = sequence.tracks[0].automation(of: ParameterAddress(node: 5, parameter: 7))
        let ticks: [Int64] = [960, 1937, 4800, 5760]
        #expect(lane.map(\.tick) == ticks)
        #expect(lane[0].event.ramp == ParameterEvent.Ramp(to: 4000, duration: 960 + 17, shape: .linear))
        #expect(lane[1].event.ramp?.shape == .exponential)
        #expect(lane[2].event.ramp == nil && lane[3].event.ramp == nil)
    }
}
