import AudioGraph
import Foundation
import MIDIFile
import Playback
@testable import Sampler
import Sequencing
import SoundFont
import Testing

@Suite struct ClickTrackTests {
    /// Every click of Songs/click-track.mid (a note per beat through four tempos) starts at
    /// exactly the frame the tempo map gives its tick, through the whole playback path.
    @Test func clicksStartOnTheirExactFrames() throws {
        let song = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Songs/click-track.mid").path
        let sequence = try SMFReader.read(contentsOf: song).makeSequence()
        // A percussion kit whose every key plays a short burst that is loud from its first point.
        let burst = TestSample(words: [Int16](repeating: 12_000, count: 300))
        let bank = makeBank(samples: [burst], presets: [(128, 0, [TestRegion(generators: [.sampleModes: 0])])])
        let sampler = SamplerNode(bank: bank)
        sampler.setParameter(SamplerNode.Parameter.reverbLevel, value: 0)
        sampler.setParameter(SamplerNode.Parameter.chorusLevel, value: 0)
        let player = try Player.makeDefault(sequence: sequence, sampleRate: 44_100, maximumFrameCount: 512,
                                            instrument: .sampler(sampler))
        var left: [Float] = []
        _ = try player.renderToEnd(blockSize: 333, tailSeconds: 0.5) { l, _, n in
            left.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
        }
        var expected: [Int] = []
        for track in sequence.tracks {
            for e in track.events {
                if case .note = e.event { expected.append(Int(player.songFrame(atTick: e.tick))) }
            }
        }
        #expect(expected.count >= 24)
        var found: [Int] = []
        for i in 0..<left.count where left[i] != 0 && (i == 0 || left[i - 1] == 0) { found.append(i) }
        #expect(found == expected.sorted())
    }
}
