#if canImport(Glibc)
import AudioFileOutput
import Glibc
#endif
import Locking
import Synchronization

/// Renders a session as fast as the CPU allows, into a WAV file, any `AudioSink` (the FLAC
/// and Ogg writers of `AudioFileOutput`, a sink of your own) or a memory buffer: the offline
/// twin of a device, through the same engine, so the file holds exactly what a device would
/// have played (``PlaybackSession`` drops the graph's look-ahead the same way for both).
/// `tactus render` is a session on this backend.
///
/// A file is written to a temporary name next to its path and renamed when the session ends
/// normally or is stopped with drain; a stop without drain or a failure leaves no file (a
/// sink's `finish()` or `cancel()` is called). A song that never ends
/// (a loop forever) renders until the session is stopped.
///
/// Rendering runs on a thread of the backend's, which waits whenever it is a second ahead of
/// the session's control side, so user events are all delivered, in order, however fast the
/// render goes.
public final class OfflineBackend: AudioBackend, @unchecked Sendable {
    /// Where the audio goes.
    public enum Destination: @unchecked Sendable {
        /// A WAV file at this path, in this sample format, with 2 channels or 1 (the average
        /// of left and right).
        case wavFile(path: String, format: WAVSampleFormat, channelCount: Int)
        /// An open sink, written from the backend's render thread and finished or cancelled
        /// when the session ends; `name` (its path) starts error messages. The sink must be
        /// made for the session's sample rate, and is used by this backend alone.
        case sink(any AudioSink, name: String)
        /// Memory, read afterwards with ``OfflineBackend/samples``.
        case memory
    }

    /// Where the audio goes.
    public let destination: Destination
    /// Frames per render call; the output does not depend on it.
    public let blockSize: Int
    public let isRealTime = false
    private let consumed = Atomic<Int64>(0)
    // A non-negative float's bit pattern orders as the float does.
    private let peakBits = Atomic<UInt32>(0)
    private let running = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let memory = Locked<(left: [Float], right: [Float])>(([], []))
    private let failed = Locked<AudioBackendError?>(nil)
    // Set before the render thread starts and read after it is joined, so the thread's
    // creation and join order every access.
    private var writer: (any AudioSink)?
    private var renderer: PlaybackRenderer?
    private let thread = RenderThread()

    /// A backend writing a WAV file at `path` (16-bit by default).
    public convenience init(wavFile path: String, format: WAVSampleFormat = .s16, blockSize: Int = 512) {
        self.init(destination: .wavFile(path: path, format: format, channelCount: 2), blockSize: blockSize)
    }

    /// The block sizes a backend takes (what `tactus render --block-size` takes).
    public static let blockSizes = 1...65_536

    /// A backend for `destination`, rendering `blockSize` frames at a time (in
    /// ``blockSizes``; the session fails to start with any other).
    public init(destination: Destination = .memory, blockSize: Int = 512) {
        self.destination = destination
        self.blockSize = blockSize
    }

    /// A backend writing to `sink` (opened for the session's sample rate), rendering
    /// `blockSize` frames at a time; `name` (the sink's path) starts error messages.
    public convenience init(sink: any AudioSink, name: String, blockSize: Int = 512) {
        self.init(destination: .sink(sink, name: name), blockSize: blockSize)
    }

    public var name: String {
        switch destination {
        case .wavFile(let path, _, _): return path
        case .sink(_, let name): return name
        case .memory: return "memory"
        }
    }

    public func open(_ request: AudioStreamRequest) throws(AudioBackendError) -> AudioStreamFormat {
        guard Self.blockSizes.contains(blockSize) else {
            throw AudioBackendError(.cannotOpen, backend: name, reason: "block size \(blockSize) is outside \(Self.blockSizes.lowerBound)...\(Self.blockSizes.upperBound)")
        }
        switch destination {
        case .wavFile(let path, let format, let channels):
            do {
                writer = try WAVWriter(path: path, sampleRate: request.sampleRate, channelCount: channels, format: format)
            } catch {
                throw AudioBackendError(.cannotCreateOutput, backend: path, reason: reason(error))
            }
        case .sink(let sink, _):
            writer = sink
        case .memory:
            break
        }
        return AudioStreamFormat(sampleRate: request.sampleRate, periodFrames: blockSize, latencyFrames: 0)
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
        let left = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
        defer { left.deallocate(); right.deallocate() }
        while !stopRequested.load(ordering: .acquiring) {
            // Offline rendering is not real-time: waiting here for the control side is fine,
            // and keeps every user event in order.
            if renderer.shouldWaitForControlSide { usleep(200); continue }
            let kept = renderer.render(frameCount: blockSize, left: left, right: right)
            if kept > 0 {
                var blockPeak = peakBits.load(ordering: .relaxed)
                for i in 0..<kept { blockPeak = max(blockPeak, abs(left[i]).bitPattern, abs(right[i]).bitPattern) }
                // Magnitudes order as their bit patterns, and infinity's and NaN's are the
                // largest: one comparison per block finds a sample no file format can hold.
                if blockPeak >= Float.infinity.bitPattern {
                    let frame = consumed.load(ordering: .relaxed)
                    failed.withLock {
                        $0 = AudioBackendError(.nonFiniteAudio, backend: name,
                                               reason: "NaN or infinite audio from frame \(frame); nothing written")
                    }
                    break
                }
                peakBits.store(blockPeak, ordering: .relaxed)
                do {
                    if let writer {
                        try writer.write(left: left, right: right, count: kept)
                    } else {
                        memory.withLock {
                            $0.left.append(contentsOf: UnsafeBufferPointer(start: left, count: kept))
                            $0.right.append(contentsOf: UnsafeBufferPointer(start: right, count: kept))
                        }
                    }
                } catch {
                    let failure = AudioBackendError(.io, backend: name, reason: reason(error))
                    failed.withLock { $0 = failure }
                    break
                }
                consumed.add(Int64(kept), ordering: .releasing)
            }
            if kept < blockSize { break }
        }
        running.store(false, ordering: .releasing)
    }

    public func stop(drain: Bool) throws(AudioBackendError) {
        stopRequested.store(true, ordering: .releasing)
        thread.join()
        running.store(false, ordering: .releasing)
        guard let writer else { return }
        self.writer = nil
        if drain && failure == nil {
            do {
                try writer.finish()
            } catch {
                throw AudioBackendError(.io, backend: name, reason: reason(error))
            }
        } else {
            writer.cancel()
        }
    }

    public var framesConsumed: Int64 { consumed.load(ordering: .acquiring) }
    public var underrunCount: Int { 0 }
    public var failure: AudioBackendError? { failed.withLock { $0 } }
    public var isRunning: Bool { running.load(ordering: .acquiring) }

    /// The largest absolute sample value written so far.
    public var peak: Float { Float(bitPattern: peakBits.load(ordering: .relaxed)) }

    /// The error's words without the path the backend's name already gives.
    private func reason(_ error: any Error) -> String {
        let text = "\(error)"
        return text.hasPrefix(name + ": ") ? String(text.dropFirst(name.count + 2)) : text
    }

    /// The audio rendered into memory so far: left and right channels (empty for a WAV file).
    public var samples: (left: [Float], right: [Float]) { memory.withLock { $0 } }
}
