import Foundation
import Testing
@testable import AudioGraph

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

    static func render(_ limiter: LimiterNode, _ signal: [Float], blockSizes: [Int]) -> [Float] {
        var input = signal, right = signal.map { -$0 * 0.5 }
        var outLeft = [Float](repeating: .nan, count: signal.count), outRight = outLeft
        var start = 0, block = 0
        input.withUnsafeMutableBufferPointer { inL in
            right.withUnsafeMutableBufferPointer { inR in
                outLeft.withUnsafeMutableBufferPointer { oL in
                    outRight.withUnsafeMutableBufferPointer { oR in
                        while start < signal.count {
                            let count = min(blockSizes[block % blockSizes.count], signal.count - start)
                            let source = StereoBuffer(left: inL.baseAddress! + start, right: inR.baseAddress! + start)
                            withUnsafePointer(to: source) { inputs in
                                limiter.render(startFrame: Int64(start), frameCount: count,
                                               inputs: UnsafeBufferPointer(start: inputs, count: 1),
                                               output: StereoBuffer(left: oL.baseAddress! + start, right: oR.baseAddress! + start))
                            }
                            start += count
                            block += 1
                        }
                    }
                }
            }
        }
        return zip(outLeft, outRight).flatMap { [$0, $1] }
    }

    @Test("The short path gives the general loop's output, bit for bit, in any blocks", arguments: [[512], [64, 1, 300, 37], [1]])
    func shortcutMatchesGeneralLoop(blockSizes: [Int]) {
        let sampleRate = 44_100.0
        let signal = Self.programme(frames: Int(5 * sampleRate), sampleRate: sampleRate)
        let general = LimiterNode(), shortcut = LimiterNode()
        general.takesUnlimitedShortcut = false
        for limiter in [general, shortcut] { limiter.prepare(sampleRate: sampleRate, maximumFrameCount: 512) }
        let expected = Self.render(general, signal, blockSizes: blockSizes)
        let actual = Self.render(shortcut, signal, blockSizes: blockSizes)
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
