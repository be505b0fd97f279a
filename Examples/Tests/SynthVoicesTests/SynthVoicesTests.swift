import SynthVoices
import Tactus
import TactusTestSupport
import Testing

/// The examples' custom nodes keep the real-time contract: rendering with notes, pitch bend,
/// sustain, ramps and plain changes of every parameter allocates and frees nothing, and the
/// output does not depend on the block size.
@Suite struct SynthVoicesTests {
    static func workout(_ node: any AudioNode) -> [FramedNodeEvent] {
        var events: [FramedNodeEvent] = []
        for i in 0..<24 {
            let key = UInt8(40 + (i * 5) % 36)
            events.append(.midi(.noteOn(channel: 0, key: key, velocity: 100), at: Int64(i) * 1500))
            events.append(.midi(.noteOff(channel: 0, key: key), at: Int64(i) * 1500 + 4000))
        }
        events.append(.midi(.controlChange(channel: 0, controller: 64, value: 127), at: 9000))
        events.append(.midi(.controlChange(channel: 0, controller: 64, value: 0), at: 20000))
        events.append(.midi(.pitchBend(channel: 0, value: 3000), at: 12000))
        for (k, info) in node.parameterInfos.enumerated() {
            let ramp = ParameterRamp(from: info.range.lowerBound, to: info.range.upperBound, length: 8000, shape: .exponential)
            events.append(FramedNodeEvent(frame: 5000 + Int64(k) * 300, event: .parameterRamp(id: info.id, scope: .global, element: 0, ramp: ramp)))
            events.append(FramedNodeEvent(frame: 25000, event: .parameter(id: info.id, scope: .global, element: 0, value: info.defaultValue)))
        }
        return events
    }

    static let makers: [(String, @Sendable () -> any AudioNode)] = [
        ("subtractive", { SubtractiveSynth.make() }), ("fm", { FMSynth.make() }),
        ("comb", { SweepingCombFilter() }), ("tone", { ToneGenerator() }),
    ]

    @Test func theExampleNodesRenderWithoutAllocating() throws {
        #expect(AllocationCounter.isWorking)
        for (name, make) in Self.makers {
            let node = make()
            let count = try NodeRenderer(node: node, events: Self.workout(node), frameCount: 40_000, blockSizes: [256, 1, 77]).renderAllocations()
            #expect(count.isZero, "\(name): \(count)")
        }
    }

    @Test func theExampleNodesSoundTheSameAtEveryBlockSize() throws {
        for (name, make) in Self.makers {
            let reference = try NodeRenderer(node: make(), events: Self.workout(make()), frameCount: 40_000, blockSizes: [512]).render()
            let node = make()
            let out = try NodeRenderer(node: node, events: Self.workout(node), frameCount: 40_000,
                                       blockSizes: randomBlockSizes(count: 200, maximum: 400, seed: 3)).render()
            let firstDifference = zip(out.left, reference.left).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(firstDifference == nil, "\(name): first differs at frame \(firstDifference ?? -1)")
            #expect(reference.left.contains { abs($0) > 0.01 }, "\(name) makes sound")
        }
    }
}
