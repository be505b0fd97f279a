import AudioGraph
import Foundation
import Testing
@testable import AudioEffects

/// The limiter skips its gain computer while nothing needs limiting; what comes out must be
/// what the general loop gives, before, during and long after limiting.
@Suite struct LimiterShortcutTests {
    /// A 440 Hz tone at `level`, with bursts far above the ceiling in two places and silence
    /// at the end.
    static func programme(frames: Int, sampleRate: Double) -> [Float] {
        (0..<frames).map { i in
            let t = Double(i) / sampleRate
            let burst = (1.0..<1.1).contains(t) || (2.5..<2.52).contains(t)
            let level = t >= 4 ? 0 : burst ? 3.0 : 0.5
            return Float(level * sin(2 * .pi * 440 * t))
        }
    }

    @Test("The short path gives the general loop's output, bit for bit, in any blocks", arguments: [[512], [64, 1, 300, 37], [1]])
    func shortcutMatchesGeneralLoop(blockSizes: [Int]) {
        let sampleRate = 44_100.0
        let signal = Self.programme(frames: Int(5 * sampleRate), sampleRate: sampleRate)
        let general = LimiterNode(), shortcut = LimiterNode()
        general.takesUnlimitedShortcut = false
        for limiter in [general, shortcut] { limiter.prepare(sampleRate: sampleRate, maximumFrameCount: 512) }
        let expected = renderInBlocks(general, left: signal, right: signal.map { -$0 * 0.5 }, blockSizes: blockSizes)
        let actual = renderInBlocks(shortcut, left: signal, right: signal.map { -$0 * 0.5 }, blockSizes: blockSizes)
        #expect(general.framesRenderedUnlimited == 0)
        // The second before the first burst. (After limiting, the released gain settles a
        // rounding step short of its target and the general loop keeps the rest.)
        #expect(shortcut.framesRenderedUnlimited > Int(0.95 * sampleRate), "\(shortcut.framesRenderedUnlimited) frames took the short path")
        let firstDifference = expected.indices.first { expected[$0].bitPattern != actual[$0].bitPattern }
        #expect(firstDifference == nil, "first different sample at \(firstDifference ?? -1)")
        // The bursts were limited: the comparison covered limiting, not only quiet.
        #expect(expected.map(abs).max()! <= decibelsToGain(-0.3))
        #expect(expected.map(abs).max()! > 0.9)
    }
}
