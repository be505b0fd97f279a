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
    /// The key's pitch in the channel's tuning (cents above key 0), or NaN in plain equal
    /// temperament, where the pitch keeps its untuned arithmetic to the bit.
    var tunedCents: Double = .nan
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
    // detune factor, the equal-power pan gains (for `panOfGains`) and the filter's
    // coefficients. NaN never equals a key, pan or cutoff, so a fresh voice computes them.
    var baseHzKey: Float = .nan, baseHz: Float = 0
    var detuneFactorB: Float = 1
    var panOfGains: Float = .nan, panGainL: Float = 0, panGainR: Float = 0
    /// `fa1`, `fa2`, `fa3` and `fk` were computed for this base cutoff and these octaves.
    var filterBaseCutoff: Float = .nan, filterCutoffOctaves: Float = .nan

    // Output gains, gliding per sample towards the targets set on the grid.
    var gainL: Float = 0, gainR: Float = 0
    var targetL: Float = 0, targetR: Float = 0
    // Level sent to the synthesizer's reverb, gliding like the output gains.
    var sendGain: Float = 0, targetSend: Float = 0

    var isActive: Bool { stage != .off }
    /// A voice that counts against the polyphony limit (not already fading out after a steal).
    var isCounted: Bool { stage != .off && stage != .fastFade }
    var isReleased: Bool { stage == .release || stage == .fastFade }

    /// Which loop renders the voice: its oscillator shapes, filter output and whether it uses
    /// noise. Voices with the same signature run the same operations, so up to four of them
    /// render together (``VoiceLaneGroup``). Set with the patch when the note starts.
    var signature: UInt8 = 0

    /// The signature of a voice playing `patch`.
    static func signature(of patch: SynthPatch) -> UInt8 {
        let b: UInt8 = patch.levelB > 0 ? (patch.waveB == .fm ? Waveform.sine.rawValue : patch.waveB.rawValue) : 6
        let useNoise = patch.noiseLevel > 0 || patch.waveA == .noise || patch.waveB == .noise
        return (patch.waveA.rawValue * 7 + b) * 6 + patch.filterMode.rawValue * 2 + (useNoise ? 1 : 0)
    }

    /// Writes `count` frames of the voice's signal (before its gains) into `mono` and returns
    /// how many frames it sounded.
    ///
    /// The oscillators and the filter output are chosen once per call, not per sample: the
    /// loop is specialised for each combination (``renderSignal(count:into:tables:_:_:_:)``).
    mutating func renderSignal(count: Int, into mono: UnsafeMutablePointer<Float>, tables: VoiceTables) -> Int {
        switch patch.waveA {
        case .sine: renderChoosingB(SineShape.self, count, mono, tables)
        case .saw: renderChoosingB(SawShape.self, count, mono, tables)
        case .square: renderChoosingB(SquareShape.self, count, mono, tables)
        case .triangle: renderChoosingB(TriangleShape.self, count, mono, tables)
        case .noise: renderChoosingB(NoiseShape.self, count, mono, tables)
        case .fm: renderChoosingB(FMShape.self, count, mono, tables)
        }
    }

    private mutating func renderChoosingB<A: WaveShape>(_ a: A.Type, _ count: Int, _ mono: UnsafeMutablePointer<Float>,
                                                        _ tables: VoiceTables) -> Int {
        guard patch.levelB > 0 else { return renderChoosingFilter(a, NoShape.self, count, mono, tables) }
        switch patch.waveB {
        case .saw: return renderChoosingFilter(a, SawShape.self, count, mono, tables)
        case .square: return renderChoosingFilter(a, SquareShape.self, count, mono, tables)
        case .triangle: return renderChoosingFilter(a, TriangleShape.self, count, mono, tables)
        case .noise: return renderChoosingFilter(a, NoiseShape.self, count, mono, tables)
        case .sine, .fm: return renderChoosingFilter(a, SineShape.self, count, mono, tables)
        }
    }

    private mutating func renderChoosingFilter<A: WaveShape, B: WaveShape>(
        _ a: A.Type, _ b: B.Type, _ count: Int, _ mono: UnsafeMutablePointer<Float>, _ tables: VoiceTables
    ) -> Int {
        switch patch.filterMode {
        case .lowPass: renderSignal(count: count, into: mono, tables: tables, a, b, LowPassOutput.self)
        case .bandPass: renderSignal(count: count, into: mono, tables: tables, a, b, BandPassOutput.self)
        case .highPass: renderSignal(count: count, into: mono, tables: tables, a, b, HighPassOutput.self)
        }
    }
}

