import ArgumentParser
import LV2

extension InstrumentOptions {
    /// `--channel-instrument CH=lv2:URI[,...]` read: each channel (0-15; the user counts 1-16)
    /// with its plugin, in the order given.
    /// - Throws: a usage error (exit 64) as one line starting with `file`: not `CH=lv2:URI`, a
    ///   channel outside 1-16 or given twice, or the plugin's settings malformed.
    func channelInstrumentSpecs(file: String) throws -> [(channel: UInt8, spec: LV2PluginSpec)] {
        func usage(_ message: String) -> ExitCode {
            printError("\(file): \(message)")
            return ExitCode(ExitStatus.usage)
        }
        var specs: [(channel: UInt8, spec: LV2PluginSpec)] = []
        for text in channelInstruments {
            guard let equals = text.firstIndex(of: "="), let number = Int(text[..<equals]) else {
                throw usage("--channel-instrument takes CH=lv2:URI with CH a MIDI channel 1-16, not '\(text)'")
            }
            guard (1...16).contains(number) else { throw usage("--channel-instrument \(text): channel \(number) is outside 1-16") }
            let channel = UInt8(number - 1)
            guard !specs.contains(where: { $0.channel == channel }) else {
                throw usage("--channel-instrument: channel \(number) is given twice")
            }
            let pluginText = String(text[text.index(after: equals)...])
            do {
                guard let spec = try LV2PluginSpec.parse(pluginText, option: "--channel-instrument \(number)") else {
                    throw usage("--channel-instrument \(number) takes an installed LV2 instrument as lv2:URI (see tactus info --plugins), not '\(pluginText)'")
                }
                specs.append((channel, spec))
            } catch let error as LV2PluginSpec.SpecError {
                throw usage(error.message)
            }
        }
        return specs
    }

    /// New instances of the `--channel-instrument` plugins, set up as their specifications say:
    /// for the first playing (with `warnings`), and for every stem or batch file after it, since
    /// plugins keep state. The options were checked by `validate(file:)`.
    func freshPluginChannelInstruments(input: InputOptions, file: String? = nil, catalogue: inout LV2Catalogue?,
                                       warnings: Bool = false) throws -> [UInt8: LV2PluginNode] {
        var nodes: [UInt8: LV2PluginNode] = [:]
        for (channel, spec) in try channelInstrumentSpecs(file: file ?? "tactus") {
            nodes[channel] = try loadPlugin(spec, kind: .instrument, input: input, file: file, catalogue: &catalogue,
                                            warnings: warnings, option: "--channel-instrument \(channel + 1)")
        }
        return nodes
    }
}
