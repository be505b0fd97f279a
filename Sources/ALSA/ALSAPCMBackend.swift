import Foundation
import Playback

/// Plays a `PlaybackSession` through an ALSA PCM device: `default`, `hw:0,0`, `plughw:1`,
/// or `file:'/path.raw',raw` (ALSA's file plugin, which writes what is played to a file and
/// needs no sound card).
///
/// A blocking backend: ``PCMOutput``'s thread renders a period, converts it to the device
/// format and writes it with `snd_pcm_writei`, recovering and counting underruns.
public final class ALSAPCMBackend: AudioBackend, @unchecked Sendable {
    /// The PCM device name.
    public let device: String
    /// The sample format written to the device.
    public let sampleFormat: PCMSampleFormat
    public let isRealTime = true
    private var output: PCMOutput?
    private var source: RendererSource?

    /// A backend for `device` writing `format` samples.
    public init(device: String = "default", format: PCMSampleFormat = .s16) {
        self.device = device
        sampleFormat = format
    }

    public var name: String { "audio device '\(device)'" }

    public func open(_ request: AudioStreamRequest) throws(AudioBackendError) -> AudioStreamFormat {
        do { try ALSALibrary.load() } catch { throw AudioBackendError(.unavailable, backend: name, reason: "cannot be opened: \(error)") }
        // The file plugin works in user space; every other device needs the kernel's.
        if !device.hasPrefix("file:") && !ALSASystem.hasSoundDevices {
            throw AudioBackendError(.unavailable, backend: name, reason: "not available (/dev/snd does not exist)")
        }
        let bufferFrames = max(64, Int((request.latencySeconds * Double(request.sampleRate)).rounded()))
        do {
            let output = try PCMOutput(PCMConfiguration(device: device, sampleRate: request.sampleRate,
                                                        periodFrames: max(16, bufferFrames / 4), bufferFrames: bufferFrames,
                                                        format: sampleFormat))
            self.output = output
            return AudioStreamFormat(sampleRate: output.granted.sampleRate, periodFrames: output.granted.periodFrames,
                                     latencyFrames: output.granted.bufferFrames)
        } catch {
            throw AudioBackendError(.cannotOpen, backend: name, reason: "cannot be opened (\(error.reason))")
        }
    }

    public func start(_ renderer: PlaybackRenderer) throws(AudioBackendError) {
        guard let output else { throw AudioBackendError(.io, backend: name, reason: "cannot start: not open") }
        let source = RendererSource(renderer: renderer)
        self.source = source
        do {
            try output.start(source: source)
        } catch {
            throw AudioBackendError(.io, backend: name, reason: "cannot start (\(error.reason))")
        }
    }

    public func stop(drain: Bool) throws(AudioBackendError) {
        output?.stop(drain: drain)
    }

    public var framesConsumed: Int64 { output?.framesWritten ?? 0 }
    public var underrunCount: Int { output?.xrunCount ?? 0 }
    public var isRunning: Bool { output?.isRunning ?? false }
    public var failure: AudioBackendError? {
        output?.error.map { AudioBackendError(.io, backend: name, reason: "\($0.operation) failed: \($0.reason)") }
    }
    /// True when the device's thread got real-time priority.
    public var isRealTimePriority: Bool { output?.isRealTime ?? false }
}

/// Hands ``PCMOutput``'s periods to the session's renderer.
private final class RendererSource: PCMRenderSource {
    let renderer: PlaybackRenderer
    init(renderer: PlaybackRenderer) { self.renderer = renderer }
    func renderPCM(frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        renderer.render(frameCount: frameCount, left: left, right: right)
    }
}
