import AudioGraph
import Foundation
import Testing
@testable import AudioEffects

/// The chorus skips its voices while its input and delay line are silent (a song that never
/// sends to it); what comes out must be what the general loop gives, bit for bit, including
/// the tails that ring on after each burst and a burst that starts inside a block.
@Suite struct ChorusShortcutTests {
    /// Silence, then a tone burst, silence longer than the delay line, a short burst whose right
    /// side is the left's negative (silent once mixed to the line, not on the dry path),
    /// and silence to the end.
    static func programme(frames: Int, sampleRate: Double) -> (left: [Float], right: [Float]) {
        var left = [Float](repeating: 0, count: frames), right = left
        for i in 0..<frames {
            let t = Double(i) / sampleRate
            let tone = Float(0.5 * sin(2 * .pi * 330 * t))
            if (0.5..<1.0).contains(t) {
                left[i] = tone
                right[i] = tone * 0.25
            } else if (1.5..<1.503).contains(t) {
                left[i] = tone
                right[i] = -tone
            } else if i == Int(2.2 * sampleRate) + 5 {
                left[i] = 1e-30
            }
        }
        return (left, right)
    }

    @Test("The silent path gives the general loop's output, bit for bit, in any blocks and voice counts",
          arguments: [([512], 3, Float(0)), ([64, 1, 300, 37], 3, 0), ([1], 2, 0), ([128, 7], 5, 0.5)])
    func shortcutMatchesGeneralLoop(blockSizes: [Int], voices: Int, dry: Float) {
        let sampleRate = 44_100.0
        let signal = Self.programme(frames: Int(3 * sampleRate), sampleRate: sampleRate)
        let general = ChorusNode(voices: voices, dry: dry), shortcut = ChorusNode(voices: voices, dry: dry)
        general.takesSilentShortcut = false
        for chorus in [general, shortcut] { chorus.prepare(sampleRate: sampleRate, maximumFrameCount: 512) }
        let expected = renderInBlocks(general, left: signal.left, right: signal.right, blockSizes: blockSizes)
        let actual = renderInBlocks(shortcut, left: signal.left, right: signal.right, blockSizes: blockSizes)
        #expect(general.framesRenderedSilent == 0)
        // Silent input over a silent line: 3 s less the first burst and the tiny sample, each
        // with the 22 ms the line holds, and less the second burst, which writes zeros to the
        // line: 2.453 s with one-frame blocks, a block's worth less at each of four edges.
        #expect(shortcut.framesRenderedSilent > Int(2.4 * sampleRate), "\(shortcut.framesRenderedSilent) frames took the silent path")
        #expect(shortcut.framesRenderedSilent <= Int(2.4529 * sampleRate), "\(shortcut.framesRenderedSilent) frames took the silent path")
        let firstDifference = expected.indices.first { expected[$0].bitPattern != actual[$0].bitPattern }
        #expect(firstDifference == nil, "first different sample at \(firstDifference ?? -1)")
        // The bursts came through with their tails: the comparison covered sound, not only silence.
        let tailStart = Int(1.0 * sampleRate) * 2, tailEnd = Int(1.01 * sampleRate) * 2
        #expect(expected[tailStart..<tailEnd].contains { $0 != 0 })
        #expect(expected.map(abs).max()! > 0.1)
    }
}
