import CFloatConversion
import Foundation

/// Amplitude envelope stages.
enum EnvelopeStage: UInt8 {
    case attack, decay, sustain, release, fastFade, off
}

/// Fixed values a voice's sample loop needs, shared by all voices of a synthesizer.
struct VoiceTables {
    /// 2048-point sine table with a guard point, for interpolated lookup.
    let sine: UnsafeMutablePointer<Float>
    static let sineSize = 2048

    init() {
        sine = .allocate(capacity: Self.sineSize + 1)
        for i in 0...Self.sineSize { sine[i] = Float(Foundation.sin(2 * Double.pi * Double(i) / Double(Self.sineSize))) }
    }

    func free() { sine.deallocate() }

    /// sin(2π·phase) for phase in [0, 1).
    ///
    /// The index is truncated without Swift's range check: the phase is in [0, 1) by
    /// construction, so the product is finite and below the table size, and the check would
    /// cost more than the lookup (it runs up to three times a sample in an FM voice).
    @inline(__always)
    func sin(_ phase: Float) -> Float {
        let x = phase * Float(Self.sineSize)
        let i = tactus_truncate_float(x)
        let f = x - Float(i)
        let a = sine[i & (Self.sineSize - 1)], b = sine[(i & (Self.sineSize - 1)) + 1]
        return a + (b - a) * f
    }
}

/// PolyBLEP residual that removes most aliasing from a waveform step at phase 0.
@inline(__always)
func polyBLEP(_ t: Float, _ dt: Float) -> Float {
    if t < dt {
        let x = t / dt
        return x + x - x * x - 1
    } else if t > 1 - dt {
        let x = (t - 1) / dt
        return x * x + x + x + 1
    }
    return 0
}

@inline(__always)
func wrap(_ phase: Float) -> Float {
    phase >= 1 ? phase - 1 : phase
}

/// One sounding note. Plain value stored in the synthesizer's preallocated pool.
struct Voice {
    var stage = EnvelopeStage.off
    var channel: UInt8 = 0
    var key: UInt8 = 0
    var velocity: Float = 0
    /// True once a note-off arrived while the sustain pedal was down.
    var heldByPedal = false
    var isDrum = false
    /// Start order, for stealing the oldest.
    var serial: UInt64 = 0
    var startFrame: Int64 = 0
    var releaseFrame: Int64 = -1
    var releaseLevel: Float = 0
    var patch = SynthPatch()

    // Oscillators (phases in [0, 1)) and per-sample increments, updated on the control grid.
    var phaseA: Float = 0, phaseB: Float = 0, phaseMod: Float = 0
    var incA: Float = 0, incB: Float = 0, incMod: Float = 0
    var fmIndex: Float = 0
    var noiseState: UInt32 = 1

    // Amplitude envelope, per sample.
    var level: Float = 0
    var attackStep: Float = 0
    var decayCoefficient: Float = 0
    var releaseCoefficient: Float = 0
    var fadeStep: Float = 0

    // State-variable filter (Cytomic / Simper trapezoidal form).
    var ic1: Float = 0, ic2: Float = 0
    var fa1: Float = 0, fa2: Float = 0, fa3: Float = 0, fk: Float = 0

    // What the control update computed once and reuses while its input stays the same:
    // the key's frequency (for `baseHzKey`, the key after transposition), oscillator B's
    // detune factor, and the equal-power pan gains (for `panOfGains`). NaN never equals a
    // key or pan, so a fresh voice computes them.
    var baseHzKey: Float = .nan, baseHz: Float = 0
    var detuneFactorB: Float = 1
    var panOfGains: Float = .nan, panGainL: Float = 0, panGainR: Float = 0

    // Output gains, gliding per sample towards the targets set on the grid.
    var gainL: Float = 0, gainR: Float = 0
    var targetL: Float = 0, targetR: Float = 0
    // Level sent to the synthesizer's reverb, gliding like the output gains.
    var sendGain: Float = 0, targetSend: Float = 0

    var isActive: Bool { stage != .off }
    /// A voice that counts against the polyphony limit (not already fading out after a steal).
    var isCounted: Bool { stage != .off && stage != .fastFade }
    var isReleased: Bool { stage == .release || stage == .fastFade }

    /// Renders `count` frames, adding into `left`/`right`.
    ///
    /// The oscillators and the filter output are chosen once per call, not per sample: the
    /// loop is specialised for each combination (``renderSpecialised(count:left:right:send:tables:gainGlide:_:_:_:)``),
    /// with the same arithmetic in the same order, so the output is identical.
    @inline(__always)
    mutating func render(count: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                         send: UnsafeMutablePointer<Float>, mono: UnsafeMutablePointer<Float>, tables: VoiceTables, gainGlide: Float) {
        let buffers = VoiceBuffers(left: left, right: right, send: send, mono: mono)
        if gainsAreSteady(glide: gainGlide) {
            renderChoosingA(SteadyMix.self, count, buffers, tables, gainGlide)
        } else {
            renderChoosingA(GlidingMix.self, count, buffers, tables, gainGlide)
        }
    }

    private mutating func renderChoosingA<M: VoiceMixing>(_ m: M.Type, _ count: Int, _ buffers: VoiceBuffers, _ tables: VoiceTables,
                                                         _ gainGlide: Float) {
        switch patch.waveA {
        case .sine: renderChoosingB(SineShape.self, m, count, buffers, tables, gainGlide)
        case .saw: renderChoosingB(SawShape.self, m, count, buffers, tables, gainGlide)
        case .square: renderChoosingB(SquareShape.self, m, count, buffers, tables, gainGlide)
        case .triangle: renderChoosingB(TriangleShape.self, m, count, buffers, tables, gainGlide)
        case .noise: renderChoosingB(NoiseShape.self, m, count, buffers, tables, gainGlide)
        case .fm: renderChoosingB(FMShape.self, m, count, buffers, tables, gainGlide)
        }
    }

    private mutating func renderChoosingB<A: WaveShape, M: VoiceMixing>(_ a: A.Type, _ m: M.Type, _ count: Int, _ buffers: VoiceBuffers,
                                                                        _ tables: VoiceTables, _ gainGlide: Float) {
        guard patch.levelB > 0 else {
            return renderChoosingFilter(a, NoShape.self, m, count, buffers, tables, gainGlide)
        }
        switch patch.waveB {
        case .saw: renderChoosingFilter(a, SawShape.self, m, count, buffers, tables, gainGlide)
        case .square: renderChoosingFilter(a, SquareShape.self, m, count, buffers, tables, gainGlide)
        case .triangle: renderChoosingFilter(a, TriangleShape.self, m, count, buffers, tables, gainGlide)
        case .noise: renderChoosingFilter(a, NoiseShape.self, m, count, buffers, tables, gainGlide)
        case .sine, .fm: renderChoosingFilter(a, SineShape.self, m, count, buffers, tables, gainGlide)
        }
    }

    private mutating func renderChoosingFilter<A: WaveShape, B: WaveShape, M: VoiceMixing>(
        _ a: A.Type, _ b: B.Type, _ m: M.Type, _ count: Int, _ o: VoiceBuffers, _ tables: VoiceTables, _ gainGlide: Float
    ) {
        switch patch.filterMode {
        case .lowPass:
            renderSpecialised(count: count, left: o.left, right: o.right, send: o.send, mono: o.mono, tables: tables,
                              gainGlide: gainGlide, a, b, LowPassOutput.self, m)
        case .bandPass:
            renderSpecialised(count: count, left: o.left, right: o.right, send: o.send, mono: o.mono, tables: tables,
                              gainGlide: gainGlide, a, b, BandPassOutput.self, m)
        case .highPass:
            renderSpecialised(count: count, left: o.left, right: o.right, send: o.send, mono: o.mono, tables: tables,
                              gainGlide: gainGlide, a, b, HighPassOutput.self, m)
        }
    }
}

/// Where a voice renders: the stereo outputs and the reverb send it adds into, and a scratch
/// buffer of a control interval for the steady mix.
struct VoiceBuffers {
    let left: UnsafeMutablePointer<Float>
    let right: UnsafeMutablePointer<Float>
    let send: UnsafeMutablePointer<Float>
    let mono: UnsafeMutablePointer<Float>
}
