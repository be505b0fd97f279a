import AudioGraph
import Foundation

/// A look-ahead brick-wall limiter: the output never exceeds the ceiling (at most 0 dBFS).
///
/// The gain needed by each incoming frame is known `lookAhead` frames before the frame is
/// played. The applied gain is the moving average (over the look-ahead window) of the
/// window's minimum required gain, which reaches every frame's requirement by the time the
/// frame comes out and ramps there smoothly; a final clamp catches float rounding.
public final class LimiterNode: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Highest output level in dBFS (at most 0).
        public static let ceiling: UInt32 = 0
        /// Time in milliseconds for the gain to recover.
        public static let release: UInt32 = 1
        /// Gain in decibels applied before limiting.
        public static let inputGain: UInt32 = 2
    }
    public let name = "Limiter"
    public let inputBusCount = 1
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.ceiling, name: "Ceiling", range: -24...0, unit: .decibels, defaultValue: -0.3),
        AudioParameterInfo(id: Parameter.release, name: "Release", range: 1...2000, unit: .milliseconds, defaultValue: 80),
        AudioParameterInfo(id: Parameter.inputGain, name: "Input gain", range: -24...24, unit: .decibels, defaultValue: 0),
    ])
    /// Look-ahead time in seconds.
    public let lookAheadSeconds: Double
    private var window = 1
    private var ceiling: Float = 1
    private var inputGain: Float = 1
    private var releaseCoefficient: Float = 0.001
    private var sampleRate = 44_100.0
    // Rings of `window` entries; `counter` counts frames since reset.
    private var delayL: UnsafeMutablePointer<Float>?
    private var delayR: UnsafeMutablePointer<Float>?
    private var minimumRing: UnsafeMutablePointer<Float>?
    private var dequeValue: UnsafeMutablePointer<Float>?
    private var dequeIndex: UnsafeMutablePointer<Int>?
    private var dequeHead = 0, dequeCount = 0
    private var counter = 0
    private var minimumSum = 0.0
    private var gain: Float = 1
    /// Frames in a row whose window minimum was 1: from `window` on, the minimum ring holds
    /// only ones.
    private var unlimitedFrames = 0
    /// Whether blocks that need no limiting take the short path; tests switch it off to
    /// check the short path against the general loop.
    var takesUnlimitedShortcut = true
    /// Frames rendered by the short path since creation.
    private(set) var framesRenderedUnlimited = 0

    /// Creates a limiter with a ceiling in dBFS (clamped to at most 0).
    public init(ceilingDecibels: Float = -0.3, lookAheadSeconds: Double = 0.0015) {
        self.lookAheadSeconds = lookAheadSeconds
        parameters.jump(Parameter.ceiling, to: ceilingDecibels)
        update()
    }

    deinit { freeBuffers() }

    private func freeBuffers() {
        delayL?.deallocate(); delayR?.deallocate(); minimumRing?.deallocate()
        dequeValue?.deallocate(); dequeIndex?.deallocate()
    }

    public var latencyFrames: Int { window - 1 }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        parameters.prepare(sampleRate: sampleRate)
        freeBuffers()
        window = max(1, Int((lookAheadSeconds * sampleRate).rounded()))
        delayL = .allocate(capacity: window)
        delayR = .allocate(capacity: window)
        minimumRing = .allocate(capacity: window)
        dequeValue = .allocate(capacity: window + 1)
        dequeIndex = .allocate(capacity: window + 1)
        update()
        reset()
    }

    public func reset() {
        delayL?.initialize(repeating: 0, count: window)
        delayR?.initialize(repeating: 0, count: window)
        minimumRing?.initialize(repeating: 1, count: window)
        dequeHead = 0; dequeCount = 0
        counter = 0
        minimumSum = Double(window)
        gain = 1
        unlimitedFrames = window
    }

    private func update() {
        ceiling = min(1, decibelsToGain(parameters[Parameter.ceiling]))
        inputGain = decibelsToGain(parameters[Parameter.inputGain])
        releaseCoefficient = SmoothedValue.coefficient(seconds: Double(parameters[Parameter.release]) / 1000, sampleRate: sampleRate)
    }

    public func parametersChanged() { update() }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        renderFollowingParameters(startFrame: startFrame, frameCount: frameCount, inputs: inputs, output: output, renderSteady: { self.renderSteady(startFrame: $0, frameCount: $1, inputs: $2, output: $3) })
    }

    private func renderSteady(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        guard let delayL, let delayR, let minimumRing, let dequeValue, let dequeIndex else {
            output.clear(frameCount: frameCount)
            return
        }
        let input = inputs[0]
        if renderUnlimited(frameCount: frameCount, input: input, output: output) { return }
        let w = window, dequeCapacity = w + 1
        let invWindow = 1 / Double(w)
        let inputGain = self.inputGain, ceiling = self.ceiling, releaseCoefficient = self.releaseCoefficient
        // The state lives in locals for the block, and the rings' positions step and wrap
        // instead of being found by division: this loop runs on every frame of every render.
        var head = dequeHead, queued = dequeCount, counter = self.counter
        var minimumSum = self.minimumSum, gain = self.gain, unlimitedFrames = self.unlimitedFrames
        var ringSlot = counter % w
        var delaySlot = w > 1 ? counter % (w - 1) : 0
        @inline(__always) func wrapped(_ index: Int) -> Int { index >= dequeCapacity ? index - dequeCapacity : index }
        for i in 0..<frameCount {
            let xl = input.left[i] * inputGain, xr = input.right[i] * inputGain
            let peak = max(abs(xl), abs(xr))
            let required: Float = peak > ceiling ? ceiling / peak : 1
            // Sliding minimum of `required` over the last `w` frames (monotonic deque).
            while queued > 0 {
                if dequeValue[wrapped(head + queued - 1)] >= required { queued -= 1 } else { break }
            }
            let slot = wrapped(head + queued)
            dequeValue[slot] = required
            dequeIndex[slot] = counter
            queued += 1
            while dequeIndex[head] <= counter - w {
                head = wrapped(head + 1)
                queued -= 1
            }
            let windowMinimum = dequeValue[head]
            unlimitedFrames = windowMinimum == 1 ? unlimitedFrames + 1 : 0
            // Moving average of the window minima over the same length.
            minimumSum += Double(windowMinimum) - Double(minimumRing[ringSlot])
            minimumRing[ringSlot] = windowMinimum
            ringSlot = ringSlot + 1 == w ? 0 : ringSlot + 1
            let smoothed = Float(minimumSum * invWindow)
            if smoothed < gain { gain = smoothed } else { gain += (smoothed - gain) * releaseCoefficient }
            // The frame played now entered `w - 1` frames ago: every minimum averaged above
            // covered it, so the average is at most its required gain.
            var yl = xl * gain, yr = xr * gain
            if w > 1 {
                yl = delayL[delaySlot] * gain
                yr = delayR[delaySlot] * gain
                delayL[delaySlot] = xl
                delayR[delaySlot] = xr
                delaySlot = delaySlot + 1 == w - 1 ? 0 : delaySlot + 1
            }
            output.left[i] = min(max(yl, -ceiling), ceiling)
            output.right[i] = min(max(yr, -ceiling), ceiling)
            counter += 1
        }
        dequeHead = head
        dequeCount = queued
        self.counter = counter
        self.minimumSum = minimumSum
        self.gain = gain
        self.unlimitedFrames = unlimitedFrames
    }

    /// Renders a block in which nothing needs limiting and nothing did for a whole window,
    /// and returns true; returns false, touching nothing, otherwise.
    ///
    /// Most of a song is like this, and then every step of the general loop is known: each
    /// frame pushes a required gain of 1 onto a deque that holds only the previous 1, the
    /// moving average adds 1 and drops 1, and the gain, already equal to that average, stays.
    /// Only the delay line and the clamp remain, and the output is the general loop's exactly.
    private func renderUnlimited(frameCount: Int, input: StereoBuffer, output: StereoBuffer) -> Bool {
        guard takesUnlimitedShortcut, let delayL, let delayR, let dequeValue, let dequeIndex,
              unlimitedFrames >= window, dequeCount == 1, dequeValue[dequeHead] == 1,
              gain == Float(minimumSum * (1 / Double(window))) else { return false }
        let inputGain = self.inputGain, ceiling = self.ceiling, gain = self.gain
        // The general loop limits a frame only when one side's level is above the ceiling.
        if anyAboveCeiling(input, frameCount: frameCount) { return false }
        let w = window
        if w > 1 {
            // In stretches up to the delay line's wrap-around, so the loop has no test of the
            // position and runs several frames an instruction.
            var delaySlot = counter % (w - 1)
            var i = 0
            while i < frameCount {
                let stretch = min(frameCount - i, w - 1 - delaySlot)
                let lineL = delayL + delaySlot, lineR = delayR + delaySlot
                let inL = input.left + i, inR = input.right + i, outL = output.left + i, outR = output.right + i
                for j in 0..<stretch {
                    let yl = lineL[j] * gain, yr = lineR[j] * gain
                    lineL[j] = inL[j] * inputGain
                    lineR[j] = inR[j] * inputGain
                    outL[j] = min(max(yl, -ceiling), ceiling)
                    outR[j] = min(max(yr, -ceiling), ceiling)
                }
                i += stretch
                delaySlot += stretch
                if delaySlot == w - 1 { delaySlot = 0 }
            }
        } else {
            for i in 0..<frameCount {
                output.left[i] = min(max(input.left[i] * inputGain * gain, -ceiling), ceiling)
                output.right[i] = min(max(input.right[i] * inputGain * gain, -ceiling), ceiling)
            }
        }
        counter += frameCount
        dequeIndex[dequeHead] = counter - 1
        unlimitedFrames += frameCount
        framesRenderedUnlimited += frameCount
        return true
    }

    /// Whether `abs(x * inputGain) > ceiling` for a sample of either side, as the general
    /// loop tests each frame: `x * inputGain` above the ceiling or below its negation (the
    /// same for every value, NaN included, which passes neither). Four frames at a time,
    /// with one test of the lanes at the end.
    private func anyAboveCeiling(_ input: StereoBuffer, frameCount: Int) -> Bool {
        let gain4 = SIMD4<Float>(repeating: inputGain), upper = SIMD4<Float>(repeating: ceiling), lower = -upper
        var outside = SIMDMask<SIMD4<Int32>>(repeating: false)
        var i = 0
        while i + 4 <= frameCount {
            let l = UnsafeRawPointer(input.left + i).loadUnaligned(as: SIMD4<Float>.self) * gain4
            let r = UnsafeRawPointer(input.right + i).loadUnaligned(as: SIMD4<Float>.self) * gain4
            outside = outside .| (l .> upper) .| (l .< lower) .| (r .> upper) .| (r .< lower)
            i += 4
        }
        if any(outside) { return true }
        while i < frameCount {
            if abs(input.left[i] * inputGain) > ceiling || abs(input.right[i] * inputGain) > ceiling { return true }
            i += 1
        }
        return false
    }
}

/// A feed-forward compressor with a stereo-linked peak detector, threshold, ratio, attack,
/// release and make-up gain.
public final class CompressorNode: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Level in dBFS above which the gain is reduced.
        public static let threshold: UInt32 = 0
        /// Input decibels above the threshold per output decibel.
        public static let ratio: UInt32 = 1
        /// Time in milliseconds for the gain reduction to engage.
        public static let attack: UInt32 = 2
        /// Time in milliseconds for the gain to recover.
        public static let release: UInt32 = 3
        /// Gain in decibels applied after compression.
        public static let makeUpGain: UInt32 = 4
    }
    public let name = "Compressor"
    public let inputBusCount = 1
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.threshold, name: "Threshold", range: -60...0, unit: .decibels, defaultValue: -18),
        AudioParameterInfo(id: Parameter.ratio, name: "Ratio", range: 1...30, unit: .ratio, defaultValue: 4),
        AudioParameterInfo(id: Parameter.attack, name: "Attack", range: 0.05...500, unit: .milliseconds, defaultValue: 10),
        AudioParameterInfo(id: Parameter.release, name: "Release", range: 1...5000, unit: .milliseconds, defaultValue: 120),
        AudioParameterInfo(id: Parameter.makeUpGain, name: "Make-up gain", range: 0...30, unit: .decibels, defaultValue: 0),
    ])
    private var sampleRate = 44_100.0
    private var attackCoefficient: Float = 0.01, releaseCoefficient: Float = 0.001
    private var reductionDecibels: Float = 0
    private var makeUp: Float = 1

    /// Creates a compressor.
    public init(thresholdDecibels: Float = -18, ratio: Float = 4) {
        parameters.jump(Parameter.threshold, to: thresholdDecibels)
        parameters.jump(Parameter.ratio, to: ratio)
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        parameters.prepare(sampleRate: sampleRate)
        update()
        reset()
    }

    public func reset() { reductionDecibels = 0 }

    private func update() {
        attackCoefficient = SmoothedValue.coefficient(seconds: Double(parameters[Parameter.attack]) / 1000, sampleRate: sampleRate)
        releaseCoefficient = SmoothedValue.coefficient(seconds: Double(parameters[Parameter.release]) / 1000, sampleRate: sampleRate)
        makeUp = decibelsToGain(parameters[Parameter.makeUpGain])
    }

    public func parametersChanged() { update() }

    /// The gain reduction applied to the last frame, in decibels (0 or positive).
    public var gainReductionDecibels: Float { reductionDecibels }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        renderFollowingParameters(startFrame: startFrame, frameCount: frameCount, inputs: inputs, output: output, renderSteady: { self.renderSteady(startFrame: $0, frameCount: $1, inputs: $2, output: $3) })
    }

    private func renderSteady(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        let input = inputs[0]
        let threshold = parameters[Parameter.threshold]
        let slope = 1 - 1 / parameters[Parameter.ratio]
        for i in 0..<frameCount {
            let xl = input.left[i], xr = input.right[i]
            let peak = max(abs(xl), abs(xr))
            let level = peak > 1e-6 ? 20 * log10f(peak) : -120
            let wanted = max(0, (level - threshold) * slope)
            let c = wanted > reductionDecibels ? attackCoefficient : releaseCoefficient
            reductionDecibels += (wanted - reductionDecibels) * c
            let g = reductionDecibels > 1e-4 ? powf(10, -reductionDecibels / 20) * makeUp : makeUp
            output.left[i] = xl * g
            output.right[i] = xr * g
        }
    }
}
