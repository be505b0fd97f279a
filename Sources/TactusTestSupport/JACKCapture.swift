import JACK
import Synchronization

/// A JACK client's process source that keeps what reaches its inputs, from the first sounding
/// frame on, in buffers allocated up front: what a test compares with an offline render
/// (the two then line up on their first sounding frame, whatever the latency between them).
/// Its own outputs play silence.
public final class JACKCapture: JACKProcessSource, @unchecked Sendable {
    /// Frames it can keep.
    public let capacity: Int
    /// The left channel kept so far (``count`` frames are valid).
    public let left: UnsafeMutablePointer<Float>
    /// The right channel kept so far.
    public let right: UnsafeMutablePointer<Float>
    /// Frames kept so far; read it with acquiring ordering before reading the channels.
    public let count = Atomic<Int>(0)

    /// A capture of at most `frames` frames.
    public init(frames: Int) {
        capacity = frames
        left = .allocate(capacity: frames)
        right = .allocate(capacity: frames)
        left.initialize(repeating: 0, count: frames)
        right.initialize(repeating: 0, count: frames)
    }

    deinit {
        left.deallocate()
        right.deallocate()
    }

    /// Keeps the period's input (JACK's real-time thread: no allocation, no lock).
    public func process(_ cycle: JACKCycle) {
        cycle.left.update(repeating: 0, count: cycle.frameCount)
        cycle.right.update(repeating: 0, count: cycle.frameCount)
        let start = count.load(ordering: .relaxed)
        let n = min(cycle.frameCount, capacity - start)
        guard n > 0, let inLeft = cycle.inputLeft, let inRight = cycle.inputRight else { return }
        // Nothing is kept before the first sound: the recording starts with the song.
        var first = 0
        if start == 0 {
            while first < n && inLeft[first] == 0 && inRight[first] == 0 { first += 1 }
            if first == n { return }
        }
        (left + start).update(from: inLeft + first, count: n - first)
        (right + start).update(from: inRight + first, count: n - first)
        count.store(start + n - first, ordering: .releasing)
    }
}
