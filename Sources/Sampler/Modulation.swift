import Foundation

/// A decoded `SFModulator` source word (SoundFont 2.04 section 8.2.1).
struct ModulatorSource {
    enum Curve: UInt8 { case linear = 0, concave = 1, convex = 2, switched = 3 }

    /// Controller number (CC flag set) or general controller index.
    var index: UInt8
    var isCC: Bool
    /// Direction bit: max to min.
    var negative: Bool
    var bipolar: Bool
    var curve: Curve
    /// False for sources the sampler does not know: the modulator then contributes nothing,
    /// as FluidSynth treats invalid sources.
    var isValid: Bool

    init(_ word: UInt16) {
        index = UInt8(word & 0x7F)
        isCC = word & 0x80 != 0
        negative = word & 0x100 != 0
        bipolar = word & 0x200 != 0
        let type = UInt8(word >> 10)
        curve = Curve(rawValue: type) ?? .linear
        if type > 3 {
            isValid = false
        } else if isCC {
            isValid = true
        } else {
            // General controllers: none, velocity, key, poly pressure, channel pressure,
            // pitch wheel, pitch wheel sensitivity (127 = link, not supported).
            isValid = [0, 2, 3, 10, 13, 14, 16].contains(index)
        }
    }

    /// True for the "no controller" source, which stands for the constant 1.
    var isNone: Bool { !isCC && index == 0 }
}

/// Curve tables shared by all samplers: the specification's concave and convex shapes
/// sampled at 128 points, as FluidSynth tabulates them.
enum ModulatorCurves {
    static let concave: [Float] = {
        var t = [Float](repeating: 0, count: 128)
        t[127] = 1
        for i in 1..<127 {
            let x = (-200.0 * 2 / 960.0) * log10(Double(i) / 127.0)
            t[127 - i] = Float(x)
        }
        return t
    }()

    static let convex: [Float] = {
        var t = [Float](repeating: 0, count: 128)
        t[127] = 1
        for i in 1..<127 {
            let x = (-200.0 * 2 / 960.0) * log10(Double(i) / 127.0)
            t[i] = Float(1 - x)
        }
        return t
    }()
}

/// Tables a sampler reads on the audio thread, allocated once.
final class SamplerTables: @unchecked Sendable {
    let concave: UnsafeMutablePointer<Float>
    let convex: UnsafeMutablePointer<Float>

    init() {
        concave = .allocate(capacity: 128)
        convex = .allocate(capacity: 128)
        for i in 0..<128 {
            concave[i] = ModulatorCurves.concave[i]
            convex[i] = ModulatorCurves.convex[i]
        }
    }

    deinit {
        concave.deallocate()
        convex.deallocate()
    }

    /// A table read at a fractional position 0...127, linearly interpolated.
    @inline(__always)
    func lookup(_ table: UnsafeMutablePointer<Float>, _ x: Float) -> Float {
        if !(x > 0) { return table[0] }
        if x >= 127 { return table[127] }
        let i = Int(x)
        return table[i] + (table[i + 1] - table[i]) * (x - Float(i))
    }

    /// The modulation-envelope value (0...1) whose attack curve reads `level` (0...1): the
    /// position in the rising ``convex`` table where ``lookup(_:_:)`` gives `level`, over 127.
    @inline(__always)
    func convexPosition(of level: Float) -> Float {
        guard level > convex[0] else { return 0 }
        guard level < convex[127] else { return 1 }
        var i = 0
        while convex[i + 1] <= level { i += 1 }
        return (Float(i) + (level - convex[i]) / (convex[i + 1] - convex[i])) / 127
    }

    /// Maps a raw source value (`value` out of `range`) through the source's curve, polarity
    /// and direction (SoundFont 2.04 section 8.2.1, FluidSynth's normalisation).
    @inline(__always)
    func transform(_ s: ModulatorSource, value: Float, range: Float) -> Float {
        let n = value / range
        switch s.curve {
        case .linear:
            if s.bipolar { return s.negative ? 1 - 2 * n : 2 * n - 1 }
            return s.negative ? 1 - n : n
        case .concave, .convex:
            let table = s.curve == .concave ? concave : convex
            if s.bipolar {
                let up = n > 0.5
                let magnitude = up ? lookup(table, 127 * 2 * (n - 0.5)) : lookup(table, 127 * 2 * (0.5 - n))
                let sign: Float = (up != s.negative) ? 1 : -1
                return sign * magnitude
            }
            return lookup(table, 127 * (s.negative ? 1 - n : n))
        case .switched:
            let on = n >= 0.5
            if s.bipolar { return (on != s.negative) ? 1 : -1 }
            return (on != s.negative) ? 1 : 0
        }
    }
}

/// Unit conversions of the SoundFont specification.
enum SoundFontUnits {
    /// Centibels of attenuation to a linear amplitude.
    @inline(__always)
    static func amplitude(centibels cb: Float) -> Float {
        Float(exp(Double(cb) * (-2.302_585_092_994_046 / 200)))
    }

    /// Timecents to seconds.
    @inline(__always)
    static func seconds(timecents tc: Double) -> Double {
        exp2(tc / 1200)
    }

    /// Absolute cents to hertz (8.176 Hz is cent 0).
    @inline(__always)
    static func hertz(absoluteCents c: Double) -> Double {
        8.175_798_915_643_707 * exp2(c / 1200)
    }
}
