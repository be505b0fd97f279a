import AudioGraph
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The audio side of a ``PlaybackSession``, handed to its ``AudioBackend``: one call of
/// ``render(frameCount:left:right:)`` per period, on the backend's thread.
///
/// Rendering never allocates, locks or does I/O. After the performance (the song's end plus
/// the tail, or a stop plus the device's latency) the renderer writes silence and says how
/// many frames of each period still belonged to the performance, so an offline backend writes
/// exactly those and a device plays the rest as silence. A ``RenderTail/untilSilent(thresholdDecibels:capSeconds:)``
/// tail ends the performance where ``Player/renderToEnd(blockSize:tail:shouldContinue:consume:)``
/// would: the same frame, whatever the period.
public final class PlaybackRenderer: @unchecked Sendable {
    private let engine: Engine
    /// The tail's length, or its cap when it lasts until silence.
    private let tailFrames: Int64
    /// For a tail until silence: the threshold and the window (frames) of the silence grid.
    private let silence: (threshold: Float, window: Int64)?
    /// With a tail until silence: the output frame after which the song may stop once silent
    /// though its end has not come (see ``Player/silenceMayEndAfter()``); -1 for none.
    private let silentAfter = Atomic<Int64>(-1)
    // Render thread only: the first frame of the current run of quiet frames, and the frame
    // the sound fell silent at (-1 before).
    private var quietSince: Int64 = 0
    private var silentFrom: Int64 = -1
    private let rendered = Atomic<Int64>(0)
    private let total = Atomic<Int64>(-1)
    private let stopFrame = Atomic<Int64>(-1)
    private let serviced = Atomic<Int64>(0)
    private let finished = Atomic<Bool>(false)
    /// How far an offline backend may render ahead of the control side's servicing, so user
    /// events and retired snapshots are collected before their rings fill.
    let aheadLimitFrames: Int64

    init(engine: Engine, tail: RenderTail, sampleRate: Int) {
        self.engine = engine
        switch tail {
        case .seconds(let seconds):
            tailFrames = Int64((max(0, seconds) * Double(sampleRate)).rounded())
            silence = nil
        case .untilSilent(let thresholdDecibels, let capSeconds):
            tailFrames = Int64((max(0, capSeconds) * Double(sampleRate)).rounded())
            silence = (decibelsToGain(thresholdDecibels), Int64(max(1, sampleRate / RenderTail.windowsPerSecond)))
        }
        aheadLimitFrames = Int64(sampleRate)
    }

    /// Renders `frameCount` frames into `left` and `right` and returns how many of them belong
    /// to the performance (fewer than `frameCount` only in its last period, 0 after it); the
    /// frames after those are silence. Real-time safe.
    @discardableResult
    public func render(frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) -> Int {
        var done = 0
        let block = engine.graph.maximumFrameCount
        while done < frameCount {
            let n = min(frameCount - done, block)
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            engine.render(frameCount: n, into: StereoBuffer(left: left + done, right: right + done),
                          hostTimeNanos: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
            done += n
        }
        let start = rendered.load(ordering: .relaxed)
        var last = Int64.max
        let end = engine.publishedEndOutputFrame.load(ordering: .acquiring)
        if end >= 0 { last = end + tailFrames }
        let stop = stopFrame.load(ordering: .acquiring)
        if stop >= 0 { last = min(last, stop) }
        if let silence, silentFrom < 0 {
            findSilence(silence, from: start, count: Int(max(0, min(Int64(frameCount), last - start))), end: end, left: left, right: right)
        }
        if silentFrom >= 0 { last = min(last, silentFrom) }
        var keep = frameCount
        if last != .max {
            total.store(last, ordering: .releasing)
            keep = Int(max(0, min(Int64(frameCount), last - start)))
            if keep < frameCount {
                (left + keep).update(repeating: 0, count: frameCount - keep)
                (right + keep).update(repeating: 0, count: frameCount - keep)
            }
            if start + Int64(frameCount) >= last { finished.store(true, ordering: .releasing) }
        }
        rendered.store(start + Int64(frameCount), ordering: .releasing)
        return keep
    }

    /// Where the engine's last block began: its graph frame, song position and rate (0 while
    /// stopped). Read it on the backend's thread right after ``render(frameCount:left:right:)``
    /// to follow the song per period (``MIDIClockGenerator``). Real-time safe.
    public func lastBlockAnchor() -> PlaybackAnchor? {
        for _ in 0..<1000 {
            let before = engine.anchorSequence.load(ordering: .acquiring)
            if before & 1 != 0 { continue }
            let position = engine.anchorSongPosition.load(ordering: .relaxed)
            let step = engine.anchorRateStep.load(ordering: .relaxed)
            let host = engine.anchorHostNanos.load(ordering: .relaxed)
            let output = engine.anchorOutputFrame.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            if engine.anchorSequence.load(ordering: .relaxed) == before {
                return PlaybackAnchor(outputFrame: output, songPosition: position, rateStep: step, hostNanos: host)
            }
        }
        return nil
    }

    /// Scans `count` frames rendered from output frame `start` for the end of a tail until
    /// silence: the first boundary of a grid of absolute output frames, at or after the end
    /// (or after ``silentAfter``), that closes a whole window of quiet frames.
    private func findSilence(_ silence: (threshold: Float, window: Int64), from start: Int64, count: Int, end: Int64,
                             left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        let after = silentAfter.load(ordering: .relaxed)
        for i in 0..<count {
            let frame = start + Int64(i)
            if abs(left[i]) > silence.threshold || abs(right[i]) > silence.threshold { quietSince = frame + 1 }
            let next = frame + 1
            let pastTheMusic = (end >= 0 && next >= end) || (after >= 0 && next - silence.window >= after)
            if pastTheMusic, next % silence.window == 0, next - quietSince >= silence.window {
                silentFrom = next
                return
            }
        }
    }

    /// With a tail until silence, lets the song stop once silent after output frame `frame`
    /// before its end (nil: only after its end). Control side, before the backend starts or
    /// when a transport change makes the frame meaningless.
    func setSilenceMayEnd(after frame: Int64?) { silentAfter.store(frame ?? -1, ordering: .relaxed) }

    /// True once the whole performance has been rendered.
    public var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Frames of the performance (known once it is finished or its end is known), else nil.
    public var performanceFrames: Int64? {
        let value = total.load(ordering: .acquiring)
        return value >= 0 ? value : nil
    }

    /// Frames rendered so far (silence after the performance included).
    public var renderedFrames: Int64 { rendered.load(ordering: .acquiring) }

    /// True when an offline backend should wait before rendering more: it is a second ahead of
    /// the control side, whose servicing empties the user-event ring. Devices never wait.
    public var shouldWaitForControlSide: Bool {
        rendered.load(ordering: .relaxed) - serviced.load(ordering: .acquiring) > aheadLimitFrames
    }

    /// The control side serviced everything rendered up to `frame`.
    func markServiced(through frame: Int64) { serviced.store(frame, ordering: .releasing) }

    /// Ends the performance at output frame `frame` (a stop): what follows is silence.
    func endPerformance(atFrame frame: Int64) { stopFrame.store(frame, ordering: .releasing) }

    /// Renders and drops the graph's latency (a limiter's look-ahead) before the backend
    /// starts, as an offline render does, so both produce the same frames. Control thread.
    func prerollLatency() {
        let block = engine.graph.maximumFrameCount
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block), right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { left.deallocate(); right.deallocate() }
        var remaining = engine.graph.latencyFrames
        while remaining > 0 {
            let n = min(remaining, block)
            engine.render(frameCount: n, into: StereoBuffer(left: left, right: right))
            remaining -= n
        }
    }
}
