// Helpers shared by the audio test suites: a sine source, a constant or noise source,
// block-size-varying rendering and levels. A library target only because test targets
// cannot share sources.
import AudioGraph
import Foundation
import MIDI

/// A sine source at a fixed frequency.
public final class SineSource: AudioNode {
    public let name = "Sine"
    public let inputBusCount = 0
    public let parameterInfos: [AudioParameterInfo] = []
    public let frequency: Double
    private var sampleRate = 44_100.0
    public init(frequency: Double) { self.frequency = frequency }
    public func prepare(sampleRate: Double, maximumFrameCount: Int) { self.sampleRate = sampleRate }
    public func reset() {}
    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    public func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        for i in 0..<frameCount {
            let t = Double(startFrame + Int64(i)) / sampleRate
            let v = Float(sin(2 * Double.pi * frequency * t))
            output.left[i] = v
            output.right[i] = v
        }
    }
}

/// A test source: a constant on both channels, or deterministic white noise.
public final class TestSource: AudioNode {
    public let name = "Test source"
    public let inputBusCount = 0
    public let parameterInfos: [AudioParameterInfo] = []
    public let constant: Float?
    public let amplitude: Float
    private var state: UInt32 = 0x1234_5678

    public init(constant: Float) { self.constant = constant; amplitude = 1 }
    public init(noiseAmplitude: Float) { constant = nil; amplitude = noiseAmplitude }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) { reset() }
    public func reset() { state = 0x1234_5678 }
    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    public func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        for i in 0..<frameCount {
            if let constant {
                output.left[i] = constant
                output.right[i] = constant
            } else {
                state ^= state << 13; state ^= state >> 17; state ^= state << 5
                let a = Float(Int32(bitPattern: state)) / 2_147_483_648 * amplitude
                state ^= state << 13; state ^= state >> 17; state ^= state << 5
                let b = Float(Int32(bitPattern: state)) / 2_147_483_648 * amplitude
                output.left[i] = a
                output.right[i] = b
            }
        }
    }
}

/// Renders `frames` frames of `graph` in blocks whose sizes come from `blockSizes` (cycled),
/// delivering `events` (absolute frame, node index, event) at their frames. Returns left and right.
public func renderGraph(_ graph: CompiledGraph, frames: Int, blockSizes: [Int],
                 events: [(frame: Int, node: Int, event: NodeEvent)] = []) -> (left: [Float], right: [Float]) {
    var left: [Float] = [], right: [Float] = []
    var position = 0, next = 0, sizeIndex = 0
    while position < frames {
        let n = min(frames - position, blockSizes[sizeIndex % blockSizes.count], graph.maximumFrameCount)
        sizeIndex += 1
        var block: [GraphEvent] = []
        while next < events.count && events[next].frame < position + n {
            block.append(GraphEvent(offset: events[next].frame - position, nodeIndex: events[next].node, event: events[next].event))
            next += 1
        }
        block.withUnsafeBufferPointer { graph.render(startFrame: Int64(position), frameCount: n, events: $0) }
        left.append(contentsOf: UnsafeBufferPointer(start: graph.output.left, count: n))
        right.append(contentsOf: UnsafeBufferPointer(start: graph.output.right, count: n))
        position += n
    }
    return (left, right)
}

/// A deterministic list of block sizes between 1 and `maximum`.
public func randomBlockSizes(count: Int, maximum: Int, seed: UInt64) -> [Int] {
    var s = seed
    return (0..<count).map { _ in
        s = s &* 6364136223846793005 &+ 1442695040888963407
        return Int((s >> 33) % UInt64(maximum)) + 1
    }
}

public func rms(_ x: ArraySlice<Float>) -> Float {
    (x.reduce(0) { $0 + $1 * $1 } / Float(max(1, x.count))).squareRoot()
}
