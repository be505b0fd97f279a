import AudioGraph
import CFloatConversion
import Foundation

/// A stereo chorus: the input feeds one delay line read by several voices whose delays swing
/// with sine LFOs spread evenly in phase, mixed to stereo as FluidSynth's chorus does.
///
/// FluidSynth's stereo unit sums even voices into one side and odd voices into the other
/// (with an odd count above 2, the last voice into both), then spreads them at its fixed
/// width of 10: each side takes its own sum at `level / 3 * 5.5` and the other's at
/// `level / 3 * -4.5`. That wide mix is much louder than an equal-power pan, so matching it
/// is what makes FluidSynth's default sound (chorus on) and Tactus's the same level.
///
/// Everything advances per sample (delay line, LFO phase), so the output does not depend on
/// how blocks are split. The delay line is allocated in `prepare`.
public final class ChorusNode: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Number of chorus voices, 1...8.
        public static let voices: UInt32 = 0
        /// LFO rate in hertz.
        public static let rate: UInt32 = 1
        /// Delay swing, peak to peak, in milliseconds.
        public static let depth: UInt32 = 2
        /// Level of the chorused signal (FluidSynth's chorus level scale: 2 is its default).
        public static let level: UInt32 = 3
        /// Level of the direct signal.
        public static let dry: UInt32 = 4
    }

    public let name = "Chorus"
    public let inputBusCount = 1
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.voices, name: "Voices", range: 1...8, unit: .indexed, defaultValue: 3),
        AudioParameterInfo(id: Parameter.rate, name: "Rate", range: 0.05...5, unit: .hertz, defaultValue: 0.3),
        AudioParameterInfo(id: Parameter.depth, name: "Depth", range: 0...20, unit: .milliseconds, defaultValue: 8),
        AudioParameterInfo(id: Parameter.level, name: "Level", range: 0...10, unit: .generic, defaultValue: 2),
        AudioParameterInfo(id: Parameter.dry, name: "Dry level", range: 0...1, unit: .fraction, defaultValue: 0),
    ])

    /// Shortest delay in milliseconds, under the swing.
    private static let baseDelayMilliseconds = 2.0
    private static let maximumVoices = 8
    private var line: UnsafeMutablePointer<Float>?
    private var lineLength = 0
    private var writeIndex = 0
    private var lfoPhase: Double = 0
    /// Zero samples in a row at the end of what was written to the line (at most its length):
    /// from `lineLength` on, the whole line is zero and so is every voice.
    private var silentRun = 0
    /// Whether silent blocks over a silent line take the short path; tests switch it off to
    /// check the short path against the general loop.
    var takesSilentShortcut = true
    /// Frames rendered by the short path since creation.
    private(set) var framesRenderedSilent = 0
    private var sampleRate: Double = 44_100
    // Derived from the parameters.
    private var voiceCount = 3
    private var phaseStep: Double = 0
    private var centreDelay: Float = 0
    private var swing: Float = 0
    /// Gain of a side's own voices and of the other side's, from the level and the width.
    private var ownSideGain: Float = 0
    private var otherSideGain: Float = 0
    private var dryGain: Float = 0
    /// FluidSynth's stereo width (its WIDTH, fixed at the maximum).
    private static let width: Float = 10
    /// One sine period with a guard point, read with linear interpolation: a call to sin()
    /// per voice and sample would cost more than the whole chorus.
    private static let sineSize = 4096
    /// Each voice's LFO phase offset, `k / voiceCount`, computed when the count changes.
    private let voiceOffsets: UnsafeMutablePointer<Double> = .allocate(capacity: ChorusNode.maximumVoices)
    private let sine: UnsafeMutablePointer<Float> = {
        let table = UnsafeMutablePointer<Float>.allocate(capacity: ChorusNode.sineSize + 1)
        for i in 0...ChorusNode.sineSize { table[i] = Float(sin(2 * Double.pi * Double(i) / Double(ChorusNode.sineSize))) }
        return table
    }()

    /// Creates a chorus; `dry` 0 gives only the chorused signal (for send effects).
    public init(voices: Int = 3, rate: Float = 0.3, depthMilliseconds: Float = 8, level: Float = 2, dry: Float = 0) {
        parameters.jump(Parameter.voices, to: Float(voices))
        parameters.jump(Parameter.rate, to: rate)
        parameters.jump(Parameter.depth, to: depthMilliseconds)
        parameters.jump(Parameter.level, to: level)
        parameters.jump(Parameter.dry, to: dry)
        update()
    }

    deinit {
        line?.deallocate()
        sine.deallocate()
        voiceOffsets.deallocate()
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        parameters.prepare(sampleRate: sampleRate)
        line?.deallocate()
        // Room for the longest delay the parameters allow, plus the interpolation points.
        lineLength = Int((Self.baseDelayMilliseconds + 20) * sampleRate / 1000) + 4
        line = .allocate(capacity: lineLength)
        line!.initialize(repeating: 0, count: lineLength)
        update()
        reset()
    }

    public func reset() {
        line?.update(repeating: 0, count: lineLength)
        writeIndex = 0
        lfoPhase = 0
        silentRun = lineLength
    }

    private func update() {
        voiceCount = Int(parameters[Parameter.voices])
        for k in 0..<Self.maximumVoices { voiceOffsets[k] = Double(k) / Double(voiceCount) }
        phaseStep = Double(parameters[Parameter.rate]) / sampleRate
        let samplesPerMillisecond = Float(sampleRate / 1000)
        swing = parameters[Parameter.depth] * samplesPerMillisecond / 2
        centreDelay = Float(Self.baseDelayMilliseconds) * samplesPerMillisecond + swing
        let level = parameters[Parameter.level]
        if voiceCount > 1 {
            // Divided by 1 + width * 0.2, so the level hardly depends on the width.
            let wet = level / (1 + Self.width * 0.2)
            ownSideGain = wet * (Self.width / 2 + 0.5)
            otherSideGain = wet * ((1 - Self.width) / 2)
        } else {
            ownSideGain = level
            otherSideGain = -level
        }
        dryGain = parameters[Parameter.dry]
    }

    public func parametersChanged() { update() }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        // Ramps step every 32 frames: update() recomputes every voice's pan, too costly per frame.
        renderFollowingParameters(startFrame: startFrame, frameCount: frameCount, inputs: inputs, output: output,
                                  controlInterval: 32,
                                  renderSteady: { self.renderSteady(startFrame: $0, frameCount: $1, inputs: $2, output: $3) })
    }

    private func renderSteady(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        guard let line, lineLength > 0 else {
            output.clear(frameCount: frameCount)
            return
        }
        let input = inputs[0]
        if renderSilent(frameCount: frameCount, input: input, output: output, line: line) { return }
        let n = min(voiceCount, Self.maximumVoices)
        let length = lineLength
        let offsets = voiceOffsets, sine = self.sine
        let centreDelay = self.centreDelay, swing = self.swing, phaseStep = self.phaseStep
        let ownSideGain = self.ownSideGain, otherSideGain = self.otherSideGain, dryGain = self.dryGain
        // The state lives in locals for the block: read and written through the object on every
        // frame, it cost more than the voices' arithmetic.
        var writeIndex = self.writeIndex, lfoPhase = self.lfoPhase
        /// Voice `k`'s output at this frame: its delay line read where its LFO puts it.
        @inline(__always) func voice(_ k: Int, phase lfoPhase: Double, writeIndex: Int) -> Float {
            var p = lfoPhase + offsets[k]
            if p >= 1 { p -= 1 }
            let x = Float(p) * Float(Self.sineSize)
            // In range by construction: x is in [0, 4096], position in [0, length).
            let j = min(tactus_truncate_float(x), Self.sineSize - 1)
            let lfo = sine[j] + (sine[j + 1] - sine[j]) * (x - Float(j))
            let delay = centreDelay + swing * lfo
            // Linear interpolation between the two points around the delayed position.
            var position = Float(writeIndex) - delay
            if position < 0 { position += Float(length) }
            let i0 = tactus_truncate_float(position)
            let frac = position - Float(i0)
            let i1 = i0 + 1 == length ? 0 : i0 + 1
            return line[i0] + (line[i1] - line[i0]) * frac
        }
        for f in 0..<frameCount {
            let x = (input.left[f] + input.right[f]) * 0.5
            line[writeIndex] = x
            var even: Float = 0, odd: Float = 0
            if n == 3 {
                // The default, spelled out so the optimizer keeps the voices in registers;
                // the sums are the general loop's, in its order.
                let y0 = voice(0, phase: lfoPhase, writeIndex: writeIndex)
                let y1 = voice(1, phase: lfoPhase, writeIndex: writeIndex)
                let y2 = voice(2, phase: lfoPhase, writeIndex: writeIndex)
                even = (even + y0) + y2
                odd = (odd + y1) + y2
            } else {
                var last: Float = 0
                for k in 0..<n {
                    let y = voice(k, phase: lfoPhase, writeIndex: writeIndex)
                    if k & 1 == 0 { even += y } else { odd += y }
                    last = y
                }
                // An odd count leaves the odd side a voice short: the last voice goes there too.
                if n & 1 == 1 && n > 2 { odd += last }
            }
            output.left[f] = even * ownSideGain + odd * otherSideGain + input.left[f] * dryGain
            output.right[f] = odd * ownSideGain + even * otherSideGain + input.right[f] * dryGain
            writeIndex += 1
            if writeIndex == length { writeIndex = 0 }
            lfoPhase += phaseStep
            if lfoPhase >= 1 { lfoPhase -= 1 }
        }
        self.writeIndex = writeIndex
        self.lfoPhase = lfoPhase
        // How many of the samples just written, counting back from the last, are zero.
        var trailingZeros = 0, index = writeIndex
        while trailingZeros < frameCount {
            index = index == 0 ? length - 1 : index - 1
            if line[index] != 0 { break }
            trailingZeros += 1
        }
        silentRun = trailingZeros == frameCount ? min(silentRun + frameCount, length) : trailingZeros
    }

    /// Renders a block whose input is silent while the whole line is: every voice reads zero,
    /// so the output is +0 (as the general loop's sums of zeros give), and only the line and the
    /// LFO phase move on, exactly as the general loop moves them. A song that never sends to the
    /// chorus pays for its input check and nothing else.
    /// Returns false, having done nothing, when the block needs the general loop.
    private func renderSilent(frameCount: Int, input: StereoBuffer, output: StereoBuffer, line: UnsafeMutablePointer<Float>) -> Bool {
        guard takesSilentShortcut, silentRun >= lineLength else { return false }
        for f in 0..<frameCount where input.left[f] != 0 || input.right[f] != 0 { return false }
        // The line gets the same values (zeros, possibly negative) the general loop writes.
        var writeIndex = self.writeIndex, lfoPhase = self.lfoPhase
        let phaseStep = self.phaseStep
        for f in 0..<frameCount {
            line[writeIndex] = (input.left[f] + input.right[f]) * 0.5
            writeIndex += 1
            if writeIndex == lineLength { writeIndex = 0 }
            lfoPhase += phaseStep
            if lfoPhase >= 1 { lfoPhase -= 1 }
        }
        self.writeIndex = writeIndex
        self.lfoPhase = lfoPhase
        output.clear(frameCount: frameCount)
        framesRenderedSilent += frameCount
        return true
    }
}
