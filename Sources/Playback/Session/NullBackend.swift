#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A backend that renders and throws the audio away: for tests and for running a session
/// without a device. It can play at the pace of the clock, like a device, or as fast as the
/// CPU allows, and it can inject the faults a device has (underruns, a failed write) at
/// chosen frames, so programs can test how they react.
public final class NullBackend: AudioBackend, @unchecked Sendable {
    /// Frames per period.
    public let periodFrames: Int
    /// Frames of simulated device buffer (reported as the latency).
    public let latencyFrames: Int
    public let isRealTime: Bool
    /// After this many frames the backend fails as a device write would (nil: never).
    public let failureFrame: Int64?
    /// Frames at which an underrun is counted, in increasing order.
    public let underrunFrames: [Int64]
    public let name = "null"

    private let consumed = Atomic<Int64>(0)
    private let running = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let underruns = Atomic<Int>(0)
    private let failed = Atomic<Bool>(false)
    private let thread = RenderThread()
    private var sampleRate = 44_100
    private var renderer: PlaybackRenderer?

    /// Creates a null backend.
    /// - Parameters:
    ///   - realTime: play at the pace of the clock (true) or as fast as possible (false).
    ///   - periodFrames: frames per render call.
    ///   - latencyFrames: simulated device buffer.
    ///   - failAtFrame: fail with an ``AudioBackendError/Kind/io`` error after this many frames.
    ///   - underrunAtFrames: count an underrun when playback passes each of these frames.
    public init(realTime: Bool = false, periodFrames: Int = 256, latencyFrames: Int = 0,
                failAtFrame: Int64? = nil, underrunAtFrames: [Int64] = []) {
        isRealTime = realTime
        self.periodFrames = min(max(periodFrames, 1), 4096)
        self.latencyFrames = max(0, latencyFrames)
        failureFrame = failAtFrame
        underrunFrames = underrunAtFrames.sorted()
    }

    public func open(_ request: AudioStreamRequest) throws(AudioBackendError) -> AudioStreamFormat {
        sampleRate = request.sampleRate
        return AudioStreamFormat(sampleRate: request.sampleRate, periodFrames: periodFrames, latencyFrames: latencyFrames)
    }

    public func start(_ renderer: PlaybackRenderer) throws(AudioBackendError) {
        guard !running.load(ordering: .acquiring) else { return }
        self.renderer = renderer
        running.store(true, ordering: .releasing)
        do {
            try thread.start(backend: name) { self.renderLoop() }
        } catch {
            running.store(false, ordering: .releasing)
            throw error
        }
    }

    private func renderLoop() {
        guard let renderer else { return }
        let left = UnsafeMutablePointer<Float>.allocate(capacity: periodFrames)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: periodFrames)
        defer { left.deallocate(); right.deallocate() }
        var nextUnderrun = 0
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let periodNanos = Int(Int64(periodFrames) * 1_000_000_000 / Int64(sampleRate))
        while !stopRequested.load(ordering: .acquiring) {
            if !isRealTime && renderer.shouldWaitForControlSide { usleep(200); continue }
            renderer.render(frameCount: periodFrames, left: left, right: right)
            let played = consumed.add(Int64(periodFrames), ordering: .releasing).newValue
            while nextUnderrun < underrunFrames.count, underrunFrames[nextUnderrun] <= played {
                underruns.add(1, ordering: .releasing)
                nextUnderrun += 1
            }
            if let failureFrame, played >= failureFrame {
                failed.store(true, ordering: .releasing)
                break
            }
            if isRealTime {
                deadline.tv_nsec += periodNanos
                while deadline.tv_nsec >= 1_000_000_000 { deadline.tv_nsec -= 1_000_000_000; deadline.tv_sec += 1 }
                clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil)
            }
        }
        running.store(false, ordering: .releasing)
    }

    public func stop(drain: Bool) throws(AudioBackendError) {
        stopRequested.store(true, ordering: .releasing)
        thread.join()
        running.store(false, ordering: .releasing)
    }

    public var framesConsumed: Int64 { consumed.load(ordering: .acquiring) }
    public var underrunCount: Int { underruns.load(ordering: .acquiring) }
    public var isRunning: Bool { running.load(ordering: .acquiring) }
    public var failure: AudioBackendError? {
        failed.load(ordering: .acquiring)
            ? AudioBackendError(.io, backend: name, reason: "write failed (injected at frame \(failureFrame ?? 0))") : nil
    }
}
