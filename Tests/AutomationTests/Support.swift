import AudioGraph
import Foundation
import MIDI

/// Writes its one parameter's value at every frame to the left channel, and 1 to the right:
/// the value a parameter has at each exact frame.
final class ParameterEchoNode: ParameterizedNode {
    let name = "Echo"
    let inputBusCount = 0
    let parameters: NodeParameters
    init(smoothingSeconds: Double = 0) {
        parameters = NodeParameters([
            AudioParameterInfo(id: 7, name: "Level", range: -10_000...10_000, unit: .generic, defaultValue: 0,
                               smoothingSeconds: smoothingSeconds),
        ])
    }
    func prepare(sampleRate: Double, maximumFrameCount: Int) { parameters.prepare(sampleRate: sampleRate) }
    func reset() {}
    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        parameters.renderStretches(frameCount: frameCount, changed: {}) { offset, count in
            let v = parameters[7]
            for i in offset..<(offset + count) {
                output.left[i] = v
                output.right[i] = 1
            }
        }
    }
}

/// Renders an engine in blocks cycling through `sizes`; returns the left channel.
func renderLeft(_ render: (Int, StereoBuffer) -> Void, frames: Int, sizes: [Int]) -> [Float] {
    let capacity = sizes.max()!
    let l = UnsafeMutablePointer<Float>.allocate(capacity: capacity), r = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
    defer { l.deallocate(); r.deallocate() }
    var out: [Float] = []
    out.reserveCapacity(frames)
    var done = 0, i = 0
    while done < frames {
        let n = min(sizes[i % sizes.count], frames - done)
        i += 1
        render(n, StereoBuffer(left: l, right: r))
        out.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
        done += n
    }
    return out
}
