import AudioGraph
import AudioTestSupport
import Foundation
import Instruments
import MIDI
import Testing

/// Retuned notes through the built-in synthesizer, their frequency measured from the audio.
///
/// No General MIDI patch is a pure sine, so the frequency is not counted from zero crossings.
/// A patch without noise, detuning or a moving filter repeats its waveform every period, but
/// for its vibrato; the lag at which the waveform best matches itself some whole vibrato
/// cycles later, averaged over whole vibrato cycles and found to a fraction of a frame, gives
/// the mean period to about a millionth. That is held to 0.1 cent of the exact pitch the
/// tuning asks for (a 6-cent vibrato raises the mean frequency by 0.005 cent).
@Suite struct GMTuningTests {
    typealias Pitch = TuningMessages.Pitch

    /// The first General MIDI program whose waveform is periodic while it sustains but for a
    /// vibrato (an organ).
    static let steadyProgram: UInt8? = (0..<128).first { n in
        let p = GMPatches.melodic(program: n)
        let harmonicB = p.levelB == 0 || (p.ratioB == p.ratioB.rounded() && p.ratioB >= 1 && p.detuneCentsB == 0)
        let steadyFM = p.waveA != .fm || (p.fmIndex == p.fmIndexSustain && p.fmRatio == p.fmRatio.rounded())
        return p.noiseLevel == 0 && p.filterEnvOctaves == 0 && p.pitchEnvSemitones == 0 && p.sustain > 0
            && p.waveA != .noise && (p.levelB == 0 || p.waveB != .noise) && harmonicB && steadyFM
    }.map(UInt8.init)

    static func expected(_ cents: Double) -> Double { 440 * exp2((cents - 6900) / 1200) }
    static func error(_ measured: Double, _ target: Double) -> Double { abs(1200 * log2(measured / target)) }

    /// Renders a dry synthesizer (retuned by `tuning` first) for `frames` frames with `events`:
    /// channel messages, or system exclusive bytes.
    static func render(frames: Int, tuning: KeyboardTuning? = nil, _ events: [(frame: Int, message: MIDIMessage?, sysex: [UInt8]?)],
                       blockSizes: [Int] = [512]) throws -> [Float] {
        let rig = try SynthRig()
        rig.synth.setTuning(tuning)
        let store = SystemExclusiveStore(events.compactMap(\.sysex))
        var next = 0
        var scheduled: [(frame: Int, node: Int, event: NodeEvent)] = []
        for event in events {
            if let message = event.message {
                scheduled.append((event.frame, 0, .midi(message)))
            } else {
                scheduled.append((event.frame, 0, .systemExclusive(store.messages[next])))
                next += 1
            }
        }
        return withExtendedLifetime(store) { renderGraph(rig.graph, frames: frames, blockSizes: blockSizes, events: scheduled).left }
    }

    /// Plays `key` on `channel` with the steady program after `before` (at frame 0) and
    /// returns its frequency.
    static func measure(_ key: UInt8, channel: UInt8 = 0, near guess: Double, tuning: KeyboardTuning? = nil,
                        after before: [(message: MIDIMessage?, sysex: [UInt8]?)] = []) throws -> Double {
        let program = try #require(steadyProgram, "no General MIDI patch is steady enough to measure")
        let events = before.map { (frame: 0, message: $0.message, sysex: $0.sysex) }
            + [(frame: 1, message: MIDIMessage.programChange(channel: channel, program: program), sysex: nil),
               (frame: 2, message: MIDIMessage.noteOn(channel: channel, key: key, velocity: 100), sysex: nil)]
        let out = try render(frames: 80_000, tuning: tuning, events)
        return periodicFrequency(out, near: guess, vibratoRate: Double(GMPatches.melodic(program: Int(program)).vibratoRate))
    }

    /// The mean frequency of `x`, periodic but for a vibrato of `vibratoRate` hertz, whose
    /// period is within a few semitones of `guess` hertz: a coarse period from the best
    /// self-match over one period, refined by the best self-match over 8, 64 and then about
    /// five vibrato cycles' worth of periods. Each match is averaged over three vibrato cycles,
    /// where the vibrato's swings either way cancel.
    static func periodicFrequency(_ x: [Float], near guess: Double, vibratoRate: Double, sampleRate: Double = 44_100) -> Double {
        let cycle = sampleRate / vibratoRate
        let start = 8820, window = Int((3 * cycle).rounded())
        func match(_ lag: Int) -> Double {
            var num = 0.0, a = 0.0, b = 0.0
            for i in start..<(start + window) {
                let u = Double(x[i]), v = Double(x[i + lag])
                num += u * v
                a += u * u
                b += v * v
            }
            return num / max(1e-30, (a * b).squareRoot())
        }
        /// The lag of the best match in `lags`, to a fraction of a frame.
        func peak(_ lags: ClosedRange<Int>) -> Double {
            let values = lags.map(match)
            var best = 1
            for k in 1..<(values.count - 1) where values[k] > values[best] { best = k }
            let (y0, y1, y2) = (values[best - 1], values[best], values[best + 1])
            let shift = (y0 - y2) / (2 * (y0 - 2 * y1 + y2))
            return Double(lags.lowerBound + best) + (shift.isFinite ? shift : 0)
        }
        let nominal = sampleRate / guess
        var period = peak(Int(nominal * 0.8)...Int(nominal * 1.25))
        for periods in [8, 64, Int((5 * cycle / period).rounded())] {
            let lag = Int((Double(periods) * period).rounded())
            period = peak((lag - 4)...(lag + 4)) / Double(periods)
        }
        return sampleRate / period
    }

    @Test func measurementFindsEqualTemperamentWithoutATuning() throws {
        let measured = try Self.measure(60, near: 261)
        #expect(Self.error(measured, Self.expected(6000)) < 0.1, "\(measured) Hz")
    }

    @Test func bulkDumpThenProgramSelectRetunesTheSynthesizer() throws {
        let c = Pitch(semitone: 60, fraction: 2245), e = Pitch(semitone: 63, fraction: 12_000)
        let dump = TuningMessages.bulkDump(program: 7) { $0 == 60 ? c : $0 == 64 ? e : nil }
        let select = TuningMessages.select(program: 7).map { (message: Optional($0), sysex: [UInt8]?.none) }
        for (key, pitch) in [(UInt8(60), c), (64, e)] {
            let measured = try Self.measure(key, near: Self.expected(pitch.cents), after: [(nil, dump)] + select)
            #expect(Self.error(measured, Self.expected(pitch.cents)) < 0.1, "key \(key): \(measured) Hz, want \(Self.expected(pitch.cents))")
        }
    }

    @Test func scaleOctaveRetunesTheChannelsInItsMask() throws {
        let message = TuningMessages.scaleOctave(channels: 0b100, cents: [0, 0, 0, 0, 0, 0, 0, 0, 0, 21, 0, 0])
        let tuned = try Self.measure(69, channel: 2, near: 440, after: [(nil, message)])
        #expect(Self.error(tuned, Self.expected(6921)) < 0.1, "\(tuned) Hz")
        let untouched = try Self.measure(69, channel: 3, near: 440, after: [(nil, message)])
        #expect(Self.error(untouched, 440) < 0.1, "\(untouched) Hz")
    }

    @Test func scalaScalesRetuneTheSynthesizer() throws {
        let just = try KeyboardTuning(scale: ScalaScale(text: "just\n12\n16/15\n9/8\n6/5\n5/4\n4/3\n45/32\n3/2\n8/5\n5/3\n9/5\n15/8\n2/1\n",
                                                        path: "just.scl"))
        let third = try Self.measure(64, near: 327, tuning: just)
        #expect(Self.error(third, Self.expected(6000 + 1200 * log2(1.25))) < 0.1, "\(third) Hz")
        let nineteen = try KeyboardTuning(scale: ScalaScale(description: "19-EDO", cents: (1...19).map { Double($0) * 1200 / 19 }),
                                          mapping: KeyboardMapping(size: 0, firstKey: 0, lastKey: 127, middleKey: 69, referenceKey: 69,
                                                                   referenceFrequency: 440, octaveDegree: 0, degrees: []))
        let want = Self.expected(6900 + 1200 * 4 / 19.0)
        let step = try Self.measure(73, near: want, tuning: nineteen)
        #expect(Self.error(step, want) < 0.1, "\(step) Hz, want \(want)")
    }

    @Test func tunedRenderIsTheSameForEveryBlockSize() throws {
        let dump = TuningMessages.bulkDump(program: 0) { Pitch(semitone: UInt8($0), fraction: UInt16($0 * 77)) }
        let events: [(frame: Int, message: MIDIMessage?, sysex: [UInt8]?)] = [
            (0, nil, dump), (10, .noteOn(channel: 0, key: 60, velocity: 90), nil), (500, .noteOn(channel: 1, key: 67, velocity: 90), nil),
            (4000, nil, TuningMessages.noteChange(program: 0, [(60, Pitch(semitone: 59, fraction: 100))])),
            (7000, nil, TuningMessages.scaleOctave(channels: 2, cents: Array(repeating: -9, count: 12), realTime: true)),
            (15_000, .noteOff(channel: 0, key: 60), nil),
        ]
        let reference = try Self.render(frames: 20_000, events)
        for sizes in [[1], [31], [32], [4096], randomBlockSizes(count: 300, maximum: 700, seed: 5)] {
            #expect(try Self.render(frames: 20_000, events, blockSizes: sizes) == reference, "block sizes \(sizes.prefix(3))")
        }
    }
}
