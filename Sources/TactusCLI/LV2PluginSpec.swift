import ArgumentParser
import AudioGraph
import Foundation
import LV2

/// An LV2 plugin as the command line names it: `lv2:URI`, then optional settings separated by
/// commas, as in `lv2:http://drobilla.net/plugins/mda/Delay,l_delay=0.3,feedback=0.5`. A
/// setting names a control input by its symbol (or its name, as `tactus info --plugin` prints
/// both) and gives a number in the port's range, or names a file the plugin reads (a
/// SoundFont, a sample: its file parameters, by short name, label or URI) and gives the
/// file's path; `preset=LABEL` (or the preset's URI) loads one of the plugin's presets first,
/// and `state=FOLDER` a state `--save-state` saved, which the other settings then change;
/// `programs=ignore` keeps the song's program changes from the plugin.
struct LV2PluginSpec {
    /// The plugin's URI.
    var uri: String
    /// Settings in the order given: the control's or file parameter's name, and the value as
    /// written (a number for a control, a path for a file).
    var settings: [(name: String, value: String)]
    /// The preset to load before the settings, by label or URI.
    var preset: String?
    /// A folder holding a state saved by `--save-state` (or another host), loaded after the
    /// preset and before the settings.
    var state: String?
    /// Whether the song's program changes are kept from the plugin (`programs=ignore`).
    var ignoresProgramChanges = false

    static let prefix = "lv2:"

    /// Parses `text` (`lv2:URI[,NAME=VALUE]...`); nil when it does not start with `lv2:`.
    /// - Throws: a message for a usage error (exit 64): no URI, or a setting without `=`.
    static func parse(_ text: String, option: String) throws(SpecError) -> LV2PluginSpec? {
        guard text.hasPrefix(prefix) else { return nil }
        // URIs of LV2 plugins do not hold commas in practice, and a comma is how `--tuning`
        // separates its two files too.
        let parts = text.dropFirst(prefix.count).split(separator: ",", omittingEmptySubsequences: false)
        let uri = String(parts[0])
        guard !uri.isEmpty else { throw SpecError("\(option) lv2: needs a plugin URI (see tactus info --plugins)") }
        var settings: [(String, String)] = []
        var preset: String?
        var state: String?
        var ignoresProgramChanges = false
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
            if name == "state" {
                guard state == nil, !text.isEmpty else {
                    throw SpecError("\(option) \(uri): give one state, a folder --save-state wrote")
                }
                state = String(text)
                continue
            }
            if name == "programs" {
                guard text == "ignore" || text == "pass" else {
                    throw SpecError("\(option) \(uri): programs= takes ignore (keep the song's program changes from the plugin) or pass, not '\(text)'")
                }
                ignoresProgramChanges = text == "ignore"
                continue
            }
            settings.append((name, String(text)))
        }
        return LV2PluginSpec(uri: uri, settings: settings, preset: preset, state: state, ignoresProgramChanges: ignoresProgramChanges)
    }

    /// Sets the controls on `node`, each checked against its port's range, and gives it the
    /// files named, each checked to be a readable file first.
    /// - Throws: a message for a usage error (exit 64): an unknown control or file parameter
    ///   (the plugin's listed), a control's value that is not a number or outside the port's
    ///   range (the range given); for a file that cannot be read, a message with exit 66.
    func apply(to node: LV2PluginNode, option: String) throws(SpecError) {
        node.ignoresProgramChanges = ignoresProgramChanges
        if let preset {
            do {
                try node.loadPreset(preset)
            } catch {
                throw SpecError("\(option) \(uri): \(error)")
            }
        }
        if let state {
            do {
                try node.loadState(from: state)
            } catch {
                throw SpecError("\(option) \(uri): state=\(error)", status: ExitStatus.noInput)
            }
        }
        for (name, text) in settings {
            if let file = node.info.fileParameter(named: name) {
                node.setFile(try Self.readableFile(text, parameter: file, option: "\(option) \(uri)"), forProperty: file.uri)
                continue
            }
            let id: UInt32
            do {
                id = try node.parameterID(for: name)
            } catch {
                let symbols = node.info.controlInputs.map(\.symbol).joined(separator: ", ")
                let files = node.info.fileParameters.map(\.shortName).joined(separator: ", ")
                throw SpecError("\(option) \(uri): \(node.name) has no control '\(name)'; its controls: \(symbols.isEmpty ? "none" : symbols)"
                                + (files.isEmpty ? "" : "; its files: \(files)"))
            }
            guard let value = Float(text), value.isFinite else {
                throw SpecError("\(option) \(uri): the value of \(name) must be a number, not '\(text)'")
            }
            // Every control input has its parameter (LV2PluginNode declares one per port).
            let range = node.parameters.infos.first { $0.id == id }!.range
            guard range.contains(value) else {
                throw SpecError("\(option) \(uri): \(name)=\(Self.format(value)) is outside \(Self.format(range.lowerBound))...\(Self.format(range.upperBound))")
            }
            node.parameters.jump(id, to: value)
        }
    }

    /// The absolute path of `path` when it is a readable regular file (the plugin reads it
    /// later, on its own terms, so it is checked here).
    private static func readableFile(_ path: String, parameter: LV2FileParameter, option: String) throws(SpecError) -> String {
        guard !path.isEmpty else { throw SpecError("\(option): \(parameter.shortName) needs a file's path") }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var status = stat()
        guard stat(absolute, &status) == 0 else {
            throw SpecError("\(option): \(parameter.shortName)=\(path): \(String(cString: strerror(errno)))", status: ExitStatus.noInput)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SpecError("\(option): \(parameter.shortName)=\(path): not a regular file", status: ExitStatus.noInput)
        }
        guard access(absolute, R_OK) == 0 else {
            throw SpecError("\(option): \(parameter.shortName)=\(path): permission denied", status: ExitStatus.noInput)
        }
        return absolute
    }

    private static func format(_ value: Float) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }

    /// An error in a plugin's specification, as one line, with its exit status (a usage
    /// error unless said otherwise).
    struct SpecError: Error {
        var message: String
        var status: Int32
        init(_ message: String, status: Int32 = ExitStatus.usage) {
            self.message = message
            self.status = status
        }
    }
}
