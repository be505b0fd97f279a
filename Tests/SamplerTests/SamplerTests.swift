import AudioEffects
import AudioGraph
import AudioTestSupport
import Foundation
import MallocCounter
import MIDI
@testable import Sampler
import SoundFont
import Testing

private func on(_ key: UInt8, _ velocity: UInt8 = 127, channel: UInt8 = 0) -> MIDIMessage {
    .noteOn(channel: channel, key: key, velocity: velocity)
}
private func off(_ key: UInt8, channel: UInt8 = 0) -> MIDIMessage { .noteOff(channel: channel, key: key, velocity: 0) }
private func cc(_ controller: UInt8, _ value: UInt8, channel: UInt8 = 0) -> MIDIMessage {
    .controlChange(channel: channel, controller: controller, value: value)
}
private func bend(_ value: UInt16, channel: UInt8 = 0) -> MIDIMessage { .pitchBend(channel: channel, value: value) }

/// A sine of period 100 points at 44.1 kHz sounds 441 Hz at its root key.
private let sine441 = TestSample.sine(period: 100)

@Suite struct PitchTests {
    func measure(_ bank: SoundFontBank, _ messages: [(frame: Int, message: MIDIMessage)]) throws -> Double {
        let rig = try SamplerRig(bank)
        let out = rig.render(frames: 22_050, messages)
        return frequency(out.left, 4410..<22_050)
    }

    @Test func rootKeyPlaysTheSampleAsRecorded() throws {
        let f = try measure(singleBank(sine441), [(0, on(69))])
        #expect(abs(cents(f / 441)) < 0.5)
    }

    @Test func keysMoveBySemitones() throws {
        let f = try measure(singleBank(sine441), [(0, on(81))])
        #expect(abs(cents(f / 882)) < 0.5)
        let g = try measure(singleBank(sine441), [(0, on(62))])
        #expect(abs(cents(g / (441 * pow(2, -7.0 / 12)))) < 0.5)
    }

    @Test func overridingRootKeyCoarseAndFineTune() throws {
        let f = try measure(singleBank(sine441, [.overridingRootKey: 57]), [(0, on(69))])
        #expect(abs(cents(f / 882)) < 0.5)
        let g = try measure(singleBank(sine441, [.coarseTune: -12, .fineTune: 50]), [(0, on(69))])
        #expect(abs(cents(g / 441) - (-1150)) < 0.5)
    }

    @Test func pitchCorrectionAndScaleTuning() throws {
        var corrected = sine441
        corrected.correction = -30
        let f = try measure(singleBank(corrected), [(0, on(69))])
        #expect(abs(cents(f / 441) - (-30)) < 0.5)
        let g = try measure(singleBank(sine441, [.scaleTuning: 50]), [(0, on(81))])
        #expect(abs(cents(g / 441) - 600) < 0.5)
    }

    @Test func sampleRateConversion() throws {
        var slow = sine441
        slow.rate = 22_050
        let f = try measure(singleBank(slow), [(0, on(69))])
        #expect(abs(cents(f / 220.5)) < 0.5)
    }

    @Test func pitchBendFollowsTheRPNRange() throws {
        // Default range 2 semitones, full up.
        let f = try measure(singleBank(sine441), [(0, bend(16_383)), (0, on(69))])
        #expect(abs(cents(f / 441) - 200 * 8191 / 8192) < 0.5)
        // RPN 0 set to 12 semitones 50 cents, half up.
        let messages: [(frame: Int, message: MIDIMessage)] = [
            (0, cc(101, 0)), (0, cc(100, 0)), (0, cc(6, 12)), (0, cc(38, 50)), (0, bend(8192 + 4096)), (0, on(69)),
        ]
        let g = try measure(singleBank(sine441), messages)
        #expect(abs(cents(g / 441) - 1250.0 / 2) < 0.5)
    }

    @Test func bendDuringANoteMovesItOnTheGrid() throws {
        let rig = try SamplerRig(singleBank(sine441))
        let out = rig.render(frames: 44_100, [(0, on(69)), (22_050, bend(0))])
        #expect(abs(cents(frequency(out.left, 2000..<22_000) / 441)) < 0.5)
        #expect(abs(cents(frequency(out.left, 23_000..<44_100) / 441) + 200) < 0.5)
    }
}

@Suite struct TimingTests {
    @Test func noteStartsAtItsExactFrame() throws {
        for frame in [0, 1, 63, 64, 65, 1000, 12_345] {
            let rig = try SamplerRig(singleBank(.constant(10_000)))
            let out = rig.render(frames: frame + 200, [(frame, on(60))], blockSizes: [97])
            #expect(out.left[..<frame].allSatisfy { $0 == 0 }, "silent before frame \(frame)")
            #expect(out.left[frame] != 0, "sounding at frame \(frame)")
        }
    }

    @Test func envelopeStagesLastWhatTheGeneratorsSay() throws {
        // Attack 0.1 s, hold 0.1 s, decay 1 s (full 96 dB range) to 48 dB down, release 1 s.
        let attack = Int32((1200 * log2(0.1)).rounded())
        let bank = singleBank(.constant(16_000), [.attackVolEnv: attack, .holdVolEnv: attack, .decayVolEnv: 0,
                                                  .sustainVolEnv: 500, .releaseVolEnv: 0])
        let rig = try SamplerRig(bank)
        let out = rig.render(frames: 3 * 44_100, [(0, on(60)), (88_200, off(60))])
        let top = peak(out.left, 0..<20_000)
        func level(_ t: Double) -> Float { abs(out.left[Int(t * 44_100)]) / top }
        // Attack is linear in amplitude: half way at 50 ms, full at 100 ms (64-frame steps).
        #expect(abs(level(0.05) - 0.5) < 0.02)
        #expect(level(0.102) > 0.99)
        // Hold keeps the peak until 200 ms.
        #expect(level(0.195) > 0.99)
        // Decay falls 96 dB a second, linearly in dB: 24 dB at 450 ms.
        #expect(abs(decibels(level(0.45)) + 24) < 0.6)
        // Sustain: the value 1 - 0.5, read as 96 dB x 0.5 = 48 dB down (FluidSynth's scale).
        #expect(abs(decibels(level(1.5)) + 48) < 0.6)
        // Release from there: 96 dB a second again, so 24 dB further after 250 ms.
        #expect(abs(decibels(level(2.25)) + 72) < 1)
        #expect(peak(out.left, Int(2.55 * 44_100)..<out.left.count) == 0, "finished after the release")
    }

    @Test func keyNumberScalesHoldAndDecay() throws {
        // keynumToVolEnvDecay 100: an octave up halves the decay.
        let bank = singleBank(.constant(16_000), [.decayVolEnv: 0, .keyNumberToVolEnvDecay: 100, .sustainVolEnv: 1000])
        let rig = try SamplerRig(bank)
        let low = rig.render(frames: 44_100, [(0, on(60))])
        let rig2 = try SamplerRig(bank)
        let high = rig2.render(frames: 44_100, [(0, on(72))])
        let lowLevel = decibels(abs(low.left[11_025]) / peak(low.left, 0..<1000))
        let highLevel = decibels(abs(high.left[11_025]) / peak(high.left, 0..<1000))
        #expect(abs(lowLevel + 24) < 0.6)
        #expect(abs(highLevel + 48) < 0.6)
    }
}

@Suite struct LoopTests {
    @Test func unloopedSampleStopsAtItsEnd() throws {
        let rig = try SamplerRig(singleBank(.constant(10_000, count: 1000), [.sampleModes: 0]))
        let out = rig.render(frames: 4000, [(0, on(60))])
        // Key 60 against root 69: the 1000 points last 1000 / 2^(-9/12) frames.
        let length = Int(1000 / pow(2, -9.0 / 12))
        #expect(out.left[length - 10] != 0)
        #expect(out.left[(length + 5)...].allSatisfy { $0 == 0 })
        #expect(rig.sampler.activeVoiceCount == 0)
    }

    @Test func loopedSampleKeepsSounding() throws {
        let rig = try SamplerRig(singleBank(.constant(10_000, count: 1000), [.sampleModes: 1]))
        let out = rig.render(frames: 20_000, [(0, on(69))])
        #expect(abs(out.left[19_999]) > 0.01)
    }

    @Test func loopUntilReleaseThenPlaysTheTail() throws {
        // Points 0..<600 at one level, the loop 600..<800 at another, the tail 800..<1000 at a third.
        let words = [Int16](repeating: 4000, count: 600) + [Int16](repeating: 8000, count: 200) + [Int16](repeating: 16_000, count: 200)
        let sample = TestSample(words: words, loop: 600..<800)
        let bank = singleBank(sample, [.sampleModes: 3, .releaseVolEnv: 2400])
        let rig = try SamplerRig(bank)
        let out = rig.render(frames: 12_000, [(0, on(69)), (10_000, off(69))])
        let loopLevel = abs(out.left[9_000])
        #expect(loopLevel > 0)
        // After the release the playback leaves the loop and reaches the tail (twice the level).
        let tail = peak(out.left, 10_000..<10_400)
        #expect(tail > 1.8 * loopLevel)
        #expect(out.left[10_500...].allSatisfy { $0 == 0 }, "the sample ended")
    }
}

@Suite struct VoiceTests {
    @Test func exclusiveClassCutsTheEarlierNote() throws {
        let bank = makeBank(samples: [.constant(8000)], presets: [(128, 0, [
            TestRegion(keys: 42...42, generators: [.exclusiveClass: 1, .sampleModes: 1]),
            TestRegion(keys: 46...46, generators: [.exclusiveClass: 1, .sampleModes: 1]),
            TestRegion(keys: 38...38, generators: [.sampleModes: 1]),
        ])])
        let rig = try SamplerRig(bank)
        _ = rig.render(frames: 88_200, [(0, on(42, channel: 9)), (0, on(38, channel: 9)), (1000, on(46, channel: 9))])
        let keys = rig.sampler.voiceSummary().map(\.key).sorted()
        #expect(keys == [38, 46])
    }

    @Test func stereoLinkedSamplesPlayInPhase() throws {
        var left = TestSample.sine(period: 100)
        left.kind = .left
        left.link = 1
        var right = TestSample.sine(period: 100)
        right.kind = .right
        right.link = 0
        let bank = makeBank(samples: [left, right], presets: [(0, 0, [
            TestRegion(sample: 0, generators: [.pan: -500, .sampleModes: 1]),
            TestRegion(sample: 1, generators: [.pan: 500, .sampleModes: 1]),
        ])])
        let rig = try SamplerRig(bank)
        let out = rig.render(frames: 20_000, [(0, on(64)), (10_000, bend(12_000))])
        #expect(peak(out.left, 0..<20_000) > 0.01)
        #expect(out.left == out.right)
    }

    @Test func velocityVolumeAndExpressionFollowTheConcaveCurve() throws {
        func level(_ messages: [(frame: Int, message: MIDIMessage)]) throws -> Float {
            let rig = try SamplerRig(singleBank(sine441))
            let out = rig.render(frames: 8820, messages)
            return peak(out.left, 4410..<8820)
        }
        let full = try level([(0, on(69))])
        // The concave curve makes amplitude go as (value / 127) squared: 40 log10.
        for v: UInt8 in [100, 64, 32] {
            let expected = 40 * log10(Float(v) / 127)
            #expect(abs(decibels(try level([(0, on(69, v))]) / full) - expected) < 0.3, "velocity \(v)")
            #expect(abs(decibels(try level([(0, cc(7, v)), (0, on(69))]) / full) - (expected - 40 * log10(100 / 127)))
                    < 0.3, "volume \(v)")
            #expect(abs(decibels(try level([(0, cc(11, v)), (0, on(69))]) / full) - expected) < 0.3, "expression \(v)")
        }
    }

    @Test func panIsEqualPower() throws {
        func levels(_ value: UInt8) throws -> (Float, Float) {
            let rig = try SamplerRig(singleBank(sine441))
            let out = rig.render(frames: 8820, [(0, cc(10, value)), (0, on(69))])
            return (peak(out.left, 4410..<8820), peak(out.right, 4410..<8820))
        }
        let (cl, cr) = try levels(64)
        #expect(abs(cl - cr) < 1e-6)
        let (ll, lr) = try levels(0)
        #expect(lr < 1e-6)
        #expect(abs(decibels(ll / cl) - 3.01) < 0.1)
        let (rl, rr) = try levels(127)
        #expect(rr > 0.99 * ll && rl < 0.02 * rr)
    }

    @Test func filterLowersHighFrequencies() throws {
        // 11025 Hz: period 4.
        let high = TestSample.sine(period: 4, periods: 5000)
        func level(_ cutoff: Int32, _ q: Int32 = 0) throws -> Float {
            let rig = try SamplerRig(singleBank(high, [.initialFilterCutoff: cutoff, .initialFilterQ: q]))
            let out = rig.render(frames: 8820, [(0, on(69))])
            return peak(out.left, 4410..<8820)
        }
        let open = try level(13_500)
        let closed = try level(6900) // about 440 Hz
        #expect(decibels(closed / open) < -40)
        // Resonance at the cutoff: a 441 Hz tone with the cutoff on it and Q 12 dB gains
        // 12 dB - 3.01 dB less half the peak (the SoundFont gain compensation).
        func toneLevel(_ q: Int32) throws -> Float {
            let rig = try SamplerRig(singleBank(sine441, [.initialFilterCutoff: 6_900 + 31, .initialFilterQ: q]))
            let out = rig.render(frames: 8820, [(0, on(69))])
            return peak(out.left, 4410..<8820)
        }
        let flat = try toneLevel(0), resonant = try toneLevel(120)
        #expect(decibels(resonant / flat) > 3)
    }

    @Test func sustainPedalHoldsReleasedNotes() throws {
        let bank = singleBank(.constant(8000), [.releaseVolEnv: -7200])
        let rig = try SamplerRig(bank)
        let out = rig.render(frames: 30_000, [(0, cc(64, 127)), (0, on(60)), (5000, off(60)), (20_000, cc(64, 0))])
        #expect(abs(out.left[19_000]) > 0.01, "held by the pedal")
        #expect(out.left[22_000...].allSatisfy { $0 == 0 }, "released with the pedal")
    }

    @Test func sostenutoHoldsOnlyTheNotesDownWhenPressed() throws {
        let bank = singleBank(.constant(8000), [.releaseVolEnv: -7200])
        let rig = try SamplerRig(bank)
        _ = rig.render(frames: 20_000, [(0, on(60)), (1000, cc(66, 127)), (2000, on(64)), (5000, off(60)), (5000, off(64))])
        #expect(rig.sampler.voiceSummary().map(\.key) == [60])
        _ = rig.render(frames: 20_000, [(0, cc(66, 0))])
        #expect(rig.sampler.activeVoiceCount == 0)
    }

    @Test func voiceLimitStealsTheQuietestReleasedVoiceWithoutClicks() throws {
        // 110.25 Hz sines (period 400) whose steepest natural step is 1.6 % of the peak.
        let bank = singleBank(.sine(period: 400, periods: 50), [.releaseVolEnv: 1200])
        let rig = try SamplerRig(bank)
        rig.sampler.setParameter(SamplerNode.Parameter.voiceLimit, value: 2)
        var messages: [(frame: Int, message: MIDIMessage)] = [(0, on(60)), (0, on(64)), (1000, off(60)), (3000, on(67))]
        _ = rig.render(frames: 4000, messages)
        // The released key 60 was stolen, not the held 64.
        let summary = rig.sampler.voiceSummary()
        #expect(summary.filter { !$0.fading }.map(\.key).sorted() == [64, 67])
        // Then held voices: the oldest goes first, fading out.
        let rig2 = try SamplerRig(bank)
        rig2.sampler.setParameter(SamplerNode.Parameter.voiceLimit, value: 4)
        messages = (0..<12).map { (frame: 1000 + 773 * $0, message: on(UInt8(48 + $0))) }
        let out = rig2.render(frames: 12_000, messages)
        let sounding = rig2.sampler.voiceSummary().filter { !$0.fading }.map(\.key).sorted()
        #expect(sounding == [56, 57, 58, 59])
        let single = peak(out.left, 1000..<1700)
        #expect(maximumJump(out.left, 0..<12_000) < 0.25 * single)
    }

    /// Polyphony overflow as FluidSynth resolves it: the voice with the lowest score goes
    /// (released -2000, held by a pedal -1000, youth 1000 x rate / age), and among equal
    /// scores the first in FluidSynth's voice array, whose places a new voice fills from the
    /// first free one.
    @Test func overflowStealsAsFluidSynthDoes() throws {
        let bank = singleBank(.constant(8000), [.releaseVolEnv: 1200])
        // A chord of six at one frame with room for four: 60, 61, 62, 63 take places 0-3; 64
        // replaces the first of the equals (60, place 0), then 65 replaces 64 there.
        let chord = try SamplerRig(bank)
        chord.sampler.setParameter(SamplerNode.Parameter.voiceLimit, value: 4)
        _ = chord.render(frames: 2000, (60...65).map { (frame: 0, message: on(UInt8($0))) })
        #expect(chord.sampler.voiceSummary().filter { !$0.fading }.map(\.key).sorted() == [61, 62, 63, 65])

        // Youth counts most: 1000 x 44100 / age. A voice released 900 frames after it was
        // struck still outscores one held for 8000 frames (-2000 + 44100 against 5512), so the
        // old held voice goes, where "released first" would take the young one.
        let young = try SamplerRig(bank)
        young.sampler.setParameter(SamplerNode.Parameter.voiceLimit, value: 2)
        _ = young.render(frames: 9000, [(0, on(60, 100)), (7000, on(64, 100)), (7100, off(64)), (8000, on(67, 100))])
        #expect(young.sampler.voiceSummary().filter { !$0.fading }.map(\.key).sorted() == [64, 67])

        // At equal ages, a released voice goes first (-2000).
        let released = try SamplerRig(bank)
        released.sampler.setParameter(SamplerNode.Parameter.voiceLimit, value: 2)
        _ = released.render(frames: 9000, [(0, on(60, 100)), (0, on(64, 100)), (100, off(64)), (8000, on(67, 100))])
        #expect(released.sampler.voiceSummary().filter { !$0.fading }.map(\.key).sorted() == [60, 67])

    }

    @Test func allSoundOffAndAllNotesOff() throws {
        let bank = singleBank(.constant(8000), [.releaseVolEnv: 2400])
        let rig = try SamplerRig(bank)
        _ = rig.render(frames: 2000, [(0, on(60)), (0, on(64)), (1000, cc(123, 0))])
        #expect(rig.sampler.voiceSummary().allSatisfy { $0.released })
        _ = rig.render(frames: 1000, [(0, cc(120, 0))])
        #expect(rig.sampler.activeVoiceCount == 0)
    }
}

@Suite struct PresetSelectionTests {
    func level(_ bank: SoundFontBank, _ messages: [(frame: Int, message: MIDIMessage)]) throws -> Float {
        let rig = try SamplerRig(bank)
        let out = rig.render(frames: 4410, messages)
        return peak(out.left, 2000..<4410)
    }

    /// Each preset plays its own constant level, so the level tells which one sounded.
    let bank = makeBank(samples: [.constant(1000), .constant(2000), .constant(3000), .constant(4000)], presets: [
        (0, 0, [TestRegion(sample: 0, generators: [.sampleModes: 1])]),
        (1, 0, [TestRegion(sample: 1, generators: [.sampleModes: 1])]),
        (128, 0, [TestRegion(sample: 2, generators: [.sampleModes: 1])]),
        (0, 5, [TestRegion(sample: 3, generators: [.sampleModes: 1])]),
    ])

    @Test func bankSelectAndProgramChange() throws {
        let base = try level(bank, [(0, on(60))])
        let bank1 = try level(bank, [(0, cc(0, 1)), (0, .programChange(channel: 0, program: 0)), (0, on(60))])
        #expect(abs(bank1 / base - 2) < 0.01)
        let program5 = try level(bank, [(0, .programChange(channel: 0, program: 5)), (0, on(60))])
        #expect(abs(program5 / base - 4) < 0.01)
        // Bank 1 has no program 5: bank 0's is used.
        let fallback = try level(bank, [(0, cc(0, 1)), (0, .programChange(channel: 0, program: 5)), (0, on(60))])
        #expect(abs(fallback / base - 4) < 0.01)
        // A missing program anywhere: the first preset.
        let first = try level(bank, [(0, .programChange(channel: 0, program: 77)), (0, on(60))])
        #expect(abs(first / base - 1) < 0.01)
    }

    @Test func channelTenPlaysTheDrumBank() throws {
        let base = try level(bank, [(0, on(60))])
        let drums = try level(bank, [(0, on(60, channel: 9))])
        #expect(abs(drums / base - 3) < 0.01)
        let otherKit = try level(bank, [(0, .programChange(channel: 9, program: 25)), (0, on(60, channel: 9))])
        #expect(abs(otherKit / base - 3) < 0.01)
    }

    @Test func aSinglePresetBankPlaysOnEveryChannel() throws {
        let single = singleBank(.constant(1000))
        for channel: UInt8 in [0, 3, 9, 15] {
            let l = try level(single, [(0, .programChange(channel: channel, program: 40)), (0, on(60, channel: channel))])
            #expect(l > 0, "channel \(channel + 1)")
        }
    }
}

@Suite struct ModulatorTests {
    @Test func modWheelDrivesVibratoDepth() throws {
        let bank = singleBank(sine441, [.freqVibLFO: 0])
        let rig = try SamplerRig(bank)
        let out = rig.render(frames: 44_100, [(0, cc(1, 127)), (0, on(69))])
        // 50 cents x 127/128 peak deviation at 8.176 Hz: the period lengths swing.
        var lowest = 1e9, highest = 0.0
        for start in stride(from: 4410, to: 40_000, by: 441) {
            let f = frequency(out.left, start..<(start + 441))
            lowest = min(lowest, f)
            highest = max(highest, f)
        }
        #expect(cents(highest / 441) > 30)
        #expect(cents(lowest / 441) < -30)
    }

    @Test func curvesPolaritiesAndAmountSource() throws {
        let tables = SamplerTables()
        let words: [(UInt16, Float, Float)] = [
            (0x0000, 64, 64 / 128),                // linear unipolar positive
            (0x0100, 64, 1 - 64 / 128),            // negative
            (0x0200, 96, 2 * 96 / 128 - 1),        // bipolar
            (0x0300, 96, 1 - 2 * 96 / 128),        // bipolar negative
            (0x0C00, 70, 1), (0x0C00, 60, 0),      // switch
            (0x0E00, 60, -1), (0x0D00, 60, 1),     // switch bipolar, switch negative
        ]
        for (word, value, expected) in words {
            let got = tables.transform(ModulatorSource(word), value: value, range: 128)
            #expect(abs(got - expected) < 1e-6, "source 0x\(String(word, radix: 16))")
        }
        // Concave and convex at the ends and in the middle, and bipolar symmetry.
        let concave = ModulatorSource(0x0400), convex = ModulatorSource(0x0800)
        #expect(tables.transform(concave, value: 0, range: 128) == 0)
        #expect(abs(tables.transform(concave, value: 128, range: 128) - 1) < 1e-6)
        #expect(tables.transform(concave, value: 64, range: 128) < 0.2)
        #expect(tables.transform(convex, value: 64, range: 128) > 0.8)
        let bipolarConcave = ModulatorSource(0x0600)
        #expect(abs(tables.transform(bipolarConcave, value: 32, range: 128) + tables.transform(bipolarConcave, value: 96, range: 128)) < 1e-6)
    }

    @Test func presetModulatorWithAmountSourceAndAbsoluteTransform() throws {
        // CC 21 (bipolar linear) x CC 22 (unipolar) -> fine tune, 100 cents, absolute value.
        let mod = SoundFontModulator(source: 0x0295, destination: 52, amount: 100, amountSource: 0x0096, transform: 2)
        let bank = singleBank(sine441, modulators: SoundFontModulator.defaults + [mod])
        let rig = try SamplerRig(bank)
        let out = rig.render(frames: 22_050, [(0, cc(21, 0)), (0, cc(22, 127)), (0, on(69))])
        // |(-1) x 127/128 x 100| cents up.
        #expect(abs(cents(frequency(out.left, 4410..<22_050) / 441) - 100 * 127 / 128) < 0.5)
        let rig2 = try SamplerRig(bank)
        let out2 = rig2.render(frames: 22_050, [(0, cc(21, 0)), (0, cc(22, 0)), (0, on(69))])
        #expect(abs(cents(frequency(out2.left, 4410..<22_050) / 441)) < 0.5)
    }

    @Test func polyAndChannelPressureAsSources() throws {
        // Poly pressure (general controller 10) -> fine tune 100 cents; channel pressure too.
        let poly = SoundFontModulator(source: 0x000A, destination: 52, amount: 128, amountSource: 0, transform: 0)
        let rig = try SamplerRig(singleBank(sine441, modulators: SoundFontModulator.defaults + [poly]))
        let out = rig.render(frames: 44_100, [(0, on(69)), (22_050, .polyPressure(channel: 0, key: 69, pressure: 64))])
        #expect(abs(cents(frequency(out.left, 23_000..<44_100) / 441) - 64) < 0.5)
    }
}

@Suite struct DeterminismTests {
    /// A busy little performance: notes, controllers, bend, pedals, program changes, drums.
    func performance() -> [(frame: Int, message: MIDIMessage)] {
        var m: [(frame: Int, message: MIDIMessage)] = []
        for i in 0..<40 {
            let f = 137 * i * 7 + (i % 5) * 13
            m.append((f, on(UInt8(48 + (i * 7) % 30), UInt8(40 + (i * 11) % 87), channel: UInt8(i % 3))))
            m.append((f + 3000 + i * 11, off(UInt8(48 + (i * 7) % 30), channel: UInt8(i % 3))))
            if i % 4 == 0 { m.append((f + 5, cc(7, UInt8(60 + i), channel: UInt8(i % 3)))) }
            if i % 6 == 0 { m.append((f + 17, bend(UInt16(8192 + i * 100), channel: 1))) }
        }
        m += [(500, cc(64, 127)), (9000, cc(64, 0)), (700, cc(1, 90, channel: 2)), (2000, cc(10, 20)),
              (3001, on(38, channel: 9)), (3002, on(42, channel: 9)), (4444, cc(91, 100)), (4445, cc(93, 100))]
        return m
    }

    func bank() -> SoundFontBank {
        makeBank(samples: [.sine(period: 100), .sine(period: 37, periods: 300), .constant(6000)], presets: [
            (0, 0, [TestRegion(keys: 0...60, sample: 0, generators: [.sampleModes: 1, .attackVolEnv: -3000, .releaseVolEnv: -2000,
                                                                      .freqVibLFO: 200, .vibLFOToPitch: 30]),
                    TestRegion(keys: 61...127, sample: 1, generators: [.sampleModes: 3, .modEnvToFilterCutoff: -2400,
                                                                        .decayModEnv: -1000, .initialFilterQ: 100,
                                                                        .modLFOToVolume: 50, .delayModLFO: -4000])]),
            (128, 0, [TestRegion(sample: 2, generators: [.sampleModes: 0, .exclusiveClass: 1])]),
        ])
    }

    @Test func outputIsBitIdenticalForEveryBlockSize() throws {
        let frames = 30_000
        let reference = try SamplerRig(bank(), effects: true).render(frames: frames, performance(), blockSizes: [512])
        #expect(peak(reference.left, 0..<frames) > 0.01)
        for sizes in [[1], [63], [64], [65], [4096], randomBlockSizes(count: 500, maximum: 700, seed: 7)] {
            let out = try SamplerRig(bank(), effects: true).render(frames: frames, performance(), blockSizes: sizes)
            #expect(out.left == reference.left && out.right == reference.right, "block sizes \(sizes.prefix(3))")
        }
    }

    @Test func renderingAllocatesNothing() throws {
        malloc_counter_start()
        let probe = [Int](repeating: 1, count: Int.random(in: 100...200))
        #expect(malloc_counter_stop() > 0 && probe.count >= 100)

        // Warm up: the first render of each code path may instantiate runtime metadata.
        _ = try SamplerRig(bank(), effects: true, maximumFrameCount: 512).render(frames: 30_720, performance())
        let rig = try SamplerRig(bank(), effects: true, maximumFrameCount: 512)
        let events = performance().enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }
            .map { GraphEvent(offset: $0.element.frame, nodeIndex: 0, event: .midi($0.element.message)) }
        // Events for every block, prepared before counting.
        var blocks: [[GraphEvent]] = []
        var next = 0
        for b in 0..<60 {
            var block: [GraphEvent] = []
            while next < events.count && events[next].offset < (b + 1) * 512 {
                var e = events[next]
                e.offset -= b * 512
                block.append(e)
                next += 1
            }
            blocks.append(block)
        }
        var allocations = 0
        for (b, block) in blocks.enumerated() {
            malloc_counter_start()
            block.withUnsafeBufferPointer { rig.graph.render(startFrame: Int64(b * 512), frameCount: 512, events: $0) }
            let n = malloc_counter_stop()
            allocations += n
        }
        #expect(allocations == 0)
        #expect(rig.sampler.activeVoiceCount > 0)
    }
}

@Suite struct EffectTests {
    @Test func reverbAndChorusSendsAddAWetSignalThatLevelZeroRemoves() throws {
        let bank = singleBank(sine441, [.releaseVolEnv: -7200])
        let dry = try SamplerRig(bank).render(frames: 44_100, [(0, cc(91, 127)), (0, cc(93, 127)), (0, on(69)), (4410, off(69))])
        let wet = try SamplerRig(bank, effects: true).render(frames: 44_100, [(0, cc(91, 127)), (0, cc(93, 127)), (0, on(69)), (4410, off(69))])
        // After the dry note ends, only the effects' tails remain.
        #expect(peak(dry.left, 8000..<44_100) == 0)
        #expect(peak(wet.left, 8000..<20_000) > 1e-4)
    }

    /// Groups of four voices none of which sends to the chorus leave its sums alone; the output
    /// must be the one the full send mix gives, to the bit, while other voices do send.
    @Test("Voices that send nothing to the chorus skip its sums, and the output stays the same to the bit")
    func silentChorusSendsAreSkippedWithoutChangingTheOutput() throws {
        let bank = singleBank(sine441, [.releaseVolEnv: -2000])
        // Channel 1's first four notes start first and fill a group without chorus; the
        // fifth shares a group with channel 0's notes, which send to the chorus (controller 93).
        var performance: [(frame: Int, message: MIDIMessage)] = [(0, cc(91, 90)), (0, cc(91, 60, channel: 1)), (0, cc(93, 127))]
        for (i, key) in [48, 52, 55, 59, 62].enumerated() { performance.append((10 + i, on(UInt8(key), 100, channel: 1))) }
        for (i, key) in [60, 64, 67].enumerated() { performance.append((700 + 40 * i, on(UInt8(key), 90))) }
        performance += [(9000, off(60)), (9000, off(64)), (9000, off(67))]
        performance += [48, 52, 55, 59, 62].map { (14_000, off(UInt8($0), channel: 1)) }
        let skipping = try SamplerRig(bank, effects: true)
        let full = try SamplerRig(bank, effects: true)
        full.sampler.skipsSilentChorusSends = false
        let expected = full.render(frames: 30_000, performance, blockSizes: [100, 37, 512])
        let actual = skipping.render(frames: 30_000, performance, blockSizes: [100, 37, 512])
        #expect(skipping.sampler.groupsWithoutChorusSend > 100)
        #expect(full.sampler.groupsWithoutChorusSend == 0)
        let bits = { (x: [Float]) in x.map(\.bitPattern) }
        #expect(bits(actual.left) == bits(expected.left) && bits(actual.right) == bits(expected.right))
        // The chorus is heard: without it the output differs.
        let noChorus = try SamplerRig(bank, effects: true)
        noChorus.sampler.setParameter(SamplerNode.Parameter.chorusLevel, value: 0)
        let dry = noChorus.render(frames: 30_000, performance, blockSizes: [100, 37, 512])
        #expect(dry.left != expected.left)
    }

    @Test func chorusIsBlockSizeIndependent() throws {
        let g = AudioGraph()
        let s = g.add(SineSource(frequency: 300)), c = g.add(ChorusNode(dry: 0.5)), o = g.add(OutputNode())
        try g.connect(s, to: c)
        try g.connect(c, to: o)
        let graph = try g.compile(sampleRate: 44_100, maximumFrameCount: 4096)
        let a = renderGraph(graph, frames: 20_000, blockSizes: [4096])
        graph.reset()
        let b = renderGraph(graph, frames: 20_000, blockSizes: randomBlockSizes(count: 200, maximum: 300, seed: 3))
        #expect(a.left == b.left && a.right == b.right)
        #expect(a.left != a.right, "voices spread in stereo")
    }
}

@Suite struct FluidSynthCompatibilityTests {
    /// FluidSynth disables its default velocity-to-cutoff modulator, so soft and loud notes
    /// have the same brightness; the sampler does the same.
    @Test func defaultVelocityToCutoffModulatorIsSilent() throws {
        let bright = TestSample.sine(period: 8, periods: 2000)
        func level(_ velocity: UInt8) throws -> Float {
            let rig = try SamplerRig(singleBank(bright, [.initialFilterCutoff: 10_000]))
            let out = rig.render(frames: 8820, [(0, on(69, velocity))])
            return peak(out.left, 4410..<8820)
        }
        // Only the concave velocity curve separates them: no extra filtering.
        let ratio = try level(80) / level(127)
        #expect(abs(decibels(ratio) - 40 * log10(80 / 127)) < 0.3)
    }
}
