import AudioEffects
import AudioFileOutput
import AudioGraph
import Sequencing

/// Results of an offline render.
public struct RenderStatistics: Sendable, Hashable {
    /// Frames delivered.
    public var frameCount: Int64
    /// Largest absolute sample value on either channel.
    public var peak: Float
    /// Frames per second.
    public var sampleRate: Int

    /// Statistics of `frameCount` frames at `sampleRate` whose largest absolute sample is `peak`.
    public init(frameCount: Int64, peak: Float, sampleRate: Int) {
        self.frameCount = frameCount
        self.peak = peak
        self.sampleRate = sampleRate
    }

    /// Duration of the audio in seconds.
    public var seconds: Double { Double(frameCount) / Double(sampleRate) }
    /// The peak in dBFS (-infinity for silence).
    public var peakDecibels: Float { gainToDecibels(peak) }
}

/// Why an offline render (``OfflineRenderer/render(blockSize:shouldContinue:consume:)``,
/// ``Player/renderToEnd(blockSize:tail:shouldContinue:consume:)``) stopped before the end.
///
/// `Failure` is what the caller's `consume` throws: `AudioSinkError` when it writes to a
/// sink, `Never` when it cannot fail (then only ``cancelled`` can end the render early).
public enum OfflineRenderError<Failure: Error>: Error, CustomStringConvertible {
    /// The caller's `shouldContinue` asked to stop.
    case cancelled
    /// The caller's `consume` could not take a block: its error.
    case output(Failure)

    /// One line: "cancelled", or the sink's message.
    public var description: String {
        switch self {
        case .cancelled: return "cancelled"
        case .output(let error): return "\(error)"
        }
    }
}

extension OfflineRenderError: Equatable where Failure: Equatable {}

/// Renders a schedule through an engine as fast as the CPU allows: the same
/// `Engine.render(frameCount:into:)` path real-time playback takes, called in a loop.
///
/// The output is shifted by the graph's latency (a limiter's look-ahead), so an event
/// scheduled at frame `f` is heard at frame `f` of the rendered audio.
public final class OfflineRenderer {
    /// The engine being driven.
    public let engine: Engine
    /// Frames of audio after the schedule's end (reverb and release tails).
    public let tailFrames: Int64

    /// Total frames the render produces: the schedule's length plus the tail.
    public var totalFrames: Int64 { engine.schedule.endFrame + tailFrames }

    /// Creates a renderer for `engine`, which should be at frame 0.
    public init(engine: Engine, tailSeconds: Double) {
        self.engine = engine
        tailFrames = Int64((max(0, tailSeconds) * Double(engine.schedule.sampleRate)).rounded())
    }

    /// Renders everything in blocks of `blockSize` frames (the last one shorter), handing each
    /// block to `consume(left, right, count)`. `shouldContinue` is asked before every block;
    /// returning false throws ``OfflineRenderError/cancelled``, and an error of `consume` ends the
    /// render as ``OfflineRenderError/output(_:)``.
    public func render<Failure: Error>(blockSize: Int,
                       shouldContinue: () -> Bool = { true },
                       consume: (UnsafePointer<Float>, UnsafePointer<Float>, Int) throws(Failure) -> Void) throws(OfflineRenderError<Failure>) -> RenderStatistics {
        let block = max(1, blockSize)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { left.deallocate(); right.deallocate() }
        let buffer = StereoBuffer(left: left, right: right)
        // Discard the graph's latency first, in blocks of the same size.
        var toSkip = Int64(engine.graph.latencyFrames)
        while toSkip > 0 {
            let n = Int(min(toSkip, Int64(block)))
            engine.render(frameCount: n, into: buffer)
            toSkip -= Int64(n)
        }
        var remaining = totalFrames
        var peak: Float = 0
        while remaining > 0 {
            guard shouldContinue() else { throw .cancelled }
            let n = Int(min(remaining, Int64(block)))
            engine.render(frameCount: n, into: buffer)
            peak = Self.peak(of: left, right, count: n, atLeast: peak)
            do { try consume(left, right, n) } catch { throw .output(error) }
            remaining -= Int64(n)
        }
        return RenderStatistics(frameCount: totalFrames, peak: peak, sampleRate: engine.schedule.sampleRate)
    }

    /// The largest of `start` and every sample's magnitude in `left` and `right`, as the
    /// scalar `max(peak, abs(l), abs(r))` frame after frame gives it (a NaN never replaces
    /// the peak), four frames at a time: the maximum of exact values does not depend on the
    /// order they are taken in.
    static func peak(of left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, count: Int, atLeast start: Float) -> Float {
        var lanes = SIMD4<Float>(repeating: start)
        let magnitude = SIMD4<UInt32>(repeating: 0x7FFF_FFFF)
        var i = 0
        while i + 4 <= count {
            // abs: the sign bit cleared, as Swift's abs does for a Float.
            let l = unsafeBitCast(UnsafeRawPointer(left + i).loadUnaligned(as: SIMD4<UInt32>.self) & magnitude, to: SIMD4<Float>.self)
            let r = unsafeBitCast(UnsafeRawPointer(right + i).loadUnaligned(as: SIMD4<UInt32>.self) & magnitude, to: SIMD4<Float>.self)
            lanes.replace(with: l, where: l .>= lanes)
            lanes.replace(with: r, where: r .>= lanes)
            i += 4
        }
        var peak = max(max(lanes[0], lanes[1]), max(lanes[2], lanes[3]))
        while i < count {
            peak = max(peak, abs(left[i]), abs(right[i]))
            i += 1
        }
        return peak
    }
}

extension Engine {
    /// An engine playing `sequence` through the default graph (`instrument`, limiter, output)
    /// at `sampleRate`, with the limiter's input gain set to `gainDecibels`.
    public static func makeDefault(sequence: MusicSequence, sampleRate: Int, maximumFrameCount: Int = 4096,
                                   gainDecibels: Float = 0, instrument: DefaultInstrument = .builtIn) throws(AudioGraphError) -> Engine {
        let defaults = DefaultGraph(instrument: instrument)
        defaults.limiter.setParameter(LimiterNode.Parameter.inputGain, value: gainDecibels)
        let compiled = try defaults.graph.compile(sampleRate: Double(sampleRate), maximumFrameCount: maximumFrameCount)
        let schedule = Schedule(sequence: sequence, sampleRate: sampleRate, defaultNode: DefaultGraph.instrumentID)
        return Engine(graph: compiled, schedule: schedule)
    }
}
