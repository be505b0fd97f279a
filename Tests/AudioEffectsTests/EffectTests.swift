import AudioEffects
import AudioGraph
import AudioTestSupport
import Testing

@Suite struct EffectTests {
    static let blockSizes: [[Int]] = [[1], [63], [64], [65], [512], [4096], randomBlockSizes(count: 400, maximum: 700, seed: 7)]

    @Test func nodesPublishParametersWithRangesAndDefaults() {
        let nodes: [any AudioNode] = [GainNode(), BiquadFilterNode(), CombFilterNode(), DelayNode(), ReverbNode(),
                                      CompressorNode(), LimiterNode(), MixerNode(inputCount: 2)]
        for node in nodes {
            #expect(!node.parameterInfos.isEmpty, "\(node.name) publishes no parameters")
            for info in node.parameterInfos {
                #expect(info.range.contains(info.defaultValue), "\(node.name).\(info.name)")
                #expect(node.parameterValue(info.id, scope: info.scope, element: 0) == info.defaultValue, "\(node.name).\(info.name)")
                node.setParameter(info.id, value: info.range.upperBound + 1000, scope: info.scope, element: 0)
                #expect(node.parameterValue(info.id, scope: info.scope, element: 0) == info.range.upperBound, "\(node.name).\(info.name) clamps")
            }
        }
    }

    /// Every effect in one chain, fed with noise: the output must not depend on block size.
    @Test func effectChainIsBlockSizeIndependent() throws {
        var reference: [Float]?
        for sizes in Self.blockSizes {
            let g = AudioGraph()
            let chain: [any AudioNode] = [
                TestSource(noiseAmplitude: 0.5), BiquadFilterNode(kind: .peak, frequency: 2000, q: 2, gainDecibels: 6),
                CombFilterNode(), DelayNode(milliseconds: 30), ReverbNode(), CompressorNode(), GainNode(decibels: 12),
                LimiterNode(), OutputNode(),
            ]
            let ids = chain.map { g.add($0) }
            for (a, b) in zip(ids, ids.dropFirst()) { try g.connect(a, to: b) }
            let compiled = try g.compile(sampleRate: 44_100, maximumFrameCount: 4096)
            let biquad = compiled.index(ofNode: ids[1])!
            let events: [(frame: Int, node: Int, event: NodeEvent)] = [
                (1000, biquad, .parameter(id: BiquadFilterNode.Parameter.frequency, scope: .global, element: 0, value: 500)),
                (5003, biquad, .parameter(id: BiquadFilterNode.Parameter.kind, scope: .global, element: 0, value: 1)),
            ]
            let (l, r) = renderGraph(compiled, frames: 12_000, blockSizes: sizes, events: events)
            let both = l + r
            if let reference { #expect(both == reference, "block sizes \(sizes.prefix(3))") } else { reference = both }
        }
    }

    @Test func gainParameterMovesAtItsExactFrame() throws {
        for frame in [0, 1, 63, 64, 65, 777] {
            let g = AudioGraph()
            let src = g.add(TestSource(constant: 0.5)), gain = g.add(GainNode()), out = g.add(OutputNode())
            try g.connect(src, to: gain)
            try g.connect(gain, to: out)
            let compiled = try g.compile(sampleRate: 48_000, maximumFrameCount: 64)
            let index = compiled.index(ofNode: gain)!
            let (l, _) = renderGraph(compiled, frames: 4000, blockSizes: [64],
                                     events: [(frame, index, .parameter(id: GainNode.Parameter.gain, scope: .global, element: 0, value: -20))])
            #expect(l[..<frame].allSatisfy { $0 == 0.5 }, "unchanged before frame \(frame)")
            #expect(l[frame] < 0.5, "moving at frame \(frame)")
            #expect(abs(l[3999] - 0.05) < 1e-4, "settled at -20 dB")
        }
    }

    @Test func biquadLowPassPassesLowsAndCutsHighs() throws {
        func level(_ frequency: Double) throws -> Float {
            let g = AudioGraph()
            let s = g.add(SineSource(frequency: frequency)), f = g.add(BiquadFilterNode(kind: .lowPass, frequency: 500)), o = g.add(OutputNode())
            try g.connect(s, to: f)
            try g.connect(f, to: o)
            let (l, _) = renderGraph(try g.compile(sampleRate: 44_100, maximumFrameCount: 512), frames: 8820, blockSizes: [512])
            return rms(l[4410...]) * Float(2).squareRoot()
        }
        #expect(abs(try level(100) - 1) < 0.05)
        #expect(try level(8000) < 0.01)
    }

    /// With no swing every chorus voice reads the same delayed sample, so the output is the
    /// input times the stereo unit's gains: FluidSynth's, whose width-10 mix makes its default
    /// chorus as loud as it is (level 2: 4/3 for 3 voices, 2/3 for 2, and for 1 voice +2 on
    /// the left, -2 on the right).
    @Test(arguments: [(3, Float(4.0 / 3.0), Float(4.0 / 3.0)), (2, Float(2.0 / 3.0), Float(2.0 / 3.0)), (4, Float(4.0 / 3.0), Float(4.0 / 3.0)), (1, Float(2), Float(-2))])
    func chorusMixesItsVoicesAsFluidSynthDoes(voices: Int, leftGain: Float, rightGain: Float) throws {
        let g = AudioGraph()
        let s = g.add(SineSource(frequency: 220)), c = g.add(ChorusNode(voices: voices, depthMilliseconds: 0, level: 2)), o = g.add(OutputNode())
        try g.connect(s, to: c)
        try g.connect(c, to: o)
        let (l, r) = renderGraph(try g.compile(sampleRate: 44_100, maximumFrameCount: 512), frames: 8820, blockSizes: [512])
        let input = Float(0.5).squareRoot()  // the sine's RMS
        #expect(abs(rms(l[4410...]) / input - abs(leftGain)) < 0.01, "\(voices) voices: left \(rms(l[4410...]) / input)")
        #expect(abs(rms(r[4410...]) / input - abs(rightGain)) < 0.01, "\(voices) voices: right \(rms(r[4410...]) / input)")
        // The sign: the sides move together, or against each other for one voice.
        let together = zip(l[4410...], r[4410...]).reduce(Float(0)) { $0 + $1.0 * $1.1 }
        #expect((together > 0) == (leftGain * rightGain > 0))
    }

    @Test func limiterNeverExceedsItsCeiling() throws {
        for ceiling: Float in [0, -0.3, -6] {
            let g = AudioGraph()
            let s = g.add(TestSource(noiseAmplitude: 4)), l = g.add(LimiterNode(ceilingDecibels: ceiling)), o = g.add(OutputNode())
            try g.connect(s, to: l)
            try g.connect(l, to: o)
            let (left, right) = renderGraph(try g.compile(sampleRate: 44_100, maximumFrameCount: 1024), frames: 44_100, blockSizes: [1024])
            let peak = max(left.map(abs).max()!, right.map(abs).max()!)
            let limit = decibelsToGain(ceiling)
            #expect(peak <= limit, "ceiling \(ceiling) dB: peak \(peak)")
            #expect(peak > limit * 0.9, "the limiter should not squash far below the ceiling")
        }
    }

    @Test func limiterLatencyIsItsLookAhead() throws {
        let limiter = LimiterNode(lookAheadSeconds: 0.0015)
        limiter.prepare(sampleRate: 48_000, maximumFrameCount: 64)
        #expect(limiter.latencyFrames == 71)
    }
}

@Suite struct DelayAndDynamicsTests {
    /// An impulse on the first frame, then silence.
    final class Impulse: AudioNode {
        let name = "Impulse"
        let inputBusCount = 0
        let parameterInfos: [AudioParameterInfo] = []
        func prepare(sampleRate: Double, maximumFrameCount: Int) {}
        func reset() {}
        func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
        func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
        func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
            output.clear(frameCount: frameCount)
            if startFrame == 0 && frameCount > 0 { output.left[0] = 1; output.right[0] = 1 }
        }
    }

    func impulseResponse(_ effect: any AudioNode, frames: Int) throws -> [Float] {
        let g = AudioGraph()
        let s = g.add(Impulse()), e = g.add(effect), o = g.add(OutputNode())
        try g.connect(s, to: e)
        try g.connect(e, to: o)
        return renderGraph(try g.compile(sampleRate: 48_000, maximumFrameCount: 256), frames: frames, blockSizes: [256]).left
    }

    @Test func delayEchoesAtItsTimeWithFeedback() throws {
        let h = try impulseResponse(DelayNode(milliseconds: 10, feedback: 0.5, mix: 0.5), frames: 2000)
        #expect(h[0] == 0.5, "dry half")
        let echoes = h.indices.filter { abs(h[$0]) > 0.01 }
        #expect(echoes.prefix(3) == [0, 480, 960])
        #expect(h[960] < h[480])
    }

    @Test func combRepeatsAtItsDelay() throws {
        let h = try impulseResponse(CombFilterNode(delayMilliseconds: 2, feedback: 0.5, mix: 1), frames: 500)
        #expect(h[0] == 1 && h[96] == 0.5 && h[192] == 0.25 && h[288] == 0.125)
        #expect(h[1..<96].allSatisfy { $0 == 0 })
    }

    @Test func compressorReducesLoudSignalsOnly() throws {
        func level(_ amplitude: Float) throws -> Float {
            let g = AudioGraph()
            let s = g.add(TestSource(constant: amplitude)), c = g.add(CompressorNode(thresholdDecibels: -20, ratio: 4)), o = g.add(OutputNode())
            try g.connect(s, to: c)
            try g.connect(c, to: o)
            return renderGraph(try g.compile(sampleRate: 48_000, maximumFrameCount: 512), frames: 48_000, blockSizes: [512]).left.last!
        }
        #expect(abs(try level(0.05) - 0.05) < 1e-6, "below the threshold: untouched")
        // 0 dBFS in, 20 dB over the threshold at 4:1: 5 dB over, so -15 dBFS out.
        #expect(abs(gainToDecibels(try level(1)) - -15) < 0.1)
    }
}
