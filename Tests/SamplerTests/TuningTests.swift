import AudioGraph
import AudioTestSupport
import Foundation
import Instruments
import MallocCounter
import MIDI
import Playback
@testable import Sampler
import Sequencing
import SoundFont
import Testing

/// Retuned notes as a listener hears them: a pure sine sample played through the sampler after
/// MIDI Tuning Standard messages or a Scala tuning, its frequency measured from the audio and
/// held to 0.1 cent of the exact pitch the tuning asks for.
@Suite struct SamplerTuningTests {
    typealias Pitch = TuningMessages.Pitch

    /// What a test sends: a channel message or a system exclusive message.
    enum Event {
        case midi(MIDIMessage)
        case sysex([UInt8])
    }

    /// A 441 Hz sine (100 points a period at 44.1 kHz) whose root key is 69: key k in equal
    /// temperament plays 441 × 2^((k − 69) / 12).
    static func rig() throws -> SamplerRig {
        try SamplerRig(singleBank(.sine(period: 100)))
    }

    /// The frequency a pitch in cents above key 0 plays at with the test sample.
    static func expected(_ cents: Double) -> Double { 441 * exp2((cents - 6900) / 1200) }

    static func on(_ key: UInt8, channel: UInt8 = 0) -> Event { .midi(.noteOn(channel: channel, key: key, velocity: 100)) }
    static func off(_ key: UInt8, channel: UInt8 = 0) -> Event { .midi(.noteOff(channel: channel, key: key)) }

    /// Renders `frames` frames of `rig` with `events` at their frames; left channel.
    static func render(_ rig: SamplerRig, frames: Int, _ events: [(frame: Int, event: Event)], blockSizes: [Int] = [512]) -> [Float] {
        var messages: [[UInt8]] = []
        for case (_, .sysex(let bytes)) in events { messages.append(bytes) }
        let store = SystemExclusiveStore(messages)
        var next = 0
        var scheduled: [(frame: Int, node: Int, event: NodeEvent)] = []
        for (frame, event) in events {
            switch event {
            case .midi(let message): scheduled.append((frame, 0, .midi(message)))
            case .sysex:
                scheduled.append((frame, 0, .systemExclusive(store.messages[next])))
                next += 1
            }
        }
        return withExtendedLifetime(store) { renderGraph(rig.graph, frames: frames, blockSizes: blockSizes, events: scheduled).left }
    }

    /// How far `measured` is from `target`, in cents.
    static func error(_ measured: Double, _ target: Double) -> Double { abs(1200 * log2(measured / target)) }

    /// Sends `before` at frame 0 and a note on `key` at frame 10, and measures the note from
    /// 0.2 s to 1.7 s.
    func measure(_ key: UInt8, channel: UInt8 = 0, after before: [Event], rig: SamplerRig? = nil) throws -> Double {
        let rig = try rig ?? Self.rig()
        let out = Self.render(rig, frames: 80_000, before.map { (0, $0) } + [(10, Self.on(key, channel: channel))])
        return frequency(out, 8820..<75_000)
    }

    @Test func bulkDumpThenTuningProgramSelectPlaysTheDumpedPitches() throws {
        let c = Pitch(semitone: 60, fraction: 2245), e = Pitch(semitone: 63, fraction: 12_000)
        let dump = TuningMessages.bulkDump(program: 5) { $0 == 60 ? c : $0 == 64 ? e : Pitch(semitone: UInt8($0), fraction: 0) }
        let select = TuningMessages.select(program: 5).map(Event.midi)
        // Before the channel selects the program, it plays in equal temperament.
        let unselected = try measure(60, after: [.sysex(dump)])
        #expect(Self.error(unselected, Self.expected(6000)) < 0.1, "\(unselected) Hz")
        for (key, pitch) in [(UInt8(60), c), (64, e)] {
            let measured = try measure(key, after: [.sysex(dump)] + select)
            #expect(Self.error(measured, Self.expected(pitch.cents)) < 0.1, "key \(key): \(measured) Hz, want \(Self.expected(pitch.cents))")
        }
    }

    @Test func bankedDumpNeedsTheBankSelectedToo() throws {
        let pitch = Pitch(semitone: 58, fraction: 9000)
        let dump = TuningMessages.bulkDump(program: 2, bank: 1) { _ in pitch }
        let banked = try measure(70, after: [.sysex(dump)] + TuningMessages.select(program: 2, bank: 1).map(Event.midi))
        #expect(Self.error(banked, Self.expected(pitch.cents)) < 0.1, "\(banked) Hz")
        let bankZero = try measure(70, after: [.sysex(dump)] + TuningMessages.select(program: 2).map(Event.midi))
        #expect(Self.error(bankZero, Self.expected(7000)) < 0.1, "\(bankZero) Hz")
    }

    @Test func scaleOctaveRetunesTheChannelsInItsMaskOnly() throws {
        // The 2-byte form: C raised by 1000/8192 of 100 cents, E lowered by 13.686 cents.
        var values = [UInt16](repeating: 8192, count: 12)
        values[0] = 9192
        values[4] = 8192 - 1121
        let message = TuningMessages.scaleOctave(channels: 0b1, values: values)
        let c = try measure(72, after: [.sysex(message)])
        #expect(Self.error(c, Self.expected(7200 + 1000.0 * 100 / 8192)) < 0.1, "\(c) Hz")
        let e = try measure(64, after: [.sysex(message)])
        #expect(Self.error(e, Self.expected(6400 - 1121.0 * 100 / 8192)) < 0.1, "\(e) Hz")
        let other = try measure(72, channel: 1, after: [.sysex(message)])
        #expect(Self.error(other, Self.expected(7200)) < 0.1, "\(other) Hz")
        // The 1-byte form: whole cents.
        let one = TuningMessages.scaleOctave(channels: 0b10, cents: [0, 0, 0, 0, 0, 0, 0, 0, 0, -16, 0, 0])
        let a = try measure(69, channel: 1, after: [.sysex(one)])
        #expect(Self.error(a, Self.expected(6884)) < 0.1, "\(a) Hz")
    }

    @Test func scalaJustIntonationSetsEveryMelodicChannel() throws {
        let scale = try ScalaScale(text: "just\n12\n16/15\n9/8\n6/5\n5/4\n4/3\n45/32\n3/2\n8/5\n5/3\n9/5\n15/8\n2/1\n", path: "just.scl")
        let tuning = try KeyboardTuning(scale: scale)
        for (key, ratio, channel) in [(UInt8(64), 5.0 / 4, UInt8(0)), (67, 3.0 / 2, 3), (57, 5.0 / 6, 15)] {
            let rig = try Self.rig()
            rig.sampler.setTuning(tuning)
            let measured = try measure(key, channel: channel, after: [], rig: rig)
            let want = Self.expected(6000 + 1200 * log2(ratio))
            #expect(Self.error(measured, want) < 0.1, "key \(key): \(measured) Hz, want \(want)")
        }
        // A GM System On returns to the Scala tuning, not to equal temperament.
        let rig = try Self.rig()
        rig.sampler.setTuning(tuning)
        let afterReset = try measure(64, after: [.sysex([0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7])], rig: rig)
        #expect(Self.error(afterReset, Self.expected(6000 + 1200 * log2(1.25))) < 0.1, "\(afterReset) Hz")
    }

    @Test func nineteenEqualPlaysNineteenStepsAnOctave() throws {
        let scale = ScalaScale(description: "19-EDO", cents: (1...19).map { Double($0) * 1200 / 19 })
        let mapping = KeyboardMapping(size: 0, firstKey: 0, lastKey: 127, middleKey: 69, referenceKey: 69, referenceFrequency: 440,
                                      octaveDegree: 0, degrees: [])
        let rig = try Self.rig()
        rig.sampler.setTuning(try KeyboardTuning(scale: scale, mapping: mapping))
        let measured = try measure(74, after: [], rig: rig)
        let want = Self.expected(6900 + 5 * 1200 / 19.0)
        #expect(Self.error(measured, want) < 0.1, "\(measured) Hz, want \(want)")
    }

    @Test func realTimeNoteChangeRetunesASoundingNoteAndGMSystemOnUndoesDumps() throws {
        let rig = try Self.rig()
        let change = TuningMessages.noteChange(program: 0, [(60, Pitch(semitone: 60, fraction: 8192))])
        let out = Self.render(rig, frames: 100_000, [(0, Self.on(60)), (44_100, .sysex(change))])
        let before = frequency(out, 4410..<44_000), after = frequency(out, 48_510..<100_000)
        #expect(Self.error(before, Self.expected(6000)) < 0.1, "\(before) Hz")
        #expect(Self.error(after, Self.expected(6050)) < 0.1, "\(after) Hz")
        // A non-real-time change leaves the sounding note alone.
        let quiet = TuningMessages.noteChange(program: 0, realTime: false, [(60, Pitch(semitone: 60, fraction: 8192))])
        let held = Self.render(try Self.rig(), frames: 100_000, [(0, Self.on(60)), (44_100, .sysex(quiet))])
        #expect(Self.error(frequency(held, 48_510..<100_000), Self.expected(6000)) < 0.1)
        let reset = try measure(60, after: [.sysex(change), .sysex([0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7])])
        #expect(Self.error(reset, Self.expected(6000)) < 0.1, "\(reset) Hz")
    }

    @Test func tunedRenderIsTheSameForEveryBlockSize() throws {
        let dump = TuningMessages.bulkDump(program: 3) { Pitch(semitone: UInt8($0), fraction: UInt16($0 * 91)) }
        var events: [(frame: Int, event: Event)] = [(0, .sysex(dump))]
        events += TuningMessages.select(program: 3, channel: 1).map { (5, Event.midi($0)) }
        events += [(100, Self.on(60, channel: 1)), (777, Self.on(64)), (3000, .sysex(TuningMessages.scaleOctave(channels: 1, cents: Array(repeating: 7, count: 12), realTime: true))),
                   (9000, .sysex(TuningMessages.noteChange(program: 3, [(60, Pitch(semitone: 61, fraction: 3))]))), (20_000, Self.off(60, channel: 1))]
        let reference = Self.render(try Self.rig(), frames: 30_000, events)
        for sizes in [[1], [63], [64], [4096], randomBlockSizes(count: 300, maximum: 700, seed: 11)] {
            #expect(Self.render(try Self.rig(), frames: 30_000, events, blockSizes: sizes) == reference, "block sizes \(sizes.prefix(3))")
        }
    }

    @Test(arguments: ["sampler", "synthesizer"])
    func tuningMessagesAllocateNothingOnTheRenderThread(_ instrument: String) throws {
        let messages: [[UInt8]] = [
            TuningMessages.bulkDump(program: 3, bank: 1) { Pitch(semitone: UInt8($0), fraction: 500) },
            TuningMessages.noteChange(program: 3, bank: 1, [(60, Pitch(semitone: 61, fraction: 0)), (62, nil)]),
            TuningMessages.scaleOctave(channels: 0b110, cents: Array(repeating: 5, count: 12), realTime: true),
            TuningMessages.scaleOctave(channels: 0b1, values: Array(repeating: 9000, count: 12)),
            [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7],
        ]
        let store = SystemExclusiveStore(messages)
        var events: [(frame: Int, event: NodeEvent)] = [(0, .systemExclusive(store.messages[0]))]
        events += TuningMessages.select(program: 3, bank: 1).map { (10, NodeEvent.midi($0)) }
        events += [(600, .midi(.noteOn(channel: 0, key: 60, velocity: 100))), (700, .midi(.noteOn(channel: 1, key: 64, velocity: 100))),
                   (1200, .systemExclusive(store.messages[1])), (2000, .systemExclusive(store.messages[2])),
                   (2600, .systemExclusive(store.messages[3])), (3100, .midi(.noteOn(channel: 2, key: 67, velocity: 100))),
                   (4000, .systemExclusive(store.messages[4])), (4500, .midi(.noteOn(channel: 0, key: 62, velocity: 100)))]
        func makeGraph() throws -> CompiledGraph {
            let g = AudioGraph()
            let node: any AudioNode = instrument == "sampler" ? SamplerNode(bank: singleBank(.sine(period: 100))) : GMSynthesizer()
            let n = g.add(node), o = g.add(OutputNode())
            try g.connect(n, to: o)
            return try g.compile(sampleRate: 44_100, maximumFrameCount: 512)
        }
        // Blocks of events prepared before counting; a first run instantiates runtime metadata.
        let blocks = (0..<12).map { b in
            events.filter { $0.frame / 512 == b }.map { GraphEvent(offset: $0.frame - b * 512, nodeIndex: 0, event: $0.event) }
        }
        func run(_ graph: CompiledGraph) -> Int {
            var allocations = 0
            for (b, block) in blocks.enumerated() {
                malloc_counter_start()
                block.withUnsafeBufferPointer { graph.render(startFrame: Int64(b * 512), frameCount: 512, events: $0) }
                allocations += malloc_counter_stop()
            }
            return allocations
        }
        withExtendedLifetime(store) {
            _ = try? run(makeGraph())
            #expect((try? run(makeGraph())) == 0)
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: SystemExclusiveTests.bank), "needs TimGM6mb (Debian timgm6mb-soundfont)"),
          arguments: SystemExclusiveTests.Instrument.allCases)
    func tuningMessagesInASongRetuneTheRealInstruments(_ instrument: SystemExclusiveTests.Instrument) throws {
        // Key 69 raised 37 cents by a bulk dump to program 2, which channel 0 selects by RPN.
        let dump = TuningMessages.bulkDump(program: 2) { Pitch(semitone: UInt8($0), fraction: $0 == 69 ? 6062 : 0) }
        let suite = SystemExclusiveTests()
        func measuredPeriod(tuned: Bool) throws -> Double {
            let audio = try suite.render(instrument) { t in
                if tuned {
                    t.add(.sysex(SysexEvent(payload: Array(dump.dropFirst()))), at: 0)
                    for message in TuningMessages.select(program: 2) {
                        t.add(.message(message), at: 0)
                    }
                }
                t.addNote(at: 0, channel: 0, key: 69, velocity: 100, duration: 900)
            }
            return suite.period(audio[8_000..<12_096], lags: 80...120)
        }
        let cents = 1200 * log2(try measuredPeriod(tuned: false) / measuredPeriod(tuned: true))
        #expect(abs(cents - 6062 * 100 / 16_384.0) < 3, "measured \(cents) cents")
    }
}
