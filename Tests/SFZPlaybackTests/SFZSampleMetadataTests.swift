import AudioFileOutput
import Foundation
import SFZ
import SoundFont
import Testing
@testable import SFZPlayback

/// What sample files store beside their audio: loops and the root key (a WAV `smpl` chunk,
/// libsndfile's instrument data for other formats).
@Suite("SFZ samples' stored loops and root keys")
struct SFZSampleMetadataTests {
    /// 1,000 frames of a 441 Hz sine whose `smpl` chunk loops frames 200...299 (one period)
    /// at unity note 69.
    func loopedFixtures() throws -> Fixtures {
        let f = try Fixtures()
        try f.writeWAV("looped.wav", [sine(period: 100, frames: 1_000)], unityNote: 69, loop: (200, 299))
        return f
    }

    func render(_ f: Fixtures, _ opcodes: String, key: UInt8 = 60) throws -> [Float] {
        let sfz = try f.writeSFZ("r.sfz", "<region> sample=looped.wav \(opcodes)\n")
        return try Rig(try SFZBank.load(contentsOf: sfz)).render(frames: 10_000, notes: [(0, key, 127, nil)]).left
    }

    @Test("The smpl chunk's loop plays as loop_continuous when the region gives no loop_mode, exactly as the same loop written out")
    func fileLoopPlaysContinuous() throws {
        let f = try loopedFixtures()
        let fromFile = try render(f, "pitch_keycenter=60")
        let written = try render(f, "pitch_keycenter=60 loop_mode=loop_continuous loop_start=200 loop_end=299")
        #expect(fromFile == written)
        // Past the sample's 1,000 frames the loop still sounds at full level.
        #expect(abs(decibels(peak(fromFile, 8_000..<9_000) / peak(fromFile, 300..<900))) < 0.05)
    }

    @Test("loop_mode, loop_start and loop_end given by the region override the file's")
    func regionOverridesFileLoop() throws {
        let f = try loopedFixtures()
        let once = try render(f, "pitch_keycenter=60 loop_mode=no_loop")
        #expect(peak(once, 1_100..<10_000) == 0)
        #expect(peak(once, 300..<900) > 0)
        // loop_end from the region, loop_start from the file.
        #expect(try render(f, "pitch_keycenter=60 loop_end=249")
            == render(f, "pitch_keycenter=60 loop_mode=loop_continuous loop_start=200 loop_end=249"))
        #expect(try render(f, "pitch_keycenter=60 loop_mode=loop_sustain")
            == render(f, "pitch_keycenter=60 loop_mode=loop_sustain loop_start=200 loop_end=299"))
    }

    @Test("A sample without a smpl loop and a region without loop_mode does not loop")
    func noFileLoopNoLoop() throws {
        let f = try Fixtures()
        try f.writeWAV("looped.wav", [sine(period: 100, frames: 1_000)], unityNote: 69)
        let out = try render(f, "pitch_keycenter=60")
        #expect(peak(out, 1_100..<10_000) == 0)
        #expect(peak(out, 300..<900) > 0)
    }

    @Test("pitch_keycenter=sample plays the smpl chunk's unity note unshifted")
    func keycenterFromSample() throws {
        let f = try loopedFixtures()
        let instrument = try SFZBank.load(contentsOf: try f.writeSFZ("k.sfz", "<region> sample=looped.wav pitch_keycenter=sample\n"))
        #expect(instrument.warnings.isEmpty, "\(instrument.warnings)")
        for (key, expected) in [(UInt8(69), 441.0), (81, 882)] {
            let out = try Rig(instrument).render(frames: 10_000, notes: [(0, key, 127, nil)]).left
            let measured = frequency(out, 1_000..<9_000)
            #expect(abs(measured / expected - 1) < 0.0005, "key \(key): \(measured) Hz")
        }
        // A sample that stores no root key plays at the default 60, with a warning.
        try f.writeWAV("plain.wav", [sine(period: 100, frames: 1_000)])
        let plain = try SFZBank.load(contentsOf: try f.writeSFZ("p.sfz", "<region> sample=plain.wav pitch_keycenter=sample\n"))
        #expect(plain.warnings.map(\.description)
            == ["\(f.path("p.sfz")):1: `pitch_keycenter` is sample, but the sample stores no root key: played at 60"])
    }

    @Test("Tactus's WAV reader and libsndfile read the same loop (last frame included) and root key from a smpl chunk",
          .enabled(if: SndFileLibrary.isAvailable, "needs libsndfile.so.1 (Debian package libsndfile1)"))
    func readersAgree() throws {
        let f = try loopedFixtures()
        let own = try PCMAudio.readWAV(contentsOf: f.path("looped.wav"))
        #expect(own.loop == PCMLoop(start: 200, end: 299))
        #expect(own.rootKey == 69)
        let viaLibrary = try SFZSampleReader.readWithSndFile(f.path("looped.wav"), budget: 1 << 30)
        #expect(viaLibrary.loop == own.loop)
        #expect(viaLibrary.rootKey == own.rootKey)
        #expect(viaLibrary.channels == own.channels)
    }
}
