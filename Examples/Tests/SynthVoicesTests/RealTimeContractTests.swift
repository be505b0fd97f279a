import Tactus
import TactusTestSupport
import Testing

/// A slapback echo: the delay line is allocated in `prepare`, on the control thread; `render`
/// only reads and writes memory that already exists.
final class Slapback: ParameterizedNode {
    let name = "Slapback"
    let inputBusCount = 1
    let parameters = NodeParameters([
        AudioParameterInfo(id: 0, name: "Mix", range: 0...1, unit: .fraction, defaultValue: 0.4, smoothingSeconds: 0.01),
    ])
    private var line: [Float] = []
    private var position = 0

    func prepare(sampleRate: Double, maximumFrameCount: Int) {
        parameters.prepare(sampleRate: sampleRate)
        line = [Float](repeating: 0, count: Int(sampleRate * 0.12))  // May allocate: control thread.
        position = 0
    }

    func reset() {
        for i in line.indices { line[i] = 0 }  // In place: no allocation.
        position = 0
    }

    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        let input = inputs[0]
        parameters.renderStretches(frameCount: frameCount, changed: {}) { offset, count in
            let mix = parameters[0]
            for i in offset..<(offset + count) {
                let dry = 0.5 * (input.left[i] + input.right[i])
                let wet = line[position]
                line[position] = dry
                position = position + 1 == line.count ? 0 : position + 1
                output.left[i] = dry + mix * wet
                output.right[i] = dry + mix * wet
            }
        }
    }
}

@Suite struct RealTimeContractTests {
    static let events = [
        FramedNodeEvent(frame: 5_000, event: .parameterRamp(id: 0, scope: .global, element: 0,
                                                            ramp: ParameterRamp(from: 0, to: 1, length: 10_000))),
        FramedNodeEvent(frame: 30_000, event: .parameter(id: 0, scope: .global, element: 0, value: 0.2)),
    ]

    @Test func slapbackRendersWithoutAllocatingOrFreeing() throws {
        let renderer = try NodeRenderer(node: Slapback(), events: Self.events, frameCount: 44_100,
                                        blockSizes: [256, 1, 93, 512])
        #expect(AllocationCounter.isWorking)
        #expect(renderer.renderAllocations().isZero)
    }

    @Test func slapbackSoundsTheSameAtEveryBlockSize() throws {
        let reference = try NodeRenderer(node: Slapback(), events: Self.events, frameCount: 44_100).render()
        for sizes in [[1], [64], [65], randomBlockSizes(count: 300, maximum: 700, seed: 7)] {
            let out = try NodeRenderer(node: Slapback(), events: Self.events, frameCount: 44_100, blockSizes: sizes).render()
            #expect(out.left == reference.left, "block sizes \(sizes.prefix(3))")
        }
    }
}
