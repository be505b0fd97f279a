import Foundation
import MIDIFile
import Sequencing
import Testing

/// The LV2 fixtures: lilv, its utilities (the reference listing) and the MDA and example plugins.
private let hasLV2Fixtures = FileManager.default.fileExists(atPath: "/usr/bin/lv2ls")
    && FileManager.default.fileExists(atPath: "/usr/lib/lv2/mda.lv2/manifest.ttl")
    && FileManager.default.fileExists(atPath: "/usr/lib/lv2/eg-sampler.lv2/manifest.ttl")
private let lv2Fixtures = "needs lilv-utils, mda-lv2 and lv2-examples (Debian packages liblilv-0-0, lilv-utils, mda-lv2, lv2-examples)"
private let piano = "http://drobilla.net/plugins/mda/Piano"

@Suite("tactus info --plugins, --plugin and render --instrument lv2:URI", .enabled(if: hasLV2Fixtures, "\(lv2Fixtures)"))
struct LV2CLITests {
    @Test("info --plugins lists every plugin lv2ls finds, and which Tactus can host")
    func listsAsManyPluginsAsLV2ls() throws {
        let lv2ls = try CLI.run([], executable: URL(fileURLWithPath: "/usr/bin/lv2ls"))
        let expected = lv2ls.stdout.split(separator: "\n").map(String.init).sorted()
        let result = try CLI.run(["info", "--plugins"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = result.stdout.split(separator: "\n").dropFirst()
        #expect(rows.map { String($0.split(separator: " ")[0]) }.sorted() == expected)
        let pianoRow = try #require(rows.first { $0.hasPrefix("  \(piano) ") })
        #expect(pianoRow.contains("instrument") && pianoRow.hasSuffix("hostable: yes"), "\(pianoRow)")
        // eg-sampler asks for state:loadDefaultState; eg-fifths makes no sound.
        let sampler = try #require(rows.first { $0.contains("http://lv2plug.in/plugins/eg-sampler ") })
        #expect(sampler.contains(" instrument ") && sampler.hasSuffix("hostable: yes"), "\(sampler)")
        let fifths = try #require(rows.first { $0.contains("http://lv2plug.in/plugins/eg-fifths ") })
        #expect(fifths.hasSuffix("hostable: no (0 audio outputs (Tactus takes 1 or 2))"), "\(fifths)")
    }

    @Test("info --plugin shows ports, parameters with ranges and required features; an unknown URI lists close matches")
    func describesOnePlugin() throws {
        let result = try CLI.run(["info", "--plugin", piano])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("name:        MDA Piano\n"))
        #expect(result.stdout.contains("kind:        instrument (class http://lv2plug.in/ns/lv2core#InstrumentPlugin)\n"))
        #expect(result.stdout.contains("  http://lv2plug.in/ns/ext/urid#map\n"))
        #expect(result.stdout.contains("atom in      event_in         Event In (MIDI"), "\(result.stdout)")
        #expect(result.stdout.contains("  env_decay        0...1              default 0.5        Envelope Decay\n"), "\(result.stdout)")
        let unknown = try CLI.run(["info", "--plugin", "http://drobilla.net/plugins/mda/Pianoo"])
        #expect(unknown.status == 66)
        #expect(unknown.stdout.isEmpty)
        #expect(unknown.stderr == "no LV2 plugin http://drobilla.net/plugins/mda/Pianoo is installed; close matches: \(piano), http://drobilla.net/plugins/mda/EPiano\n")
    }

    @Test("render --instrument lv2:URI plays through the plugin, the same samples at any block size")
    func rendersThroughAnInstrument() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var files: [Data] = []
        for blockSize in ["64", "65", "1000"] {
            let out = dir.appendingPathComponent("piano-\(blockSize).wav").path
            let result = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--instrument", "lv2:\(piano)",
                                      "--block-size", blockSize, "--format", "f32", "--to", "6s", "--tail", "1"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasSuffix("with the LV2 instrument MDA Piano (\(piano))\n"), "\(result.stdout)")
            #expect(!result.stdout.contains("peak silence"))
            files.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        #expect(files[0].count > 100_000)
        #expect(files[1] == files[0] && files[2] == files[0])
    }

    @Test("refusals: without lilv, a plugin needing a feature Tactus lacks, an effect as instrument: one line, exit 69")
    func refusals() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["TACTUS_LILV_LIBRARY"] = "libtactus-no-such-lilv.so.0"
        let noLibrary = try CLI.run(["info", "--plugins"], environment: environment)
        #expect(noLibrary.status == 69)
        #expect(noLibrary.stderr.hasPrefix("LV2 plugins need lilv (Debian package liblilv-0-0): "), "\(noLibrary.stderr)")
        #expect(noLibrary.stderr.filter { $0 == "\n" }.count == 1)
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("x.wav").path
        let renderWithout = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--instrument", "lv2:\(piano)"],
                                        environment: environment)
        #expect(renderWithout.status == 69)
        #expect(renderWithout.stderr.hasPrefix("LV2 plugins need lilv (Debian package liblilv-0-0): "))
        // A bundle of a plugin that asks for the deprecated uri-map and event extensions (as
        // Debian's foo-yc20 does); its binary is MDA Piano's, which must never be loaded.
        let bundle = dir.appendingPathComponent("bundles/old-host.lv2")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        let plugin = "urn:tactus:test:old-host-plugin"
        try """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
        <\(plugin)> a lv2:Plugin ; lv2:binary <file:///usr/lib/lv2/mda.lv2/Piano.so> ; rdfs:seeAlso <plugin.ttl> .
        """.write(to: bundle.appendingPathComponent("manifest.ttl"), atomically: true, encoding: .utf8)
        try """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix doap: <http://usefulinc.com/ns/doap#> .
        <\(plugin)> a lv2:Plugin, lv2:InstrumentPlugin ; doap:name "Old Host Plugin" ;
            lv2:requiredFeature <http://lv2plug.in/ns/ext/uri-map>, <http://lv2plug.in/ns/ext/event> ;
            lv2:port [ a lv2:AudioPort, lv2:OutputPort ; lv2:index 0 ; lv2:symbol "out" ; lv2:name "Out" ] .
        """.write(to: bundle.appendingPathComponent("plugin.ttl"), atomically: true, encoding: .utf8)
        var withBundle = ProcessInfo.processInfo.environment
        withBundle["LV2_PATH"] = dir.appendingPathComponent("bundles").path + ":/usr/lib/lv2"
        let refused = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--instrument", "lv2:\(plugin)"], environment: withBundle)
        #expect(refused.status == 69)
        #expect(refused.stderr.hasPrefix("Old Host Plugin (\(plugin)) requires features Tactus does not provide: "), "\(refused.stderr)")
        #expect(refused.stderr.contains("http://lv2plug.in/ns/ext/uri-map") && refused.stderr.contains("http://lv2plug.in/ns/ext/event"))
        #expect(refused.stderr.filter { $0 == "\n" }.count == 1)
        let listed = try CLI.run(["info", "--plugins"], environment: withBundle)
        #expect(listed.stdout.contains("Old Host Plugin  hostable: no (requires "), "\(listed.stdout)")
        let effect = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--instrument", "lv2:http://drobilla.net/plugins/mda/Delay"])
        #expect(effect.status == 69)
        #expect(effect.stderr == "MDA Delay (http://drobilla.net/plugins/mda/Delay) is an LV2 effect, not an instrument\n")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}

@Suite("tactus render -o - through a plugin that prints", .enabled(if: hasLV2Fixtures, "\(lv2Fixtures)"))
struct LV2StandardOutputTests {
    /// MDA Piano prints a line to standard output each time it steals a voice: with the WAV
    /// on standard output, those lines go to standard error and the stream is the file.
    @Test func aPluginsPrintingNeverReachesTheWAVStream() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Eight chords of 24 held notes: more than the piano's voices.
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        for chord in 0..<8 {
            for k in 0..<24 {
                track.addNote(at: Int64(chord * 240), channel: 0, key: UInt8(30 + k * 2 + chord), velocity: 100, duration: 240)
            }
        }
        sequence.tracks = [track]
        let song = dir.appendingPathComponent("dense.mid").path
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: sequence), to: song)
        let file = dir.appendingPathComponent("file.wav").path
        let toFile = try CLI.run(["render", song, "-o", file, "--instrument", "lv2:\(piano)", "--tail", "0.5"])
        #expect(toFile.status == 0, "\(toFile.stderr)")
        #expect(toFile.stdout.hasPrefix(file + ": "), "\(toFile.stdout.prefix(200))")
        #expect(toFile.stderr.contains("what is this"), "the piano no longer prints when it steals voices")
        let streamed = dir.appendingPathComponent("streamed.wav").path
        let toStandardOutput = try CLI.run(["/bin/sh", "-c", "exec \"$0\" render \"$1\" -o - --instrument lv2:\(piano) --tail 0.5 > \"$2\"",
                                            CLI.binary.path, song, streamed], executable: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(toStandardOutput.status == 0, "\(toStandardOutput.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: streamed)) == Data(contentsOf: URL(fileURLWithPath: file)))
    }
}
