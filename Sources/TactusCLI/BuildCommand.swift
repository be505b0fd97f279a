import ArgumentParser
import Foundation
import MIDIFile

struct BuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Make a MIDI file from a JSON document in the `tactus dump --json` schema.",
        discussion: "Only format, division and tracks[].events ([tick, kind, hex]) are read; summaries are recomputed. Scripts can dump a file, edit the JSON and build it back."
    )

    @Argument(help: "The JSON document.")
    var input: String

    @Option(name: [.short, .long], help: "The MIDI file to write.")
    var output: String

    func run() throws {
        try refuseInputAsOutput(output, inputs: [input])
        try refuseAudioExtension(output)
        guard FileManager.default.fileExists(atPath: input) else {
            printError("\(input): no such file")
            throw ExitCode(ExitStatus.noInput)
        }
        if let size = (try? FileManager.default.attributesOfItem(atPath: input))?[.size] as? Int, size > JSONImport.maximumDocumentSize {
            printError("\(input): limit exceeded: the document is \(size) bytes, more than the \(JSONImport.maximumDocumentSize) allowed")
            throw ExitCode(ExitStatus.dataError)
        }
        guard let data = FileManager.default.contents(atPath: input) else {
            printError("\(input): cannot read")
            throw ExitCode(ExitStatus.noInput)
        }
        let file: StandardMIDIFile
        do {
            file = try JSONImport.file(from: data)
        } catch {
            printError("\(input): \(error)")
            throw ExitCode(ExitStatus.dataError)
        }
        do {
            try SMFWriter.writeAtomically(checkedSMFBytes(of: file, output: output), to: output)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("\(error)")
            throw ExitCode(ExitStatus.cannotCreate)
        }
    }
}
