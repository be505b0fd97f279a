import AudioGraph
import Foundation

/// A circular buffer of past samples, allocated in `prepare`.
struct DelayLine {
    private(set) var buffer: UnsafeMutablePointer<Float>?
    private(set) var capacity = 0
    private var writeIndex = 0

    /// Reallocates for `capacity` samples, all zero.
    mutating func allocate(capacity newCapacity: Int) {
        buffer?.deallocate()
        capacity = max(1, newCapacity)
        buffer = .allocate(capacity: capacity)
        buffer!.initialize(repeating: 0, count: capacity)
        writeIndex = 0
    }

    mutating func free() {
        buffer?.deallocate()
        buffer = nil
        capacity = 0
    }

    mutating func clear() {
        buffer?.update(repeating: 0, count: capacity)
        writeIndex = 0
    }

    /// The sample written `delay` samples ago (1 ... capacity).
    @inline(__always)
    func read(delay: Int) -> Float {
        var i = writeIndex - delay
        if i < 0 { i += capacity }
        return buffer![i]
    }

    @inline(__always)
    mutating func write(_ x: Float) {
        buffer![writeIndex] = x
        writeIndex += 1
        if writeIndex == capacity { writeIndex = 0 }
    }
}

/// A gain stage with a smoothed level.
public final class GainNode: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// The level in decibels, -96...24.
        public static let gain: UInt32 = 0
    }
    public let name = "Gain"
    public let inputBusCount = 1
    // No declared smoothing: the level glides in the linear domain, below.
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.gain, name: "Gain", range: -96...24, unit: .decibels, defaultValue: 0),
    ])
    private var gain = SmoothedValue(1)

    /// Creates a gain stage at `decibels`.
    public init(decibels: Float = 0) {
        parameters.jump(Parameter.gain, to: decibels)
        gain.jump(to: decibelsToGain(parameters[Parameter.gain]))
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        parameters.prepare(sampleRate: sampleRate)
        gain.coefficient = SmoothedValue.coefficient(seconds: 0.005, sampleRate: sampleRate)
        reset()
    }

    public func reset() { gain.jump(to: decibelsToGain(parameters[Parameter.gain])) }

    public func parametersChanged() { gain.target = decibelsToGain(parameters[Parameter.gain]) }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        let input = inputs[0]
        parameters.renderStretches(frameCount: frameCount, changed: { self.parametersChanged() }) { offset, count in
            for i in offset..<(offset + count) {
                let g = gain.next()
                output.left[i] = input.left[i] * g
                output.right[i] = input.right[i] * g
            }
        }
    }
}

/// The response shapes of ``BiquadFilterNode``.
public enum BiquadKind: Int, Sendable, CaseIterable {
    /// Passes what is below the frequency.
    case lowPass = 0
    /// Passes what is above the frequency.
    case highPass
    /// Passes a band around the frequency.
    case bandPass
    /// Boosts or cuts a band around the frequency by the gain.
    case peak
    /// Boosts or cuts what is below the frequency by the gain.
    case lowShelf
    /// Boosts or cuts what is above the frequency by the gain.
    case highShelf
    /// Removes a narrow band around the frequency.
    case notch
}

/// A second-order filter (Robert Bristow-Johnson's cookbook): low, high and band pass,
/// peaking, shelving and notch. Coefficients change at the exact frame of a parameter change.
public final class BiquadFilterNode: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Filter shape, a ``BiquadKind`` raw value.
        public static let kind: UInt32 = 0
        /// Cutoff or centre frequency in hertz.
        public static let frequency: UInt32 = 1
        /// Resonance (quality factor).
        public static let q: UInt32 = 2
        /// Boost or cut of the peak and shelf shapes, in decibels.
        public static let gain: UInt32 = 3
    }
    public let name = "Biquad filter"
    public let inputBusCount = 1
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.kind, name: "Type", range: 0...Float(BiquadKind.allCases.count - 1), unit: .indexed, defaultValue: 0),
        AudioParameterInfo(id: Parameter.frequency, name: "Frequency", range: 10...40_000, unit: .hertz, defaultValue: 1000),
        AudioParameterInfo(id: Parameter.q, name: "Q", range: 0.1...30, unit: .generic, defaultValue: 0.7071),
        AudioParameterInfo(id: Parameter.gain, name: "Gain", range: -30...30, unit: .decibels, defaultValue: 0),
    ])
    private var sampleRate = 44_100.0
    private var b0: Float = 1, b1: Float = 0, b2: Float = 0, a1: Float = 0, a2: Float = 0
    private var z1L: Float = 0, z2L: Float = 0, z1R: Float = 0, z2R: Float = 0

    /// Creates a filter.
    public init(kind: BiquadKind = .lowPass, frequency: Float = 1000, q: Float = 0.7071, gainDecibels: Float = 0) {
        parameters.jump(Parameter.kind, to: Float(kind.rawValue))
        parameters.jump(Parameter.frequency, to: frequency)
        parameters.jump(Parameter.q, to: q)
        parameters.jump(Parameter.gain, to: gainDecibels)
        updateCoefficients()
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        parameters.prepare(sampleRate: sampleRate)
        updateCoefficients()
        reset()
    }

    public func reset() { z1L = 0; z2L = 0; z1R = 0; z2R = 0 }

    public func parametersChanged() { updateCoefficients() }

    private func updateCoefficients() {
        let kind = BiquadKind(rawValue: Int(parameters[Parameter.kind].rounded())) ?? .lowPass
        let f = min(Double(parameters[Parameter.frequency]), sampleRate * 0.49)
        let q = Double(parameters[Parameter.q])
        let a = pow(10, Double(parameters[Parameter.gain]) / 40)
        let w = 2 * Double.pi * f / sampleRate
        let cw = cos(w), sw = sin(w)
        let alpha = sw / (2 * q)
        var n0 = 1.0, n1 = 0.0, n2 = 0.0, d0 = 1.0, d1 = 0.0, d2 = 0.0
        switch kind {
        case .lowPass: n0 = (1 - cw) / 2; n1 = 1 - cw; n2 = n0; d0 = 1 + alpha; d1 = -2 * cw; d2 = 1 - alpha
        case .highPass: n0 = (1 + cw) / 2; n1 = -(1 + cw); n2 = n0; d0 = 1 + alpha; d1 = -2 * cw; d2 = 1 - alpha
        case .bandPass: n0 = alpha; n1 = 0; n2 = -alpha; d0 = 1 + alpha; d1 = -2 * cw; d2 = 1 - alpha
        case .notch: n0 = 1; n1 = -2 * cw; n2 = 1; d0 = 1 + alpha; d1 = -2 * cw; d2 = 1 - alpha
        case .peak:
            n0 = 1 + alpha * a; n1 = -2 * cw; n2 = 1 - alpha * a
            d0 = 1 + alpha / a; d1 = -2 * cw; d2 = 1 - alpha / a
        case .lowShelf, .highShelf:
            let s = 2 * sqrt(a) * alpha
            let sign = kind == .lowShelf ? 1.0 : -1.0
            n0 = a * ((a + 1) - sign * (a - 1) * cw + s)
            n1 = sign * 2 * a * ((a - 1) - sign * (a + 1) * cw)
            n2 = a * ((a + 1) - sign * (a - 1) * cw - s)
            d0 = (a + 1) + sign * (a - 1) * cw + s
            d1 = -sign * 2 * ((a - 1) + sign * (a + 1) * cw)
            d2 = (a + 1) + sign * (a - 1) * cw - s
        }
        b0 = Float(n0 / d0); b1 = Float(n1 / d0); b2 = Float(n2 / d0)
        a1 = Float(d1 / d0); a2 = Float(d2 / d0)
    }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        let input = inputs[0]
        parameters.renderStretches(frameCount: frameCount, changed: { self.parametersChanged() }) { offset, count in
            for i in offset..<(offset + count) {
                let xl = input.left[i]
                let yl = b0 * xl + z1L
                z1L = b1 * xl - a1 * yl + z2L
                z2L = b2 * xl - a2 * yl
                output.left[i] = yl
                let xr = input.right[i]
                let yr = b0 * xr + z1R
                z1R = b1 * xr - a1 * yr + z2R
                z2R = b2 * xr - a2 * yr
                output.right[i] = yr
            }
        }
    }
}

/// A feedback comb filter: `y[n] = x[n] + feedback * y[n - delay]`, mixed with the dry signal.
public final class CombFilterNode: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Comb delay in milliseconds.
        public static let delay: UInt32 = 0
        /// Portion of the delayed signal fed back.
        public static let feedback: UInt32 = 1
        /// Wet portion of the output (0 dry, 1 wet).
        public static let mix: UInt32 = 2
    }
    public let name = "Comb filter"
    public let inputBusCount = 1
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.delay, name: "Delay", range: 0.1...100, unit: .milliseconds, defaultValue: 10),
        AudioParameterInfo(id: Parameter.feedback, name: "Feedback", range: -0.99...0.99, unit: .fraction, defaultValue: 0.5),
        AudioParameterInfo(id: Parameter.mix, name: "Mix", range: 0...1, unit: .fraction, defaultValue: 0.5),
    ])
    private var sampleRate = 44_100.0
    private var lineL = DelayLine(), lineR = DelayLine()
    private var delayFrames = 1

    /// Creates a comb filter.
    public init(delayMilliseconds: Float = 10, feedback: Float = 0.5, mix: Float = 0.5) {
        parameters.jump(Parameter.delay, to: delayMilliseconds)
        parameters.jump(Parameter.feedback, to: feedback)
        parameters.jump(Parameter.mix, to: mix)
    }

    deinit { lineL.free(); lineR.free() }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        parameters.prepare(sampleRate: sampleRate)
        let capacity = Int(sampleRate * 0.1) + 2
        lineL.allocate(capacity: capacity)
        lineR.allocate(capacity: capacity)
        updateDelay()
    }

    public func reset() { lineL.clear(); lineR.clear() }

    private func updateDelay() {
        delayFrames = min(max(1, Int((Double(parameters[Parameter.delay]) * sampleRate / 1000).rounded())), max(1, lineL.capacity))
    }

    public func parametersChanged() { updateDelay() }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        let input = inputs[0]
        parameters.renderStretches(frameCount: frameCount, changed: { self.parametersChanged() }) { offset, count in
            let fb = parameters[Parameter.feedback], wet = parameters[Parameter.mix], dry = 1 - wet
            let d = delayFrames
            for i in offset..<(offset + count) {
                let yl = input.left[i] + fb * lineL.read(delay: d)
                lineL.write(yl)
                output.left[i] = dry * input.left[i] + wet * yl
                let yr = input.right[i] + fb * lineR.read(delay: d)
                lineR.write(yr)
                output.right[i] = dry * input.right[i] + wet * yr
            }
        }
    }
}

/// An echo: a delay line with feedback through a damping low-pass, mixed with the dry signal.
public final class DelayNode: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Echo time in milliseconds.
        public static let time: UInt32 = 0
        /// Portion of the delayed signal fed back.
        public static let feedback: UInt32 = 1
        /// Wet portion of the output (0 dry, 1 wet).
        public static let mix: UInt32 = 2
        /// Cutoff in hertz of the low-pass in the feedback path.
        public static let damping: UInt32 = 3
    }
    public let name = "Delay"
    public let inputBusCount = 1
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.time, name: "Time", range: 1...2000, unit: .milliseconds, defaultValue: 250),
        AudioParameterInfo(id: Parameter.feedback, name: "Feedback", range: 0...0.95, unit: .fraction, defaultValue: 0.35),
        AudioParameterInfo(id: Parameter.mix, name: "Mix", range: 0...1, unit: .fraction, defaultValue: 0.3),
        AudioParameterInfo(id: Parameter.damping, name: "Damping cutoff", range: 200...20_000, unit: .hertz, defaultValue: 8000),
    ])
    private var sampleRate = 44_100.0
    private var lineL = DelayLine(), lineR = DelayLine()
    private var delayFrames = 1
    private var dampCoefficient: Float = 1
    private var dampL: Float = 0, dampR: Float = 0

    /// Creates a delay.
    public init(milliseconds: Float = 250, feedback: Float = 0.35, mix: Float = 0.3) {
        parameters.jump(Parameter.time, to: milliseconds)
        parameters.jump(Parameter.feedback, to: feedback)
        parameters.jump(Parameter.mix, to: mix)
    }

    deinit { lineL.free(); lineR.free() }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        parameters.prepare(sampleRate: sampleRate)
        let capacity = Int(sampleRate * 2.0) + 2
        lineL.allocate(capacity: capacity)
        lineR.allocate(capacity: capacity)
        update()
        dampL = 0; dampR = 0
    }

    public func reset() { lineL.clear(); lineR.clear(); dampL = 0; dampR = 0 }

    private func update() {
        delayFrames = min(max(1, Int((Double(parameters[Parameter.time]) * sampleRate / 1000).rounded())), max(1, lineL.capacity))
        dampCoefficient = Float(1 - exp(-2 * Double.pi * Double(parameters[Parameter.damping]) / sampleRate))
    }

    public func parametersChanged() { update() }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        let input = inputs[0]
        parameters.renderStretches(frameCount: frameCount, changed: { self.parametersChanged() }) { offset, count in
            let fb = parameters[Parameter.feedback], wet = parameters[Parameter.mix], dry = 1 - wet
            let d = delayFrames, c = dampCoefficient
            for i in offset..<(offset + count) {
                let el = lineL.read(delay: d), er = lineR.read(delay: d)
                dampL += (el - dampL) * c
                dampR += (er - dampR) * c
                lineL.write(input.left[i] + fb * dampL)
                lineR.write(input.right[i] + fb * dampR)
                output.left[i] = dry * input.left[i] + wet * el
                output.right[i] = dry * input.right[i] + wet * er
            }
        }
    }
}
