import Foundation
import Testing
@testable import SFZPlayback

/// `fil_type=lpf_1p` and `hpf_1p`, measured against sfizz's one-pole filters: with
/// p = e^(−2π fc / fs), the low-pass is (1 − p) / (1 − p z⁻¹) and the high-pass
/// (1 + p) / 2 · (1 − z⁻¹) / (1 − p z⁻¹).
@Suite("SFZ one-pole filters")
struct SFZOnePoleFilterTests {
    static let rate = 44_100.0

    /// The one-pole filter's gain at `frequency`, in dB.
    static func expected(_ frequency: Double, cutoff: Double, highPass: Bool) -> Double {
        let p = exp(-2 * Double.pi * cutoff / rate), w = 2 * Double.pi * frequency / rate
        let denominator = 1 - 2 * p * cos(w) + p * p
        let numerator = highPass ? (1 + p) * (1 + p) / 4 * (2 - 2 * cos(w)) : (1 - p) * (1 - p)
        return 10 * log10(numerator / denominator)
    }

    /// Samples of one second: sines of 441, 2205 and 4410 Hz, a constant (0 Hz) and a
    /// full-scale alternation at the Nyquist frequency (22 050 Hz), all of amplitude 16 000.
    func fixtures() throws -> Fixtures {
        let f = try Fixtures()
        try f.writeWAV("441.wav", [sine(period: 100, frames: 44_100)])
        try f.writeWAV("2205.wav", [sine(period: 20, frames: 44_100)])
        try f.writeWAV("4410.wav", [sine(period: 10, frames: 44_100)])
        try f.writeWAV("dc.wav", [[Int16](repeating: 16_000, count: 44_100)])
        try f.writeWAV("nyquist.wav", [(0..<44_100).map { $0 % 2 == 0 ? 16_000 : -16_000 }])
        return f
    }

    /// The RMS level in dB of `sample` played at its root key through a region with `opcodes`,
    /// over frames 5000..<10000 (whole periods of every fixture, long after the filter settled),
    /// less the sample's own RMS level: the region's gain times the filter's.
    func level(_ f: Fixtures, _ sample: String, _ opcodes: String, key: UInt8 = 60) throws -> Double {
        let sfz = try f.writeSFZ("f.sfz", "<region> sample=\(sample) pitch_keycenter=60 \(opcodes)\n")
        let out = try Rig(try SFZBank.load(contentsOf: sfz)).render(frames: 10_000, notes: [(0, key, 127, nil)]).left
        let points: [Double] = switch sample {
        case "441.wav": sine(period: 100, frames: 5_000).map(Double.init)
        case "2205.wav": sine(period: 20, frames: 5_000).map(Double.init)
        case "4410.wav": sine(period: 10, frames: 5_000).map(Double.init)
        default: [16_000]
        }
        let input = points.reduce(0) { $0 + $1 * $1 } / Double(points.count) / (32_768 * 32_768)
        let output = out[5_000..<10_000].reduce(0.0) { $0 + Double($1) * Double($1) } / 5_000
        return 10 * log10(output / input)
    }

    @Test("lpf_1p passes DC as hpf_1p passes the Nyquist frequency: both at unity, the region's plain gain")
    func passbands() throws {
        let f = try fixtures()
        let dc = try level(f, "dc.wav", "fil_type=lpf_1p cutoff=441")
        let nyquist = try level(f, "nyquist.wav", "fil_type=hpf_1p cutoff=441")
        #expect(abs(dc - nyquist) < 0.01, "DC \(dc) dB, Nyquist \(nyquist) dB")
        // The other way round each blocks: hpf_1p has a zero at DC.
        #expect(try level(f, "dc.wav", "fil_type=hpf_1p cutoff=441") - dc < -60)
        #expect(try level(f, "nyquist.wav", "fil_type=lpf_1p cutoff=441") - dc < -30)
    }

    @Test("lpf_1p follows the one-pole response: -3 dB at the cutoff, about -20 dB a decade above (6 dB an octave)")
    func lowPassResponse() throws {
        let f = try fixtures()
        let unity = try level(f, "dc.wav", "fil_type=lpf_1p cutoff=441")
        var measured: [Double: Double] = [:]
        for (sample, frequency) in [("441.wav", 441.0), ("2205.wav", 2_205.0), ("4410.wav", 4_410.0)] {
            let gain = try level(f, sample, "fil_type=lpf_1p cutoff=441 resonance=12") - unity
            let wanted = Self.expected(frequency, cutoff: 441, highPass: false)
            measured[frequency] = gain
            #expect(abs(gain - wanted) < 0.02, "\(frequency) Hz: \(gain) dB, expected \(wanted) dB")
        }
        #expect(abs(measured[441]! + 3.01) < 0.05)
        #expect(abs(measured[4_410]! + 20) < 0.5)
        // One octave (2205 to 4410 Hz) far above the cutoff: 6 dB, less near the Nyquist frequency.
        #expect(abs(measured[4_410]! - measured[2_205]! + 6) < 0.5)
    }

    @Test("hpf_1p follows the one-pole response: about -3 dB at the cutoff, about -20 dB a decade below")
    func highPassResponse() throws {
        let f = try fixtures()
        let unity = try level(f, "nyquist.wav", "fil_type=hpf_1p cutoff=441")
        var measured: [Double: Double] = [:]
        for (sample, frequency) in [("441.wav", 441.0), ("4410.wav", 4_410.0)] {
            let gain = try level(f, sample, "fil_type=hpf_1p cutoff=4410 resonance=12") - unity
            let wanted = Self.expected(frequency, cutoff: 4_410, highPass: true)
            measured[frequency] = gain
            #expect(abs(gain - wanted) < 0.02, "\(frequency) Hz: \(gain) dB, expected \(wanted) dB")
        }
        // sfizz's pole e^(−2π fc / fs) departs from the analogue filter this high (a tenth of the
        // sample rate): 2.73 dB down at the cutoff rather than 3.01.
        #expect(abs(measured[4_410]! + 2.73) < 0.05)
        #expect(abs(measured[441]! + 20) < 0.5)
    }

    @Test("lpf_1p rolls off half as steeply as lpf_2p: a decade above the cutoff it is about 20 dB louder")
    func onePoleIsNotTwoPole() throws {
        let f = try fixtures()
        let onePole = try level(f, "4410.wav", "fil_type=lpf_1p cutoff=441") - level(f, "441.wav", "fil_type=lpf_1p cutoff=441")
        let twoPole = try level(f, "4410.wav", "fil_type=lpf_2p cutoff=441") - level(f, "441.wav", "fil_type=lpf_2p cutoff=441")
        #expect(onePole - twoPole > 15, "one-pole \(onePole) dB, two-pole \(twoPole) dB")
    }

    @Test("fil_keytrack moves the one-pole cutoff: an octave up the key doubles it")
    func keytrackMovesTheCutoff() throws {
        let f = try fixtures()
        let unity = try level(f, "dc.wav", "fil_type=lpf_1p cutoff=441")
        // pitch_keytrack=0 keeps the tone at 441 Hz while key 72 doubles the cutoff to 882 Hz.
        let gain = try level(f, "441.wav", "fil_type=lpf_1p cutoff=441 fil_keytrack=100 pitch_keytrack=0", key: 72) - unity
        let wanted = Self.expected(441, cutoff: 882, highPass: false)
        #expect(abs(gain - wanted) < 0.02, "\(gain) dB, expected \(wanted) dB")
    }

    @Test("lpf_1p and hpf_1p load without warnings")
    func noWarnings() throws {
        let f = try fixtures()
        let sfz = try f.writeSFZ("w.sfz", """
            <region> sample=441.wav fil_type=lpf_1p cutoff=441 key=60
            <region> sample=441.wav fil_type=hpf_1p cutoff=441 key=61
            """)
        let instrument = try SFZBank.load(contentsOf: sfz)
        #expect(instrument.warnings.isEmpty, "\(instrument.warnings)")
    }

    @Test("A one-pole layer beside a two-pole one leaves it as it plays alone, at any block size")
    func mixedLayers() throws {
        let f = try fixtures()
        func render(_ text: String, blocks: [Int] = [512]) throws -> [Float] {
            let sfz = try f.writeSFZ("m.sfz", text)
            return try Rig(try SFZBank.load(contentsOf: sfz)).render(frames: 8_000, notes: [(100, 60, 100, 5_000)], blockSizes: blocks).left
        }
        let onePole = "<region> sample=441.wav pitch_keycenter=60 fil_type=lpf_1p cutoff=300 fileg_depth=2400 fileg_decay=0.05\n"
        let twoPole = "<region> sample=2205.wav pitch_keycenter=60 fil_type=lpf_2p cutoff=1000 resonance=6\n"
        let both = try render(onePole + twoPole)
        let alone = try zip(render(onePole), render(twoPole)).map { $0 + $1 }
        let largest = zip(both, alone).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
        #expect(largest < 1e-6, "largest difference \(largest)")
        #expect(both.contains { $0 != 0 })
        for blocks in [[1], [37, 300, 5], [4096]] {
            #expect(try render(onePole + twoPole, blocks: blocks) == both, "\(blocks)")
        }
    }
}
