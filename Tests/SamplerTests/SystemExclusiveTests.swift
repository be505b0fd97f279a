import AudioGraph
import AudioTestSupport
import Foundation
import Instruments
import MIDI
import Playback
@testable import Sampler
import Sequencing
import SoundFont
import Testing

/// System exclusive in a song, heard through the built-in synthesizer and through the
/// SoundFont sampler: each test measures what a listener notices in the rendered audio.
@Suite struct SystemExclusiveTests {
    enum Instrument: String, CaseIterable, CustomTestStringConvertible {
        case synthesizer, sampler
        var testDescription: String { rawValue }

        func make() throws -> any AudioNode {
            switch self {
            case .synthesizer: return GMSynthesizer()
            case .sampler: return SamplerNode(bank: try SoundFontReader.read(contentsOf: SystemExclusiveTests.bank).bank)
            }
        }
    }

    static let bank = "/usr/share/sounds/sf2/TimGM6mb.sf2"
    static let gmOn: [UInt8] = [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]
    static let gm2On: [UInt8] = [0xF0, 0x7E, 0x7F, 0x09, 0x03, 0xF7]
    static let gsReset: [UInt8] = [0xF0, 0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41, 0xF7]
    static let xgOn: [UInt8] = [0xF0, 0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00, 0xF7]
    /// GS "use for rhythm part" = drum map 1 for part 2, which plays MIDI channel 2.
    static let part2Drums: [UInt8] = [0xF0, 0x41, 0x10, 0x42, 0x12, 0x40, 0x12, 0x15, 0x01, 0x18, 0xF7]

    /// A song at 120 beats per minute (480 ticks are 22,050 frames) built by `body`, rendered
    /// through `instrument` alone (no limiter) for `frames` frames; left channel.
    func render(_ instrument: Instrument, frames: Int = 44_100, _ body: (inout MusicTrack) -> Void) throws -> [Float] {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
        var track = MusicTrack()
        body(&track)
        sequence.tracks.append(track)
        let graph = AudioGraph()
        let output = graph.add(OutputNode())
        let node = graph.add(try instrument.make())
        try graph.connect(node, to: output)
        let engine = Engine(graph: try graph.compile(sampleRate: 44_100, maximumFrameCount: 512),
                            schedule: Schedule(sequence: sequence, sampleRate: 44_100, defaultNode: node))
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 512), r = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { l.deallocate(); r.deallocate() }
        var samples: [Float] = []
        while samples.count < frames {
            let n = min(512, frames - samples.count)
            engine.render(frameCount: n, into: StereoBuffer(left: l, right: r))
            samples.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
        }
        return samples
    }

    /// The period in frames of the strongest repetition between `lags`, to a fraction of a
    /// frame (normalised autocorrelation, parabolic peak).
    func period(_ x: ArraySlice<Float>, lags: ClosedRange<Int>) -> Double {
        let s = Array(x)
        func r(_ lag: Int) -> Double {
            var num = 0.0, a = 0.0, b = 0.0
            for i in 0..<(s.count - lags.upperBound - 1) {
                num += Double(s[i]) * Double(s[i + lag])
                a += Double(s[i]) * Double(s[i])
                b += Double(s[i + lag]) * Double(s[i + lag])
            }
            return num / max(1e-30, (a * b).squareRoot())
        }
        let values = (lags.lowerBound - 1...lags.upperBound + 1).map(r)
        var best = 1
        for k in 1..<(values.count - 1) where values[k] > values[best] { best = k }
        let (y0, y1, y2) = (values[best - 1], values[best], values[best + 1])
        let shift = (y0 - y2) / (2 * (y0 - 2 * y1 + y2))
        return Double(lags.lowerBound - 1 + best) + (shift.isFinite ? shift : 0)
    }

    func decibels(_ a: Float, _ b: Float) -> Double { 20 * log10(Double(a) / Double(b)) }

    /// How far `a` is from `b`, as the RMS of the difference relative to `b`'s RMS.
    func relativeDifference(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Float {
        rms(ArraySlice(zip(a, b).map { $0 - $1 })) / max(1e-12, rms(b))
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: SystemExclusiveTests.bank), "needs TimGM6mb (Debian timgm6mb-soundfont)"),
          arguments: Instrument.allCases)
    func masterVolumeLowersTheLevelByItsGain(_ instrument: Instrument) throws {
        // 8192 of 16383: half the amplitude, -6.02 dB.
        let half: [UInt8] = [0xF0, 0x7F, 0x7F, 0x04, 0x01, 0x00, 0x40, 0xF7]
        func song(_ sysex: [UInt8]?) throws -> [Float] {
            try render(instrument) { t in
                if let sysex { t.add(.sysex(SysexEvent(payload: Array(sysex.dropFirst()))), at: 0) }
                t.addNote(at: 0, channel: 0, key: 60, velocity: 100, duration: 900)
            }
        }
        let full = try song(nil), lowered = try song(half)
        let window = 4_410..<30_000
        let measured = decibels(rms(lowered[window]), rms(full[window]))
        #expect(abs(measured - 20 * log10(8192.0 / 16383)) < 0.05, "measured \(measured) dB")
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: SystemExclusiveTests.bank), "needs TimGM6mb (Debian timgm6mb-soundfont)"),
          arguments: Instrument.allCases)
    func masterTuningMovesThePitch(_ instrument: Instrument) throws {
        // Coarse +1 semitone (MSB 0x41), fine +50 cents (0x60 << 7 = 12288).
        let coarse: [UInt8] = [0xF0, 0x7F, 0x7F, 0x04, 0x04, 0x00, 0x41, 0xF7]
        let fine: [UInt8] = [0xF0, 0x7F, 0x7F, 0x04, 0x03, 0x00, 0x60, 0xF7]
        func measuredPeriod(_ sysex: [[UInt8]]) throws -> Double {
            let audio = try render(instrument) { t in
                for m in sysex { t.add(.sysex(SysexEvent(payload: Array(m.dropFirst()))), at: 0) }
                t.addNote(at: 0, channel: 0, key: 69, velocity: 100, duration: 900)
            }
            // 440 Hz is 100.2 frames; +150 cents is 91.9: both inside, no octave.
            return period(audio[8_000..<12_096], lags: 80...120)
        }
        let plain = try measuredPeriod([])
        let cents = { (tuned: Double) in 1200 * log2(plain / tuned) }
        let up = cents(try measuredPeriod([coarse]))
        let upAndFine = cents(try measuredPeriod([coarse, fine]))
        #expect(abs(up - 100) < 3, "coarse +1 semitone measured \(up) cents")
        #expect(abs(upAndFine - 150) < 3, "coarse +1 semitone, fine +50 cents measured \(upAndFine) cents")
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: SystemExclusiveTests.bank), "needs TimGM6mb (Debian timgm6mb-soundfont)"),
          arguments: Instrument.allCases)
    func gsRhythmPartMakesChannel2PlayTheDrums(_ instrument: Instrument) throws {
        func song(channel: UInt8, _ sysex: [[UInt8]]) throws -> [Float] {
            try render(instrument) { t in
                for m in sysex { t.add(.sysex(SysexEvent(payload: Array(m.dropFirst()))), at: 0) }
                for (i, key) in [36, 38, 42, 49].enumerated() {
                    t.addNote(at: 240 + Int64(i) * 240, channel: channel, key: UInt8(key), velocity: 110, duration: 200)
                }
            }
        }
        let window = 11_025..<44_100
        let drums = try song(channel: 9, [Self.gsReset])
        let assigned = try song(channel: 1, [Self.gsReset, Self.part2Drums])
        let melodic = try song(channel: 1, [Self.gsReset])
        #expect(relativeDifference(assigned[window], drums[window]) < 1e-3, "channel 2 plays channel 10's kit")
        #expect(relativeDifference(melodic[window], drums[window]) > 0.5, "the same notes on a melodic channel sound otherwise")
        // As FluidSynth: after GM System On, GS part messages are not obeyed.
        let afterGM = try song(channel: 1, [Self.gmOn, Self.part2Drums])
        #expect(relativeDifference(afterGM[window], melodic[window]) < 1e-3, "GM mode ignores the GS rhythm part")
    }

    /// After GM2 System On the sampler reads bank select as FluidSynth does in GM2 mode: MSB
    /// 120 turns a channel into a drum channel (and XG's 127 after XG System On), where the
    /// default GS reading would look for melodic bank 120.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: SystemExclusiveTests.bank), "needs TimGM6mb (Debian timgm6mb-soundfont)"),
          arguments: [(SystemExclusiveTests.gm2On, UInt8(120)), (SystemExclusiveTests.xgOn, UInt8(127))])
    func gm2AndXGBankSelectChooseTheDrums(reset: [UInt8], msb: UInt8) throws {
        func song(channel: UInt8, _ sysex: [[UInt8]], msb: UInt8?) throws -> [Float] {
            try render(.sampler) { t in
                for m in sysex { t.add(.sysex(SysexEvent(payload: Array(m.dropFirst()))), at: 0) }
                if let msb {
                    t.add(.message(.controlChange(channel: channel, controller: MIDIController.bankSelectMSB, value: msb)), at: 1)
                    t.add(.message(.programChange(channel: channel, program: 0)), at: 1)
                }
                for (i, key) in [36, 38, 42, 49].enumerated() {
                    t.addNote(at: 240 + Int64(i) * 240, channel: channel, key: UInt8(key), velocity: 110, duration: 200)
                }
            }
        }
        let window = 11_025..<44_100
        let drums = try song(channel: 9, [reset], msb: nil)
        let selected = try song(channel: 1, [reset], msb: msb)
        let gsStyle = try song(channel: 1, [], msb: msb)
        #expect(relativeDifference(selected[window], drums[window]) < 1e-3, "bank \(msb) selects the kit")
        #expect(relativeDifference(gsStyle[window], drums[window]) > 0.5, "without the reset the channel stays melodic")
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: SystemExclusiveTests.bank), "needs TimGM6mb (Debian timgm6mb-soundfont)"),
          arguments: Instrument.allCases, [SystemExclusiveTests.gmOn, SystemExclusiveTests.gm2On, SystemExclusiveTests.gsReset, SystemExclusiveTests.xgOn])
    func systemOnRestoresProgramsControllersAndDrums(_ instrument: Instrument, reset: [UInt8]) throws {
        func song(changedBefore: Bool, reset: [UInt8]?) throws -> [Float] {
            try render(instrument) { t in
                if changedBefore {
                    t.add(.message(.programChange(channel: 0, program: 40)), at: 0)
                    t.add(.message(.controlChange(channel: 0, controller: MIDIController.volume, value: 30)), at: 0)
                    t.add(.message(.controlChange(channel: 0, controller: MIDIController.pan, value: 0)), at: 0)
                    t.add(.sysex(SysexEvent(payload: Array(Self.part2Drums.dropFirst()))), at: 0)
                }
                if let reset { t.add(.sysex(SysexEvent(payload: Array(reset.dropFirst()))), at: 10) }
                t.addNote(at: 480, channel: 0, key: 64, velocity: 100, duration: 400)
                t.addNote(at: 480, channel: 1, key: 67, velocity: 100, duration: 400)
            }
        }
        let window = 22_050..<44_100
        let fresh = try song(changedBefore: false, reset: nil)
        let changed = try song(changedBefore: true, reset: nil)
        let restored = try song(changedBefore: true, reset: reset)
        #expect(relativeDifference(changed[window], fresh[window]) > 0.3, "the changes are audible")
        #expect(relativeDifference(restored[window], fresh[window]) < 1e-3, "the reset undid them")
    }
}
