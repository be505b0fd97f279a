import AudioTestSupport
import Foundation
import Testing

/// Plugins that read a file set by `patch:Set`: lv2-examples' sampler and Ardour's ACE Fluid
/// Synth (a SoundFont player around libfluidsynth).
private let hasFilePlugins = FileManager.default.fileExists(atPath: "/usr/lib/lv2/eg-sampler.lv2/manifest.ttl")
    && FileManager.default.fileExists(atPath: "/usr/lib/lv2/a-fluidsynth.lv2/manifest.ttl")
    && FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/TimGM6mb.sf2")
private let filePlugins = "needs lv2-examples, ardour-lv2-plugins and timgm6mb-soundfont (Debian packages)"
private let sampler = "http://lv2plug.in/plugins/eg-sampler"
private let fluidSynth = "urn:ardour:a-fluidsynth"
private let timGM = "/usr/share/sounds/sf2/TimGM6mb.sf2"

@Suite("render --instrument lv2:URI,NAME=PATH gives a plugin the file it reads", .enabled(if: hasFilePlugins, "\(filePlugins)"))
struct LV2FileParameterCLITests {
    /// The interleaved f32 samples of a WAV file Tactus wrote.
    func samples(_ path: String) throws -> [Float] {
        try WAVChunks.samples(atPath: path).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// A 16-bit mono WAV of a 660 Hz sine, 0.5 s long.
    func sine(in dir: URL) throws -> String {
        let path = dir.appendingPathComponent("sine.wav").path
        try writeSineWAV(frequency: 660, frames: 22_050, to: URL(fileURLWithPath: path))
        return path
    }

    @Test("info --plugin lists the files a plugin reads")
    func infoListsFiles() throws {
        let result = try CLI.run(["info", "--plugin", fluidSynth])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("files:       1 (give one with lv2:URI,NAME=PATH)\n  sf2file          SF2 File (urn:ardour:a-fluidsynth:sf2file)\n"),
                "\(result.stdout)")
    }

    @Test("eg-sampler plays the sample given as sample=PATH from the first note, the same at any block size")
    func samplerPlaysTheGivenSample() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = try sine(in: dir)
        var renders: [[Float]] = []
        for blockSize in ["64", "65", "1000"] {
            let out = dir.appendingPathComponent("sampler-\(blockSize).wav").path
            let result = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out, "--instrument", "lv2:\(sampler),sample=\(wav)",
                                      "--block-size", blockSize, "--format", "f32", "--to", "3s", "--tail", "0.5", "--quiet"])
            #expect(result.status == 0, "\(result.stderr)")
            renders.append(try samples(out))
        }
        #expect(renders.allSatisfy { $0 == renders[0] }, "the renders differ between block sizes")
        // The first note sounds the sine, not the plugin's own click: 660 Hz is 132 crossings
        // of zero a tenth of a second.
        let left = stride(from: 0, to: renders[0].count, by: 2).map { renders[0][$0] }
        let first = try #require(left.firstIndex { $0 != 0 }, "the render is silent")
        let window = left[first..<min(left.count, first + 4_410)]
        let crossings = zip(window, window.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        #expect((120...145).contains(crossings), "\(crossings) crossings of zero in the first note's tenth of a second")
        let plain = dir.appendingPathComponent("plain.wav").path
        let result = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", plain, "--instrument", "lv2:\(sampler)",
                                  "--format", "f32", "--to", "3s", "--tail", "0.5", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try samples(plain) != renders[0])
    }

    @Test("ACE Fluid Synth given a SoundFont by sf2file=PATH sounds the song's first note at its frame, as Tactus's sampler does, at any block size")
    func fluidSynthPlaysTheGivenSoundFont() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var renders: [[Float]] = []
        for blockSize in ["64", "65", "1000"] {
            let out = dir.appendingPathComponent("ace-\(blockSize).wav").path
            let result = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", out,
                                      "--instrument", "lv2:\(fluidSynth),sf2file=\(timGM),rev_enable=0,chorus_enable=0,level=-14",
                                      "--block-size", blockSize, "--format", "f32", "--to", "4s", "--tail", "0.5", "--quiet"])
            #expect(result.status == 0, "\(result.stderr)")
            renders.append(try samples(out))
        }
        #expect(renders.allSatisfy { $0 == renders[0] }, "the renders differ between block sizes")
        let own = dir.appendingPathComponent("sampler.wav").path
        let result = try CLI.run(["render", CLI.song("little-waltz.mid"), "-o", own, "--soundfont", timGM, "--no-reverb", "--no-chorus",
                                  "--format", "f32", "--to", "4s", "--tail", "0.5", "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        let reference = try samples(own)
        let firstPlugin = try #require(renders[0].firstIndex { $0 != 0 }, "the plugin's render is silent") / 2
        let firstSampler = try #require(reference.firstIndex { $0 != 0 }) / 2
        // libfluidsynth's first sample of a note is often 0 (its envelope starts there): within
        // 2 frames is the note at its frame. A bank loaded after the first slice would start
        // the song 64 frames late or without its first notes.
        #expect(abs(firstPlugin - firstSampler) <= 2, "the plugin's first sound at frame \(firstPlugin), the sampler's at \(firstSampler)")
    }

    @Test("a file that is missing or not a file is one line and exit 66; a control given a path, or an unknown name, exit 64")
    func refusals() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("x.wav").path
        let song = CLI.song("little-waltz.mid")
        func render(_ instrument: String) throws -> CLI.Output {
            try CLI.run(["render", song, "-o", out, "--instrument", instrument, "--quiet"])
        }
        let missing = try render("lv2:\(fluidSynth),sf2file=\(dir.path)/none.sf2")
        #expect(missing.status == 66)
        #expect(missing.stderr == "\(song): --instrument \(fluidSynth): sf2file=\(dir.path)/none.sf2: No such file or directory\n")
        let folder = try render("lv2:\(fluidSynth),sf2file=\(dir.path)")
        #expect(folder.status == 66)
        #expect(folder.stderr == "\(song): --instrument \(fluidSynth): sf2file=\(dir.path): not a regular file\n")
        let notANumber = try render("lv2:\(fluidSynth),level=\(timGM)")
        #expect(notANumber.status == 64)
        #expect(notANumber.stderr == "\(song): --instrument \(fluidSynth): the value of level must be a number, not '\(timGM)'\n")
        let unknown = try render("lv2:\(fluidSynth),soundfont=\(timGM)")
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasSuffix("has no control 'soundfont'; its controls: level, rev_enable, rev_roomsize, rev_damp, rev_width, rev_level, "
                                         + "chorus_enable, chorus_nr, chorus_speed, chorus_depth, chorus_level, chorus_type, enable; its files: sf2file\n"),
                "\(unknown.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}

@Suite("--save-state FOLDER and lv2:URI,state=FOLDER", .enabled(if: hasFilePlugins, "\(filePlugins)"))
struct LV2StateCLITests {
    @Test("a saved state renders the same in a new process, after its folder moved and the sample it names is gone")
    func aSavedStateRendersTheSame() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let sample = dir.appendingPathComponent("sine.wav")
        try writeSineWAV(frequency: 660, frames: 22_050, to: sample)
        let song = CLI.song("little-waltz.mid")
        let saved = dir.appendingPathComponent("saved").path, moved = dir.appendingPathComponent("moved").path
        let first = dir.appendingPathComponent("first.wav").path, again = dir.appendingPathComponent("again.wav").path
        let made = try CLI.run(["render", song, "-o", first, "--to", "5s", "--quiet", "--format", "f32",
                                "--instrument", "lv2:\(sampler),sample=\(sample.path)", "--save-state", saved])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(FileManager.default.fileExists(atPath: saved + "/state.ttl"))
        try FileManager.default.moveItem(atPath: saved, toPath: moved)
        try FileManager.default.removeItem(at: sample)
        let restored = try CLI.run(["render", song, "-o", again, "--to", "5s", "--quiet", "--format", "f32", "--instrument", "lv2:\(sampler),state=\(moved)"])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: again)) == Data(contentsOf: URL(fileURLWithPath: first)))

        // Control values are part of the state too.
        let piano = "http://drobilla.net/plugins/mda/Piano"
        let pianoState = dir.appendingPathComponent("piano").path
        let decayed = try CLI.run(["render", song, "-o", first, "--to", "5s", "--quiet", "--format", "f32",
                                   "--instrument", "lv2:\(piano),env_decay=0.1", "--save-state", pianoState])
        #expect(decayed.status == 0, "\(decayed.stderr)")
        let back = try CLI.run(["render", song, "-o", again, "--to", "5s", "--quiet", "--format", "f32", "--instrument", "lv2:\(piano),state=\(pianoState)"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: again)) == Data(contentsOf: URL(fileURLWithPath: first)))
    }

    @Test("a missing state, another plugin's state, or --save-state without an LV2 instrument: one line each")
    func refusals() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("little-waltz.mid"), out = dir.appendingPathComponent("x.wav").path
        let saved = dir.appendingPathComponent("saved").path
        #expect(try CLI.run(["render", song, "-o", out, "--to", "1s", "--quiet", "--instrument", "lv2:\(sampler)", "--save-state", saved]).status == 0)
        let missing = try CLI.run(["render", song, "-o", out, "--quiet", "--instrument", "lv2:\(sampler),state=\(dir.path)/none"])
        #expect(missing.status == 66)
        #expect(missing.stderr == "\(song): --instrument \(sampler): state=\(dir.path)/none: no readable state file\n")
        let other = try CLI.run(["render", song, "-o", out, "--quiet", "--instrument", "lv2:\(fluidSynth),state=\(saved)"])
        #expect(other.status == 66)
        #expect(other.stderr == "\(song): --instrument \(fluidSynth): state=\(saved)/state.ttl: a state of \(sampler), not of \(fluidSynth)\n")
        let builtIn = try CLI.run(["render", song, "-o", out, "--quiet", "--instrument", "builtin", "--save-state", saved])
        #expect(builtIn.status == 64)
        #expect(builtIn.stderr.hasSuffix("--save-state saves an LV2 instrument's state: give --instrument lv2:URI\n"), "\(builtIn.stderr)")
    }
}
