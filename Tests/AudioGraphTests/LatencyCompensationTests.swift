import AudioEffects
import AudioGraph
import Testing

/// A source that stands for an instrument with latency: it plays a one-frame note at
/// `noteFrame`, heard `latencyFrames` later, and reports that latency as a plugin would.
private final class LaggingNote: AudioNode {
    let name = "Lagging note"
    let inputBusCount = 0
    let parameterInfos: [AudioParameterInfo] = []
    let latencyFrames: Int
    let noteFrame: Int64
    let level: Float

    init(noteFrame: Int64, latencyFrames: Int, level: Float) {
        self.noteFrame = noteFrame
        self.latencyFrames = latencyFrames
        self.level = level
    }

    func prepare(sampleRate: Double, maximumFrameCount: Int) {}
    func reset() {}
    func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        for i in 0..<frameCount {
            let heard = startFrame + Int64(i) == noteFrame + Int64(latencyFrames)
            output.left[i] = heard ? level : 0
            output.right[i] = heard ? -level : 0
        }
    }
}

@Suite("Delay compensation: paths with different latencies are heard together")
struct LatencyCompensationTests {
    /// Three instruments play a note at frame 1,000: one without latency, one with 100 frames
    /// (an LV2 plugin's grid and look-ahead), one with 30 followed by an effect. The graph's
    /// latency is the longest path's, and all three notes come out at frame 1,100, whatever
    /// the block size, and again after a reset that
    /// stopped them halfway.
    @Test(arguments: [[1], [64], [65], [512], [7, 300, 1, 64, 129]])
    func notesOnPathsWithDifferentLatenciesLineUp(blockSizes: [Int]) throws {
        let graph = AudioGraph()
        graph.add(LaggingNote(noteFrame: 1_000, latencyFrames: 0, level: 0.125), id: 1)
        graph.add(LaggingNote(noteFrame: 1_000, latencyFrames: 100, level: 0.25), id: 2)
        graph.add(LaggingNote(noteFrame: 1_000, latencyFrames: 30, level: 0.5), id: 3)
        graph.add(GainNode(), id: 4)
        graph.add(OutputNode(), id: 9)
        try graph.connect(1, to: 9)
        try graph.connect(2, to: 9)
        try graph.connect(3, to: 4)
        try graph.connect(4, to: 9)
        let compiled = try graph.compile(sampleRate: 44_100, maximumFrameCount: 512)
        #expect(compiled.latencyFrames == 100)

        func render(until end: Int64 = 2_048) -> (left: [Float], right: [Float]) {
            var left: [Float] = [], right: [Float] = []
            var frame: Int64 = 0, block = 0
            while frame < end {
                let count = blockSizes[block % blockSizes.count]
                compiled.render(startFrame: frame, frameCount: count, events: UnsafeBufferPointer(start: nil, count: 0))
                left.append(contentsOf: UnsafeBufferPointer(start: compiled.output.left, count: count))
                right.append(contentsOf: UnsafeBufferPointer(start: compiled.output.right, count: count))
                frame += Int64(count)
                block += 1
            }
            return (left, right)
        }
        let first = render()
        let sounding = first.left.indices.filter { first.left[$0] != 0 }
        #expect(sounding == [1_100], "every note at the longest path's latency")
        #expect(first.left[1_100] == 0.875 && first.right[1_100] == -0.875)
        // Stopped while the notes are inside the compensating delays, then started again.
        _ = render(until: 1_050)
        compiled.reset()
        let again = render()
        #expect(again.left == first.left && again.right == first.right, "a reset empties the compensating delays")
    }
}
