import ArgumentParser
import Foundation
import MIDIFile

/// Refuses, with exit code 64 and before anything is written, an output that is one of the
/// inputs: the same file by device and inode, so the path itself, a hard link and a symbolic
/// link to it are all caught. Devices and descriptors that are not files (`/dev/null`, a pipe)
/// are never an input's content and pass. `what` names the output in the message.
func refuseInputAsOutput(_ output: String, inputs: [String?], what: String = "the output") throws {
    var written = stat()
    guard output != "-", stat(output, &written) == 0, written.st_mode & S_IFMT == S_IFREG else { return }
    for case let input? in inputs {
        var read = stat()
        if stat(input, &read) == 0 && read.st_dev == written.st_dev && read.st_ino == written.st_ino {
            printError("\(output): \(what) is the input \(input); writing it would destroy the input")
            throw ExitCode(ExitStatus.usage)
        }
    }
}

/// Audio file extensions, which the commands that write MIDI files refuse.
let audioExtensions: Set<String> = ["wav", "wave", "flac", "ogg", "oga", "opus", "mp3", "aif", "aiff", "m4a", "aac", "wma"]

/// Refuses, with exit code 64, an output named like an audio file for a command that writes a
/// Standard MIDI File; `allowed` are the audio extensions the command does handle (`edit`
/// renders `.wav`).
func refuseAudioExtension(_ output: String, allowed: Set<String> = []) throws {
    let suffix = URL(fileURLWithPath: output).pathExtension.lowercased()
    guard audioExtensions.contains(suffix), !allowed.contains(suffix) else { return }
    let writes = allowed.isEmpty ? "a Standard MIDI File" : "a Standard MIDI File, or " + allowed.sorted().map { "." + $0 }.joined(separator: ", ")
    printError("\(output): this command writes \(writes), not .\(suffix) (use tactus render for audio)")
    throw ExitCode(ExitStatus.usage)
}

/// The bytes of `file` for `output`, or, for an event past `SMFWriter.maximumTick`, one line
/// naming the output and exit code 65 (the file's content cannot be written).
func checkedSMFBytes(of file: StandardMIDIFile, output: String) throws -> [UInt8] {
    do {
        return try SMFWriter.checkedBytes(of: file)
    } catch {
        printError("\(output): \(error)")
        throw ExitCode(ExitStatus.dataError)
    }
}
