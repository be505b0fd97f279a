import AudioTestSupport
import AudioGraph
import Foundation
import MIDIFile
import Playback
import Sequencing
import Testing

/// The PCM data of a WAV file Tactus wrote (the bytes after the `data` chunk header).
func wavSampleData(_ path: String) throws -> [UInt8] {
    [UInt8](try WAVChunks.samples(atPath: path))
}

/// `tactus play` against `tactus render`: the same engine path, so the same samples.
@Suite struct PlayCommandTests {
    let cli = RenderCommandTests()

    /// A song with two tracks, tempo changes, a program change and a note across bar 3.
    func song(in dir: String) throws -> String {
        var seq = MusicSequence(timeBase: .ticksPerQuarter(480))
        seq.tempoTrack.add(.meta(.tempo(bpm: 132)), at: 0)
        seq.tempoTrack.add(.meta(.tempo(bpm: 97)), at: 2_000)
        var a = MusicTrack(), b = MusicTrack()
        a.add(.message(.programChange(channel: 0, program: 5)), at: 0)
        for i in 0..<16 { a.addNote(at: Int64(i * 240), channel: 0, key: UInt8(60 + i % 12), velocity: 100, duration: 200) }
        b.add(.message(.programChange(channel: 1, program: 33)), at: 0)
        for i in 0..<4 { b.addNote(at: Int64(i * 960 + 7), channel: 1, key: UInt8(36 + i), velocity: 110, duration: 900) }
        seq.tracks = [a, b]
        let midi = dir + "/song.mid"
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: seq), to: midi)
        return midi
    }

    @Test(.enabled(if: InstalledLibrary.alsa, "needs libasound.so.2 (Debian package libasound2)"), arguments: [
        [String](),
        ["--rate", "2"],
        ["--rate", "0.5", "--from", "2:1", "--to", "4:1"],
        ["--from", "1.2s", "--loop", "2", "--to", "3:3"],
        ["--mute", "2", "--transpose", "3"],
        ["--solo", "2", "--rate", "1.37"],
    ])
    func playToTheFilePluginIsBitIdenticalToRender(options: [String]) throws {
        let (dir, _) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let midi = try song(in: dir)
        let wav = dir + "/out.wav", raw = dir + "/out.raw"
        let common = ["--sample-rate", "48000", "--tail", "0.3"] + options
        let rendered = try cli.run(["render", "--instrument", "builtin", midi, "-o", wav, "--format", "s16"] + common)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let played = try cli.run(["play", "--instrument", "builtin", midi, "--device", "file:'\(raw)',raw", "--latency", "20"] + common)
        #expect(played.status == 0, "\(played.stderr)")
        #expect(played.stdout.hasPrefix("\(midi): played ") && played.stdout.hasSuffix(", 0 underruns\n"), "\(played.stdout)")
        let expected = try wavSampleData(wav)
        let got = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        try #require(got.count >= expected.count, "played \(got.count) bytes, rendered \(expected.count)")
        #expect(Array(got[..<expected.count]) == expected, "\(options)")
        #expect(got[expected.count...].allSatisfy { $0 == 0 }, "silence after the end")
        #expect(got.count - expected.count >= 48_000 / 5 * 4, "at least 200 ms of padding")
        #expect(expected.contains { $0 != 0 })
    }

    @Test func rateTwoRendersHalfTheFramesAndHalfRateTwice() throws {
        let (dir, _) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let midi = try song(in: dir)
        var counts: [String: Int] = [:]
        for rate in ["1", "2", "0.5"] {
            let wav = dir + "/r\(rate).wav"
            let r = try cli.run(["render", "--instrument", "builtin", midi, "-o", wav, "--sample-rate", "48000", "--tail", "0", "--rate", rate])
            #expect(r.status == 0, "\(r.stderr)")
            counts[rate] = try wavSampleData(wav).count / 4
        }
        let whole = try #require(counts["1"])
        // Rate 2 stops at the first output frame whose position reaches the end: ceil(N / 2).
        #expect(counts["2"] == (whole + 1) / 2)
        #expect(counts["0.5"] == whole * 2)
    }

    @Test func withoutADevicePlayPrintsOneLineAndExits69() throws {
        let (dir, midi) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.run(["play", "--instrument", "builtin", midi, "--device", "no_such_pcm_device"])
        #expect(r.status == 69)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("'no_such_pcm_device'") && lines[0].contains("tactus render"), "\(r.stderr)")
    }

    @Test(.enabled(if: InstalledLibrary.alsa, "needs libasound.so.2 (Debian package libasound2)"))
    func playToAPortWithoutTheSequencerPrintsOneLineAndExits69() throws {
        guard !FileManager.default.fileExists(atPath: "/dev/snd/seq") else { return }
        let (dir, midi) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for port in ["14:0", "Midi Through,20:0"] {
            let r = try cli.run(["play", "--instrument", "builtin", midi, "--port", port, "--rate", "2", "--from", "1:2"])
            #expect(r.status == 69, "\(r.stderr)")
            #expect(r.stdout.isEmpty)
            #expect(r.stderr == "tactus: no ALSA sequencer: /dev/snd/seq does not exist (load the kernel module: sudo modprobe snd-seq)\n", "\(r.stderr)")
        }
    }

    @Test func playToAPortChecksFileAndOptionsFirst() throws {
        let (dir, midi) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try cli.run(["play", "--instrument", "builtin", dir + "/none.mid", "--port", "14:0"]).status == 66)
        for options in [["--rate", "30"], ["--mute", "9"], ["--loop", "2"], ["--port", ","]] {
            let r = try cli.run(["play", "--instrument", "builtin", midi, "--port", "14:0"] + options)
            #expect(r.status == 64, "\(options): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(options): \(r.stderr)")
        }
    }

    @Test func badTransportOptionsAreUsageErrors() throws {
        let (dir, midi) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for options in [["--rate", "30"], ["--from", "x:1"], ["--from", "2:1", "--to", "1:1"], ["--mute", "9"], ["--loop", "0"], ["--loop"]] {
            let r = try cli.run(["render", "--instrument", "builtin", midi, "-o", dir + "/x.wav"] + options)
            #expect(r.status == 64, "\(options): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(options): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/x.wav"))
    }

    @Test("--follow-clock without --transport-in is one line naming the missing option, exit 64, before any device opens")
    func followClockNeedsTransportIn() throws {
        let (dir, midi) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try cli.run(["play", "--instrument", "builtin", midi, "--follow-clock"])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr == "\(midi): --follow-clock follows the clock that --transport-in receives: give --transport-in too\n")
    }
}

@Suite struct OfflinePathTests {
    @Test func thePlayerRendersExactlyWhatTheOfflineRendererDoes() throws {
        let seq = makeSong()
        let engine = try Engine.makeDefault(sequence: seq, sampleRate: 44_100)
        var old: [Float] = [], oldRight: [Float] = []
        _ = try OfflineRenderer(engine: engine, tailSeconds: 1).render(blockSize: 500) { l, r, n in
            old += UnsafeBufferPointer(start: l, count: n)
            oldRight += UnsafeBufferPointer(start: r, count: n)
        }
        old += oldRight
        let player = try Player.makeDefault(sequence: seq, sampleRate: 44_100)
        var new: [Float] = [], newRight: [Float] = []
        let stats = try player.renderToEnd(blockSize: 700, tailSeconds: 1) { l, r, n in
            new += UnsafeBufferPointer(start: l, count: n)
            newRight += UnsafeBufferPointer(start: r, count: n)
        }
        new += newRight
        #expect(stats.frameCount == engine.schedule.endFrame + 44_100)
        #expect(old.count == new.count)
        let firstDifference = zip(old, new).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstDifference == nil, "first difference at sample \(firstDifference ?? -1) of \(old.count)")
    }
}

/// System libraries the CLI loads at run time, as the tests find them.
enum InstalledLibrary {
    /// True when libasound.so.2 loads (the CLI's ALSA paths need it).
    static let alsa: Bool = {
        guard let handle = dlopen("libasound.so.2", RTLD_LAZY | RTLD_LOCAL) else { return false }
        dlclose(handle)
        return true
    }()
}
