import AudioEffects
import AudioGraph
import AudioTestSupport
import MIDI
import Testing

@Suite struct GraphStructureTests {
    @Test func cyclesAndMissingOutputAreRejected() throws {
        let g = AudioGraph()
        let a = g.add(GainNode()), b = g.add(GainNode())
        try g.connect(a, to: b)
        try g.connect(b, to: a)
        #expect(throws: AudioGraphError.outputCount(0)) { try g.compile(sampleRate: 44_100, maximumFrameCount: 64) }
        let out = g.add(OutputNode())
        try g.connect(b, to: out)
        #expect(throws: AudioGraphError.self) { try g.compile(sampleRate: 44_100, maximumFrameCount: 64) }
        #expect(throws: AudioGraphError.unknownNode(99)) { try g.connect(99, to: out) }
        #expect(throws: AudioGraphError.noSuchInput(node: out, bus: 1)) { try g.connect(a, to: out, bus: 1) }
    }

    @Test func mixerSumsInputsWithVolumeAndPan() throws {
        let g = AudioGraph()
        let a = g.add(TestSource(constant: 0.25)), b = g.add(TestSource(constant: 0.5))
        let mixer = MixerNode(inputCount: 2)
        let m = g.add(mixer), out = g.add(OutputNode())
        try g.connect(a, to: m, bus: 0)
        try g.connect(b, to: m, bus: 1)
        try g.connect(m, to: out)
        mixer.setParameter(MixerNode.Parameter.pan, value: -1, scope: .input, element: 1)
        mixer.setParameter(MixerNode.Parameter.volume, value: 2, scope: .input, element: 0)
        let compiled = try g.compile(sampleRate: 44_100, maximumFrameCount: 512)
        let (l, r) = renderGraph(compiled, frames: 512, blockSizes: [512])
        // Input 0 at volume 2, centred: 0.5 on both sides; input 1 hard left at sqrt(2) * 0.5.
        #expect(abs(l[511] - (0.5 + 0.5 * Float(2).squareRoot())) < 1e-4)
        #expect(abs(r[511] - 0.5) < 1e-4)
    }
}
