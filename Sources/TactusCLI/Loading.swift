import ArgumentParser
import Foundation
import MIDIFile
import Sequencing
import SoundFont

/// Options every command that reads a MIDI file shares.
struct InputOptions: ParsableArguments {
    @Flag(name: .long, help: "Treat every warning about the file as an error.")
    var strict = false

    @Flag(name: .long, help: "Do not print warnings about the file.")
    var quiet = false
}

/// Reads a MIDI file for a command, printing warnings and mapping failures to exit codes:
/// 66 when the file is missing or unreadable, 65 when its content is refused.
func loadMIDIFile(_ path: String, options: InputOptions) throws -> StandardMIDIFile {
    try loadMIDIFile(path, strict: options.strict, quiet: options.quiet)
}

/// Reads a MIDI file with explicit strictness and verbosity.
func loadMIDIFile(_ path: String, strict: Bool, quiet: Bool) throws -> StandardMIDIFile {
    var readOptions = SMFReadOptions()
    readOptions.strict = strict
    do {
        let file = try SMFReader.read(contentsOf: path, options: readOptions)
        if !quiet {
            for warning in file.warnings { printError("\(path): warning: \(warning)") }
        }
        return file
    } catch {
        printError(error.description)
        throw ExitCode(error.isUnreadableInput ? ExitStatus.noInput : ExitStatus.dataError)
    }
}

/// Reads a MIDI file that must have timing, for a command that turns ticks into time
/// (`purpose` completes "cannot be ..."): a division of 0 is refused with exit code 65.
func loadTimedMIDIFile(_ path: String, options: InputOptions, purpose: String) throws -> StandardMIDIFile {
    let smf = try loadMIDIFile(path, options: options)
    guard smf.timeBase.isUsable else {
        printError("\(path): division is 0, so the file has no timing and cannot be \(purpose)")
        throw ExitCode(ExitStatus.dataError)
    }
    return smf
}

/// Reads a SoundFont bank for a command, printing warnings and mapping failures to exit codes:
/// 66 when the file is missing or unreadable, 65 when its content is refused.
func loadSoundFont(_ path: String, options: InputOptions) throws -> SoundFontFile {
    var readOptions = SoundFontReadOptions()
    readOptions.strict = options.strict
    do {
        let file = try SoundFontReader.read(contentsOf: path, options: readOptions)
        if !options.quiet {
            for warning in file.warnings { printError("\(path): warning: \(warning)") }
        }
        return file
    } catch {
        printError(error.description)
        throw ExitCode(error.isUnreadableInput ? ExitStatus.noInput : ExitStatus.dataError)
    }
}
