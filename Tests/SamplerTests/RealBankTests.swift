import AudioGraph
import Foundation
import MIDIFile
import Playback
@testable import Sampler
import Sequencing
import SoundFont
import Testing

private func fnv1a(_ samples: [Float]) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for s in samples {
        var b = s.bitPattern
        for _ in 0..<4 { h ^= UInt64(b & 0xFF); h &*= 0x100_0000_01b3; b >>= 8 }
    }
    return h
}

@Suite struct RealBankTests {
    static let timGM6mb = "/usr/share/sounds/sf2/TimGM6mb.sf2"
    /// Golden hash of the first quarter of Songs/little-waltz.mid through the sampler on TimGM6mb (reverb and
    /// chorus on) at 44.1 kHz. Re-record only on purpose, when the sampler's sound is meant to
    /// change.
    static let goldenHash: UInt64 = 3_866_414_131_977_879_689

    func render(_ bank: SoundFontBank, blockSize: Int, maximumVoiceLimit: Int = SamplerNode.maximumVoiceLimit) throws -> [Float] {
        let song = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Songs/little-waltz.mid").path
        let sequence = try SMFReader.read(contentsOf: song).makeSequence()
        let player = try Player.makeDefault(sequence: sequence, sampleRate: 44_100, maximumFrameCount: 4096,
                                            instrument: .sampler(SamplerNode(bank: bank, maximumVoiceLimit: maximumVoiceLimit)))
        // The first quarter of the song keeps the debug-build test short.
        player.setEnd(tick: sequence.length / 4)
        var samples: [Float] = []
        _ = try player.renderToEnd(blockSize: blockSize, tailSeconds: 1) { l, r, n in
            for i in 0..<n {
                samples.append(l[i])
                samples.append(r[i])
            }
        }
        return samples
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/TimGM6mb.sf2"), "needs /usr/share/sounds/sf2/TimGM6mb.sf2 (Debian package timgm6mb-soundfont)"))
    func timGM6mbRenderMatchesItsGoldenHashAtEveryBlockSize() throws {
        try #require(FileManager.default.fileExists(atPath: Self.timGM6mb),
                     "\(Self.timGM6mb) is missing: install the Debian package timgm6mb-soundfont")
        let bank = try SoundFontReader.read(contentsOf: Self.timGM6mb).bank
        let reference = try render(bank, blockSize: 512)
        #expect(reference.count > 44_100 * 2 * 5)
        #expect(reference.contains { abs($0) > 0.05 })
        for size in [1_000, 63, 4096] {
            #expect(try render(bank, blockSize: size) == reference, "block size \(size)")
        }
        #expect(fnv1a(reference) == Self.goldenHash, "golden hash changed: \(fnv1a(reference))")
        // A pool sized for the default voice limit (the song never fades out more voices at
        // once than its reserve holds) renders the same.
        #expect(try render(bank, blockSize: 512, maximumVoiceLimit: SamplerNode.defaultVoiceLimit) == reference,
                "a sampler whose pool ends at the default voice limit")
    }
}
