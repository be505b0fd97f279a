/// A stereo delay of a fixed number of frames on one connection: what lines a source whose
/// path lags less up with the longest path into the node it feeds (delay compensation), so
/// that a note played through a plugin with latency and one played by a built-in instrument
/// at the same frame sound at the same frame.
///
/// Its memory is allocated once, when the graph is compiled; rendering only moves samples
/// through it, one frame at a time, so the result is the same whatever the block size.
final class CompensationDelay {
    let frames: Int
    private let left: UnsafeMutablePointer<Float>
    private let right: UnsafeMutablePointer<Float>
    private var position = 0

    init(frames: Int) {
        precondition(frames > 0, "a compensation delay of at least one frame")
        self.frames = frames
        left = .allocate(capacity: frames)
        right = .allocate(capacity: frames)
        left.initialize(repeating: 0, count: frames)
        right.initialize(repeating: 0, count: frames)
    }

    deinit {
        left.deallocate()
        right.deallocate()
    }

    /// Returns the delay to silence.
    func clear() {
        left.update(repeating: 0, count: frames)
        right.update(repeating: 0, count: frames)
        position = 0
    }

    /// Writes `source` delayed by ``frames`` into `destination` (`source` and `destination`
    /// never overlap), or adds it there when `adding`.
    func process(_ source: StereoBuffer, into destination: StereoBuffer, frameCount: Int, adding: Bool) {
        var f = 0
        while f < frameCount {
            let delayedLeft = left[position], delayedRight = right[position]
            left[position] = source.left[f]
            right[position] = source.right[f]
            if adding {
                destination.left[f] += delayedLeft
                destination.right[f] += delayedRight
            } else {
                destination.left[f] = delayedLeft
                destination.right[f] = delayedRight
            }
            position += 1
            if position == frames { position = 0 }
            f += 1
        }
    }
}
