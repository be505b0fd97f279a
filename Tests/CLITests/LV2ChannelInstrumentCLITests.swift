import AudioTestSupport
import Foundation
import MIDIFile
import Sequencing
import Testing

private let hasMDAPlugins = FileManager.default.fileExists(atPath: "/usr/lib/lv2/mda.lv2/manifest.ttl")
    && FileManager.default.fileExists(atPath: "/usr/bin/lv2ls")
private let piano = "http://drobilla.net/plugins/mda/Piano"

@Suite("--channel-instrument CH=lv2:URI", .enabled(if: hasMDAPlugins, "needs lilv and mda-lv2 (Debian packages liblilv-0-0, lilv-utils, mda-lv2)"))
struct LV2ChannelInstrumentCLITests {
    /// A song whose every note is on MIDI channel 1 (eight notes in two bars).
    static func channelOneSong(in dir: URL) throws -> String {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 110)), at: 0)
        var track = MusicTrack()
        for i in 0..<8 { track.addNote(at: Int64(i * 240), channel: 0, key: UInt8(55 + i * 2), velocity: 90, duration: 200) }
        sequence.tracks = [track]
        let path = dir.appendingPathComponent("channel-one.mid").path
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: sequence), to: path)
        return path
    }

    /// Routing by channel, seen from outside: the plugin as channel 1's instrument plays the
    /// song exactly as it does as the instrument for every channel (the built-in synthesizer
    /// beside it hears nothing), and as channel 2's instrument it hears nothing, so the song
    /// renders as the built-in synthesizer alone renders it.
    @Test("a plugin for the channel that plays renders what it renders for every channel; for a silent channel, nothing changes")
    func channelRouting() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = try Self.channelOneSong(in: dir)
        func render(_ name: String, _ instrument: [String]) throws -> Data {
            let out = dir.appendingPathComponent("\(name).wav").path
            let result = try CLI.run(["render", song, "-o", out, "--format", "f32", "--quiet"] + instrument)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        let whole = try render("whole", ["--instrument", "lv2:\(piano)"])
        let channelOne = try render("channel-one", ["--instrument", "builtin", "--channel-instrument", "1=lv2:\(piano)"])
        #expect(channelOne == whole)
        let builtIn = try render("builtin", ["--instrument", "builtin"])
        let channelTwo = try render("channel-two", ["--instrument", "builtin", "--channel-instrument", "2=lv2:\(piano)"])
        #expect(channelTwo.count == builtIn.count)
        #expect(channelTwo == builtIn)
        #expect(builtIn != whole)
        // The summary names the channel's instrument.
        let said = try CLI.run(["render", song, "-o", dir.appendingPathComponent("said.wav").path, "--instrument", "builtin",
                                "--channel-instrument", "10=lv2:\(piano)"])
        #expect(said.stdout.contains("channel 10 through LV2 instrument MDA Piano"), "\(said.stdout)")
    }

    @Test("not CH=lv2:URI, a channel outside 1-16 or given twice, an effect or an unknown control: one line each, exit 64, nothing written")
    func refusals() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("little-waltz.mid"), out = dir.appendingPathComponent("x.wav").path
        func refused(_ settings: [String], _ message: String, status: Int32 = 64) throws {
            let result = try CLI.run(["render", song, "-o", out] + settings.flatMap { ["--channel-instrument", $0] })
            #expect(result.status == status, "\(settings): \(result.stderr)")
            #expect(result.stderr == message, "\(settings)")
        }
        try refused(["lv2:\(piano)"], "\(song): --channel-instrument takes CH=lv2:URI with CH a MIDI channel 1-16, not 'lv2:\(piano)'\n")
        try refused(["17=lv2:\(piano)"], "\(song): --channel-instrument 17=lv2:\(piano): channel 17 is outside 1-16\n")
        try refused(["10=lv2:\(piano)", "10=lv2:\(piano)"], "\(song): --channel-instrument: channel 10 is given twice\n")
        try refused(["10=drums.sfz"], "\(song): --channel-instrument 10 takes an installed LV2 instrument as lv2:URI (see tactus info --plugins), not 'drums.sfz'\n")
        try refused(["10=lv2:\(piano),loud=1"], "\(song): --channel-instrument 10 \(piano): MDA Piano has no control 'loud'; its controls: "
                    + "env_decay, env_release, hardness_offset, vel_to_hardness, muffling_filter, vel_to_muffling, vel_sensitivity, "
                    + "stereo_width, polyphony, fine_tuning, random_detuning, stretch_tuning\n")
        try refused(["10=lv2:http://drobilla.net/plugins/mda/Delay"],
                    "MDA Delay (http://drobilla.net/plugins/mda/Delay) is an LV2 effect, not an instrument (--channel-instrument 10)\n", status: 69)
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
