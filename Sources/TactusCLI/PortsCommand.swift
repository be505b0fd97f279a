import ALSA
import ArgumentParser

struct PortsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ports",
        abstract: "List the ALSA sequencer's MIDI clients and ports with their capabilities."
    )

    func run() throws {
        let client: SequencerClient
        do {
            client = try SequencerClient(name: "Tactus (ports)", createPorts: false)
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(ExitStatus.unavailable)
        }
        var out = OutputBuffer()
        out.line(" port     client                         port                           direction")
        for port in client.ports() where port.client != client.clientID {
            let direction = [port.acceptsInput ? "input" : nil, port.providesOutput ? "output" : nil].compactMap { $0 }.joined(separator: ", ")
            out.line(" " + pad(port.address, 8) + " " + pad(String(port.clientName.prefix(30)), 30) + " " + pad(String(port.portName.prefix(30)), 30) + " " + (direction.isEmpty ? "-" : direction))
        }
        try out.finish()
    }
}
