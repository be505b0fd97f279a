import Foundation
import Testing
import SFZ

/// Finding a sample whose name differs in case lists the folder with readdir(3).
@Suite struct SFZSampleLookupTests {
    /// readdir's entry is only as long as its name: the last one in a full buffer ends close to
    /// the end of the buffer, and copying the whole 256-byte d_name read past it (a
    /// heap-buffer-overflow under AddressSanitizer, Tests/sanitizers.sh; found by
    /// Fuzz/run.sh fuzz-sfz-play with `sample=../mono_sample.wav` looked up in /tmp).
    @Test func aMissingSampleInAFolderOfLongNamesIsNamedWithoutReadingPastTheEntries() throws {
        let dir = NSTemporaryDirectory() + "tactus-sfz-lookup-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // More than one 32 KiB readdir buffer of entries, each about 230 bytes long.
        for i in 0..<400 {
            let name = String(format: "%03d-", i) + String(repeating: "x", count: 200) + ".wav"
            #expect(FileManager.default.createFile(atPath: dir + "/" + name, contents: Data()))
        }
        var instrument = try SFZInstrument.load(contentsOf: dir + "/main.sfz",
                                                from: SFZMemoryFiles([dir + "/main.sfz": Array("<region> sample=Missing.WAV".utf8)]))
        #expect {
            try instrument.locateSamples()
        } throws: { error in
            (error as? SFZError)?.kind == .missingSample && (error as? SFZError)?.path == dir + "/Missing.WAV"
        }
        var found = try SFZInstrument.load(contentsOf: dir + "/main.sfz",
                                           from: SFZMemoryFiles([dir + "/main.sfz": Array("<region> sample=399-\(String(repeating: "X", count: 200)).WAV".utf8)]))
        try found.locateSamples()
        #expect(found.regions.map(\.sample) == [.file(dir + "/399-" + String(repeating: "x", count: 200) + ".wav")])
    }
}
