import Foundation
import Tactus

/// A feedback comb filter as a custom effect: `y[n] = x[n] + feedback * y[n - delay]`, with the
/// delay read between samples so an automated delay sweeps smoothly. Declared parameters are
/// all it takes for the graph and automation to find them.
public final class SweepingCombFilter: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Delay in milliseconds.
        public static let delay: UInt32 = 0
        /// Portion of the delayed output fed back.
        public static let feedback: UInt32 = 1
    }

    public let name = "Sweeping comb"
    public let inputBusCount = 1
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.delay, name: "Delay", range: 0.5...50, unit: .milliseconds, defaultValue: 5,
                           smoothingSeconds: 0.02),
        AudioParameterInfo(id: Parameter.feedback, name: "Feedback", range: -0.98...0.98, unit: .fraction, defaultValue: 0.5,
                           smoothingSeconds: 0.02),
    ])
    private var line: UnsafeMutablePointer<Float>?
    private var length = 0, write = 0
    private var framesPerMillisecond: Float = 44.1

    /// A comb filter at its default settings.
    public init() {}

    deinit { line?.deallocate() }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        parameters.prepare(sampleRate: sampleRate)
        framesPerMillisecond = Float(sampleRate / 1000)
        line?.deallocate()
        length = Int(sampleRate * 0.05) + 4
        line = .allocate(capacity: length)
        reset()
    }

    public func reset() {
        line?.update(repeating: 0, count: length)
        write = 0
    }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        guard let line else { return output.clear(frameCount: frameCount) }
        let input = inputs[0]
        parameters.renderStretches(frameCount: frameCount, changed: {}) { offset, count in
            let delay = parameters[Parameter.delay] * framesPerMillisecond
            let feedback = parameters[Parameter.feedback]
            for i in offset..<(offset + count) {
                var position = Float(write) - delay
                if position < 0 { position += Float(length) }
                let i0 = Int(position), fraction = position - Float(i0)
                let delayed = line[i0] + (line[i0 + 1 == length ? 0 : i0 + 1] - line[i0]) * fraction
                let x = 0.5 * (input.left[i] + input.right[i])
                let y = x + feedback * delayed
                line[write] = y
                write = write + 1 == length ? 0 : write + 1
                output.left[i] = 0.5 * y
                output.right[i] = 0.5 * y
            }
        }
    }
}

/// A sine tone generator that starts and stops on note-on and note-off with click-free fades:
/// its "Amplitude" parameter glides (declared smoothing), so a start or stop at any frame
/// never jumps.
public final class ToneGenerator: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Frequency in hertz.
        public static let frequency: UInt32 = 0
        /// Linear amplitude; note-on sets it to the note's velocity, note-off to 0.
        public static let amplitude: UInt32 = 1
    }

    public let name = "Tone generator"
    public let inputBusCount = 0
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.frequency, name: "Frequency", range: 20...10_000, unit: .hertz, defaultValue: 440,
                           smoothingSeconds: 0.005),
        AudioParameterInfo(id: Parameter.amplitude, name: "Amplitude", range: 0...1, unit: .linearGain, defaultValue: 0,
                           smoothingSeconds: 0.008),
    ])
    private var phase = 0.0, sampleRate = 44_100.0

    /// A silent generator at 440 Hz.
    public init() {}

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        parameters.prepare(sampleRate: sampleRate)
        reset()
    }

    public func reset() { phase = 0 }

    public func receive(_ message: MIDIMessage, atFrame frame: Int64) {
        if message.isNoteOn {
            parameters.set(Parameter.frequency, Float(440 * pow(2, (Double(message.data1) - 69) / 12)))
            parameters.set(Parameter.amplitude, 0.5 * Float(message.data2) / 127)
        } else if message.isNoteOff {
            parameters.set(Parameter.amplitude, 0)
        }
    }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        parameters.renderStretches(frameCount: frameCount, changed: {}) { offset, count in
            let step = Double(parameters[Parameter.frequency]) / sampleRate
            let amplitude = parameters[Parameter.amplitude]
            for i in offset..<(offset + count) {
                let v = Float(sin(2 * Double.pi * phase)) * amplitude
                phase += step
                if phase >= 1 { phase -= 1 }
                output.left[i] = v
                output.right[i] = v
            }
        }
    }
}
