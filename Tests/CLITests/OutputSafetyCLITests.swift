import Foundation
import Testing

/// Hostile outputs (issue 24): links to descriptors and devices are written in place, planted
/// links at temporary names redirect nothing, `-` is standard output for every writer.
@Suite("tactus: outputs that are links, devices or descriptors")
struct OutputSafetyCLITests {
    /// One writing command, with `OUT` where the output path goes, and the bytes its output
    /// starts with.
    struct Writer: CustomStringConvertible {
        var name: String
        var arguments: [String]
        var magic: String

        func arguments(output: String) -> [String] { arguments.map { $0 == "OUT" ? output : $0 } }
        var description: String { name }
    }

    /// Every command that writes a file, with the inputs it needs made in `dir`.
    static func writers(in dir: URL) throws -> [Writer] {
        let song = CLI.song("click-track.mid")
        let json = dir.appendingPathComponent("song.json")
        try Data(try CLI.run(["dump", "--json", song]).stdout.utf8).write(to: json)
        let journal = dir.appendingPathComponent("take.journal")
        try Data("tactus-journal 1\ndivision 480\ntempo 0 500000\n\n".utf8).write(to: journal)
        return [
            Writer(name: "render", arguments: ["render", song, "-o", "OUT", "--instrument", "builtin", "--quiet", "--to", "2:1", "--tail", "0"], magic: "RIFF"),
            Writer(name: "convert", arguments: ["convert", song, "OUT"], magic: "MThd"),
            Writer(name: "edit", arguments: ["edit", song, "-o", "OUT", "--velocity", "90"], magic: "MThd"),
            Writer(name: "build", arguments: ["build", json.path, "-o", "OUT"], magic: "MThd"),
            Writer(name: "record --recover", arguments: ["record", "--recover", journal.path, "-o", "OUT"], magic: "MThd"),
        ]
    }

    /// Runs the binary with standard output and error going to files the test owns.
    static func run(_ arguments: [String], standardOutput: URL, standardError: URL) throws -> Int32 {
        _ = FileManager.default.createFile(atPath: standardOutput.path, contents: nil)
        _ = FileManager.default.createFile(atPath: standardError.path, contents: nil)
        let out = try FileHandle(forWritingTo: standardOutput), err = try FileHandle(forWritingTo: standardError)
        defer { try? out.close(); try? err.close() }
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = arguments
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    static func linkTarget(_ path: String) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: path)
    }

    static func isCharacterDevice(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFCHR
    }

    @Test("A link to /proc/self/fd/N, /dev/stdout or /dev/stderr, redirected to a file, stays a link, and the bytes arrive in the file")
    func linkToRedirectedDescriptor() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for writer in try Self.writers(in: dir) {
            // Links in the test's folder only: even a writer that renamed over its output could
            // replace nothing but the link, never /dev/stdout itself.
            for (fd, target) in [(1, "/proc/self/fd/1"), (2, "/proc/self/fd/2"), (1, "/dev/stdout"), (2, "/dev/stderr")] {
                let link = dir.appendingPathComponent("out-\(fd)")
                try? FileManager.default.removeItem(at: link)
                try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target)
                let stdout = dir.appendingPathComponent("stdout"), stderr = dir.appendingPathComponent("stderr")
                let status = try Self.run(writer.arguments(output: link.path), standardOutput: stdout, standardError: stderr)
                let received = try Data(contentsOf: fd == 1 ? stdout : stderr)
                let messages = String(decoding: try Data(contentsOf: stderr).prefix(300), as: UTF8.self)
                #expect(status == 0, "\(writer) to \(target): \(messages)")
                #expect(Self.linkTarget(link.path) == target, "\(writer) to \(target): the link is still a link to the descriptor")
                #expect(received.starts(with: Data(writer.magic.utf8)), "\(writer) to \(target): the output reached the redirected file")
            }
        }
    }

    @Test("A link to standard output on a pipe, and -, put the output on the pipe; messages stay off it")
    func pipeAndDash() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let link = dir.appendingPathComponent("out")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/proc/self/fd/1")
        for writer in try Self.writers(in: dir) {
            for output in [link.path, "-"] {
                let r = try CLI.run(writer.arguments(output: output))
                #expect(r.status == 0, "\(writer) to \(output): \(r.stderr)")
                #expect(r.stdout.hasPrefix(writer.magic), "\(writer) to \(output): the output is on standard output")
                #expect(!r.stdout.contains("rendered in") && !r.stdout.contains("recovered "), "\(writer) to \(output): no message mixed into the output")
            }
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("-").path), "\(writer): no file named -")
            #expect(Self.linkTarget(link.path) == "/proc/self/fd/1")
        }
    }

    @Test("/dev/null, and a link to it, are still a character device and a link after every writing command")
    func devNull() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let link = dir.appendingPathComponent("null")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/dev/null")
        for writer in try Self.writers(in: dir) {
            for output in [link.path, "/dev/null"] {
                let r = try CLI.run(writer.arguments(output: output))
                #expect(r.status == 0, "\(writer) to \(output): \(r.stderr)")
                #expect(Self.isCharacterDevice("/dev/null"), "\(writer) to \(output)")
                #expect(Self.linkTarget(link.path) == "/dev/null", "\(writer) to \(output)")
            }
        }
    }

    @Test("A link to a regular file stays a link: the file it names gets the output")
    func linkToFile() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let elsewhere = dir.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        for writer in try Self.writers(in: dir) {
            let target = elsewhere.appendingPathComponent("target"), link = dir.appendingPathComponent("link")
            try Data("old".utf8).write(to: target)
            try? FileManager.default.removeItem(at: link)
            // A relative link, resolved against the link's own folder.
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "elsewhere/target")
            let r = try CLI.run(writer.arguments(output: link.path))
            #expect(r.status == 0, "\(writer): \(r.stderr)")
            #expect(Self.linkTarget(link.path) == "elsewhere/target", "\(writer): still the same link")
            #expect(try Data(contentsOf: target).starts(with: Data(writer.magic.utf8)), "\(writer): the output is in the file the link names")
            #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path) == ["target"], "\(writer): no temporary left")
        }
    }

    @Test("Links planted at the temporary names of the old scheme (.NAME.partial-PID-N, .NAME.tmp-PID) redirect no write")
    func plantedTemporaryLinks() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let victim = dir.appendingPathComponent("victim")
        let precious = Data("precious\n".utf8)
        try precious.write(to: victim)
        for writer in try Self.writers(in: dir) {
            let name = writer.magic == "RIFF" ? "out.wav" : "out.mid"
            // The shell plants the links under its own process id, then becomes tactus with it.
            let plant = "for n in 1 2 3 4; do ln -s \(victim.path) .\(name).partial-$$-$n; done; ln -s \(victim.path) .\(name).tmp-$$; exec \"$@\""
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.currentDirectoryURL = dir
            process.arguments = ["-c", plant, "sh", CLI.binary.path] + writer.arguments(output: name)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(writer)")
            #expect(try Data(contentsOf: victim) == precious, "\(writer): the planted link's target is untouched")
            let output = dir.appendingPathComponent(name).path
            #expect(Self.linkTarget(output) == nil, "\(writer): the output is a file of its own")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: output)))?.starts(with: Data(writer.magic.utf8)) == true, "\(writer)")
            for leftover in try FileManager.default.contentsOfDirectory(atPath: dir.path) where leftover.hasPrefix(".") {
                try FileManager.default.removeItem(atPath: dir.appendingPathComponent(leftover).path)
            }
            try FileManager.default.removeItem(atPath: output)
        }
    }

    /// Runs the binary with standard output on the given handle; returns its status, how it
    /// ended and what it said on standard error.
    static func run(_ arguments: [String], standardOutput: FileHandle) throws -> (status: Int32, reason: Process.TerminationReason, stderr: String) {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = arguments
        process.standardOutput = standardOutput
        let err = Pipe()
        process.standardError = err
        try process.run()
        let said = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason, String(decoding: said, as: UTF8.self))
    }

    static var printers: [[String]] {
        let song = CLI.song("morning-steps.mid")
        return [["dump", song], ["dump", "--json", song], ["dump", "--notes", song], ["info", song],
                ["edit", song, "--dry-run", "--velocity", "80"]]
    }

    @Test("dump, info and edit --dry-run on a full device exit 74 with one line naming standard output and the reason", arguments: printers)
    func aFullStandardOutputIsAnError(arguments: [String]) throws {
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        defer { try? full.close() }
        let result = try Self.run(arguments, standardOutput: full)
        #expect(result.status == 74)
        #expect(result.stderr == "tactus: standard output: write failed (No space left on device)\n")
        #expect(Self.isCharacterDevice("/dev/full"))
    }

    @Test("render, render --stems and a batch write their files, then on a full standard output their summary line is exit 74, not 0")
    func summariesOnAFullStandardOutput() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let song = CLI.song("click-track.mid")
        let options = ["--instrument", "builtin", "--to", "2:1", "--tail", "0"]
        let wav = dir.appendingPathComponent("mix.wav").path
        let stems = dir.appendingPathComponent("stems").path
        let batch = dir.appendingPathComponent("batch").path + "/"
        for arguments in [["render", song, "-o", wav] + options, ["render", song, "-o", wav, "--stems", stems] + options,
                          ["render", song, "-o", batch, "--instrument", "builtin", "--tail", "0"]] {
            let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
            defer { try? full.close() }
            let result = try Self.run(arguments, standardOutput: full)
            #expect(result.status == 74, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasSuffix("tactus: standard output: write failed (No space left on device)\n"), "\(result.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: wav))
        #expect(try !FileManager.default.contentsOfDirectory(atPath: stems).isEmpty)
        #expect(FileManager.default.fileExists(atPath: batch + "click-track.wav"))
    }

    @Test("A reader that closes the pipe early (as `| head` does) ends dump quietly, as SIGPIPE ends other tools")
    func aClosedPipeEndsQuietly() throws {
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        // 5,000 notes dump to about 600 KB, far more than a pipe holds unread.
        let song = try CLI.temporaryDirectory().appendingPathComponent("long.mid").path
        try BatchRenderCLITests.writeSong(song, key: 40, notes: 5_000)
        let result = try Self.run(["dump", song], standardOutput: pipe.fileHandleForWriting)
        let killedBySIGPIPE = result.reason == .uncaughtSignal && result.status == SIGPIPE
        #expect(killedBySIGPIPE || (result.reason == .exit && result.status == 128 + SIGPIPE), "status \(result.status)")
        #expect(result.stderr.isEmpty)
    }
}
