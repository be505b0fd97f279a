import Foundation
import Testing
import MIDIFile
import Sequencing

/// `tactus edit` and `tactus build` on real files, judged by the mido oracle.
@Suite("tactus edit and build")
struct EditCLITests {
    static var oracle: URL? {
        let url = CLI.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus/oracle.py")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    /// The oracle's notes for a file: [track, channel, pitch, start, end, velocity].
    static func oracleNotes(_ path: String) throws -> [[Int]] {
        let oracle = try #require(Self.oracle)
        let result = try CLI.run(["python3", oracle.path, "--notes", path], executable: URL(fileURLWithPath: "/usr/bin/env"))
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "oracle: \(result.stderr)")
        let rows = try #require(doc["notes"] as? [[Any]])
        return rows.map { $0.map { ($0 as? Int) ?? -1 } }
    }

    static func oracleDocument(_ path: String) throws -> [String: Any] {
        let oracle = try #require(Self.oracle)
        let result = try CLI.run(["python3", oracle.path, path], executable: URL(fileURLWithPath: "/usr/bin/env"))
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    static var oracleAvailable: Bool {
        guard oracle != nil, let r = try? CLI.run(["python3", "-c", "import mido"], executable: URL(fileURLWithPath: "/usr/bin/env")) else { return false }
        return r.status == 0
    }

    @Test("Transpose and velocity on one track, read back by the oracle")
    func transposeVelocity() throws {
        guard Self.oracleAvailable else { return }
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("morning-steps.mid")
        let out = dir.appendingPathComponent("t.mid").path
        let r = try CLI.run(["edit", song, "-o", out, "--tracks", "1", "--transpose", "-12", "--velocity", "77"])
        #expect(r.status == 0, "\(r.stderr)")
        let before = try Self.oracleNotes(song)
        let after = try Self.oracleNotes(out)
        // Expected, computed here: track 1's notes an octave down at velocity 77; the rest as is.
        let expected = before.map { n in n[0] == 1 ? [n[0], n[1], n[2] - 12, n[3], n[4], 77] : n }
        #expect(after == expected)
    }

    @Test("Cut bars 9-13 and keep-seconds tempo, read back by the oracle")
    func cutAndTempo() throws {
        guard Self.oracleAvailable else { return }
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("morning-steps.mid")
        let cutFile = dir.appendingPathComponent("cut.mid").path
        #expect(try CLI.run(["edit", song, "-o", cutFile, "--cut", "9:1-13:1"]).status == 0)
        // 4/4 at 480 ppq: bars 9-12 are ticks 15360..<23040.
        let (a, b): (Int, Int) = (15360, 23040)
        let expectedCut = try Self.oracleNotes(song).compactMap { n -> [Int]? in
            if n[3] >= a && n[3] < b { return nil }
            return n[3] >= b ? [n[0], n[1], n[2], n[3] - (b - a), n[4] - (b - a), n[5]] : n
        }
        let cutNotes = try Self.oracleNotes(cutFile)
        #expect(cutNotes.sorted { $0.lexicographicallyPrecedes($1) } == expectedCut.sorted { $0.lexicographicallyPrecedes($1) })

        let tempoFile = dir.appendingPathComponent("tempo.mid").path
        #expect(try CLI.run(["edit", song, "-o", tempoFile, "--tempo", "96", "--keep", "seconds"]).status == 0)
        let original = try Self.oracleDocument(song), edited = try Self.oracleDocument(tempoFile)
        #expect((edited["tempo_map"] as? [[Int]])?.map { $0[1] } == [625_000])
        // Same length in seconds, within one tick at 96 BPM.
        let l0 = (original["length_seconds"] as? Double) ?? 0, l1 = (edited["length_seconds"] as? Double) ?? 0
        #expect(abs(l0 - l1) < 60.0 / 96.0 / 480.0 + 1e-9)
    }

    @Test("Bad input: one line naming the option, exit 64, no output file")
    func badInput() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("morning-steps.mid")
        let out = dir.appendingPathComponent("never.mid")
        let cases: [([String], String)] = [
            (["--cut", "13:1-9:1"], "--cut"),
            (["--delete", "1:1-5:1,3:1-7:1"], "--delete"),
            (["--tracks", "9", "--transpose", "1"], "--tracks"),
            (["--quantize", "1/7"], "--quantize"),
            (["--cut", "nine-ten"], "--cut"),
            (["--paste", "3:x"], "--paste"),
            (["--frobnicate"], "--frobnicate"),
            (["--keep", "minutes", "--tempo", "90"], "--keep"),
        ]
        for (arguments, option) in cases {
            let r = try CLI.run(["edit", song, "-o", out.path] + arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(option), "\(arguments): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out.path))
        }
    }

    @Test("--dry-run reports events touched and the new length, writes nothing")
    func dryRun() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("never.mid")
        let r = try CLI.run(["edit", CLI.song("morning-steps.mid"), "-o", out.path, "--dry-run", "--tracks", "4", "--velocity", "50", "--all", "--delete", "1:1-2:1"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("--velocity 50: track 4: 214"))
        #expect(r.stdout.contains("length: 32544 -> 30624 ticks"))
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test("An edit written to .wav is rendered: tempo doubled, the WAV is half as long")
    func wavExport() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let normal = dir.appendingPathComponent("normal.wav").path, fast = dir.appendingPathComponent("fast.wav").path
        #expect(try CLI.run(["render", "--instrument", "builtin", CLI.song("click-track.mid"), "-o", normal, "--tail", "0"]).status == 0)
        let r = try CLI.run(["edit", CLI.song("click-track.mid"), "-o", fast, "--scale-tempo", "2"])
        #expect(r.status == 0, "\(r.stderr)")
        let a = try Data(contentsOf: URL(fileURLWithPath: normal)), b = try Data(contentsOf: URL(fileURLWithPath: fast))
        #expect(b.prefix(4) == Data("RIFF".utf8))
        // 44-byte-or-so header aside, the sample data halves (plus the default 2 s tail).
        let frames = { (d: Data) in (d.count - 44) / 4 }
        #expect(abs(frames(b) - (frames(a) / 2 + 88_200)) < 2_000, "\(frames(a)) vs \(frames(b))")
    }

    @Test("build of dump --json gives back an equivalent file for every corpus file Tactus reads")
    func buildRoundTrip() throws {
        for (relative, url) in corpusAndSongs() {
            guard let original = try? SMFReader.read(contentsOf: url.path) else { continue }
            let document = FileDump.document(of: original, fullBytes: true)
            let rebuilt = try JSONImport.file(from: Data(document.canonicalText().utf8))
            // A header whose track count disagrees with the chunks is damage the build repairs:
            // the new header counts the tracks the document lists.
            var expected = original
            expected.declaredTrackCount = original.tracks.count
            #expect(FileDump.document(of: rebuilt, fullBytes: true) == FileDump.document(of: expected, fullBytes: true), "\(relative)")
        }
    }

    @Test("build through the CLI, and its errors")
    func buildCLI() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = dir.appendingPathComponent("song.json")
        let dump = try CLI.run(["dump", "--json", "--full", CLI.song("seven-eight.mid")])
        try Data(dump.stdout.utf8).write(to: json)
        let out = dir.appendingPathComponent("song.mid").path
        #expect(try CLI.run(["build", json.path, "-o", out]).status == 0)
        #expect(try CLI.run(["dump", "--json", out]).stdout == dump.stdout)
        let bad = dir.appendingPathComponent("bad.json")
        try Data(#"{"format": 1, "division": {"raw": 96}, "tracks": [{"events": [[0, "note_on", "90zz64"]]}]}"#.utf8).write(to: bad)
        let r = try CLI.run(["build", bad.path, "-o", dir.appendingPathComponent("x.mid").path])
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix(bad.path + ": $.tracks[0].events[0][2]"))
    }

    func corpusAndSongs() -> [(String, URL)] {
        var files: [(String, URL)] = []
        let corpus = CLI.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus/files")
        if let walker = FileManager.default.enumerator(at: corpus, includingPropertiesForKeys: nil) {
            for case let url as URL in walker where ["mid", "rmi", "midi2", "syx"].contains(url.pathExtension) {
                files.append((url.lastPathComponent, url))
            }
        }
        for name in ["morning-steps.mid", "little-waltz.mid", "seven-eight.mid", "click-track.mid"] {
            files.append((name, URL(fileURLWithPath: CLI.song(name))))
        }
        return files
    }
}
