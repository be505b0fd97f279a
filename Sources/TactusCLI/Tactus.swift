import ArgumentParser
import Foundation

@main
struct Tactus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tactus",
        abstract: "A music sequencer for Linux: inspect, convert, render and play MIDI files.",
        version: "0.1.0",
        subcommands: [InfoCommand.self, DumpCommand.self, ConvertCommand.self, EditCommand.self, BuildCommand.self,
                      RenderCommand.self, PlayCommand.self, PortsCommand.self, RecordCommand.self]
    )

    /// Runs the command line, first turning a bare `--loop` into `--loop forever`.
    static func main() {
        // A parent may start us with the stop signals blocked (the mask survives exec, and
        // some process managers and shells' background jobs do this): Ctrl-C, a scheduler's
        // SIGTERM and a closed terminal's SIGHUP must still reach every command's handler.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&stopSignals, signalNumber) }
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
        main(expandingBareLoop(Array(CommandLine.arguments.dropFirst())))
    }
}

/// Exit codes from sysexits.h, which the CLI promises.
enum ExitStatus {
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let unavailable: Int32 = 69
    static let cannotCreate: Int32 = 73
    static let ioError: Int32 = 74
    /// A batch stopped by SIGTERM (128 + 15, as a shell reports it).
    static let terminated: Int32 = 143
}

/// Prints one line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Prints one line to standard output, checked as ``OutputBuffer`` checks: a summary line that
/// could not be written (a full disk, `> /dev/full`) ends the command with exit 74, a closed
/// pipe with 141, instead of exit 0.
func printLine(_ line: String) throws {
    var output = OutputBuffer()
    output.line(line)
    try output.finish()
}

/// Writes to standard output in large pieces (print() per line is slow for big dumps), and
/// remembers a failed write so the command can end with an error instead of exit 0 over
/// truncated output.
struct OutputBuffer {
    private var buffer: [UInt8] = []
    /// The errno of the first write that failed; what comes after it is dropped.
    private var failure: Int32?

    mutating func write(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    mutating func line(_ s: String = "") {
        write(s)
        buffer.append(0x0A)
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        if failure == nil {
            buffer.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = Foundation.write(1, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { failure = n < 0 ? errno : EIO; break }
                    offset += n
                }
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is left, then fails if any write did: one line and exit 74 (a full disk, a
    /// device error), or, for a reader that closed the pipe (`| head`), quietly with the status
    /// a shell gives a process SIGPIPE ended (141), as other command-line tools end.
    mutating func finish() throws {
        flush()
        guard let failure else { return }
        if failure == EPIPE { throw ExitCode(128 + SIGPIPE) }
        printError("tactus: standard output: write failed (\(String(cString: strerror(failure))))")
        throw ExitCode(ExitStatus.ioError)
    }
}
