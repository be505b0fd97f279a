import AudioTestSupport
import Foundation
import MIDI
import MIDIFile
import Sequencing
import Testing

/// `tactus render --tail auto`: the render ends when the sound does.
@Suite("tactus render --tail auto")
struct TailCLITests {
    static let bank = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

    /// Strings and a piano ending on a held chord: long releases and the sampler's reverb.
    static func song(_ path: String) throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var strings = MusicTrack()
        _ = strings.add(.message(.programChange(channel: 0, program: 48)), at: 0)
        var piano = MusicTrack()
        for (i, key) in [60, 64, 67, 72].enumerated() {
            _ = piano.addNote(at: Int64(i * 240), channel: 1, key: UInt8(key), velocity: 110, duration: 200)
            _ = strings.addNote(at: 960, channel: 0, key: UInt8(key - 12), velocity: 100, duration: 960)
        }
        sequence.tracks = [strings, piano]
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: sequence), to: path)
    }

    /// The float samples of a 32-bit float stereo WAV, as the largest magnitude per frame.
    static func frameLevels(_ path: String) throws -> [Float] {
        let data = try WAVChunks.samples(atPath: path)
        return data.withUnsafeBytes { raw in
            let samples = raw.bindMemory(to: Float.self)
            return (0..<samples.count / 2).map { max(abs(samples[2 * $0]), abs(samples[2 * $0 + 1])) }
        }
    }

    @Test("Releases and reverb end naturally: the last 100 ms are 60 dB under the peak, at most 0.5 s past the sound, at any block size",
          .enabled(if: FileManager.default.fileExists(atPath: bank), "needs FluidR3_GM (Debian package fluid-soundfont-gm)"))
    func tailEndsWithTheSound() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let midi = dir.appendingPathComponent("song.mid").path
        try Self.song(midi)
        var renders: [Data] = []
        for blockSize in ["64", "1000", "4096"] {
            let out = dir.appendingPathComponent("auto-\(blockSize).wav").path
            let r = try CLI.run(["render", midi, "-o", out, "--soundfont", Self.bank, "--format", "f32", "--block-size", blockSize, "--quiet"])
            #expect(r.status == 0, "\(r.stderr)")
            renders.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        #expect(renders[1] == renders[0] && renders[2] == renders[0], "the end does not depend on the block size")

        let levels = try Self.frameLevels(dir.appendingPathComponent("auto-64.wav").path)
        let peak = levels.max() ?? 0
        let rate = 44_100
        let lastLoud = levels.lastIndex { $0 > Float(pow(10, -90.0 / 20)) } ?? 0
        let songEnd = 2 * rate // the strings end at 2 s
        #expect(levels.count > songEnd + rate / 2, "the release and reverb outlast the last note-off")
        #expect(levels.suffix(rate / 10).max()! < peak * Float(pow(10, -60.0 / 20)), "no cut release")
        #expect(levels.count <= lastLoud + 1 + rate / 2, "\(levels.count) frames, sound until \(lastLoud)")

        // Without a tail the same song is cut while it sounds: what the test above guards against.
        let cut = dir.appendingPathComponent("cut.wav").path
        #expect(try CLI.run(["render", midi, "-o", cut, "--soundfont", Self.bank, "--format", "f32", "--tail", "0", "--quiet"]).status == 0)
        let cutLevels = try Self.frameLevels(cut)
        #expect(cutLevels.suffix(rate / 10).max()! > peak * Float(pow(10, -60.0 / 20)))
    }

    @Test("A song with bars of rests before its end of track stops when its sound does; --tail 0 keeps the rests")
    func restsBeforeTheEndAreNotRendered() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        for i in 0..<4 { _ = track.addNote(at: Int64(i * 480), channel: 0, key: UInt8(60 + i), velocity: 100, duration: 400) }
        // A controller 8 s after the last note: silent, but the song lasts until it.
        _ = track.add(.message(.controlChange(channel: 0, controller: 7, value: 100)), at: 480 * 20)
        sequence.tracks = [track]
        let midi = dir.appendingPathComponent("rests.mid").path
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: sequence), to: midi)
        let auto = dir.appendingPathComponent("auto.wav").path, fixed = dir.appendingPathComponent("fixed.wav").path
        #expect(try CLI.run(["render", midi, "-o", auto, "--instrument", "builtin", "--format", "f32", "--quiet"]).status == 0)
        #expect(try CLI.run(["render", midi, "-o", fixed, "--instrument", "builtin", "--format", "f32", "--tail", "0", "--quiet"]).status == 0)
        let levels = try Self.frameLevels(auto)
        let lastLoud = levels.lastIndex { $0 > Float(pow(10, -90.0 / 20)) } ?? 0
        #expect(levels.count <= lastLoud + 1 + 44_100 / 2, "\(levels.count) frames, sound until \(lastLoud)")
        #expect(try Self.frameLevels(fixed).count == 10 * 44_100, "the fixed tail renders the song to its end (20 beats at 120 BPM)")
    }
}
