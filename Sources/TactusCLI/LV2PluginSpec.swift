import ArgumentParser
import AudioGraph
import Foundation
import LV2

/// An LV2 plugin as the command line names it: `lv2:URI`, then optional settings separated by
/// commas, as in `lv2:http://drobilla.net/plugins/mda/Delay,l_delay=0.3,feedback=0.5`. A
/// setting names a control input by its symbol (or its name, as `tactus info --plugin` prints
/// both) and gives a number in the port's range; `preset=LABEL` (or the preset's URI) loads
/// one of the plugin's presets first, which the other settings then change.
struct LV2PluginSpec {
    /// The plugin's URI.
    var uri: String
    /// Control settings in the order given: the symbol or name, and the value.
    var controls: [(name: String, value: Float)]
    /// The preset to load before the settings, by label or URI.
    var preset: String?

    static let prefix = "lv2:"

    /// Parses `text` (`lv2:URI[,NAME=VALUE]...`); nil when it does not start with `lv2:`.
    /// - Throws: a message for a usage error (exit 64): no URI, a setting without `=` or a
    ///   value that is not a finite number.
    static func parse(_ text: String, option: String) throws(SpecError) -> LV2PluginSpec? {
        guard text.hasPrefix(prefix) else { return nil }
        // URIs of LV2 plugins do not hold commas in practice, and a comma is how `--tuning`
        // separates its two files too.
        let parts = text.dropFirst(prefix.count).split(separator: ",", omittingEmptySubsequences: false)
        let uri = String(parts[0])
        guard !uri.isEmpty else { throw SpecError("\(option) lv2: needs a plugin URI (see tactus info --plugins)") }
        var controls: [(String, Float)] = []
        var preset: String?
        for setting in parts.dropFirst() {
            guard let equals = setting.firstIndex(of: "="), equals != setting.startIndex else {
                throw SpecError("\(option) \(uri): '\(setting)' is not a control setting NAME=VALUE (see tactus info --plugin \(uri))")
            }
            let name = String(setting[..<equals])
            let text = setting[setting.index(after: equals)...]
            if name == "preset" {
                guard preset == nil, !text.isEmpty else {
                    throw SpecError("\(option) \(uri): give one preset, by its label or URI (see tactus info --plugin \(uri))")
                }
                preset = String(text)
                continue
            }
            guard let value = Float(text), value.isFinite else {
                throw SpecError("\(option) \(uri): the value of \(name) must be a number, not '\(text)'")
            }
            controls.append((name, value))
        }
        return LV2PluginSpec(uri: uri, controls: controls, preset: preset)
    }

    /// Sets the controls on `node`, each checked against its port's range.
    /// - Throws: a message for a usage error (exit 64): an unknown control (the plugin's
    ///   controls listed) or a value outside the port's range (the range given).
    func apply(to node: LV2PluginNode, option: String) throws(SpecError) {
        if let preset {
            do {
                try node.loadPreset(preset)
            } catch {
                throw SpecError("\(option) \(uri): \(error)")
            }
        }
        for (name, value) in controls {
            let id: UInt32
            do {
                id = try node.parameterID(for: name)
            } catch {
                let symbols = node.info.controlInputs.map(\.symbol).joined(separator: ", ")
                throw SpecError("\(option) \(uri): \(node.name) has no control '\(name)'; its controls: \(symbols.isEmpty ? "none" : symbols)")
            }
            // Every control input has its parameter (LV2PluginNode declares one per port).
            let range = node.parameters.infos.first { $0.id == id }!.range
            guard range.contains(value) else {
                throw SpecError("\(option) \(uri): \(name)=\(Self.format(value)) is outside \(Self.format(range.lowerBound))...\(Self.format(range.upperBound))")
            }
            node.parameters.jump(id, to: value)
        }
    }

    private static func format(_ value: Float) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }

    /// A usage error in a plugin's specification, as one line.
    struct SpecError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }
}
