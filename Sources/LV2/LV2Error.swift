import CLilv

/// Why a plugin cannot be listed, found or hosted.
public enum LV2Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// liblilv could not be loaded (the dynamic loader's reason).
    case libraryUnavailable(reason: String)
    /// No installed plugin has this URI; `suggestions` are the URIs closest to it.
    case unknownPlugin(uri: String, suggestions: [String])
    /// The plugin requires features Tactus does not provide (their URIs).
    case missingFeatures(plugin: String, features: [String])
    /// The plugin's ports are of a kind Tactus cannot connect yet.
    case notHostable(plugin: String, reason: String)
    /// The plugin's `instantiate` returned nothing.
    case instantiationFailed(plugin: String)
    /// A parameter name or symbol the plugin does not have.
    case unknownParameter(plugin: String, name: String)
    /// A control output the plugin does not have; `outputs` are its control outputs' symbols.
    case unknownControlOutput(plugin: String, name: String, outputs: [String])
    /// A preset label or URI the plugin does not have; `presets` are its presets' labels.
    case unknownPreset(plugin: String, name: String, presets: [String])
    /// A state could not be saved to or read from `path`.
    case stateFailed(path: String, reason: String)

    /// One line for the user; the library-missing one names the Debian package.
    public var description: String {
        switch self {
        case .libraryUnavailable(let reason):
            return "LV2 plugins need lilv (Debian package liblilv-0-0): \(reason)"
        case .unknownPlugin(let uri, let suggestions):
            if suggestions.isEmpty { return "no LV2 plugin \(uri) is installed" }
            return "no LV2 plugin \(uri) is installed; close matches: \(suggestions.joined(separator: ", "))"
        case .missingFeatures(let plugin, let features):
            return "\(plugin) requires features Tactus does not provide: \(features.joined(separator: ", "))"
        case .notHostable(let plugin, let reason):
            return "\(plugin) cannot be hosted: \(reason)"
        case .instantiationFailed(let plugin):
            return "\(plugin) failed to instantiate"
        case .unknownParameter(let plugin, let name):
            return "\(plugin) has no control input called \(name)"
        case .unknownControlOutput(let plugin, let name, let outputs):
            if outputs.isEmpty { return "\(plugin) has no control output called \(name) (it has none)" }
            return "\(plugin) has no control output called \(name); its control outputs: \(outputs.joined(separator: ", "))"
        case .unknownPreset(let plugin, let name, let presets):
            if presets.isEmpty { return "\(plugin) has no preset '\(name)' (it has no presets)" }
            return "\(plugin) has no preset '\(name)'; its presets: \(presets.joined(separator: ", "))"
        case .stateFailed(let path, let reason):
            return "\(path): \(reason)"
        }
    }

    /// True when the error means something is missing from the system (the CLI's exit 69):
    /// the library, a plugin feature, or a plugin Tactus cannot host.
    public var isUnavailable: Bool {
        switch self {
        case .libraryUnavailable, .missingFeatures, .notHostable, .instantiationFailed: return true
        case .unknownPlugin, .unknownParameter, .unknownControlOutput, .unknownPreset, .stateFailed: return false
        }
    }
}

/// Loading liblilv.
public enum LV2Library {
    /// Loads liblilv (once per process). Its name is `liblilv-0.so.0`, or the value of the
    /// environment variable `TACTUS_LILV_LIBRARY` when set, read at the first load.
    /// - Throws: ``LV2Error/libraryUnavailable(reason:)`` when it cannot be loaded.
    public static func load() throws(LV2Error) {
        if tactus_lilv_load() == 0 {
            throw .libraryUnavailable(reason: tactus_lilv_load_error().map { String(cString: $0) } ?? "cannot be loaded")
        }
    }
}

/// The URIs of the LV2 specification Tactus uses.
enum LV2URI {
    static let core = "http://lv2plug.in/ns/lv2core#"
    static let audioPort = core + "AudioPort"
    static let controlPort = core + "ControlPort"
    static let cvPort = core + "CVPort"
    static let inputPort = core + "InputPort"
    static let outputPort = core + "OutputPort"
    static let plugin = core + "Plugin"
    static let instrumentPlugin = core + "InstrumentPlugin"
    static let rdfType = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    static let connectionOptional = core + "connectionOptional"
    static let toggled = core + "toggled"
    static let integer = core + "integer"
    static let enumeration = core + "enumeration"
    static let sampleRateProperty = core + "sampleRate"
    static let reportsLatency = core + "reportsLatency"
    static let designation = core + "designation"
    static let latency = core + "latency"
    static let hardRTCapable = core + "hardRTCapable"
    static let inPlaceBroken = core + "inPlaceBroken"
    static let isLive = core + "isLive"
    static let atomPort = "http://lv2plug.in/ns/ext/atom#AtomPort"
    static let atomSequence = "http://lv2plug.in/ns/ext/atom#Sequence"
    static let atomChunk = "http://lv2plug.in/ns/ext/atom#Chunk"
    static let atomInt = "http://lv2plug.in/ns/ext/atom#Int"
    static let atomFloat = "http://lv2plug.in/ns/ext/atom#Float"
    static let midiEvent = "http://lv2plug.in/ns/ext/midi#MidiEvent"
    static let time = "http://lv2plug.in/ns/ext/time#"
    static let timePosition = time + "Position"
    static let preset = "http://lv2plug.in/ns/ext/presets#Preset"
    static let rdfsLabel = "http://www.w3.org/2000/01/rdf-schema#label"
    static let rdfsRange = "http://www.w3.org/2000/01/rdf-schema#range"
    static let patchWritable = "http://lv2plug.in/ns/ext/patch#writable"
    static let atomPath = "http://lv2plug.in/ns/ext/atom#Path"
    static let atomObject = "http://lv2plug.in/ns/ext/atom#Object"
    static let minimumSize = "http://lv2plug.in/ns/ext/resize-port#minimumSize"
    static let uridMap = "http://lv2plug.in/ns/ext/urid#map"
    static let uridUnmap = "http://lv2plug.in/ns/ext/urid#unmap"
    static let options = "http://lv2plug.in/ns/ext/options#options"
    static let boundedBlockLength = "http://lv2plug.in/ns/ext/buf-size#boundedBlockLength"
    static let fixedBlockLength = "http://lv2plug.in/ns/ext/buf-size#fixedBlockLength"
    static let powerOf2BlockLength = "http://lv2plug.in/ns/ext/buf-size#powerOf2BlockLength"
    static let minBlockLength = "http://lv2plug.in/ns/ext/buf-size#minBlockLength"
    static let maxBlockLength = "http://lv2plug.in/ns/ext/buf-size#maxBlockLength"
    static let nominalBlockLength = "http://lv2plug.in/ns/ext/buf-size#nominalBlockLength"
    static let sequenceSize = "http://lv2plug.in/ns/ext/buf-size#sequenceSize"
    static let sampleRate = "http://lv2plug.in/ns/ext/parameters#sampleRate"
    static let workerSchedule = "http://lv2plug.in/ns/ext/worker#schedule"
    static let workerInterface = "http://lv2plug.in/ns/ext/worker#interface"
    static let log = "http://lv2plug.in/ns/ext/log#log"
    static let loadDefaultState = "http://lv2plug.in/ns/ext/state#loadDefaultState"
    static let atomDouble = "http://lv2plug.in/ns/ext/atom#Double"
    static let atomLong = "http://lv2plug.in/ns/ext/atom#Long"
    static let atomBool = "http://lv2plug.in/ns/ext/atom#Bool"

    /// The features Tactus gives every plugin. `hardRTCapable`, `inPlaceBroken` and `isLive`
    /// are properties a plugin may require of the host's use of it, which Tactus meets (it
    /// never connects an input and an output to the same buffer, and runs in real time);
    /// `loadDefaultState` is met by restoring the plugin's default state at instantiation.
    static let providedFeatures: Set<String> = [
        uridMap, uridUnmap, options, boundedBlockLength, fixedBlockLength, powerOf2BlockLength,
        workerSchedule, log, hardRTCapable, inPlaceBroken, isLive, loadDefaultState,
    ]
}
