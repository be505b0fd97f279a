import ArgumentParser
import Foundation
import MIDIFile
import Playback
import Recording
import Sequencing

/// What `tactus record` shows and writes around a take: the status line, where the journal
/// goes, the written take and its report, and `--recover`.
extension RecordCommand {
    func statusText(_ session: RecordingSession, meter: MeterMap) -> String {
        guard let position = session.position else { return "REC" }
        let place: String
        if position.countInRemaining > 0 {
            place = String(format: "count-in %.1f s", position.countInRemaining)
        } else if let tick = position.tick {
            let bbt = meter.barBeatTick(atTick: tick)
            place = "\(bbt.bar):\(bbt.beat)"
        } else {
            place = "-"
        }
        let last = session.lastMessage.prefix(3).map { String(format: "%02x", $0) }.joined(separator: " ")
        let count = position.receivedCount
        return "REC \(place)  \(formatDuration(max(0, position.seconds - session.startSeconds)))  in: \(count) event\(count == 1 ? "" : "s")"
            + (last.isEmpty ? "" : "  last \(last)")
    }

    /// Where the journal of a take into `output` goes: beside it (`OUT.mid.journal`), unless
    /// the output is not a regular file (`/dev/null`, a FIFO, a terminal, `-`), where nothing
    /// may be created beside it: then in the temporary directory, under a name no other
    /// process can guess (the journal is created exclusively, so a planted file fails it).
    static func journalPath(for output: String) -> String {
        var info = stat()
        if output == "-" || (stat(output, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG) {
            let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
            let random = String((0..<12).map { _ in letters.randomElement()! })
            return (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/tactus-record-\(getpid())-\(random).mid.journal"
        }
        return output + ".journal"
    }

    /// Writes the take merged into its base as a format-1 file; returns a summary.
    func write(_ take: RecordingTake, to output: String) throws -> String {
        do {
            try take.write(to: output)
        } catch {
            let journal = error.journalPath.map { "; the journal \($0) keeps the take (tactus record --recover)" } ?? ""
            printError("tactus: \(error)\(journal)")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        let notes = take.noteCount, events = take.eventCount, tracks = max(take.tracks.count, 1)
        return "\(events) event\(events == 1 ? "" : "s") (\(notes) note\(notes == 1 ? "" : "s")) in \(tracks) track\(tracks > 1 ? "s" : "")"
    }

    // MARK: Recovery

    /// Prints the closing line, to standard error when the take itself went to standard output.
    func report(_ line: String, output: String) throws {
        if OutputDestination.isStandardOutput(output) { printError(line) } else { try printLine(line) }
    }

    /// Says how many messages the take left out because a MIDI file cannot hold them.
    func warnAboutMalformed(_ take: RecordingTake) {
        let count = take.recorder.malformedCount
        guard count > 0 else { return }
        printError("tactus: warning: \(count) message\(count == 1 ? "" : "s") a MIDI file cannot hold (status-less, truncated, undefined or system real-time) left out of the take")
    }

    func recoverTake(from journalPath: String, to output: String) throws {
        guard FileManager.default.fileExists(atPath: journalPath) else {
            printError("\(journalPath): no such file")
            throw ExitCode(ExitStatus.noInput)
        }
        let recovered: (take: RecordingTake, warning: String?, discardedBytes: Int)
        do {
            recovered = try RecordingSession.recover(journal: journalPath)
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(error.reason.hasPrefix("cannot") ? ExitStatus.noInput : ExitStatus.dataError)
        }
        if let warning = recovered.warning { printError("tactus: warning: \(warning)") }
        warnAboutMalformed(recovered.take)
        let written = try write(recovered.take, to: output)
        let torn = recovered.discardedBytes > 0 ? " (a torn last record of \(recovered.discardedBytes) bytes left out)" : ""
        try report("\(output): recovered \(written) from \(journalPath)\(torn)", output: output)
    }
}
