import Foundation
import Sequencing
import Testing

/// `tactus dump --lyrics` against mido's reading of the same files.
@Suite("tactus dump --lyrics")
struct LyricsCLITests {
    static let corpus = CLI.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")

    /// mido's lyric events of each file, as `[track, tick, kind, hex, seconds]` rows. Ticks
    /// and bytes come from mido's tracks; seconds from mido's own merged playback iteration,
    /// whose order (tick, then track) is the order of the rows. Which events count is the rule
    /// `Lyrics` documents: lyric events, or else the text of karaoke words tracks.
    static let midoScript = #"""
    import json, sys, mido
    out = {}
    for path in sys.argv[1:]:
        mid = mido.MidiFile(path)
        def words_track(track):
            for m in track:
                if m.type == 'track_name' and m.name.lower() == 'words': return True
                if m.type == 'text' and m.text[:1] in ('/', '\\'): return True
            return False
        def rows(pick):
            found = []
            for i, track in enumerate(mid.tracks):
                tick = 0
                for n, m in enumerate(track):
                    tick += m.time
                    if pick(i, track, m): found.append([tick, i, n, m])
            found.sort(key=lambda r: (r[0], r[1], r[2]))
            return found
        found = rows(lambda i, t, m: m.type == 'lyrics')
        if not found:
            words = [words_track(t) for t in mid.tracks]
            found = rows(lambda i, t, m: words[i] and m.type == 'text' and not m.text.startswith('@'))
        seconds, now = [], 0.0
        kinds = set(r[3].type for r in found)
        for m in mid:
            now += m.time
            if m.is_meta and m.type in kinds: seconds.append((now, m.type, m.text))
        # Merged messages are copies: match them to the rows in order, by kind and text.
        result, at = [], 0
        for tick, i, n, m in found:
            while seconds[at][1] != m.type or seconds[at][2] != m.text: at += 1
            result.append([i, tick, m.type, m.text.encode('latin-1').hex(), seconds[at][0]])
            at += 1
        out[path] = result
    print(json.dumps(out))
    """#

    static var midoAvailable: Bool {
        guard let result = try? CLI.run(["python3", "-c", "import mido"], executable: URL(fileURLWithPath: "/usr/bin/env")) else { return false }
        return result.status == 0
    }

    /// Corpus files with lyrics or karaoke text, as mido reads them (from the oracle's documents).
    static func lyricFiles() -> [String] {
        let files = corpus.appendingPathComponent("files")
        guard let walker = FileManager.default.enumerator(atPath: files.path) else { return [] }
        var result: [String] = []
        for case let relative as String in walker where relative.hasSuffix(".mid") || relative.lowercased().hasSuffix(".kar") {
            let expected = corpus.appendingPathComponent("expected/\(relative).json")
            guard let text = try? String(contentsOf: expected, encoding: .utf8), !text.contains("\"error\"") else { continue }
            if text.contains("\"lyrics\"") || relative.lowercased().contains("kar") {
                result.append(files.appendingPathComponent(relative).path)
            }
        }
        return result.sorted()
    }

    @Test("The lyrics of every corpus file with lyrics or karaoke words equal mido's, with their ticks and seconds",
          .enabled(if: FileManager.default.fileExists(atPath: corpus.path), "needs ../shared/corpus beside the repository (the shared test material)"),
          .enabled(if: midoAvailable, "needs python3 with mido 1.3.3 (pip install mido==1.3.3, as .ci/run does)"))
    func lyricsEqualMido() throws {
        let files = Self.lyricFiles()
        #expect(files.count >= 5, "\(files)")
        #expect(files.contains { $0.contains("karaoke") })
        let mido = try CLI.run(["python3", "-c", Self.midoScript] + files, executable: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(mido.status == 0, "\(mido.stderr)")
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(mido.stdout.utf8)) as? [String: [[Any]]])
        for file in files {
            let rows = try #require(expected[file])
            #expect(!rows.isEmpty, "\(file): mido finds no lyrics")
            let result = try CLI.run(["dump", "--lyrics", "--json", file])
            #expect(result.status == 0, "\(file): \(result.stderr)")
            let doc = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let lyrics = try #require(doc["lyrics"] as? [[String: Any]])
            #expect(lyrics.count == rows.count, "\(file): \(lyrics.count) lyrics, mido \(rows.count)")
            for (row, lyric) in zip(rows, lyrics) {
                let bytes = Self.bytes(hex: row[3] as! String)
                let text = LyricEvent(tick: 0, track: 0, type: 1, bytes: bytes).text
                #expect(lyric["track"] as? Int == row[0] as? Int, "\(file): \(lyric) vs \(row)")
                #expect(lyric["tick"] as? Int == row[1] as? Int, "\(file): \(lyric) vs \(row)")
                #expect(lyric["kind"] as? String == row[2] as? String, "\(file): \(lyric) vs \(row)")
                #expect(lyric["text"] as? String == text, "\(file): \(lyric) vs \(row)")
                let seconds = try #require(lyric["seconds"] as? Double), midoSeconds = try #require(row[4] as? Double)
                #expect(abs(seconds - midoSeconds) < 1e-6, "\(file): \(lyric) vs \(row)")
            }
        }
    }

    @Test("The text form prints one lyric per line with tick, position and seconds; .kar header fields are left out",
          .enabled(if: FileManager.default.fileExists(atPath: corpus.path), "needs ../shared/corpus beside the repository (the shared test material)"))
    func textForm() throws {
        let file = Self.corpus.appendingPathComponent("files/jazz-soft/midi/test-karaoke-kar.mid").path
        let result = try CLI.run(["dump", "--lyrics", file])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first == "# track tick bar:beat:tick seconds kind text")
        #expect(lines.count == 1 + 26)
        #expect(lines[1] == "1\t0\t1:1:0\t0.000000\ttext\t\"\\\\Ma\"")
        #expect(lines[2] == "1\t75\t1:1:75\t0.500000\ttext\t\"ry \"")
        #expect(!result.stdout.contains("@T"))
        #expect(try CLI.run(["dump", "--lyrics", "--notes", file]).status == 64)
    }

    static func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }
}
