import Foundation
import MIDI
import SFZ
import Testing
@testable import SFZPlayback

/// The level, panning, filter and note start of SFZ voices, as sfizz (SFZ's reference player)
/// makes them. The expected figures are sfizz's formulas (`Voice.cpp`, `Panning.cpp`,
/// `Defaults.h`, `sfz_filters.dsp` at its commit 342cd99d); `Benchmarks/sfz_vs_sfizz.sh` checks
/// the same against `sfizz_render` itself.
@Suite("SFZ voicing as sfizz: level, pan, width, filters, note start")
struct SFZVoicingTests {
    /// A DC sample (16,000 of 32,768) of a second, a 441 Hz sine, a stereo pair with its
    /// left channel DC and its right silent, and a 4,410 Hz sine.
    func fixtures() throws -> Fixtures {
        let f = try Fixtures()
        try f.writeWAV("dc.wav", [[Int16](repeating: 16_000, count: 44_100)])
        try f.writeWAV("tone.wav", [sine(period: 100, frames: 44_100)])
        try f.writeWAV("high.wav", [sine(period: 10, frames: 44_100)])
        try f.writeWAV("left.wav", [[Int16](repeating: 16_000, count: 44_100), [Int16](repeating: 0, count: 44_100)])
        return f
    }

    func render(_ f: Fixtures, _ region: String, at frame: Int = 0, velocity: UInt8 = 127, frames: Int = 8_000,
                messages: [(at: Int, message: MIDIMessage)] = [], blockSizes: [Int] = [512]) throws -> (left: [Float], right: [Float]) {
        let rig = try Rig(try SFZBank.load(contentsOf: try f.writeSFZ("i.sfz", "<region> \(region)\n")))
        return rig.render(frames: frames, notes: [(frame, 60, velocity, nil)], messages: messages, blockSizes: blockSizes)
    }

    /// sfizz's level of a centred mono sample per side: its output gain (-7.35 dB), the pan
    /// law's cos(pi/4) and its +3 dB, and the default volume (CC 7 = 100) squared.
    static let centredMonoGain = pow(10, -7.35 / 20) * cos(Double.pi / 4) * pow(10, 3.0 / 20) * pow(100.0 / 127, 2)
    static let dc = 16_000.0 / 32_768

    @Test("A centred mono sample plays at sfizz's level on both sides; CC 7 and CC 11 scale it by (value / 127) squared")
    func level() throws {
        let f = try fixtures()
        let out = try render(f, "sample=dc.wav pitch_keycenter=60")
        #expect(abs(Double(out.left[4_000]) - Self.dc * Self.centredMonoGain) < 1e-5, "left \(out.left[4_000])")
        #expect(out.left[4_000] == out.right[4_000])
        let quieter = try render(f, "sample=dc.wav pitch_keycenter=60",
                                 messages: [(0, MIDIMessage(status: 0xB0, data1: 7, data2: 64)), (0, MIDIMessage(status: 0xB0, data1: 11, data2: 100))])
        let expected = Self.dc * Self.centredMonoGain / pow(100.0 / 127, 2) * pow(64.0 / 127, 2) * pow(100.0 / 127, 2)
        #expect(abs(Double(quieter.left[4_000]) - expected) < 1e-5, "CC 7 64, CC 11 100: \(quieter.left[4_000]), expected \(expected)")
    }

    @Test("pan moves a mono sample on sfizz's cosine law: hard right leaves the left silent, +3 dB on the right")
    func monoPan() throws {
        let f = try fixtures()
        let right = try render(f, "sample=dc.wav pitch_keycenter=60 pan=100")
        #expect(abs(right.left[4_000]) < 1e-9)
        #expect(abs(Double(right.right[4_000]) - Self.dc * Self.centredMonoGain / cos(Double.pi / 4)) < 1e-5)
        // pan 50: the left side's gain is cos(0.75 pi / 2), the right's cos(0.25 pi / 2).
        let half = try render(f, "sample=dc.wav pitch_keycenter=60 pan=50")
        let ratio = Double(half.left[4_000] / half.right[4_000])
        #expect(abs(ratio - cos(0.75 * Double.pi / 2) / cos(0.25 * Double.pi / 2)) < 1e-5, "L/R \(ratio)")
        // width does nothing to a mono sample.
        let wide = try render(f, "sample=dc.wav pitch_keycenter=60 pan=50 width=0 position=100")
        #expect(wide.left[4_000] == half.left[4_000] && wide.right[4_000] == half.right[4_000])
    }

    @Test("A stereo sample keeps its sides at full width, sums them to the centre at width 0, swaps them at -100, and position moves the image")
    func stereoWidthAndPosition() throws {
        let f = try fixtures()
        // Per side, sfizz's stereo chain at pan 0, width 100, position 0: cos(pi/4) twice, +6 dB.
        let stereoGain = pow(10, -7.35 / 20) * 0.5 * pow(10, 6.0 / 20) * pow(100.0 / 127, 2)
        let full = try render(f, "sample=left.wav pitch_keycenter=60")
        #expect(abs(Double(full.left[4_000]) - Self.dc * stereoGain) < 1e-5, "left \(full.left[4_000])")
        #expect(abs(full.right[4_000]) < 1e-9)
        let mono = try render(f, "sample=left.wav pitch_keycenter=60 width=0")
        #expect(abs(mono.left[4_000] - mono.right[4_000]) < 1e-7 && mono.left[4_000] > 0)
        let swapped = try render(f, "sample=left.wav pitch_keycenter=60 width=-100")
        #expect(abs(swapped.left[4_000]) < 1e-9 && abs(swapped.right[4_000] - full.left[4_000]) < 1e-7)
        // Narrowed to 0 then placed hard left: all on the left, at cos(pi/4) of the pair's centre level / cos(pi/4).
        let placed = try render(f, "sample=left.wav pitch_keycenter=60 width=0 position=-100")
        #expect(abs(placed.right[4_000]) < 1e-9)
        #expect(abs(Double(placed.left[4_000] / mono.left[4_000]) - 1 / cos(Double.pi / 4)) < 1e-5)
    }

    @Test("Without cutoff a region is not filtered; lpf_2p's resonance peaks by its full value at the cutoff, as sfizz's")
    func filters() throws {
        let f = try fixtures()
        let dry = try render(f, "sample=high.wav pitch_keycenter=60 amp_veltrack=0")
        let plain = try render(f, "sample=dc.wav pitch_keycenter=60")
        // The unfiltered DC and the 4,410 Hz sine both come out at the region's level exactly.
        #expect(abs(Double(plain.left[4_000]) - Self.dc * Self.centredMonoGain) < 1e-5)
        let dryPeak = Double(peak(dry.left, 4_000..<6_000))
        let samplePeak = Double(sine(period: 10, frames: 10).map { abs(Int($0)) }.max() ?? 0) / 32_768
        #expect(abs(dryPeak / (samplePeak * Self.centredMonoGain) - 1) < 1e-4, "unfiltered sine peak \(dryPeak)")
        let resonant = try render(f, "sample=high.wav pitch_keycenter=60 amp_veltrack=0 fil_type=lpf_2p cutoff=4410 resonance=12")
        let gain = decibels(peak(resonant.left, 4_000..<6_000)) - decibels(Float(dryPeak))
        #expect(abs(gain - 12) < 0.5, "resonance 12 dB at the cutoff: \(gain) dB")
    }

    @Test("A note with no attack sounds at its level from its first frame, between control steps and on one, whatever the block size")
    func instantStart() throws {
        let f = try fixtures()
        for start in [1_000, 1_024, 1_037] {
            let renders = try [512, 7, 64].map { try render(f, "sample=dc.wav pitch_keycenter=60", at: start, blockSizes: [$0]) }
            let level = Float(Self.dc * Self.centredMonoGain)
            #expect(renders[0].left[start - 1] == 0)
            #expect(abs(renders[0].left[start] - level) < 1e-5, "start \(start): first frame \(renders[0].left[start])")
            #expect(renders[0].left[start..<start + 200].allSatisfy { abs($0 - level) < 1e-5 })
            #expect(renders.dropFirst().allSatisfy { $0.left == renders[0].left && $0.right == renders[0].right })
        }
    }

    @Test("An attack rises linearly from the note's own frame and a delay ends on its own frame, wherever the control grid lies")
    func attackAndDelayFromTheNoteFrame() throws {
        let f = try fixtures()
        let level = Self.dc * Self.centredMonoGain
        let attackFrames = 0.01 * 44_100
        for start in [1_000, 1_024, 1_037] {
            let out = try render(f, "sample=dc.wav pitch_keycenter=60 ampeg_attack=0.01", at: start).left
            for k in [50, 100, 200, 400] {
                let expected = level * Double(k) / attackFrames
                #expect(abs(Double(out[start + k]) - expected) < level * 0.01, "start \(start) + \(k): \(out[start + k]), expected \(expected)")
            }
            let delayed = try render(f, "sample=dc.wav pitch_keycenter=60 ampeg_delay=0.005 ampeg_attack=0.01", at: start).left
            // The gain glides between control steps, so the rise may begin up to a step early.
            let delayFrames = Int(0.005 * 44_100)
            #expect(delayed[start + delayFrames - 64] == 0, "start \(start): sounding a step before its delay ended")
            let k = 200
            let expected = level * Double(k) / attackFrames
            #expect(abs(Double(delayed[start + delayFrames + k]) - expected) < level * 0.01,
                    "start \(start), delayed + \(k): \(delayed[start + delayFrames + k]), expected \(expected)")
        }
    }

    @Test("note_selfmask: a softer note leaves a louder one on its key sounding past note_polyphony; off stops the oldest")
    func selfmask() throws {
        let f = try fixtures()
        func twoNotes(_ opcodes: String) throws -> Float {
            let rig = try Rig(try SFZBank.load(contentsOf: try f.writeSFZ("i.sfz", "<region> sample=dc.wav pitch_keycenter=60 amp_veltrack=0 note_polyphony=1 \(opcodes)\n")))
            let out = rig.render(frames: 8_000, notes: [(0, 60, 100, nil), (2_000, 60, 80, nil)]).left
            return out[6_000]
        }
        let one = Float(Self.dc * Self.centredMonoGain)
        #expect(abs(try twoNotes("") - 2 * one) < 1e-5, "masked: both notes sound")
        #expect(abs(try twoNotes("note_selfmask=off") - one) < 1e-5, "unmasked: the first note stopped")
    }
}
