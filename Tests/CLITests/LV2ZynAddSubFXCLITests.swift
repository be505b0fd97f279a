import AudioTestSupport
import Foundation
import Testing

private let hasZynAddSubFX = FileManager.default.fileExists(atPath: "/usr/lib/lv2/ZynAddSubFX.lv2/manifest.ttl")
    && FileManager.default.fileExists(atPath: "/usr/bin/lv2ls")
private let zyn = "http://zynaddsubfx.sourceforge.net"
private let arpeggio = "Arpeggios: 0001-Arpeggio1.xiz"

/// ZynAddSubFX hosted as a plugin has no bank: a program change makes its background thread
/// load an empty part, the default sound, some milliseconds later (when depends on that
/// thread, so renders with one differ run to run). `little-waltz.mid` selects program 0 on
/// its first channel at tick 0; with `programs=ignore` the plugin never sees it.
@Suite("ZynAddSubFX: presets and saved states play, and renders repeat, when the song's program changes are kept from it",
       .enabled(if: hasZynAddSubFX, "needs zynaddsubfx-lv2 and lilv-utils (Debian packages)"))
struct LV2ZynAddSubFXCLITests {
    @Test("a preset plays, its saved state renders the same bytes in a new process after the folder moved, at block sizes 64 and 65")
    func aSavedPatchRendersTheSame() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("little-waltz.mid")
        func render(_ name: String, _ instrument: String, _ extra: [String] = []) throws -> Data {
            let out = dir.appendingPathComponent("\(name).wav").path
            let result = try CLI.run(["render", song, "-o", out, "--to", "6s", "--quiet", "--format", "f32", "--instrument", instrument] + extra)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        let saved = dir.appendingPathComponent("saved").path, moved = dir.appendingPathComponent("moved").path
        let plain = try render("plain", "lv2:\(zyn),programs=ignore")
        let preset = try render("preset", "lv2:\(zyn),preset=\(arpeggio),programs=ignore", ["--save-state", saved])
        #expect(preset != plain, "the preset's patch plays, not the default one")
        #expect(try render("plain-again", "lv2:\(zyn),programs=ignore") == plain, "a render repeats")
        try FileManager.default.moveItem(atPath: saved, toPath: moved)
        #expect(try render("restored", "lv2:\(zyn),state=\(moved),programs=ignore") == preset)
        #expect(try render("restored-65", "lv2:\(zyn),state=\(moved),programs=ignore", ["--block-size", "65"]) == preset)
    }
}
