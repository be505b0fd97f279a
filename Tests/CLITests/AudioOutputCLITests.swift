import AudioTestSupport
import Foundation
import Testing

/// Output formats and destinations of `tactus render`: FLAC, Ogg, pipes, FIFOs and devices.
@Suite("tactus render: formats and outputs that are not files")
struct AudioOutputCLITests {
    static func tool(_ name: String) -> String? { ExternalTools.path(name) }
    static let hasSndFile = ExternalTools.libraryLoads("libsndfile.so.1")

    static func run(_ executable: String, _ arguments: [String]) throws -> CLI.Output {
        try CLI.run(arguments, executable: URL(fileURLWithPath: executable))
    }

    static let song = CLI.song("click-track.mid")
    static let options = ["--instrument", "builtin", "--quiet", "--tail", "0.5", "--to", "5:1"]

    @Test("FLAC (16 and 24-bit) passes flac -t and decodes to exactly the WAV output's samples",
          .enabled(if: tool("flac") != nil && hasSndFile, "needs flac (Debian package flac) and libsndfile.so.1 (libsndfile1)"))
    func flacIsLossless() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for bits in ["s16", "s24"] {
            let wav = dir.appendingPathComponent("\(bits).wav").path, flac = dir.appendingPathComponent("\(bits).flac").path
            #expect(try CLI.run(["render", Self.song, "-o", wav, "--format", bits] + Self.options).status == 0)
            let r = try CLI.run(["render", Self.song, "-o", flac, "--format", "flac,\(bits)"] + Self.options)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try Self.run(Self.tool("flac")!, ["-t", "-s", flac]).status == 0, "flac -t")
            let decoded = dir.appendingPathComponent("\(bits)-decoded.wav").path
            #expect(try Self.run(Self.tool("flac")!, ["-d", "-s", "-f", "-o", decoded, flac]).status == 0)
            let expected = try WAVChunks.samples(atPath: wav)
            #expect(expected.count > 100_000)
            #expect(try WAVChunks.samples(atPath: decoded) == expected, "\(bits)")
        }
        // The extension chooses the container; a sample encoding FLAC cannot hold is a usage error.
        let bad = try CLI.run(["render", Self.song, "-o", dir.appendingPathComponent("x.flac").path, "--format", "f32"] + Self.options)
        #expect(bad.status == 64 && bad.stderr.hasPrefix(dir.appendingPathComponent("x.flac").path + ":"), "\(bad.stderr)")
    }

    @Test("Ogg Vorbis plays in oggdec with the WAV output's length; Opus at 48 kHz is an Ogg Opus stream",
          .enabled(if: tool("oggdec") != nil && hasSndFile, "needs oggdec (Debian package vorbis-tools) and libsndfile.so.1 (libsndfile1)"))
    func oggHasTheRightLength() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("a.wav").path, ogg = dir.appendingPathComponent("a.ogg").path
        #expect(try CLI.run(["render", Self.song, "-o", wav] + Self.options).status == 0)
        let r = try CLI.run(["render", Self.song, "-o", ogg] + Self.options)
        #expect(r.status == 0, "\(r.stderr)")
        let decoded = dir.appendingPathComponent("decoded.wav").path
        #expect(try Self.run(Self.tool("oggdec")!, ["-Q", "-o", decoded, ogg]).status == 0)
        let frames = try WAVChunks.samples(atPath: wav).count / 4
        #expect(try WAVChunks.samples(atPath: decoded).count / 4 == frames)

        let opus = dir.appendingPathComponent("a.opus").path
        let o = try CLI.run(["render", Self.song, "-o", opus, "--sample-rate", "48000"] + Self.options)
        #expect(o.status == 0, "\(o.stderr)")
        let head = try Data(contentsOf: URL(fileURLWithPath: opus)).prefix(64)
        #expect(head.prefix(4) == Data("OggS".utf8) && head.range(of: Data("OpusHead".utf8)) != nil)
        let wrongRate = try CLI.run(["render", Self.song, "-o", dir.appendingPathComponent("b.opus").path] + Self.options)
        #expect(wrongRate.status == 73 && wrongRate.stderr.contains("48000"), "\(wrongRate.stderr)")
    }

    @Test("Opus decodes in opusdec, an independent decoder, to the WAV output's length and level, in step with it",
          .enabled(if: tool("opusdec") != nil && hasSndFile, "needs opusdec (Debian package opus-tools) and libsndfile.so.1 (libsndfile1)"))
    func opusDecodesElsewhere() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("a.wav").path, opus = dir.appendingPathComponent("a.opus").path
        let decoded = dir.appendingPathComponent("decoded.wav").path
        #expect(try CLI.run(["render", Self.song, "-o", wav, "--sample-rate", "48000"] + Self.options).status == 0)
        let r = try CLI.run(["render", Self.song, "-o", opus, "--sample-rate", "48000"] + Self.options)
        #expect(r.status == 0, "\(r.stderr)")
        let d = try Self.run(Self.tool("opusdec")!, ["--quiet", "--rate", "48000", opus, decoded])
        #expect(d.status == 0, "\(d.stderr)")
        func int16s(_ data: Data) -> [Double] {
            data.withUnsafeBytes { raw in (0..<raw.count / 2).map { Double(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self))) } }
        }
        let original = int16s(try WAVChunks.samples(atPath: wav))
        let lossy = int16s(try WAVChunks.samples(atPath: decoded))
        #expect(lossy.count == original.count, "opusdec gave \(lossy.count / 2) frames, the WAV has \(original.count / 2)")
        let n = min(lossy.count, original.count)
        let energy = original[..<n].reduce(0) { $0 + $1 * $1 }, decodedEnergy = lossy[..<n].reduce(0) { $0 + $1 * $1 }
        var error = 0.0
        for i in 0..<n { error += (original[i] - lossy[i]) * (original[i] - lossy[i]) }
        let levelDifference = abs(10 * log10(decodedEnergy / energy))
        let errorBelowSignal = 10 * log10(energy / max(error, 1))
        #expect(levelDifference < 0.5, "level differs by \(levelDifference) dB")
        // A decoder out of step (a wrong pre-skip) would leave the error near the signal's level.
        #expect(errorBelowSignal > 12, "the difference is only \(errorBelowSignal) dB below the signal")
    }

    @Test("A FIFO read by another process and - piped into sox get the same samples as a file",
          .enabled(if: tool("sox") != nil && tool("bash") != nil, "needs sox (Debian package sox) and bash"))
    func fifoAndStandardOutput() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("file.wav").path
        #expect(try CLI.run(["render", Self.song, "-o", wav] + Self.options).status == 0)
        let expected = try WAVChunks.samples(atPath: wav)

        let fifo = dir.appendingPathComponent("pipe.wav").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let captured = dir.appendingPathComponent("captured.wav").path
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "cat \"$0\" > \"$1\"", fifo, captured]
        try reader.run()
        let r = try CLI.run(["render", Self.song, "-o", fifo] + Self.options)
        reader.waitUntilExit()
        #expect(r.status == 0, "\(r.stderr)")
        var info = stat()
        #expect(stat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "still a FIFO")
        #expect(try WAVChunks.samples(atPath: captured) == expected)

        let raw = dir.appendingPathComponent("sox.raw").path
        let quoted = ([CLI.binary.path, "render", Self.song, "-o", "-"] + Self.options).map { "'\($0)'" }.joined(separator: " ")
        let piped = try Self.run("/bin/bash", ["-c", "set -o pipefail; \(quoted) | sox -t wav - -t raw -e signed -b 16 '\(raw)'"])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: raw)) == expected, "sox reads the streaming header to the end")

        if Self.tool("flac") != nil && Self.hasSndFile {
            let decoded = dir.appendingPathComponent("flac-stdout.wav").path
            let flacPipe = try Self.run("/bin/bash", ["-c", "set -o pipefail; \(quoted) --format flac | flac -d -s -f -o '\(decoded)' -"])
            #expect(flacPipe.status == 0, "\(flacPipe.stderr)")
            #expect(try WAVChunks.samples(atPath: decoded) == expected, "FLAC on standard output")
        }

        // The MIDI writers take the same care: convert into a FIFO.
        let midiFifo = dir.appendingPathComponent("pipe.mid").path
        #expect(mkfifo(midiFifo, 0o644) == 0)
        let midiCaptured = dir.appendingPathComponent("captured.mid").path
        let midiReader = Process()
        midiReader.executableURL = URL(fileURLWithPath: "/bin/sh")
        midiReader.arguments = ["-c", "cat \"$0\" > \"$1\"", midiFifo, midiCaptured]
        try midiReader.run()
        #expect(try CLI.run(["convert", Self.song, midiFifo]).status == 0)
        midiReader.waitUntilExit()
        let converted = dir.appendingPathComponent("converted.mid").path
        #expect(try CLI.run(["convert", Self.song, converted]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: midiCaptured)) == Data(contentsOf: URL(fileURLWithPath: converted)))
        #expect(stat(midiFifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
    }

    @Test("render, convert, edit and build to /dev/null leave it a character device (in a private mount namespace)",
          .enabled(if: getuid() == 0 && tool("unshare") != nil && tool("mknod") != nil,
                   "needs root and unshare/mknod (Debian package util-linux) to mount a private /dev"))
    func devNullStaysADevice() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = dir.appendingPathComponent("song.json").path
        let dump = try CLI.run(["dump", "--json", Self.song])
        try Data(dump.stdout.utf8).write(to: URL(fileURLWithPath: json))
        let t = CLI.binary.path
        // /dev in the namespace is a fresh tmpfs holding only a null device, so a regression
        // replaces that node and never the machine's /dev/null.
        let script = """
        set -e
        mount -t tmpfs tmpfs /dev
        mknod -m 666 /dev/null c 1 3
        '\(t)' render '\(Self.song)' -o /dev/null \(Self.options.joined(separator: " "))
        '\(t)' render '\(Self.song)' -o /dev/null --format flac \(Self.options.joined(separator: " ")) 2>/dev/null || true
        '\(t)' convert '\(Self.song)' /dev/null
        '\(t)' edit '\(Self.song)' -o /dev/null --transpose 2
        '\(t)' build '\(json)' -o /dev/null
        stat -c %F /dev/null
        ls -A /dev
        """
        let r = try Self.run(Self.tool("unshare")!, ["-m", "/bin/sh", "-c", script])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasSuffix("character special file\nnull\n"), "\(r.stdout)")
    }

    @Test("A song that plays nothing is summarised as silence in 16 and 24 bits, whose samples are all zero")
    func nothingPlayedIsSilence() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Format 0, 480 ticks a quarter: a program change and the end of the track a quarter later.
        let track: [UInt8] = [0x00, 0xC0, 0x00, 0x83, 0x60, 0xFF, 0x2F, 0x00]
        let smf: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8)
            + [0, 0, 0, UInt8(track.count)] + track
        let song = dir.appendingPathComponent("nothing.mid")
        try Data(smf).write(to: song)
        for (format, width) in [("s16", 2), ("s24", 3)] {
            let out = dir.appendingPathComponent("\(format).wav").path
            let r = try CLI.run(["render", song.path, "-o", out, "--instrument", "builtin", "--format", format])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("peak silence,"), "\(r.stdout)")
            let samples = try WAVChunks.samples(atPath: out)
            #expect(samples.count >= width * 2 * 4_000 && samples.allSatisfy { $0 == 0 }, "\(format)")
        }
        // A song that sounds is not called silent.
        let r = try CLI.run(["render", Self.song, "-o", dir.appendingPathComponent("song.wav").path] + Self.options.filter { $0 != "--quiet" })
        #expect(r.status == 0 && r.stdout.contains("dBFS") && !r.stdout.contains("silence"), "\(r.stdout)")
    }
}
