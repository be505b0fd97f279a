import Foundation
import Testing

/// `tactus play` on a terminal shows the karaoke line being sung; part of the one serialized
/// JACK suite.
extension JACKClientTests {
    static let karaoke = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpus/files/jazz-soft/midi/test-karaoke-kar.mid").path
    static let script = "/usr/bin/script"

    @Test("tactus play shows each karaoke line in its status line as it is sung (a terminal recorded by script)",
          .enabled(if: FileManager.default.isExecutableFile(atPath: script), "needs script (Debian package bsdutils)"),
          .enabled(if: FileManager.default.fileExists(atPath: karaoke), "needs ../shared/corpus beside the repository (the shared test material)"))
    func playShowsTheLyricLine() throws {
        let server = try JACKServer("lyrics")
        defer { server.stop() }  // keeps the server alive to the end of the test
        let command = [Self.tactus, "play", Self.karaoke, "--instrument", "builtin", "--driver", "jack", "--jack-server", server.name,
                       "--connect", "none"].map { "'\($0)'" }.joined(separator: " ")
        // script gives tactus a terminal (so it draws its status line) and copies what it
        // draws to the pipe; its input stays open so no end of input reaches the player.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.script)
        process.arguments = ["-qfec", command, "/dev/null"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let drawn = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
        #expect(process.terminationStatus == 0, "\(drawn.suffix(500))")
        // Each redraw starts with a carriage return; the lyric line follows the note sign.
        var sung: [String] = []
        for frame in drawn.split(whereSeparator: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) where frame.contains("BPM") {
            guard let sign = frame.range(of: "\u{266A} ") else { continue }
            let line = String(frame[sign.upperBound...])
            if sung.last != line { sung.append(line) }
        }
        // The song's lines in the order they are sung, from 0 s to 7.7 s ("Little lame,"
        // twice in a row, so seen as one).
        #expect(sung == ["Mary was a little lame,", "Little lame,", "Mary was a little lame,", "A little lame was she!"],
                "\(drawn.suffix(500))")
    }
}
