import AudioGraph
import Foundation
import Instruments
import MIDI
import MallocCounter
import MIDIFile
import Playback
@testable import Sampler
import Sequencing
import SoundFont
import Testing

/// The MPE demonstration end to end: a Standard MIDI File with an MPE Configuration
/// Message and a chord on three member channels, one of them bent 3 semitones while the
/// others hold and another darkened by CC 74, written, read back and played through the
/// scheduler into the sampler and the built-in synthesizer. Each voice is isolated from the
/// chord's audio (the chord minus the file without that note) and measured.
@Suite struct MPEFileTests {
    /// 480 ticks a beat at 120 beats per minute: 480 ticks are 22,050 frames.
    static let change: Int64 = 960
    static let changeFrame = 44_100
    static let frames = 4 * 44_100
    static let chord: [(channel: UInt8, key: UInt8)] = [(1, 48), (2, 60), (3, 72)]

    /// The file's bytes: the MCM (15 members), a program on the manager channel, the chord
    /// (less `omitted`), and at beat 2 channel 2's bend and channel 1's CC 74.
    static func file(program: UInt8 = 0, without omitted: Int? = nil) throws -> [UInt8] {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
        var track = MusicTrack()
        for m in MPEMessages.configuration(manager: 0, members: 15) { track.add(.message(m), at: 0) }
        track.add(.message(.programChange(channel: 0, program: program)), at: 0)
        for (n, note) in chord.enumerated() where n != omitted {
            track.addNote(at: 0, channel: note.channel, key: note.key, velocity: 100, duration: 480 * 8)
        }
        track.add(.message(.pitchBend(channel: 2, value: MPEMessages.bend(semitones: 3, range: 48))), at: change)
        track.add(.message(.controlChange(channel: 1, controller: MIDIController.timbre, value: 0)), at: change)
        sequence.tracks.append(track)
        return try SMFWriter.checkedBytes(of: sequence, layout: .format1)
    }

    /// Plays the file through `make()`'s instrument alone; left channel.
    static func play(_ bytes: [UInt8], _ make: () -> any AudioNode) throws -> [Float] {
        let sequence = try SMFReader.read(bytes).makeSequence()
        let graph = AudioGraph()
        let output = graph.add(OutputNode())
        let node = graph.add(make())
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

    static func isolated(program: UInt8 = 0, _ make: () -> any AudioNode) throws -> [[Float]] {
        let all = try play(file(program: program), make)
        return try chord.indices.map { n in zip(all, try play(file(program: program, without: n), make)).map { $0 - $1 } }
    }

    static func expected(_ key: UInt8, semitones: Double = 0, reference: Double) -> Double {
        reference * exp2((Double(key) - 69 + semitones) / 12)
    }

    @Test func theSamplerBendsOneVoiceOfTheFilesChordAndDarkensAnother() throws {
        let voices = try Self.isolated {
            let s = SamplerNode(bank: SamplerMPETests.bank())
            s.setParameter(SamplerNode.Parameter.reverbLevel, value: 0)
            s.setParameter(SamplerNode.Parameter.chorusLevel, value: 0)
            return s
        }
        let before = 4410..<(Self.changeFrame - 1000), after = (Self.changeFrame + 4410)..<(Self.frames - 1000)
        for (n, semitones) in [(0, 0.0), (1, 3.0), (2, 0.0)] {
            let key = Self.chord[n].key
            let was = frequency(voices[n], before), now = frequency(voices[n], after)
            #expect(abs(cents(was / Self.expected(key, reference: 441))) < 0.1, "voice \(n) before: \(was) Hz")
            #expect(abs(cents(now / Self.expected(key, semitones: semitones, reference: 441))) < 0.1, "voice \(n) after: \(now) Hz")
        }
        func brightness(_ n: Int, _ range: Range<Int>) -> Double {
            let f0 = frequency(voices[n], range)
            return 20 * log10(magnitude(voices[n], range, hertz: 20 * f0) / magnitude(voices[n], range, hertz: f0))
        }
        let drop = (0..<3).map { brightness($0, before) - brightness($0, after) }
        #expect(drop[0] > 10 && abs(drop[1]) < 1 && abs(drop[2]) < 1, "harmonic drops \(drop) dB")
    }

    @Test func theSynthesizerBendsOneVoiceOfTheFilesChordAndDarkensAnother() throws {
        // An organ: periodic while it sustains but for a slight vibrato.
        let program = try #require((0..<128).first { n in
            let p = GMPatches.melodic(program: n)
            return p.noiseLevel == 0 && p.filterEnvOctaves == 0 && p.pitchEnvSemitones == 0 && p.sustain > 0 && p.waveA != .noise
                && p.levelB == 0 && p.waveA != .fm
        })
        let voices = try Self.isolated(program: UInt8(program)) {
            let synth = GMSynthesizer()
            synth.setParameter(GMSynthesizer.Parameter.reverbLevel, value: 0)
            return synth
        }
        let after = (Self.changeFrame + 4410)..<(Self.frames - 2000)
        for (n, semitones) in [(0, 0.0), (1, 3.0), (2, 0.0)] {
            let want = Self.expected(Self.chord[n].key, semitones: semitones, reference: 440)
            let nominal = 44_100 / want
            // 20 periods' lag: the vibrato's swings average out over the window.
            let lag = period(voices[n][after], lags: Int(20 * nominal) - 30...Int(20 * nominal) + 30) / 20
            let measured = 44_100 / lag
            #expect(abs(cents(measured / want)) < 1, "voice \(n): \(measured) Hz, want \(want)")
        }
        // CC 74 at 0 on channel 1: its harmonics 3...8 fall against its fundamental, and only its.
        func brightness(_ n: Int, _ range: Range<Int>) -> Double {
            let f0 = Self.expected(Self.chord[n].key, semitones: n == 1 && range.lowerBound > Self.changeFrame ? 3 : 0, reference: 440)
            let high = (3...8).map { magnitude(voices[n], range, hertz: Double($0) * f0) }.reduce(0, +)
            return 20 * log10(high / magnitude(voices[n], range, hertz: f0))
        }
        let before = 8820..<(Self.changeFrame - 1000)
        let drop = (0..<3).map { brightness($0, before) - brightness($0, after) }
        #expect(drop[0] > 6 && abs(drop[2]) < 1, "harmonic drops \(drop) dB")
    }

    /// The period in frames of the strongest repetition between `lags`, to a fraction of a
    /// frame (normalised autocorrelation, parabolic peak).
    func period(_ x: ArraySlice<Float>, lags: ClosedRange<Int>) -> Double {
        let s = Array(x)
        func r(_ lag: Int) -> Double {
            var num = 0.0, a = 0.0, b = 0.0
            for i in 0..<(s.count - lags.upperBound - 2) {
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
}

/// MPE messages reach both instruments on the render thread: nothing they do may allocate.
@Suite struct MPEAllocationTests {
    @Test(arguments: ["sampler", "synthesizer"])
    func mpeMessagesAllocateNothingOnTheRenderThread(_ instrument: String) throws {
        var messages: [(frame: Int, message: MIDIMessage)] = MPEMessages.configuration(manager: 0, members: 7).map { (0, $0) }
        messages += MPEMessages.configuration(manager: 15, members: 7).map { (5, $0) }
        messages += MPEMessages.bendRange(channel: 3, semitones: 24).map { (8, $0) }
        messages += [(9, .programChange(channel: 0, program: 5)), (10, .controlChange(channel: 0, controller: 64, value: 127))]
        for c in UInt8(1)...7 { messages.append((600 + Int(c) * 100, .noteOn(channel: c, key: 50 + c, velocity: 100))) }
        for c in UInt8(1)...7 {
            messages.append((1500 + Int(c) * 100, .pitchBend(channel: c, value: 8192 + UInt16(c) * 300)))
            messages.append((1550 + Int(c) * 100, .controlChange(channel: c, controller: MIDIController.timbre, value: 10 * c)))
            messages.append((1570 + Int(c) * 100, .channelPressure(channel: c, pressure: 15 * c)))
        }
        messages += [(2700, .pitchBend(channel: 0, value: 12_000)), (3000, .noteOn(channel: 9, key: 60, velocity: 100)),
                     (3500, .controlChange(channel: 0, controller: 64, value: 0))]
        messages += MPEMessages.configuration(manager: 0, members: 15).map { (4000, $0) }
        messages.append((4500, MIDIMessage(status: 0xFF, data1: 0, data2: 0)))
        func makeGraph() throws -> CompiledGraph {
            let g = AudioGraph()
            let node: any AudioNode = instrument == "sampler" ? SamplerNode(bank: singleBank(.sine(period: 100))) : GMSynthesizer()
            let n = g.add(node), o = g.add(OutputNode())
            try g.connect(n, to: o)
            return try g.compile(sampleRate: 44_100, maximumFrameCount: 512)
        }
        let blocks = (0..<12).map { b in
            messages.filter { $0.frame / 512 == b }.map { GraphEvent(offset: $0.frame - b * 512, nodeIndex: 0, event: .midi($0.message)) }
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
        _ = try run(makeGraph())
        #expect(try run(makeGraph()) == 0)
    }
}
