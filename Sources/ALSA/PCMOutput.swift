import CALSA
import Foundation
import Locking
import Synchronization

/// Sample formats the PCM driver can write.
public enum PCMSampleFormat: String, Sendable, CaseIterable {
    /// 16-bit signed little-endian integers.
    case s16
    /// 32-bit signed little-endian integers.
    case s32
    /// 32-bit little-endian floats.
    case float

    var alsaFormat: snd_pcm_format_t {
        switch self {
        case .s16: return SND_PCM_FORMAT_S16_LE
        case .s32: return SND_PCM_FORMAT_S32_LE
        case .float: return SND_PCM_FORMAT_FLOAT_LE
        }
    }

    /// Bytes per sample.
    public var bytesPerSample: Int { self == .s16 ? 2 : 4 }
}

/// What the driver asks for; the device may grant something near it (see ``PCMOutput/granted``).
public struct PCMConfiguration: Sendable, Hashable {
    /// The ALSA PCM name: `default`, `hw:0,0`, `plughw:1`, or `file:'/path.raw',raw`.
    public var device: String
    /// Frames per second.
    public var sampleRate: Int
    /// Frames the driver renders and writes at a time.
    public var periodFrames: Int
    /// Frames of the device's ring buffer (the output latency).
    public var bufferFrames: Int
    /// Sample format written to the device.
    public var format: PCMSampleFormat

    /// Creates a configuration; the defaults suit desktop playback (about 43 ms of buffer).
    public init(device: String = "default", sampleRate: Int = 48_000, periodFrames: Int = 512, bufferFrames: Int = 2048, format: PCMSampleFormat = .s16) {
        self.device = device
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
        self.format = format
    }
}

/// An ALSA failure, naming the device and what was being done.
public struct ALSAError: Error, Sendable, CustomStringConvertible {
    /// The device name.
    public var device: String
    /// The operation that failed.
    public var operation: String
    /// ALSA's (negative errno) code.
    public var code: Int32
    /// Set when the ALSA library itself could not be loaded.
    public var libraryUnavailable: ALSALibraryUnavailable?

    /// Creates an error.
    public init(device: String, operation: String, code: Int32) {
        self.device = device
        self.operation = operation
        self.code = code
    }

    /// The device could not be used because the ALSA library is missing.
    public init(device: String, libraryUnavailable: ALSALibraryUnavailable) {
        self.init(device: device, operation: "load \(ALSALibrary.soname)", code: -ENOSYS)
        self.libraryUnavailable = libraryUnavailable
    }

    /// ALSA's explanation of the code, or why the library could not be loaded.
    public var reason: String { libraryUnavailable?.description ?? String(cString: snd_strerror(code)) }

    public var description: String { "audio device '\(device)': \(operation) failed: \(reason)" }
}

/// Produces audio for the driver. Called on the audio thread: it must not allocate, lock or
/// do I/O.
public protocol PCMRenderSource: AnyObject {
    /// Fills `frameCount` frames of `left` and `right` with samples in -1...1.
    func renderPCM(frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)
}

/// Plays audio through an ALSA PCM device from a thread of its own.
///
/// The thread renders a period at a time from its ``PCMRenderSource`` into buffers allocated
/// before it starts, converts to the device format and writes with `snd_pcm_writei`. Underruns
/// are recovered with `snd_pcm_recover` and counted. Real-time scheduling is requested and
/// silently skipped where the system does not permit it.
public final class PCMOutput: @unchecked Sendable {
    /// What the device granted.
    public let granted: PCMConfiguration
    private let handle: OpaquePointer
    private let running = Atomic<Bool>(false)
    private let xruns = Atomic<Int>(0)
    private let frames = Atomic<Int64>(0)
    private let failure = Locked<ALSAError?>(nil)
    private var thread: pthread_t?
    private var source: PCMRenderSource?
    /// True when the audio thread got real-time priority.
    public private(set) var isRealTime = false

    /// Opens and configures `configuration.device`.
    public init(_ configuration: PCMConfiguration) throws(ALSAError) {
        let device = configuration.device
        do { try ALSALibrary.load() } catch { throw ALSAError(device: device, libraryUnavailable: error) }
        tactus_alsa_silence_errors()
        var pcm: OpaquePointer?
        var rc = snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, 0)
        guard rc >= 0, let pcm else { throw ALSAError(device: device, operation: "open", code: rc) }
        var hw: OpaquePointer?
        rc = tactus_pcm_hw_params_malloc(&hw)
        guard rc >= 0, let hw else {
            snd_pcm_close(pcm)
            throw ALSAError(device: device, operation: "allocate parameters", code: rc)
        }
        defer { snd_pcm_hw_params_free(hw) }
        func check(_ code: Int32, _ what: String) throws(ALSAError) {
            if code < 0 {
                snd_pcm_close(pcm)
                throw ALSAError(device: device, operation: what, code: code)
            }
        }
        try check(snd_pcm_hw_params_any(pcm, hw), "read hardware parameters")
        try check(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "set interleaved access")
        try check(snd_pcm_hw_params_set_format(pcm, hw, configuration.format.alsaFormat), "set format \(configuration.format.rawValue)")
        try check(snd_pcm_hw_params_set_channels(pcm, hw, 2), "set 2 channels")
        var rate = UInt32(configuration.sampleRate)
        var dir: Int32 = 0
        try check(snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &dir), "set sample rate \(configuration.sampleRate)")
        var period = snd_pcm_uframes_t(configuration.periodFrames)
        try check(snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &dir), "set period \(configuration.periodFrames)")
        var buffer = snd_pcm_uframes_t(max(configuration.bufferFrames, Int(period) * 2))
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer), "set buffer \(configuration.bufferFrames)")
        try check(snd_pcm_hw_params(pcm, hw), "apply hardware parameters")
        snd_pcm_hw_params_get_period_size(hw, &period, &dir)
        snd_pcm_hw_params_get_buffer_size(hw, &buffer)
        handle = pcm
        granted = PCMConfiguration(device: device, sampleRate: Int(rate), periodFrames: Int(period), bufferFrames: Int(buffer), format: configuration.format)
    }

    deinit {
        stop()
        snd_pcm_close(handle)
    }

    /// Underruns recovered so far.
    public var xrunCount: Int { xruns.load(ordering: .relaxed) }

    /// Frames handed to the device so far.
    public var framesWritten: Int64 { frames.load(ordering: .relaxed) }

    /// The error that stopped the audio thread, if any.
    public var error: ALSAError? { failure.withLock { $0 } }

    /// True while the audio thread runs.
    public var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Output latency in frames: what the device buffers ahead of the speaker.
    public var latencyFrames: Int { granted.bufferFrames }

    /// Starts the audio thread, pulling audio from `source`.
    public func start(source: PCMRenderSource) throws(ALSAError) {
        guard !running.load(ordering: .acquiring) else { return }
        self.source = source
        let rc = snd_pcm_prepare(handle)
        if rc < 0 { throw ALSAError(device: granted.device, operation: "prepare", code: rc) }
        running.store(true, ordering: .releasing)
        let box = Unmanaged.passRetained(self)
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        var tid = pthread_t()
        let created = pthread_create(&tid, &attributes, { context in
            let output = Unmanaged<PCMOutput>.fromOpaque(context!).takeRetainedValue()
            output.audioThreadMain()
            return nil
        }, box.toOpaque())
        if created != 0 {
            box.release()
            running.store(false, ordering: .releasing)
            throw ALSAError(device: granted.device, operation: "start the audio thread", code: -Int32(created))
        }
        thread = tid
    }

    /// Stops the audio thread after its current period; with `drain`, what the device holds
    /// plays out first, otherwise it is dropped.
    public func stop(drain: Bool = false) {
        running.store(false, ordering: .releasing)
        if let thread {
            pthread_join(thread, nil)
            self.thread = nil
            if drain { snd_pcm_drain(handle) } else { snd_pcm_drop(handle) }
        }
        source = nil
    }

    private func requestRealTimePriority() {
        var param = sched_param()
        param.sched_priority = min(max(sched_get_priority_min(SCHED_FIFO), 70), sched_get_priority_max(SCHED_FIFO))
        isRealTime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
    }

    private func audioThreadMain() {
        requestRealTimePriority()
        guard let source else { return }
        let period = granted.periodFrames
        let format = granted.format
        // Everything the loop touches is allocated here, before the first period.
        let left = UnsafeMutablePointer<Float>.allocate(capacity: period)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: period)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: period * 2 * format.bytesPerSample, alignment: 16)
        defer {
            left.deallocate()
            right.deallocate()
            raw.deallocate()
        }
        while running.load(ordering: .acquiring) {
            source.renderPCM(frameCount: period, left: left, right: right)
            PCMOutput.interleave(left: left, right: right, frames: period, format: format, into: raw)
            var offset = 0
            while offset < period {
                let written = snd_pcm_writei(handle, raw + offset * 2 * format.bytesPerSample, snd_pcm_uframes_t(period - offset))
                if written >= 0 {
                    offset += Int(written)
                    frames.add(Int64(written), ordering: .relaxed)
                    continue
                }
                let code = Int32(written)
                if code == -EAGAIN { continue }
                if code == -EPIPE { xruns.add(1, ordering: .relaxed) }
                let recovered = snd_pcm_recover(handle, code, 1)
                if recovered < 0 {
                    failure.withLock { $0 = ALSAError(device: granted.device, operation: "write", code: recovered) }
                    running.store(false, ordering: .releasing)
                    return
                }
            }
        }
    }

    /// Converts planar float to interleaved device samples, clipping to full scale.
    static func interleave(left: UnsafePointer<Float>, right: UnsafePointer<Float>, frames: Int, format: PCMSampleFormat, into raw: UnsafeMutableRawPointer) {
        switch format {
        case .float:
            let out = raw.assumingMemoryBound(to: Float.self)
            for i in 0..<frames {
                out[2 * i] = min(max(left[i], -1), 1)
                out[2 * i + 1] = min(max(right[i], -1), 1)
            }
        case .s16:
            let out = raw.assumingMemoryBound(to: Int16.self)
            for i in 0..<frames {
                out[2 * i] = Int16((min(max(left[i], -1), 1) * 32767).rounded())
                out[2 * i + 1] = Int16((min(max(right[i], -1), 1) * 32767).rounded())
            }
        case .s32:
            let out = raw.assumingMemoryBound(to: Int32.self)
            for i in 0..<frames {
                out[2 * i] = Int32((Double(min(max(left[i], -1), 1)) * 2147483647).rounded())
                out[2 * i + 1] = Int32((Double(min(max(right[i], -1), 1)) * 2147483647).rounded())
            }
        }
    }
}

/// Facts about the machine's ALSA setup.
public enum ALSASystem {
    /// True when the kernel has sound devices (`/dev/snd` exists).
    public static var hasSoundDevices: Bool { FileManager.default.fileExists(atPath: "/dev/snd") }

    /// True when the ALSA sequencer device exists.
    public static var hasSequencer: Bool { FileManager.default.fileExists(atPath: "/dev/snd/seq") }
}
