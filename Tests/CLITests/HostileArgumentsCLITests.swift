import Foundation
import Testing

/// Hostile arguments (issue 24): outputs that are inputs, extensions Tactus does not write,
/// negative option values and numbers too large for the arithmetic behind them.
@Suite("tactus: hostile arguments")
struct HostileArgumentsCLITests {
    static let builtin = ["--instrument", "builtin", "--quiet", "--tail", "0"]

    /// Checks that `r` is one line on standard error, starting with `prefix`, with `status`.
    static func expectRefused(_ r: CLI.Output, status: Int32 = 64, prefix: String, mentioning words: [String] = [],
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == status, "\(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr.hasPrefix(prefix), "\(r.stderr)", sourceLocation: sourceLocation)
        #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)", sourceLocation: sourceLocation)
        for word in words { #expect(r.stderr.contains(word), "\(r.stderr)", sourceLocation: sourceLocation) }
    }

    @Test("An output that is an input (the same path, a hard link, a symbolic link) is refused and the input kept")
    func outputIsInput() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = dir.appendingPathComponent("song.mid")
        try FileManager.default.copyItem(atPath: CLI.song("click-track.mid"), toPath: song.path)
        let original = try Data(contentsOf: song)
        let hard = dir.appendingPathComponent("hard.mid"), soft = dir.appendingPathComponent("soft.mid")
        try FileManager.default.linkItem(atPath: song.path, toPath: hard.path)
        try FileManager.default.createSymbolicLink(atPath: soft.path, withDestinationPath: song.path)
        let json = dir.appendingPathComponent("song.json")
        try Data(try CLI.run(["dump", "--json", song.path]).stdout.utf8).write(to: json)
        let jsonBytes = try Data(contentsOf: json)
        let journal = dir.appendingPathComponent("take.journal")
        try Data("tactus-journal 1\ndivision 480\n\n".utf8).write(to: journal)
        for output in [song.path, hard.path, soft.path] {
            Self.expectRefused(try CLI.run(["render", song.path, "-o", output] + Self.builtin), prefix: output + ": ", mentioning: [song.path])
            Self.expectRefused(try CLI.run(["convert", song.path, output]), prefix: output + ": ", mentioning: [song.path])
            Self.expectRefused(try CLI.run(["edit", song.path, "-o", output, "--velocity", "90"]), prefix: output + ": ", mentioning: [song.path])
            Self.expectRefused(try CLI.run(["record", "--recover", journal.path, "-o", output, "--backing", song.path]), prefix: output + ": ")
            #expect(try Data(contentsOf: song) == original, "\(output)")
        }
        Self.expectRefused(try CLI.run(["build", json.path, "-o", json.path]), prefix: json.path + ": ")
        #expect(try Data(contentsOf: json) == jsonBytes)
        // A batch's manifest naming one of its inputs.
        let out = dir.appendingPathComponent("out").path
        Self.expectRefused(try CLI.run(["render", song.path, "-o", out + "/", "--manifest", soft.path] + Self.builtin),
                           prefix: soft.path + ": ", mentioning: ["manifest"])
        #expect(try Data(contentsOf: song) == original)
    }

    @Test("An output extension Tactus does not write is refused with the supported list; devices and bare names still get WAV")
    func unsupportedExtensions() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("click-track.mid")
        let mp3 = dir.appendingPathComponent("x.mp3").path
        Self.expectRefused(try CLI.run(["render", song, "-o", mp3] + Self.builtin), prefix: mp3 + ": ", mentioning: [".wav", ".flac", ".opus"])
        #expect(!FileManager.default.fileExists(atPath: mp3))
        // --format names the container, so the name is the user's choice.
        let named = dir.appendingPathComponent("x.audio").path
        #expect(try CLI.run(["render", song, "-o", named, "--format", "wav", "--to", "2:1"] + Self.builtin).status == 0)
        let bare = dir.appendingPathComponent("bare").path
        #expect(try CLI.run(["render", song, "-o", bare, "--to", "2:1"] + Self.builtin).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: bare)).starts(with: Data("RIFF".utf8)))
        // The commands that write MIDI files refuse audio names (edit renders .wav).
        let wav = dir.appendingPathComponent("x.wav").path, flac = dir.appendingPathComponent("x.flac").path
        Self.expectRefused(try CLI.run(["convert", song, wav]), prefix: wav + ": ", mentioning: ["Standard MIDI File"])
        Self.expectRefused(try CLI.run(["edit", song, "-o", flac, "--velocity", "90"]), prefix: flac + ": ")
        let json = dir.appendingPathComponent("song.json")
        try Data(try CLI.run(["dump", "--json", song]).stdout.utf8).write(to: json)
        Self.expectRefused(try CLI.run(["build", json.path, "-o", wav]), prefix: wav + ": ")
        #expect(!FileManager.default.fileExists(atPath: wav) && !FileManager.default.fileExists(atPath: flac))
    }

    @Test("Negative values follow their option as a separate word as well as after =")
    func negativeValues() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("click-track.mid")
        for (option, value) in [("--gain", "-6"), ("--transpose", "-3")] {
            var outputs: [Data] = []
            for form in [[option, value], ["\(option)=\(value)"]] {
                let out = dir.appendingPathComponent("\(option)-\(form.count).wav").path
                let r = try CLI.run(["render", song, "-o", out, "--to", "2:1"] + Self.builtin + form)
                #expect(r.status == 0, "\(form): \(r.stderr)")
                outputs.append((try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data())
            }
            #expect(outputs[0] == outputs[1] && !outputs[0].isEmpty, "\(option) \(value) and \(option)=\(value) render the same")
        }
        // edit's own parser takes a negative transposition too.
        let edited = dir.appendingPathComponent("down.mid").path
        #expect(try CLI.run(["edit", song, "-o", edited, "--transpose", "-3"]).status == 0)
        // A negative value out of range names the range, not a missing value, in either form;
        // play checks both options before it opens a device, so this runs without one.
        let loud = dir.appendingPathComponent("loud.wav").path
        for form in [["--gain", "-60"], ["--gain=-60"]] {
            Self.expectRefused(try CLI.run(["render", song, "-o", loud] + Self.builtin + form), prefix: loud + ": ", mentioning: ["-24...24"])
            Self.expectRefused(try CLI.run(["play", song] + form), prefix: song + ": ", mentioning: ["-24...24"])
        }
        for form in [["--transpose", "-300"], ["--transpose=-300"]] {
            Self.expectRefused(try CLI.run(["render", song, "-o", loud] + Self.builtin + form), prefix: song + ": ", mentioning: ["-127...127"])
            Self.expectRefused(try CLI.run(["play", song] + form), prefix: song + ": ", mentioning: ["-127...127"])
        }
    }

    @Test("Numbers too large for the arithmetic are one-line usage errors naming the range, not crashes")
    func hugeNumbers() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("click-track.mid")
        let folder = dir.appendingPathComponent("batch").path + "/"
        for option in ["--timeout", "--max-duration"] {
            Self.expectRefused(try CLI.run(["render", song, "-o", folder, option, "inf"] + Self.builtin), prefix: folder + ": ", mentioning: [option, "86400"])
        }
        let wav = dir.appendingPathComponent("loop.wav").path
        Self.expectRefused(try CLI.run(["render", song, "-o", wav, "--loop", "10000000000"] + Self.builtin), prefix: "", mentioning: ["--loop", "1...10000"])
        let mid = dir.appendingPathComponent("moved.mid").path
        for ticks in ["9223372036854775807", "-9223372036854775808", "9e18", "2147483648"] {
            Self.expectRefused(try CLI.run(["edit", song, "-o", mid, "--move", ticks]), prefix: "tactus edit: --move", mentioning: [ticks])
        }
        #expect(!FileManager.default.fileExists(atPath: mid))
        // Within the option's range but past the writer's limit once added to the song's ticks:
        // refused as content (65), not padded with filler events.
        let far = try CLI.run(["edit", song, "-o", mid, "--move", "2147483647"])
        Self.expectRefused(far, status: 65, prefix: mid + ": ", mentioning: ["2147483647"])
        #expect(!FileManager.default.fileExists(atPath: mid))
    }

    @Test("A JACK server name libjack cannot hold is refused before libjack sees it, from the option or the environment")
    func longJACKServerName() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("click-track.mid")
        // About 270 bytes overran libjack's stack; 65 is the first length refused.
        for name in [String(repeating: "x", count: 300), String(repeating: "é", count: 33), "a/b"] {
            let reason = name == "a/b" ? "slash" : "\(name.utf8.count) bytes long"
            Self.expectRefused(try CLI.run(["play", song, "--driver", "jack", "--jack-server", name]), prefix: song + ": --jack-server: ", mentioning: [reason])
            let take = dir.appendingPathComponent("take.mid").path
            Self.expectRefused(try CLI.run(["record", "-o", take, "--driver", "jack", "--jack-server", name]), prefix: take + ": --jack-server: ", mentioning: [reason])
            #expect(!FileManager.default.fileExists(atPath: take))
        }
        var environment = ProcessInfo.processInfo.environment
        environment["JACK_DEFAULT_SERVER"] = String(repeating: "y", count: 300)
        let r = try CLI.run(["play", song, "--driver", "jack", "--quiet"], environment: environment)
        #expect(r.status == 69, "\(r.status): \(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.contains("300 bytes long"), "\(r.stderr)")
    }

    @Test("A FIFO named as an instrument or bank is refused at once, named as what it is, instead of waiting for a writer")
    func fifoInstruments() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("click-track.mid")
        let out = dir.appendingPathComponent("out.wav").path
        for (name, option, message) in [("i.sfz", "--instrument", "i.sfz: not a regular file"),
                                        ("p.json", "--instrument", "p.json: not a regular file"),
                                        ("b.sf2", "--soundfont", "b.sf2 (from --soundfont): is a FIFO, not a SoundFont file")] {
            let fifo = dir.appendingPathComponent(name).path
            #expect(mkfifo(fifo, 0o600) == 0)
            // Should the open block again, a writer arrives later and ends the wait: the test
            // then fails on the message instead of hanging.
            let release = Thread {
                Thread.sleep(forTimeInterval: 10)
                let fd = open(fifo, O_WRONLY | O_NONBLOCK)
                if fd >= 0 { close(fd) }
            }
            release.start()
            let r = try CLI.run(["render", song, "-o", out, option, fifo, "--quiet"])
            Self.expectRefused(r, status: 66, prefix: dir.path + "/" + message)
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }
}
