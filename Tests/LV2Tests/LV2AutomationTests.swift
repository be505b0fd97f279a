import AudioGraph
import Foundation
import LV2
import Playback
import Sequencing
import TactusTestSupport
import Testing

/// lv2-examples' amplifier: one control, `gain` in dB, applied to every sample of a run
/// (`powf(10, gain / 20)`, no smoothing), so its output shows the value each run read.
private let amplifier = "http://lv2plug.in/plugins/eg-amp"
private let hasAmplifier: Bool = (try? LV2Catalogue())?.plugins.contains { $0.uri == amplifier } ?? false

@Suite(.enabled(if: hasAmplifier, "needs lilv and lv2-examples (Debian packages liblilv-0-0, lv2-examples)"))
struct LV2AutomationTests {
    /// A ramp from -40 dB to 0 dB in the song reaches the plugin as the type documents: in
    /// each 64-frame slice, the ramp's value at the slice's last frame; before the ramp, the
    /// value set first; after it, the ramp's end. The same at every block size.
    @Test(arguments: [1, 64, 65, 512])
    func aRampReachesTheControlPortAtTheSlicesLastFrames(blockSize: Int) throws {
        // 120 BPM at 480 ticks per quarter: 32 ticks are 1,470 frames.
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
        let amp: UInt32 = 2
        let gain: UInt32 = 0 // the port index of `gain`
        var track = MusicTrack()
        track.add(.parameter(ParameterEvent(node: amp, parameter: gain, value: -20)), at: 0)
        track.add(.parameter(ParameterEvent(node: amp, parameter: gain, value: -40,
                                            ramp: .init(to: 0, duration: 256, shape: .linear))), at: 64)
        sequence.tracks = [track]
        let rampStart = 2 * 1_470, rampLength = 8 * 1_470

        let node = try LV2PluginNode(uri: amplifier, catalogue: LV2Catalogue())
        #expect(try node.parameterID(for: "gain") == gain)
        let graph = AudioGraph()
        graph.add(ConstantNode(0.5), id: 1)
        graph.add(node, id: amp)
        graph.add(OutputNode(), id: 3)
        try graph.connect(1, to: amp)
        try graph.connect(amp, to: 3)
        let player = Player(sequence: sequence, graph: try graph.compile(sampleRate: 44_100, maximumFrameCount: 4096), defaultNode: 1)
        var left: [Float] = [], right: [Float] = []
        _ = try player.renderToEnd(blockSize: blockSize, tail: .seconds(0.5)) { l, r, n in
            left.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
            right.append(contentsOf: UnsafeBufferPointer(start: r, count: n))
        }
        #expect(left.count > rampStart + rampLength + 64)
        #expect(left == right)

        let ramp = ParameterRamp(from: -40, to: 0, length: Int64(rampLength))
        func decibels(atFrame frame: Int) -> Float {
            frame < rampStart ? -20 : ramp.value(atElapsed: Int64(frame - rampStart))
        }
        var mismatches: [String] = []
        for frame in 0..<left.count {
            let read = decibels(atFrame: frame / 64 * 64 + 63)
            let expected = 0.5 * powf(10, read * 0.05)
            if abs(left[frame] - expected) > 1e-6 * expected, mismatches.count < 5 {
                mismatches.append("frame \(frame): \(left[frame]), expected \(expected) (\(read) dB)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        // The staircase: constant within each slice, a new step at each slice's first frame.
        let firstStep = rampStart / 64 * 64
        #expect(left[firstStep - 64] == left[firstStep - 1] && left[firstStep] == left[firstStep + 63])
        #expect(left[firstStep] != left[firstStep - 1] && left[firstStep + 64] != left[firstStep])
        #expect(abs(left[rampStart + rampLength + 64] - 0.5) < 1e-6)
    }
}
