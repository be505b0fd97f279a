import Foundation
import Testing
@testable import MIDIFile
@testable import Sequencing

/// Conformance against the mido oracle's documents in `../shared/corpus` (skipped when the
/// shared folder is absent; FixtureTests cover the same cases without it).
@Suite("Corpus conformance", .enabled(if: SharedMaterial.root != nil, "needs ../shared/corpus beside the repository (the shared test material)"))
struct CorpusTests {
    /// Where Tactus deliberately differs from mido, each for a reason listed in the corpus
    /// README's mido quirks or the malformed MANIFEST.
    static let knownDifferences: [String: String] = [
        // MANIFEST: "reject" (the SMF spec caps VLQs at 4 bytes); mido quirk 4 reads 2**28.
        "malformed/delta_vlq_5_bytes.mid": "refused",
        // mido quirk 1: mido ignores MTrk chunks beyond the header count; Tactus reads a
        // complete extra chunk rather than drop its events (MANIFEST: either).
        "malformed/zero_tracks_but_one_present.mid": "extra track read",
    ]

    static func load(_ url: URL) -> Result<StandardMIDIFile, Error> {
        Result { try SMFReader.read(contentsOf: url.path) }
    }

    @Test("Dump equals the oracle for every file mido reads")
    func conformance() throws {
        let files = SharedMaterial.corpusFiles()
        try #require(!files.isEmpty || SharedMaterial.root == nil)
        var compared = 0
        for (relative, url) in files {
            guard let expected = SharedMaterial.expectedDocument(relative) else { continue }
            let loaded = Self.load(url)
            if expected["error"] != nil { continue }  // judged by the MANIFEST test below
            if let why = Self.knownDifferences[relative] {
                if relative.hasSuffix("delta_vlq_5_bytes.mid") {
                    #expect(throws: SMFError.self, "\(relative): \(why)") { try loaded.get() }
                } else {
                    let file = try loaded.get()
                    #expect(file.tracks.count == 1, "\(relative): \(why)")
                }
                continue
            }
            guard case .success(let file) = loaded else {
                Issue.record("\(relative): refused a file mido reads: \(loaded)")
                continue
            }
            let actual = OracleCompare.parse(FileDump.document(of: file))
            let differences = OracleCompare.differences(expected: expected, actual: actual)
            #expect(differences.isEmpty, "\(relative): \(differences.joined(separator: "; "))")
            if let expectedNotes = SharedMaterial.expectedDocument(relative, notes: true), expectedNotes["error"] == nil {
                let notes = OracleCompare.parse(FileDump.notesDocument(of: file))
                let noteDiffs = OracleCompare.differences(expected: expectedNotes, actual: notes)
                #expect(noteDiffs.isEmpty, "\(relative) --notes: \(noteDiffs.joined(separator: "; "))")
            }
            compared += 1
        }
        if SharedMaterial.root != nil { #expect(compared >= 100) }
    }

    @Test("Malformed files behave as the MANIFEST says")
    func manifest() throws {
        guard let root = SharedMaterial.root else { return }
        let data = try Data(contentsOf: root.appendingPathComponent("corpus/files/malformed/MANIFEST.json"))
        let entries = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(entries.count >= 20)
        for entry in entries {
            let name = entry["file"] as! String
            let expected = entry["expected"] as! String
            let url = root.appendingPathComponent("corpus/files/malformed/\(name)")
            let loaded = Self.load(url)
            switch (expected, loaded) {
            case ("reject", .success):
                Issue.record("\(name): MANIFEST says reject, Tactus loaded it")
            case ("tolerate", .failure(let error)):
                Issue.record("\(name): MANIFEST says tolerate, Tactus refused: \(error)")
            case (_, .failure(let error)):
                // A refusal must name where and why.
                let text = "\(error)"
                #expect(text.contains("byte"), "\(name): \(text)")
            case (_, .success(let file)):
                guard let view = entry["tolerant_view"] as? [String: Any] else { continue }
                let pairing = FileDump.notes(of: file)
                if let notes = view["notes"] as? Int { #expect(pairing.matched.count == notes, "\(name) notes") }
                if let tracks = view["tracks"] as? Int { #expect(file.tracks.count == tracks, "\(name) tracks") }
                if let open = view["unterminated_notes"] as? Int { #expect(pairing.unterminated.count == open, "\(name) unterminated") }
                if let end = view["end_tick"] as? Int { #expect(file.tracks.map(\.length).max() == Int64(end), "\(name) end tick") }
                if let eot = view["end_of_track"] as? Bool { #expect((file.tracks.first?.explicitLength != nil) == eot, "\(name) end of track") }
                if let n0 = view["notes_track0"] as? Int {
                    let first = FileDump.notes(of: StandardMIDIFile(format: 1, divisionWord: file.divisionWord, tracks: [file.tracks[0]]))
                    #expect(first.matched.count == n0, "\(name) notes in track 0")
                }
                if expected == "either" || name != "zero_tracks.mid" {
                    // Whatever was tolerated must have been said.
                    if expected == "either" { #expect(!file.warnings.isEmpty, "\(name): tolerated without a warning") }
                }
            }
        }
    }

    @Test("Round trip: convert then dump equals the original dump for every file Tactus reads")
    func roundTrip() throws {
        for (relative, url) in SharedMaterial.corpusFiles() {
            guard case .success(let original) = Self.load(url) else { continue }
            let written = SMFWriter.bytes(of: original.makeSequence())
            let reread = try SMFReader.read(written)
            if original.warnings.isEmpty {
                #expect(reread.warnings.isEmpty, "\(relative): the written file has warnings \(reread.warnings)")
            }
            var before = OracleCompare.parse(FileDump.document(of: original))
            let after = OracleCompare.parse(FileDump.document(of: reread))
            // The writer ends every track with an end-of-track event (the SMF spec requires
            // one; libsmf aborts without), the only addition it makes; and it writes a format
            // word it knows. Normalize the original for those two before comparing.
            before = Self.addingEndOfTrack(before, tracks: original.tracks)
            if original.format > 2 { before["format"] = 1 }
            before["ntracks_header"] = original.tracks.count
            let differences = OracleCompare.differences(expected: before, actual: after)
            #expect(differences.isEmpty, "\(relative): \(differences.joined(separator: "; "))")
        }
    }

    static func addingEndOfTrack(_ doc: [String: Any], tracks: [MusicTrack]) -> [String: Any] {
        var doc = doc
        guard var rows = doc["tracks"] as? [[String: Any]] else { return doc }
        var total = doc["event_count"] as? Int ?? 0
        for (i, track) in tracks.enumerated() where track.explicitLength == nil {
            var events = rows[i]["events"] as? [[Any]] ?? []
            let end = rows[i]["end_tick"] as? Int ?? 0
            events.append([end, "end_of_track", "ff2f"])
            rows[i]["events"] = events
            rows[i]["event_count"] = events.count
            total += 1
        }
        doc["tracks"] = rows
        doc["event_count"] = total
        return doc
    }

    @Test("Every corpus file is read or refused without a crash, hang or out-of-bounds read")
    func noCrash() {
        for (relative, url) in SharedMaterial.corpusFiles() {
            switch Self.load(url) {
            case .success(let file):
                _ = FileDump.document(of: file)
                _ = SMFWriter.bytes(of: file.makeSequence())
            case .failure(let error):
                #expect(error is SMFError, "\(relative): \(error)")
            }
        }
    }
}
