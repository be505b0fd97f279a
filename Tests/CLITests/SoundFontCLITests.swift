import Foundation
import Testing

@Suite("tactus info --soundfont", .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/TimGM6mb.sf2"), "needs /usr/share/sounds/sf2/TimGM6mb.sf2 (Debian package timgm6mb-soundfont)"))
struct SoundFontCLITests {
    static let timGM6mb = "/usr/share/sounds/sf2/TimGM6mb.sf2"

    func requireBank() throws -> String {
        try #require(FileManager.default.fileExists(atPath: Self.timGM6mb),
                     "\(Self.timGM6mb) is missing: install the Debian package timgm6mb-soundfont")
        return Self.timGM6mb
    }

    @Test("A good bank: name, version, sample data and every preset as bank:program name (N regions)")
    func goodBank() throws {
        let bank = try requireBank()
        let result = try CLI.run(["info", "--soundfont", bank])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("name:        TimGM6mb1.sf2"))
        #expect(lines.contains("version:     2.01, for EMU8000"))
        #expect(lines.contains("samples:     520 (5.5 MB of sample data, 16-bit)"))
        #expect(lines.contains("presets:     136 (2063 regions)"))
        #expect(lines.contains("  0:0     Piano 1 (33 regions)"))
        #expect(lines.filter { $0.hasSuffix(" regions)") || $0.hasSuffix(" region)") }.count == 137)
        #expect(lines.contains { $0.hasPrefix("  128:0 ") }, "the drum kit is listed")
    }

    @Test("A missing bank exits 66, a corrupt one 65, each message starting with the path")
    func badBanks() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("nope.sf2").path
        let r1 = try CLI.run(["info", "--soundfont", missing])
        #expect(r1.status == 66)
        #expect(r1.stderr == "\(missing): cannot open: no such file\n")

        let bytes = try Data(contentsOf: URL(fileURLWithPath: try requireBank()))
        let cut = dir.appendingPathComponent("cut.sf2")
        try bytes.prefix(5_800_000).write(to: cut)
        let r2 = try CLI.run(["info", "--soundfont", cut.path])
        #expect(r2.status == 65)
        #expect(r2.stderr == "\(cut.path): pdta/igen at byte 5788886: chunk size 11106 is not a multiple of the 4-byte record size\n")
        #expect(r2.stdout.isEmpty)

        let text = dir.appendingPathComponent("text.sf2")
        try Data("not a bank at all".utf8).write(to: text)
        let r3 = try CLI.run(["info", "--soundfont", text.path])
        #expect(r3.status == 65)
        #expect(r3.stderr.hasPrefix("\(text.path): byte 0: not a SoundFont 2 or DLS bank"))

        let r4 = try CLI.run(["info", "--soundfont", dir.path])
        #expect(r4.status == 66)
        #expect(r4.stderr.contains("is a directory"))
    }

    @Test("Warnings go to standard error; --strict refuses the bank, --quiet hides them")
    func warnings() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: try requireBank()))
        bytes.append(contentsOf: Array("trailing garbage".utf8))
        let damaged = dir.appendingPathComponent("trailing.sf2")
        try bytes.write(to: damaged)
        let tolerant = try CLI.run(["info", "--soundfont", damaged.path])
        #expect(tolerant.status == 0)
        #expect(tolerant.stderr == "\(damaged.path): warning: byte 5969788: 16 bytes after the RIFF chunk ignored\n")
        let strict = try CLI.run(["info", "--strict", "--soundfont", damaged.path])
        #expect(strict.status == 65)
        #expect(strict.stderr.hasPrefix("\(damaged.path): "))
        #expect(strict.stderr.contains("(strict mode)"))
        let quiet = try CLI.run(["info", "--quiet", "--soundfont", damaged.path])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty)
    }

    @Test("info needs a MIDI file or --soundfont, not both")
    func usage() throws {
        #expect(try CLI.run(["info"]).status == 64)
        let both = try CLI.run(["info", CLI.song("little-waltz.mid"), "--soundfont", "x.sf2"])
        #expect(both.status == 64)
        #expect(both.stderr.contains("not both"))
        let plugins = try CLI.run(["info", "--plugins", "--plugin", "urn:x"])
        #expect(plugins.status == 64 && plugins.stderr.contains("give one of"), "\(plugins.stderr)")
    }
}
