import AudioGraph
import AudioTestSupport
import Foundation
import MIDI
@testable import Sampler
import SoundFont

/// A sample made in code: points, rate, root key and loop (relative to its first point).
struct TestSample {
    var words: [Int16]
    var rate = 44_100
    var root: UInt8 = 69
    var correction: Int8 = 0
    var loop: Range<Int>? = nil
    var kind = SoundFontSample.Kind.mono
    var link: Int? = nil

    /// `periods` periods of a sine of `period` points, amplitude `amplitude`, looped whole.
    static func sine(period: Int, periods: Int = 200, amplitude: Double = 16_000, phase: Double = 0) -> TestSample {
        let n = period * periods
        let words = (0..<n).map { Int16((amplitude * sin(2 * Double.pi * (Double($0) / Double(period)) + phase)).rounded()) }
        return TestSample(words: words, loop: 0..<n)
    }

    /// A constant level, `count` points long, looped over its second half.
    static func constant(_ level: Int16, count: Int = 4410) -> TestSample {
        TestSample(words: [Int16](repeating: level, count: count), loop: (count / 2)..<count)
    }
}

/// A region made in code.
struct TestRegion {
    var keys: ClosedRange<UInt8> = 0...127
    var velocities: ClosedRange<UInt8> = 0...127
    var sample = 0
    var generators: [SoundFontGenerator: Int32] = [:]
    var modulators: [SoundFontModulator] = SoundFontModulator.defaults
}

/// Builds a bank: samples laid out one after another with the 46 zero points the
/// specification puts between them, and presets `(bank, program, regions)`.
func makeBank(samples: [TestSample], presets: [(bank: Int, program: Int, regions: [TestRegion])]) -> SoundFontBank {
    var words: [Int16] = []
    var headers: [SoundFontSample] = []
    for (i, s) in samples.enumerated() {
        let start = words.count
        words += s.words
        let end = words.count
        words += [Int16](repeating: 0, count: 46)
        let loop = s.loop ?? 0..<0
        headers.append(SoundFontSample(name: "s\(i)", start: start, end: end, loopStart: start + loop.lowerBound,
                                       loopEnd: start + loop.upperBound, sampleRate: s.rate, originalPitch: s.root,
                                       pitchCorrection: s.correction, link: s.link, kind: s.kind))
    }
    let built = presets.map { p in
        SoundFontPreset(name: "p\(p.bank):\(p.program)", bank: p.bank, program: p.program, regions: p.regions.map { r in
            var g = SoundFontGenerators.defaults
            for (k, v) in r.generators { g[k] = v }
            return SoundFontRegion(keyRange: r.keys, velocityRange: r.velocities, sampleIndex: r.sample, generators: g,
                                   modulators: r.modulators)
        })
    }
    return SoundFontBank(name: "test", presets: built, samples: headers, words: words)
}

/// A bank with one preset (0:0) of one region over `sample`, looped unless told.
func singleBank(_ sample: TestSample, _ generators: [SoundFontGenerator: Int32] = [:],
                modulators: [SoundFontModulator] = SoundFontModulator.defaults) -> SoundFontBank {
    var g = generators
    if g[.sampleModes] == nil { g[.sampleModes] = 1 }
    return makeBank(samples: [sample], presets: [(0, 0, [TestRegion(generators: g, modulators: modulators)])])
}

/// A sampler wired straight to the output, dry (reverb and chorus off unless asked).
struct SamplerRig {
    let sampler: SamplerNode
    let graph: CompiledGraph
    let sampleRate = 44_100

    init(_ bank: SoundFontBank, effects: Bool = false, maximumFrameCount: Int = 4096) throws {
        sampler = SamplerNode(bank: bank)
        if !effects {
            sampler.setParameter(SamplerNode.Parameter.reverbLevel, value: 0)
            sampler.setParameter(SamplerNode.Parameter.chorusLevel, value: 0)
        }
        let g = AudioGraph()
        let s = g.add(sampler), o = g.add(OutputNode())
        try g.connect(s, to: o)
        graph = try g.compile(sampleRate: Double(sampleRate), maximumFrameCount: maximumFrameCount)
    }

    /// Renders `frames` frames in blocks from `blockSizes` (cycled), sending `messages` at their frames.
    func render(frames: Int, _ messages: [(frame: Int, message: MIDIMessage)], blockSizes: [Int] = [512]) -> (left: [Float], right: [Float]) {
        let sorted = messages.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }.map(\.element)
        return renderGraph(graph, frames: frames, blockSizes: blockSizes,
                           events: sorted.map { (frame: $0.frame, node: 0, event: NodeEvent.midi($0.message)) })
    }
}

/// Frequency from the positive-going zero crossings of `x[range]`, interpolated to a fraction
/// of a sample.
func frequency(_ x: [Float], _ range: Range<Int>, sampleRate: Int = 44_100) -> Double {
    var first = -1.0, last = -1.0, n = 0
    for i in max(1, range.lowerBound)..<min(x.count, range.upperBound) where x[i - 1] < 0 && x[i] >= 0 {
        let t = Double(i - 1) + Double(-x[i - 1] / (x[i] - x[i - 1]))
        if first < 0 { first = t }
        last = t
        n += 1
    }
    guard n > 1 else { return 0 }
    return Double(n - 1) / (last - first) * Double(sampleRate)
}

/// Peak of |x| in `range`.
func peak(_ x: [Float], _ range: Range<Int>) -> Float {
    x[max(0, range.lowerBound)..<min(x.count, range.upperBound)].reduce(0) { max($0, abs($1)) }
}

/// Largest sample-to-sample jump of `x` in `range`.
func maximumJump(_ x: [Float], _ range: Range<Int>) -> Float {
    var m: Float = 0
    for i in max(1, range.lowerBound)..<min(x.count, range.upperBound) { m = max(m, abs(x[i] - x[i - 1])) }
    return m
}

func decibels(_ ratio: Float) -> Float { 20 * log10(ratio) }

func cents(_ ratio: Double) -> Double { 1200 * log2(ratio) }
