// The per-frame work on four voices at once (one voice a SIMD lane): filter, pan and gain
// ramps, and the effect sends. Kept apart from the voice bookkeeping in SamplerRendering.swift.

/// The filter and gain state of four voices rendered together, one voice a lane.
struct SamplerLaneState {
    var history1: SIMD4<Float>, history2: SIMD4<Float>
    var b02: SIMD4<Float>, b1: SIMD4<Float>, a1: SIMD4<Float>, a2: SIMD4<Float>
    var db02: SIMD4<Float>, db1: SIMD4<Float>, da1: SIMD4<Float>, da2: SIMD4<Float>
    /// b0 − b2 and its ramp, read only by ``GeneralNumerator`` groups.
    var b0Excess: SIMD4<Float>, db0Excess: SIMD4<Float>
    var gainL: SIMD4<Float>, gainR: SIMD4<Float>
    var stepL: SIMD4<Float>, stepR: SIMD4<Float>
    /// Frames each lane really produced in this stretch; later frames are silent.
    var valid: SIMD4<Float>

    static let silent = SamplerLaneState(history1: .zero, history2: .zero, b02: .zero, b1: .zero, a1: .zero, a2: .zero,
                                         db02: .zero, db1: .zero, da1: .zero, da2: .zero, b0Excess: .zero, db0Excess: .zero, gainL: .zero, gainR: .zero,
                                         stepL: .zero, stepR: .zero, valid: .zero)
}

/// Which numerator the filter of a group of four lanes needs.
///
/// The two-pole filters have b0 = b2 and cost one product less as b02 (x + h2); a one-pole
/// filter needs b0 on its own. Groups without a one-pole lane keep the symmetric form, so
/// SoundFont renders and their speed do not change.
protocol LaneFilterForm {
    /// True to add (b0 − b2) x the centre term to the symmetric output, and to ramp it.
    static var hasB0Excess: Bool { get }
}

/// b0 = b2 in every lane: the two-pole filters only.
enum SymmetricNumerator: LaneFilterForm {
    static var hasB0Excess: Bool { false }
}

/// Some lane has b0 ≠ b2 (a one-pole filter). Its output is the symmetric form's plus
/// (b0 − b2) x centre, so a two-pole lane (excess zero) plays exactly as in a symmetric group.
enum GeneralNumerator: LaneFilterForm {
    static var hasB0Excess: Bool { true }
}

/// Where a filtered frame of four lanes goes besides the dry mix.
///
/// Passed by value and never mutated: an `inout` sink of no size gets a shared placeholder
/// address, which ThreadSanitizer reports as a race between two threads rendering at once.
protocol LaneSends {
    /// Frames since the last control step at the first frame of the stretch, one a lane.
    var firstFrames: SIMD4<Float> { get }
    func add(_ y: SIMD4<Float>, frame k: Int, frames: SIMD4<Float>)
}

/// Reverb and chorus sends switched off.
struct NoSends: LaneSends {
    var firstFrames: SIMD4<Float> { .zero }
    @inline(__always) func add(_ y: SIMD4<Float>, frame k: Int, frames: SIMD4<Float>) {}
}

/// The reverb and chorus sends of four lanes. A send's gain is its level at the last control
/// step plus its step times the frames since.
struct SendMix: LaneSends {
    let reverbBase: SIMD4<Float>, reverbStep: SIMD4<Float>
    let chorusBase: SIMD4<Float>, chorusStep: SIMD4<Float>
    /// Frames since the last control step, counting the first one added. Frame counts are
    /// small integers, exact in a float, so counting up by one is exact.
    let firstFrames: SIMD4<Float>
    let sumReverb: UnsafeMutablePointer<SIMD4<Float>>
    let sumChorus: UnsafeMutablePointer<SIMD4<Float>>

    @inline(__always) func add(_ y: SIMD4<Float>, frame k: Int, frames: SIMD4<Float>) {
        sumReverb[k] += y * (reverbBase + reverbStep * frames)
        sumChorus[k] += y * (chorusBase + chorusStep * frames)
    }
}

/// The reverb send alone, for four lanes whose chorus send is zero (most SoundFont voices: the
/// chorus send is a generator few instruments set, or controller 93, which few songs move).
/// Adding `y * 0` to the chorus sums would not change them: they start at +0 and a sum that
/// starts at +0 never becomes -0, so leaving the chorus out changes no bit of the output.
struct ReverbSend: LaneSends {
    let reverbBase: SIMD4<Float>, reverbStep: SIMD4<Float>
    let firstFrames: SIMD4<Float>
    let sumReverb: UnsafeMutablePointer<SIMD4<Float>>

    @inline(__always) func add(_ y: SIMD4<Float>, frame k: Int, frames: SIMD4<Float>) {
        sumReverb[k] += y * (reverbBase + reverbStep * frames)
    }
}

extension SamplerNode {
    /// Filters the four lanes of `lanes` and adds them, panned, to the mix and the sends.
    ///
    /// Not inlined on purpose: seeing the lanes gathered from scalars, the optimizer splits the
    /// filter's vectors into shuffled pieces, which doubles the loop's instructions.
    @inline(never)
    static func filterAndMix<Form: LaneFilterForm, Sends: LaneSends>(_ form: Form.Type, _ state: UnsafeMutablePointer<SamplerLaneState>, count: Int,
                                               lanes: UnsafeMutablePointer<SIMD4<Float>>, sumL: UnsafeMutablePointer<SIMD4<Float>>,
                                               sumR: UnsafeMutablePointer<SIMD4<Float>>, sends: Sends) {
        var h1 = state.pointee.history1, h2 = state.pointee.history2
        var b02 = state.pointee.b02, b1 = state.pointee.b1, a1 = state.pointee.a1, a2 = state.pointee.a2
        let db02 = state.pointee.db02, db1 = state.pointee.db1, da1 = state.pointee.da1, da2 = state.pointee.da2
        var b0Excess = state.pointee.b0Excess
        let db0Excess = state.pointee.db0Excess
        var gl = state.pointee.gainL, gr = state.pointee.gainR
        let sl = state.pointee.stepL, sr = state.pointee.stepR
        let valid = state.pointee.valid
        var ramping = (db02 * db02 + db1 * db1 + da1 * da1 + da2 * da2).max() != 0
        if Form.hasB0Excess, db0Excess != .zero { ramping = true }
        let zero = SIMD4<Float>()
        let truncated = valid.min() < Float(count)
        var sendFrames = sends.firstFrames
        // FluidSynth's direct form II biquad; the feedback term on the older history comes
        // first, which shortens the chain each sample waits on.
        if ramping || truncated {
            var frame = SIMD4<Float>()
            for k in 0..<count {
                let centre = lanes[k] - a2 * h2 - a1 * h1
                var y = b02 * (centre + h2) + b1 * h1
                if Form.hasB0Excess {
                    y += b0Excess * centre
                    b0Excess += db0Excess
                }
                h2 = h1
                h1 = centre
                b02 += db02
                b1 += db1
                a1 += da1
                a2 += da2
                // A lane past its end (a sample or fade that ended) is silent, so the
                // filter's ringing never depends on where blocks were split.
                y.replace(with: zero, where: frame .>= valid)
                frame += 1
                // Step first, so a note's first frame is already heard (its onset is exact).
                gl += sl
                gr += sr
                sumL[k] += y * gl
                sumR[k] += y * gr
                sends.add(y, frame: k, frames: sendFrames)
                sendFrames += 1
            }
        } else {
            for k in 0..<count {
                let centre = lanes[k] - a2 * h2 - a1 * h1
                var y = b02 * (centre + h2) + b1 * h1
                if Form.hasB0Excess { y += b0Excess * centre }
                h2 = h1
                h1 = centre
                gl += sl
                gr += sr
                sumL[k] += y * gl
                sumR[k] += y * gr
                sends.add(y, frame: k, frames: sendFrames)
                sendFrames += 1
            }
        }
        state.pointee.history1 = h1
        state.pointee.history2 = h2
        state.pointee.b02 = b02
        state.pointee.b1 = b1
        state.pointee.a1 = a1
        state.pointee.a2 = a2
        if Form.hasB0Excess { state.pointee.b0Excess = b0Excess }
        state.pointee.gainL = gl
        state.pointee.gainR = gr
    }
}
