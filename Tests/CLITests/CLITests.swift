import Foundation
import Testing
import MIDIFile
import Sequencing

/// Runs the built `tactus` binary on real files and checks output and exit codes.
enum CLI {
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static var binary: URL {
        if let env = ProcessInfo.processInfo.environment["TACTUS_BIN"] { return URL(fileURLWithPath: env) }
        // The test bundle sits next to the products it depends on.
        var candidates: [URL] = []
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var dir = start
            for _ in 0..<3 {
                dir = dir.deletingLastPathComponent()
                candidates.append(dir.appendingPathComponent("tactus"))
            }
        }
        candidates.append(repositoryRoot.appendingPathComponent(".build/debug/tactus"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates.last!
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], executable: URL? = nil, environment: [String: String]? = nil) throws -> Output {
        let process = Process()
        process.executableURL = executable ?? binary
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes while the process runs so a large output cannot block it.
        var outData = Data(), errData = Data()
        let group = DispatchGroup()
        let queue = DispatchQueue(label: "cli-test-read", attributes: .concurrent)
        nonisolated(unsafe) var outBox = Data()
        nonisolated(unsafe) var errBox = Data()
        group.enter()
        queue.async { outBox = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        queue.async { errBox = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.wait()
        process.waitUntilExit()
        outData = outBox
        errData = errBox
        return Output(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    static func song(_ name: String) -> String {
        repositoryRoot.appendingPathComponent("Songs/\(name)").path
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

@Suite("tactus CLI")
struct CLITests {
    @Test("info describes a song")
    func info() throws {
        let result = try CLI.run(["info", CLI.song("morning-steps.mid")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("format:      1 (5 tracks)"))
        #expect(result.stdout.contains("480 ticks per quarter"))
        #expect(result.stdout.contains("tempo map:   9 changes"))
        #expect(result.stdout.contains("4/4 at 1:1:0"))
        #expect(result.stdout.contains("Piano"))
        #expect(result.stdout.contains("10:-") || result.stdout.contains(" 10 "), "drum channel listed")
        // General MIDI names of the programs and drum notes, after the track table.
        #expect(result.stdout.contains("\nprograms:\n  ch 1  program 0 (Acoustic Grand Piano)\n  ch 2  program 33 (Electric Bass (finger))\n  ch 3  program 48 (String Ensemble 1)\n"))
        #expect(result.stdout.contains("\ndrum notes (channel 10):\n  note 36 (Bass Drum 1): "))
        #expect(result.stdout.contains("\n  note 38 (Acoustic Snare): "))
        #expect(result.stdout.contains("\n  note 42 (Closed Hi Hat): "))
        let waltz = try CLI.run(["info", CLI.song("little-waltz.mid")])
        #expect(waltz.stdout.contains("format:      0 (1 track)"))
        #expect(waltz.stdout.contains("3/4"))
        #expect(waltz.stdout.contains("G major"))
    }

    @Test("Exit codes: 66 missing input, 65 bad data, 64 bad usage; messages start with the path")
    func exitCodes() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("nope.mid").path
        let r1 = try CLI.run(["info", missing])
        #expect(r1.status == 66)
        #expect(r1.stderr.hasPrefix(missing + ": "))

        let bad = dir.appendingPathComponent("bad.mid")
        try Data("this is not a midi file".utf8).write(to: bad)
        let r2 = try CLI.run(["dump", bad.path])
        #expect(r2.status == 65)
        #expect(r2.stderr.hasPrefix(bad.path + ": "))
        #expect(r2.stderr.contains("not a Standard MIDI File"))
        #expect(r2.stdout.isEmpty)

        let r3 = try CLI.run(["convert", CLI.song("morning-steps.mid"), dir.appendingPathComponent("x.mid").path, "--format", "7"])
        #expect(r3.status == 64)
        #expect(r3.stderr.contains("--format"))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("x.mid").path))

        let r4 = try CLI.run(["frobnicate"])
        #expect(r4.status == 64)

        let r5 = try CLI.run(["convert", CLI.song("morning-steps.mid"), "/nonexistent-dir/out.mid"])
        #expect(r5.status == 73)
        #expect(r5.stderr.hasPrefix("/nonexistent-dir/out.mid: "))
    }

    @Test("--strict turns warnings into errors")
    func strict() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: CLI.song("click-track.mid"))))
        bytes.removeLast(4)  // cut the last end-of-track and leave the chunk length pointing past EOF
        let damaged = dir.appendingPathComponent("damaged.mid")
        try Data(bytes).write(to: damaged)
        let tolerant = try CLI.run(["info", damaged.path])
        #expect(tolerant.status == 0)
        #expect(tolerant.stderr.contains("warning"))
        let strict = try CLI.run(["info", "--strict", damaged.path])
        #expect(strict.status == 65)
        #expect(strict.stderr.hasPrefix(damaged.path + ": "))
        #expect(strict.stderr.contains("strict"))
    }

    @Test("convert round-trips songs event for event, and changes format and resolution")
    func convert() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["morning-steps.mid", "little-waltz.mid", "seven-eight.mid"] {
            let out = dir.appendingPathComponent(name).path
            let r = try CLI.run(["convert", CLI.song(name), out])
            #expect(r.status == 0, "\(r.stderr)")
            let original = try CLI.run(["dump", "--json", CLI.song(name)])
            let converted = try CLI.run(["dump", "--json", out])
            #expect(original.stdout == converted.stdout)
            #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(contentsOf: URL(fileURLWithPath: CLI.song(name))))
        }
        // Format 0 and a doubled resolution keep every note at the same time in seconds.
        let out0 = dir.appendingPathComponent("zero.mid").path
        #expect(try CLI.run(["convert", CLI.song("morning-steps.mid"), out0, "--format", "0", "--resolution", "960"]).status == 0)
        let original = try SMFReader.read(contentsOf: CLI.song("morning-steps.mid"))
        let zero = try SMFReader.read(contentsOf: out0)
        #expect(zero.format == 0 && zero.tracks.count == 1)
        #expect(zero.timeBase == .ticksPerQuarter(960))
        let a = FileDump.notes(of: original).matched, b = FileDump.notes(of: zero).matched
        #expect(a.count == b.count)
        let mapA = original.makeSequence().makeTempoMap(), mapB = zero.makeSequence().makeTempoMap()
        let secondsA = a.map { mapA.seconds(atTick: $0.start) }.sorted()
        let secondsB = b.map { mapB.seconds(atTick: $0.start) }.sorted()
        #expect(zip(secondsA, secondsB).allSatisfy { abs($0 - $1) < 1e-9 })
        // Channels to tracks: one track per channel.
        let split = dir.appendingPathComponent("split.mid").path
        #expect(try CLI.run(["convert", CLI.song("little-waltz.mid"), split, "--channels-to-tracks"]).status == 0)
        let s = try SMFReader.read(contentsOf: split)
        #expect(s.format == 1)
        #expect(s.tracks.count == 3)
        #expect(FileDump.notes(of: s).matched.count == FileDump.notes(of: try SMFReader.read(contentsOf: CLI.song("little-waltz.mid"))).matched.count)
    }

    @Test("dump prints events, notes and the oracle's JSON")
    func dump() throws {
        let text = try CLI.run(["dump", CLI.song("click-track.mid")])
        #expect(text.status == 0)
        #expect(text.stdout.contains("set_tempo"))
        #expect(text.stdout.contains("1\t480\t1:2:0\t0.500000\tnote_on"))
        // Program changes and channel 10 notes end with their General MIDI names; the
        // key=value fields before them read as before, and the JSON stays mido's document.
        let steps = try CLI.run(["dump", CLI.song("morning-steps.mid")])
        #expect(steps.stdout.contains("\tprogram_change\tch=1 program=0 (Acoustic Grand Piano)\n"))
        #expect(steps.stdout.contains("\tprogram_change\tch=2 program=33 (Electric Bass (finger))\n"))
        let drumLines = steps.stdout.split(separator: "\n").filter { $0.contains("\tnote_on\tch=10 key=36 ") }
        #expect(!drumLines.isEmpty)
        #expect(drumLines.allSatisfy { $0.hasSuffix(" (Bass Drum 1)") && $0.contains(" vel=") })
        #expect(!steps.stdout.contains("ch=1 key=36 vel=100 ("))
        let stepsJSON = try CLI.run(["dump", "--json", CLI.song("morning-steps.mid")])
        #expect(!stepsJSON.stdout.contains("Piano") && !stepsJSON.stdout.contains("Bass Drum"))
        let notes = try CLI.run(["dump", "--notes", CLI.song("click-track.mid")])
        #expect(notes.stdout.split(separator: "\n").count == 33)
        let json = try CLI.run(["dump", "--json", CLI.song("click-track.mid")])
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(doc["note_count"] as? Int == 32)
        #expect(doc["format"] as? Int == 1)
    }

    @Test("The corpus's own checker agrees with tactus dump --json (mido oracle)")
    func corpusChecker() throws {
        let shared = CLI.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")
        guard FileManager.default.fileExists(atPath: shared.appendingPathComponent("tools/check_reader.py").path) else { return }
        let result = try CLI.run(["python3", shared.appendingPathComponent("tools/check_reader.py").path, "\(CLI.binary.path) dump --json --quiet {}"],
                                 executable: URL(fileURLWithPath: "/usr/bin/env"))
        let failures = result.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL") }
        // The two documented differences, and nothing else.
        #expect(failures.count == 2, "\(result.stdout)")
        #expect(failures.allSatisfy { $0.contains("delta_vlq_5_bytes") || $0.contains("zero_tracks_but_one_present") }, "\(failures)")
        #expect(result.stdout.contains(" passed, 2 failed"))
    }
}
