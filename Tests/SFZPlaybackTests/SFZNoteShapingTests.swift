import Foundation
import MIDI
import SFZ
import Testing
@testable import SFZPlayback

/// What SFZ makes of a note's velocity and duration: the velocity curve, the envelopes'
/// velocity terms, `ampeg_start`, `rt_decay`, and release regions under the sustain pedal.
@Suite("SFZ velocity, envelope and release shaping")
struct SFZNoteShapingTests {
    /// A second of a 441 Hz sine and a 100-frame DC loop.
    func fixtures() throws -> Fixtures {
        let f = try Fixtures()
        try f.writeWAV("tone.wav", [sine(period: 100, frames: 44_100)])
        try f.writeWAV("dc.wav", [[Int16](repeating: 16_000, count: 100)])
        return f
    }

    func rig(_ f: Fixtures, _ text: String) throws -> Rig {
        try Rig(try SFZBank.load(contentsOf: try f.writeSFZ("i.sfz", text)))
    }

    /// The tone's level in dB (peak over frames 5,000...10,000) for one note.
    func level(_ f: Fixtures, _ opcodes: String, velocity: UInt8) throws -> Double {
        let out = try rig(f, "<region> sample=tone.wav pitch_keycenter=60 \(opcodes)\n")
            .render(frames: 10_000, notes: [(0, 60, velocity, nil)]).left
        return decibels(peak(out, 5_000..<10_000))
    }

    @Test("amp_veltrack follows SFZ's square law: velocity 64 is 40 log10(64/127) dB below 127; 50 % and negative tracks as sfizz")
    func velocityTrack() throws {
        let f = try fixtures()
        let full = try level(f, "amp_veltrack=0", velocity: 127)
        let expectations: [(String, UInt8, Double)] = [
            ("", 127, 1),
            ("", 64, pow(64.0 / 127, 2)),
            ("", 32, pow(32.0 / 127, 2)),
            ("amp_veltrack=50", 64, 1 - 0.5 * (1 - pow(64.0 / 127, 2))),
            ("amp_veltrack=0", 10, 1),
            ("amp_veltrack=-100", 64, 1 - pow(64.0 / 127, 2)),
        ]
        for (opcodes, velocity, gain) in expectations {
            let measured = try level(f, opcodes, velocity: velocity) - full
            #expect(abs(measured - 20 * log10(gain)) < 0.01, "\(opcodes) velocity \(velocity): \(measured) dB, expected \(20 * log10(gain))")
        }
        #expect(try rig(f, "<region> sample=tone.wav amp_veltrack=-100\n").render(frames: 5_000, notes: [(0, 60, 127, nil)])
            .left.allSatisfy { $0 == 0 })
    }

    @Test("amp_velcurve_N sets the gain at N, joined by straight lines to 0 at velocity 0 and 1 at 127")
    func velocityCurve() throws {
        let f = try fixtures()
        let full = try level(f, "amp_veltrack=0", velocity: 127)
        for (velocity, gain) in [(UInt8(64), 0.5), (32, 0.25), (96, 0.5 + 0.5 * 32 / 63), (127, 1)] {
            let measured = try level(f, "amp_velcurve_64=0.5", velocity: velocity) - full
            #expect(abs(measured - 20 * log10(gain)) < 0.01, "velocity \(velocity): \(measured) dB, expected \(20 * log10(gain))")
        }
    }

    @Test("ampeg_vel2*: each term adds its value x velocity / 127, exactly as the envelope written out at that velocity")
    func envelopeVelocityTerms() throws {
        let f = try fixtures()
        let loop = "pitch_keycenter=60 loop_mode=loop_continuous loop_start=0 loop_end=99 ampeg_release=0.05 amp_veltrack=0"
        func render(_ opcodes: String, _ velocity: UInt8) throws -> [Float] {
            try rig(f, "<region> sample=dc.wav \(loop) \(opcodes)\n").render(frames: 30_000, notes: [(0, 60, velocity, 20_000)]).left
        }
        let base = "ampeg_delay=0.01 ampeg_attack=0.05 ampeg_hold=0.02 ampeg_decay=0.1 ampeg_sustain=40"
        let terms = [("delay", 0.01, 0.03), ("attack", 0.05, 0.1), ("hold", 0.02, 0.05), ("decay", 0.1, 0.2),
                     ("sustain", 40, 30), ("release", 0.05, 0.1)]
        for (name, value, term) in terms {
            for velocity in [UInt8(64), 127] {
                let scaled = value + term * Double(velocity) / 127
                let spelled = base.replacingOccurrences(of: "ampeg_\(name)=\(value)", with: "") + " ampeg_\(name)=\(scaled)"
                let withTerm = try render("\(base) ampeg_vel2\(name)=\(term)", velocity)
                #expect(withTerm == (try render(spelled, velocity)), "ampeg_vel2\(name) at velocity \(velocity)")
                #expect(withTerm != (try render(base, velocity)), "ampeg_vel2\(name) at velocity \(velocity) changes nothing")
            }
        }
        let instrument = try SFZBank.load(contentsOf: try f.writeSFZ("w.sfz", "<region> sample=dc.wav ampeg_vel2attack=0.1 fileg_vel2decay=0.1 fileg_depth=1200 cutoff=500\n"))
        #expect(instrument.warnings.isEmpty, "\(instrument.warnings)")
    }

    @Test("ampeg_start: the attack rises from that percentage of full level instead of silence")
    func envelopeStart() throws {
        let f = try fixtures()
        let loop = "pitch_keycenter=60 loop_mode=loop_continuous loop_start=0 loop_end=99"
        let full = try rig(f, "<region> sample=dc.wav \(loop)\n").render(frames: 2_000, notes: [(0, 60, 127, nil)]).left[1_000]
        func second(_ opcodes: String) throws -> Float {
            // The level early in a 0.1 s attack (69 control steps of 64 frames).
            try rig(f, "<region> sample=dc.wav \(loop) ampeg_attack=0.1 \(opcodes)\n")
                .render(frames: 2_000, notes: [(0, 60, 127, nil)]).left[127] / full
        }
        let started = try second("ampeg_start=50"), silent = try second("")
        // From 50 % the attack covers the other half in the same time: half the rise per step.
        #expect(silent > 0 && silent < 0.05, "\(silent)")
        #expect(abs(started - (0.5 + 0.5 * silent)) < 0.0005, "\(started) from 50 %, \(silent) from 0")
    }

    @Test("fileg_start: the filter envelope's delay and attack start at that percentage of fileg_depth, so the cutoff starts that far up")
    func filterEnvelopeStart() throws {
        let f = try fixtures()
        // A 441 Hz sawtooth: harmonics up to Nyquist for the low-pass to take away.
        try f.writeWAV("saw.wav", [(0..<100).map { Int16(-16_000 + 320 * $0) }])
        let loop = "pitch_keycenter=60 loop_mode=loop_continuous loop_start=0 loop_end=99 resonance=6"
        func render(_ opcodes: String) throws -> (out: [Float], warnings: [SFZWarning]) {
            let instrument = try SFZBank.load(contentsOf: try f.writeSFZ("i.sfz", "<region> sample=saw.wav \(loop) \(opcodes)\n"))
            return (try Rig(instrument).render(frames: 3_000, notes: [(0, 60, 127, nil)]).left, instrument.warnings)
        }
        func largestDifference(_ a: [Float], _ b: [Float], _ range: Range<Int>) -> Float {
            range.map { abs(a[$0] - b[$0]) }.max() ?? 0
        }
        // 500 Hz and 2400 cents of depth: 50 % starts an octave up (1000 Hz), 25 % half an octave (707.1 Hz);
        // in whole cents both are exactly 1200 and 600 above 500 Hz's.
        for (start, startCutoff) in [(50, 1000.0), (25, 500 * 2.0.squareRoot())] {
            let fixed = try render("cutoff=\(startCutoff)").out
            let scale = peak(fixed, 0..<3_000)
            // During a 0.05 s delay (34 control steps, 2,176 frames) the cutoff holds the start exactly.
            let (delayed, warnings) = try render("cutoff=500 fileg_depth=2400 fileg_attack=20 fileg_delay=0.05 fileg_start=\(start)")
            #expect(warnings.isEmpty, "\(warnings)")
            #expect(delayed[0..<2_000] == fixed[0..<2_000], "fileg_start=\(start), delay")
            // Without a delay the 20 s attack rises from it, a cent or two in the first control step.
            let attacked = try render("cutoff=500 fileg_depth=2400 fileg_attack=20 fileg_start=\(start)").out
            #expect(largestDifference(attacked, fixed, 0..<64) < 0.002 * scale, "fileg_start=\(start), attack")
        }
        // From 0 the same envelope starts at 500 Hz, far from the octave above.
        let fromZero = try render("cutoff=500 fileg_depth=2400 fileg_attack=20").out
        let low = try render("cutoff=500").out, octaveUp = try render("cutoff=1000").out
        #expect(largestDifference(fromZero, low, 0..<64) < 0.005 * peak(low, 0..<3_000))
        #expect(largestDifference(fromZero, octaveUp, 0..<64) > 0.1 * peak(low, 0..<3_000))
    }

    @Test("rt_decay: a release region is rt_decay dB quieter per second its key was held")
    func releaseDecay() throws {
        let f = try fixtures()
        func releaseLevel(_ opcodes: String, held: Int) throws -> Double {
            let out = try rig(f, """
                <region> sample=tone.wav pitch_keycenter=60 pan=-100
                <region> sample=tone.wav pitch_keycenter=60 pan=100 trigger=release \(opcodes)
                """).render(frames: held + 10_000, notes: [(0, 60, 100, held)]).right
            #expect(peak(out, 0..<held) == 0)
            return decibels(peak(out, held + 2_000..<held + 8_000))
        }
        let plain = try releaseLevel("", held: 22_050)
        #expect(abs(try releaseLevel("rt_decay=6", held: 22_050) - plain + 3) < 0.01)
        #expect(abs(try releaseLevel("rt_decay=10", held: 44_100) - plain + 10) < 0.01)
    }

    @Test("trigger=release waits for the sustain pedal to lift; trigger=release_key starts at the key's release")
    func releaseUnderPedal() throws {
        let f = try fixtures()
        let pedal: [(at: Int, message: MIDIMessage)] = [(1_000, MIDIMessage(status: 0xB0, data1: 64, data2: 127)),
                                                        (15_000, MIDIMessage(status: 0xB0, data1: 64, data2: 0))]
        let out = try rig(f, """
            <region> sample=tone.wav pitch_keycenter=60 pan=-100 trigger=release_key
            <region> sample=tone.wav pitch_keycenter=60 pan=100 trigger=release
            """).render(frames: 25_000, notes: [(0, 60, 100, 5_000)], messages: pedal)
        #expect(peak(out.left, 0..<5_000) == 0)
        #expect(out.left[5_001] != 0)
        #expect(peak(out.right, 0..<15_000) == 0)
        #expect(out.right[15_001] != 0)
        // Reset all controllers lifts the pedal too.
        let reset = try rig(f, "<region> sample=tone.wav pitch_keycenter=60 trigger=release\n")
            .render(frames: 25_000, notes: [(0, 60, 100, 5_000)],
                    messages: [pedal[0], (15_000, MIDIMessage(status: 0xB0, data1: 121, data2: 0))]).left
        #expect(peak(reset, 0..<15_000) == 0)
        #expect(reset[15_001] != 0)
        // Without the pedal both start at the key's release.
        let free = try rig(f, "<region> sample=tone.wav pitch_keycenter=60 trigger=release\n")
            .render(frames: 10_000, notes: [(0, 60, 100, 5_000)]).left
        #expect(peak(free, 0..<5_000) == 0)
        #expect(free[5_001] != 0)
    }

    @Test("Renders with the velocity curve, envelope terms, rt_decay, pedal-held releases, hpf_2p, fileg_start and polyphony stops over off_time repeat exactly at any block size")
    func blockSizeIndependent() throws {
        let f = try fixtures()
        let text = """
            <group> group=1 polyphony=2 pitch_keycenter=60 off_time=0.05
            <region> sample=tone.wav amp_velcurve_80=0.3 ampeg_vel2attack=0.05 ampeg_start=10 fil_type=hpf_2p cutoff=300 fileg_depth=1200 fileg_start=40 fileg_attack=0.1
            <region> sample=tone.wav trigger=release rt_decay=4 ampeg_vel2release=0.2 pan=60
            """
        let notes: [(at: Int, key: UInt8, velocity: UInt8, off: Int?)] = [(100, 60, 90, 9_000), (3_001, 64, 40, 5_000),
                                                                         (7_777, 67, 127, 20_000), (12_345, 62, 70, 14_000)]
        let pedal: [(at: Int, message: MIDIMessage)] = [(4_000, MIDIMessage(status: 0xB0, data1: 64, data2: 127)),
                                                        (16_000, MIDIMessage(status: 0xB0, data1: 64, data2: 0))]
        let whole = try rig(f, text).render(frames: 30_000, notes: notes, messages: pedal, blockSizes: [512])
        #expect(peak(whole.left, 0..<30_000) > 0.01)
        for blocks in [[1], [37, 300, 5], [4_096]] {
            let split = try rig(f, text).render(frames: 30_000, notes: notes, messages: pedal, blockSizes: blocks)
            let same = split.left == whole.left && split.right == whole.right
            #expect(same, "\(blocks)")
        }
    }

    @Test("A release region plays on when its key is struck again, one_shot or no_loop (as sfizz_render does, checked with it)")
    func releaseRegionRingsThroughARestrike() throws {
        let f = try fixtures()
        func releaseSide(_ opcodes: String) throws -> [Float] {
            try rig(f, """
                <region> sample=tone.wav pitch_keycenter=60 pan=-100
                <region> sample=tone.wav pitch_keycenter=60 pan=100 trigger=release \(opcodes)
                """).render(frames: 10_000, notes: [(0, 60, 100, 5_000), (6_000, 60, 100, nil)]).right
        }
        for opcodes in ["", "loop_mode=no_loop"] {
            let side = try releaseSide(opcodes)
            #expect(peak(side, 5_000..<6_000) > 0.01, "\(opcodes)")
            #expect(abs(decibels(peak(side, 8_000..<10_000) / peak(side, 5_000..<6_000))) < 0.01, "\(opcodes): not cut by the second stroke")
        }
    }
}
