import AudioGraph

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
