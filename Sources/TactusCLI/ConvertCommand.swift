import ArgumentParser
import Foundation
import MIDIFile
import Sequencing

struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Rewrite a MIDI file: change its format or resolution, or split channels to tracks.",
        discussion: "Without options the file is written back event for event: same ticks, bytes and same-tick order."
    )

    @Argument(help: "The MIDI file to read.")
    var input: String

    @Argument(help: "The MIDI file to write.")
    var output: String

    @Option(name: .long, help: "SMF format of the output: 0 (one track) or 1 (tracks played together).")
    var format: Int?

    @Option(name: .long, help: "Ticks per quarter note of the output (1...32767); every time is rescaled.")
    var resolution: Int?

    @Flag(name: .long, help: "Put each MIDI channel of each track on a track of its own.")
    var channelsToTracks = false

    @OptionGroup var inputOptions: InputOptions

    func validate() throws {
        if let format, ![0, 1].contains(format) {
            throw ValidationError("--format must be 0 or 1, not \(format)")
        }
        if let resolution, !(1...32767).contains(resolution) {
            throw ValidationError("--resolution must be between 1 and 32767 ticks per quarter, not \(resolution)")
        }
    }

    func run() throws {
        try refuseInputAsOutput(output, inputs: [input])
        try refuseAudioExtension(output)
        let smf = try loadMIDIFile(input, options: inputOptions)
        var sequence = smf.makeSequence()
        if channelsToTracks {
            sequence = sequence.splittingChannelsToTracks()
            if format == nil && sequence.sourceFormat == 0 { sequence.sourceFormat = 1 }
        }
        if let resolution {
            guard case .ticksPerQuarter(let old) = sequence.timeBase, old > 0 else {
                printError("\(input): --resolution needs a file with ticks per quarter (this one has \(describe(sequence.timeBase)))")
                throw ExitCode(ExitStatus.dataError)
            }
            sequence = sequence.rescaled(toTicksPerQuarter: resolution, from: old)
        }
        let layout: SMFLayout
        switch format {
        case 0: layout = .format0
        case 1: layout = .format1
        default: layout = .asRead
        }
        let bytes = try checkedSMFBytes(of: StandardMIDIFile(sequence: sequence, layout: layout), output: output)
        do {
            try SMFWriter.writeAtomically(bytes, to: output)
        } catch {
            printError("\(error)")
            throw ExitCode(ExitStatus.cannotCreate)
        }
    }
}
