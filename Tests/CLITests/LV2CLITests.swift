import AudioTestSupport
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
        #expect(effect.stderr == "MDA Delay (http://drobilla.net/plugins/mda/Delay) is an LV2 effect, not an instrument (--instrument)\n")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}

private let delay = "http://drobilla.net/plugins/mda/Delay"
private let overdrive = "http://drobilla.net/plugins/mda/Overdrive"

@Suite("tactus render --effect lv2:URI: an effect chain before the limiter", .enabled(if: hasLV2Fixtures, "\(lv2Fixtures)"))
struct LV2EffectChainCLITests {
    /// lilv's own `lv2apply` runs an effect over a file one frame per `run`: Tactus's chain
    /// (on its 64-frame grid, at any block size) must give the same samples for an effect
    /// whose output does not depend on how its runs are cut. MDA Delay and Overdrive are two
    /// such (of the 27 MDA effects, 19 gave identical samples; see the LV2 article).
    @Test("a song through a chain of two effects with settings equals the dry render through lv2apply, twice")
    func aChainEqualsLV2apply() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        // The same song, length and tail for every render; the built-in synthesizer stays
        // far below the limiter's ceiling, so the limiter passes each sample unchanged.
        let common = ["--instrument", "builtin", "--format", "f32", "--to", "6s", "--tail", "1"]
        let dry = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", path("dry.wav")] + common)
        #expect(dry.status == 0, "\(dry.stderr)")
        let lv2apply = URL(fileURLWithPath: "/usr/bin/lv2apply")
        let delayed = try CLI.run(["-i", path("dry.wav"), "-o", path("delayed.wav"), "-c", "l_delay", "0.3", "-c", "feedback", "0.4", delay],
                                  executable: lv2apply)
        #expect(delayed.status == 0, "\(delayed.stderr)")
        let driven = try CLI.run(["-i", path("delayed.wav"), "-o", path("driven.wav"), "-c", "drive", "0.6", overdrive], executable: lv2apply)
        #expect(driven.status == 0, "\(driven.stderr)")
        let reference = try WAVChunks.samples(atPath: path("driven.wav"))
        #expect(reference != (try WAVChunks.samples(atPath: path("dry.wav"))), "the effects changed nothing")
        for blockSize in ["64", "65", "512"] {
            let out = path("chain-\(blockSize).wav")
            let result = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--block-size", blockSize,
                                      "--effect", "lv2:\(delay),l_delay=0.3,feedback=0.4", "--effect", "lv2:\(overdrive),Drive=0.6"] + common)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasSuffix("with the built-in synthesizer, through LV2 effect MDA Delay, through LV2 effect MDA Overdrive\n"), "\(result.stdout)")
            let samples = try WAVChunks.samples(atPath: out)
            #expect(samples.count == reference.count)
            #expect(samples == reference, "block size \(blockSize)")
        }
        // The other order is another sound: the chain is played in the order given.
        let swapped = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", path("swapped.wav"),
                                   "--effect", "lv2:\(overdrive),drive=0.6", "--effect", "lv2:\(delay),l_delay=0.3,feedback=0.4"] + common)
        #expect(swapped.status == 0, "\(swapped.stderr)")
        #expect(try WAVChunks.samples(atPath: path("swapped.wav")) != reference)
    }

    @Test("an unknown control, a value out of range, a setting without a value, an instrument as effect, a batch: one line each, nothing written")
    func refusals() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("x.wav").path
        let song = CLI.song("little-waltz.mid")
        func render(_ effect: String) throws -> CLI.Output {
            try CLI.run(["render", song, "-o", out, "--instrument", "builtin", "--effect", effect])
        }
        let unknown = try render("lv2:\(delay),delay=0.3")
        #expect(unknown.status == 64)
        #expect(unknown.stderr == "\(song): --effect \(delay): MDA Delay has no control 'delay'; its controls: l_delay, r_delay, feedback, fb_tone, fx_mix, output\n")
        let outside = try render("lv2:\(delay),feedback=1.5")
        #expect(outside.status == 64)
        #expect(outside.stderr == "\(song): --effect \(delay): feedback=1.5 is outside 0...1\n")
        let noValue = try render("lv2:\(delay),feedback")
        #expect(noValue.status == 64)
        #expect(noValue.stderr == "\(song): --effect \(delay): 'feedback' is not a control setting NAME=VALUE (see tactus info --plugin \(delay))\n")
        let notANumber = try render("lv2:\(delay),feedback=nan")
        #expect(notANumber.status == 64)
        #expect(notANumber.stderr == "\(song): --effect \(delay): the value of feedback must be a number, not 'nan'\n")
        let notLV2 = try render("reverb")
        #expect(notLV2.status == 64)
        #expect(notLV2.stderr == "\(song): --effect takes an installed LV2 effect as lv2:URI (see tactus info --plugins), not 'reverb'\n")
        let instrument = try render("lv2:\(piano)")
        #expect(instrument.status == 69)
        #expect(instrument.stderr == "MDA Piano (\(piano)) is an LV2 instrument, not an effect (--effect)\n")
        let instrumentControl = try CLI.run(["render", song, "-o", out, "--instrument", "lv2:\(piano),env_decay=2"])
        #expect(instrumentControl.status == 64)
        #expect(instrumentControl.stderr == "\(song): --instrument \(piano): env_decay=2 is outside 0...1\n")
        let programs = try CLI.run(["render", song, "-o", out, "--instrument", "lv2:\(piano),programs=drop"])
        #expect(programs.status == 64)
        #expect(programs.stderr == "\(song): --instrument \(piano): programs= takes ignore (keep the song's program changes from the plugin) or pass, not 'drop'\n")
        #expect(!FileManager.default.fileExists(atPath: out))
        // A batch checks its plugins' settings before it renders anything.
        let batch = try CLI.run(["render", song, CLI.song("seven-eight.mid"), "-o", dir.path + "/batch/", "--effect", "lv2:\(delay),feedback=1.5"])
        #expect(batch.status == 64)
        #expect(batch.stderr == "--effect \(delay): feedback=1.5 is outside 0...1\n", "\(batch.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/batch/little-waltz.wav"))
    }
}

@Suite("LV2 presets on the command line", .enabled(if: hasLV2Fixtures, "\(lv2Fixtures)"))
struct LV2PresetCLITests {
    /// The control values of the preset labelled `label` in a Turtle file of presets, as
    /// `SYMBOL=VALUE` settings (each preset is a paragraph of `lv2:symbol` and `pset:value`).
    static func settings(ofPreset label: String, in path: String) throws -> [String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let block = try #require(text.components(separatedBy: "\n\n").first { $0.contains("rdfs:label \"\(label)\"") })
        let pattern = try NSRegularExpression(pattern: #"lv2:symbol "(\w+)" ;\s*pset:value ([-0-9.eE]+)"#)
        let range = NSRange(block.startIndex..., in: block)
        return pattern.matches(in: block, range: range).map { match in
            "\(block[Range(match.range(at: 1), in: block)!])=\(block[Range(match.range(at: 2), in: block)!])"
        }
    }

    @Test("preset=LABEL plays what the preset's control values play, and other settings change it; an unknown preset lists the plugin's")
    func aPresetIsItsControlValues() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        func render(_ instrument: String, _ name: String) throws -> Data {
            let out = dir.appendingPathComponent(name + ".wav").path
            let result = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--instrument", instrument,
                                      "--format", "f32", "--to", "4s", "--tail", "1", "--quiet"])
            #expect(result.status == 0, "\(result.stderr)")
            return try WAVChunks.samples(atPath: out)
        }
        let settings = try Self.settings(ofPreset: "Concert Piano", in: "/usr/lib/lv2/mda.lv2/Piano-presets.ttl")
        #expect(settings.count == 12, "\(settings)")
        let preset = try render("lv2:\(piano),preset=Concert Piano", "preset")
        let explicit = try render("lv2:\(piano)," + settings.joined(separator: ","), "explicit")
        let plain = try render("lv2:\(piano)", "default")
        #expect(preset == explicit)
        #expect(preset != plain, "the preset changed nothing")
        // A setting after the preset changes what the preset set.
        let changed = try render("lv2:\(piano),preset=Concert Piano,env_decay=0.1", "changed")
        #expect(changed != preset)

        let unknown = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", dir.appendingPathComponent("x.wav").path,
                                   "--instrument", "lv2:\(piano),preset=Opera Piano"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr == "\(CLI.song("little-waltz.mid")): --instrument \(piano): MDA Piano has no preset 'Opera Piano'; its presets: "
                + "Broken Piano, Compressed Piano, Concert Piano, Dance Piano, Dark Piano, MDA Piano, Plain Piano, School Piano\n")
        let listed = try CLI.run(["info", "--plugin", piano])
        #expect(listed.stdout.hasSuffix("presets:     8 (load one with lv2:URI,preset=LABEL)\n  Broken Piano\n  Compressed Piano\n"
                                        + "  Concert Piano\n  Dance Piano\n  Dark Piano\n  MDA Piano\n  Plain Piano\n  School Piano\n"), "\(listed.stdout)")
    }
}

/// MDA EPiano changes its own static wave table each time an instance is made (its constructor
/// cross-fades the table's loop ends in place), so two instances in one process play two
/// tables; the library suites leave it out. Rendered from the command line, each render is a
/// process with one instance, and the plugin is as exact as the others.
@Suite("MDA EPiano, one instance per tactus process", .enabled(if: hasLV2Fixtures, "\(lv2Fixtures)"))
struct LV2EPianoCLITests {
    static let ePiano = "lv2:http://drobilla.net/plugins/mda/EPiano"

    /// Eight overlapping notes across two tempo changes; the song with the first `notes`.
    static func song(notes: Int) -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        for (tick, microseconds) in [(Int64(0), 500_000), (1_100, 371_113), (2_300, 612_345)] {
            sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: microseconds)), at: tick)
        }
        var track = MusicTrack()
        for i in 0..<notes {
            track.addNote(at: tick(ofNote: i), channel: 0, key: UInt8(48 + (i * 5) % 30), velocity: UInt8(70 + i * 6),
                          duration: Int64(150 + (i % 4) * 90))
        }
        sequence.tracks = [track]
        return sequence
    }

    static func tick(ofNote i: Int) -> Int64 { Int64(i * 377 + (i % 3) * 11) }

    static func render(notes: Int, blockSize: Int = 512, in dir: URL) throws -> [Float] {
        let path = dir.appendingPathComponent("song-\(notes).mid").path
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: song(notes: notes)), to: path)
        let out = dir.appendingPathComponent("epiano-\(notes)-\(blockSize).wav").path
        let result = try CLI.run(["render", path, "-o", out, "--instrument", ePiano, "--format", "f32", "--tail", "0.5",
                                  "--block-size", "\(blockSize)", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let bytes = try WAVChunks.samples(atPath: out)
        return bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    @Test("every note's first sample is at its frame from the tempo map; the render is the same at block sizes 1, 64, 65 and 512")
    func everyNoteOnItsFrameAtAnyBlockSize() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let tempo = Self.song(notes: 8).makeTempoMap()
        var previous: [Float] = []
        for notes in 1...8 {
            let samples = try Self.render(notes: notes, in: dir)
            // Interleaved: the first frame where either side differs from the song without it.
            let onset = stride(from: 0, to: samples.count, by: 2).first { i in
                samples[i] != (i < previous.count ? previous[i] : 0) || samples[i + 1] != (i + 1 < previous.count ? previous[i + 1] : 0)
            }.map { $0 / 2 }
            let tick = Self.tick(ofNote: notes - 1)
            #expect(onset.map(Int64.init) == tempo.frame(atTick: tick, sampleRate: 44_100), "note \(notes)")
            previous = samples
        }
        for blockSize in [1, 64, 65] {
            #expect(try Self.render(notes: 8, blockSize: blockSize, in: dir) == previous, "block size \(blockSize)")
        }
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
        // The same when the piano is channel 1's own instrument.
        let channelFile = dir.appendingPathComponent("channel.wav").path, channelStreamed = dir.appendingPathComponent("channel-streamed.wav").path
        let channelToFile = try CLI.run(["render", song, "-o", channelFile, "--instrument", "builtin", "--channel-instrument", "1=lv2:\(piano)", "--tail", "0.5"])
        #expect(channelToFile.status == 0 && channelToFile.stdout.hasPrefix(channelFile + ": "), "\(channelToFile.stdout.prefix(200))")
        #expect(channelToFile.stderr.contains("what is this"), "the piano no longer prints when it steals voices")
        let channelToStandardOutput = try CLI.run(["/bin/sh", "-c", "exec \"$0\" render \"$1\" -o - --instrument builtin --channel-instrument 1=lv2:\(piano) --tail 0.5 > \"$2\"",
                                                   CLI.binary.path, song, channelStreamed], executable: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(channelToStandardOutput.status == 0, "\(channelToStandardOutput.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: channelStreamed)) == Data(contentsOf: URL(fileURLWithPath: channelFile)))
    }
}
