import ArgumentParser
import LV2

/// The catalogue of installed LV2 plugins, or one line and exit 69 without lilv.
private func loadCatalogue() throws -> LV2Catalogue {
    do {
        return try LV2Catalogue()
    } catch {
        printError(error.description)
        throw ExitCode(ExitStatus.unavailable)
    }
}

/// `tactus info --plugins`: a count line, then one line per plugin lilv finds (as many as
/// `lv2ls` prints): URI, kind, whether Tactus can host it (and why not), name.
func listPlugins() throws {
    let catalogue = try loadCatalogue()
    let plugins = catalogue.plugins
    var out = OutputBuffer()
    let hostable = plugins.filter(\.isHostable).count
    let instruments = plugins.filter { $0.kind == .instrument }.count
    out.line("plugins:     \(plugins.count) (\(instruments) instrument\(instruments == 1 ? "" : "s"), \(hostable) hostable)")
    let width = plugins.map(\.uri.count).max() ?? 0
    for plugin in plugins {
        let hosting = plugin.hostingProblem.map { "no (\($0))" } ?? "yes"
        out.line("  " + pad(plugin.uri, width) + "  " + pad(plugin.kind.rawValue, 10) + "  " + plugin.name + "  hostable: " + hosting)
    }
    try out.finish()
}

/// `tactus info --plugin URI`: the plugin's class, hosting verdict, features and ports; an
/// unknown URI is one line with the closest matches, exit 66.
func describePlugin(_ uri: String) throws {
    let catalogue = try loadCatalogue()
    let plugin: LV2PluginInfo
    do {
        plugin = try catalogue.plugin(uri)
    } catch {
        printError(error.description)
        throw ExitCode(error.isUnavailable ? ExitStatus.unavailable : ExitStatus.noInput)
    }
    let presets = catalogue.presets(of: plugin.uri)
    var out = OutputBuffer()
    out.line("uri:         \(plugin.uri)")
    out.line("name:        \(plugin.name)")
    out.line("kind:        \(plugin.kind.rawValue) (class \(plugin.classURI))")
    out.line("hostable:    \(plugin.hostingProblem.map { "no: \($0)" } ?? "yes")")
    if plugin.requiredFeatures.isEmpty {
        out.line("features:    none required")
    } else {
        let missing = Set(plugin.missingFeatures)
        out.line("features:    required:")
        for feature in plugin.requiredFeatures {
            out.line("  \(feature)\(missing.contains(feature) ? "  (not provided by Tactus)" : "")")
        }
    }
    out.line("ports:       \(plugin.ports.count)")
    for port in plugin.ports {
        var line = "  " + pad(String(port.index), 3) + " " + pad(port.kind.rawValue + (port.isInput ? " in" : " out"), 12)
            + " " + pad(port.symbol, 16) + " " + port.name
        if port.kind == .atom {
            line += port.supportsMIDI ? " (MIDI" : port.supportsTimePosition ? " (transport position" : " (messages"
            line += port.minimumSize.map { ", at least \($0) bytes)" } ?? ")"
        }
        if port.reportsLatency { line += " [reports latency]" }
        if port.isOptional { line += " [optional]" }
        out.line(line)
    }
    let controls = plugin.controlInputs
    out.line("parameters:  \(controls.count) (set by symbol or name)")
    for port in controls {
        let range = "\(format(port.minimum))...\(format(port.maximum))"
        var traits: [String] = []
        if port.isToggle { traits.append("toggle") }
        if port.isInteger { traits.append("integer") }
        if port.isSampleRateRelative { traits.append("times the sample rate") }
        out.line("  " + pad(port.symbol, 16) + " " + pad(range, 18) + " default " + pad(format(port.defaultValue), 10) + " "
                 + port.name + (traits.isEmpty ? "" : " (" + traits.joined(separator: ", ") + ")"))
    }
    out.line("files:       \(plugin.fileParameters.count) (give one with lv2:URI,NAME=PATH)")
    for file in plugin.fileParameters { out.line("  " + pad(file.shortName, 16) + " " + file.label + " (" + file.uri + ")") }
    out.line("presets:     \(presets.count) (load one with lv2:URI,preset=LABEL)")
    for preset in presets { out.line("  " + preset.label) }
    try out.finish()
}

private func format(_ value: Float?) -> String {
    guard let value else { return "?" }
    if value == value.rounded(), abs(value) < 1e9 { return String(Int(value)) }
    return String(value)
}
