import Foundation
import Testing

/// Debian's MuseScore General Lite, a SoundFont 3 bank (package musescore-general-soundfont-small).
private let museScoreLite = "/usr/share/sounds/sf3/MuseScore_General_Lite.sf3"
private let haveMuseScoreLite = FileManager.default.fileExists(atPath: museScoreLite)
/// libvorbisfile's file, hidden from one process by a bind mount in a private mount namespace.
private let vorbisFile = "/usr/lib/x86_64-linux-gnu/libvorbisfile.so.3"
private let canHideLibrary = haveMuseScoreLite && getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
    && FileManager.default.fileExists(atPath: vorbisFile)

@Suite("SoundFont 3 on the command line")
struct SoundFont3CLITests {
    @Test("info --soundfont on MuseScore_General_Lite: version 3.01, every sample compressed, the odd sdta list read with a warning",
          .enabled(if: haveMuseScoreLite, "needs \(museScoreLite) (Debian package musescore-general-soundfont-small)"))
    func info() throws {
        let result = try CLI.run(["info", "--soundfont", museScoreLite])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("version:     3.01, for E-mu 10K2"))
        #expect(lines.contains("compressed:  1254 of 1254 samples Ogg Vorbis (38.0 MB), decoded when a song uses them"))
        #expect(lines.contains("presets:     311 (10689 regions)"))
        #expect(result.stderr.contains("\(museScoreLite): warning: LIST sdta at byte 2838: odd-sized chunk (39794625 bytes) without its pad byte"))
        // Strict reading refuses the repair, naming it.
        let strict = try CLI.run(["info", "--soundfont", museScoreLite, "--strict"])
        #expect(strict.status == 65)
        #expect(strict.stderr.hasPrefix("\(museScoreLite): "))
    }

    @Test("Without libvorbisfile a SoundFont 3 render is one line naming the library and its package, exit 69, nothing written",
          .enabled(if: canHideLibrary, "needs root, unshare (util-linux), libvorbisfile3 and musescore-general-soundfont-small"))
    func missingLibrary() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let output = dir.appendingPathComponent("out.wav").path
        let song = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Songs/little-waltz.mid").path
        let real = try FileManager.default.destinationOfSymbolicLink(atPath: vorbisFile)
        let target = real.hasPrefix("/") ? real : (vorbisFile as NSString).deletingLastPathComponent + "/" + real
        let script = "mount --bind /dev/null '\(target)' && exec '\(CLI.binary.path)' render '\(song)' -o '\(output)' --soundfont '\(museScoreLite)' --quiet"
        let result = try CLI.run(["-m", "sh", "-c", script], executable: URL(fileURLWithPath: "/usr/bin/unshare"))
        #expect(result.status == 69, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(result.stderr.hasPrefix("\(museScoreLite): compressed (SoundFont 3) samples need libvorbisfile.so.3, which cannot be loaded"))
        #expect(result.stderr.contains("install the Debian package libvorbisfile3"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
