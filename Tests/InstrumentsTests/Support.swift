import Foundation
import AudioGraph
import MIDI


/// A sine source at a fixed frequency.
final class SineSource: AudioNode {
    let name = "Sine"
    let inputBusCount = 0
    let parameterInfos: [AudioParameterInfo] = []
    let frequency: Double
    private var sampleRate = 44_100.0
    init(frequency: Double) { self.frequency = frequency }
    func prepare(sampleRate: Double, maximumFrameCount: Int) { self.sampleRate = sampleRate }
    func reset() {}
    func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        for i in 0..<frameCount {
            let t = Double(startFrame + Int64(i)) / sampleRate
            let v = Float(sin(2 * Double.pi * frequency * t))
            output.left[i] = v
            output.right[i] = v
        }
    }
}

/// Renders `frames` frames of `graph` in blocks whose sizes come from `blockSizes` (cycled),
/// delivering `events` (absolute frame, node index, event) at their frames. Returns left and right.
func renderGraph(_ graph: CompiledGraph, frames: Int, blockSizes: [Int],
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
func randomBlockSizes(count: Int, maximum: Int, seed: UInt64) -> [Int] {
    var s = seed
    return (0..<count).map { _ in
        s = s &* 6364136223846793005 &+ 1442695040888963407
        return Int((s >> 33) % UInt64(maximum)) + 1
    }
}

func rms(_ x: ArraySlice<Float>) -> Float {
    (x.reduce(0) { $0 + $1 * $1 } / Float(max(1, x.count))).squareRoot()
}
