import Foundation
import AudioGraph
import AudioTestSupport
import MIDI

/// A test source: a constant on both channels, or deterministic white noise.
final class TestSource: AudioNode {
    let name = "Test source"
    let inputBusCount = 0
    let parameterInfos: [AudioParameterInfo] = []
    let constant: Float?
    let amplitude: Float
    private var state: UInt32 = 0x1234_5678

    init(constant: Float) { self.constant = constant; amplitude = 1 }
    init(noiseAmplitude: Float) { constant = nil; amplitude = noiseAmplitude }

    func prepare(sampleRate: Double, maximumFrameCount: Int) { reset() }
    func reset() { state = 0x1234_5678 }
    func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
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


/// Renders a stereo signal through `node` in blocks of the given sizes (cycled), as the graph
/// would; returns the output interleaved, left then right.
func renderInBlocks(_ node: AudioNode, left: [Float], right: [Float], blockSizes: [Int]) -> [Float] {
    var inLeft = left, inRight = right
    var outLeft = [Float](repeating: .nan, count: left.count), outRight = outLeft
    var start = 0, block = 0
    inLeft.withUnsafeMutableBufferPointer { inL in
        inRight.withUnsafeMutableBufferPointer { inR in
            outLeft.withUnsafeMutableBufferPointer { oL in
                outRight.withUnsafeMutableBufferPointer { oR in
                    while start < inL.count {
                        let count = min(blockSizes[block % blockSizes.count], inL.count - start)
                        let source = StereoBuffer(left: inL.baseAddress! + start, right: inR.baseAddress! + start)
                        withUnsafePointer(to: source) { inputs in
                            node.render(startFrame: Int64(start), frameCount: count,
                                        inputs: UnsafeBufferPointer(start: inputs, count: 1),
                                        output: StereoBuffer(left: oL.baseAddress! + start, right: oR.baseAddress! + start))
                        }
                        start += count
                        block += 1
                    }
                }
            }
        }
    }
    return zip(outLeft, outRight).flatMap { [$0, $1] }
}
