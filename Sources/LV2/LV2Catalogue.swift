import CLilv
import Synchronization

/// One port of a plugin, as its bundle declares it.
public struct LV2PortInfo: Sendable, Hashable {
    /// What a port carries.
    public enum Kind: String, Sendable, Hashable {
        /// Audio samples.
        case audio
        /// One number per run: a parameter (input) or a reading (output).
        case control
        /// Atom sequences: MIDI and messages.
        case atom
        /// Control voltage: audio-rate control signals.
        case cv
        /// A port type Tactus does not know (the deprecated event ports, for example).
        case other
    }

    /// The port's index, as `connect_port` takes it.
    public var index: UInt32
    /// The port's symbol: a short identifier unique within the plugin.
    public var symbol: String
    /// The port's human-readable name.
    public var name: String
    /// What it carries.
    public var kind: Kind
    /// True for an input, false for an output.
    public var isInput: Bool
    /// True when the plugin may run with the port left unconnected.
    public var isOptional: Bool
    /// For an atom port: whether it takes MIDI events.
    public var supportsMIDI: Bool
    /// For an atom input: whether it takes the transport's position (`time:Position`).
    public var supportsTimePosition = false
    /// For an atom port: the buffer size in bytes the plugin asks for (`rsz:minimumSize`).
    public var minimumSize: Int?
    /// For a control port: the declared default, minimum and maximum.
    public var defaultValue: Float?
    /// The declared minimum.
    public var minimum: Float?
    /// The declared maximum.
    public var maximum: Float?
    /// A control that is on (1) or off (0).
    public var isToggle: Bool
    /// A control that takes whole numbers.
    public var isInteger: Bool
    /// A control whose range is in multiples of the sample rate.
    public var isSampleRateRelative: Bool
    /// For a control output: the plugin reports its latency there, in frames
    /// (`lv2:reportsLatency`, or the designation `lv2:latency`).
    public var reportsLatency = false
}

/// A named set of a plugin's settings (`pset:Preset`): control values, and for some plugins
/// state, as its bundle or a user saved them.
public struct LV2Preset: Sendable, Hashable {
    /// The preset's URI.
    public var uri: String
    /// Its label (`rdfs:label`), or the URI when it has none.
    public var label: String
}

/// A file a plugin reads, set with `patch:Set` (a `patch:writable` parameter whose range is
/// `atom:Path`): a sampler's sample, a SoundFont player's bank.
public struct LV2FileParameter: Sendable, Hashable {
    /// The parameter's URI: the property `patch:Set` names.
    public var uri: String
    /// Its label (`rdfs:label`), or the last part of the URI when it has none.
    public var label: String
    /// The last part of the URI, after its last `#`, `:` or `/` (`sf2file`, `sample`): a short
    /// name to give it by.
    public var shortName: String {
        uri.split(whereSeparator: { "#:/".contains($0) }).last.map(String.init) ?? uri
    }
}

/// A plugin found by lilv: what `tactus info --plugins` lists and what hosting checks.
public struct LV2PluginInfo: Sendable, Hashable {
    /// What the plugin does, as far as hosting it is concerned.
    public enum Kind: String, Sendable, Hashable {
        /// Takes MIDI and makes sound without audio input (or its class is `lv2:InstrumentPlugin`).
        case instrument
        /// Takes audio and makes audio.
        case effect
        /// Neither: a generator, an analyser, a MIDI filter.
        case other
    }

    /// The plugin's URI.
    public var uri: String
    /// Its name.
    public var name: String
    /// Instrument, effect or other.
    public var kind: Kind
    /// The URI of its LV2 class.
    public var classURI: String
    /// Every port, in index order.
    public var ports: [LV2PortInfo]
    /// The features it requires.
    public var requiredFeatures: [String]
    /// The files it reads, set through ``LV2PluginNode/setFile(_:forProperty:)``.
    public var fileParameters: [LV2FileParameter] = []
    /// The file parameter whose URI, short name or label (without regard to case) is `name`.
    public func fileParameter(named name: String) -> LV2FileParameter? {
        fileParameters.first { $0.uri == name } ?? fileParameters.first { $0.shortName == name }
            ?? fileParameters.first { $0.label.caseInsensitiveCompare(name) == .orderedSame }
    }
    /// The required features Tactus does not provide.
    public var missingFeatures: [String] { requiredFeatures.filter { !LV2URI.providedFeatures.contains($0) } }
    /// Why Tactus cannot host it, or nil when it can.
    public var hostingProblem: String? {
        let missing = missingFeatures
        if !missing.isEmpty { return "requires " + missing.joined(separator: ", ") }
        if let port = ports.first(where: { $0.kind == .other && !$0.isOptional }) {
            return "port \(port.symbol) is of a type Tactus does not know"
        }
        let audioOut = ports.filter { $0.kind == .audio && !$0.isInput }.count
        let audioIn = ports.filter { $0.kind == .audio && $0.isInput }.count
        if audioOut == 0 || audioOut > 2 { return "\(audioOut) audio outputs (Tactus takes 1 or 2)" }
        if audioIn > 2 { return "\(audioIn) audio inputs (Tactus takes at most 2)" }
        if ports.filter({ $0.kind == .atom && $0.isInput && $0.supportsMIDI }).count > 1 { return "more than one MIDI input" }
        return nil
    }
    /// True when Tactus can host it.
    public var isHostable: Bool { hostingProblem == nil }
    /// The control inputs: the node's parameters.
    public var controlInputs: [LV2PortInfo] { ports.filter { $0.kind == .control && $0.isInput } }
    /// The control outputs: what the plugin reports (meters, its latency); the node reads them
    /// after each run.
    public var controlOutputs: [LV2PortInfo] { ports.filter { $0.kind == .control && !$0.isInput } }
    /// The control output where the plugin reports its latency, if it has one.
    public var latencyPort: LV2PortInfo? { controlOutputs.first(where: \.reportsLatency) }
}

/// The LV2 plugins installed on this machine, found by lilv on `LV2_PATH` or, when it is not
/// set, lilv's standard folders (`~/.lv2`, `/usr/local/lib/lv2`, `/usr/lib/lv2`).
///
/// Loading reads every bundle's Turtle data once; hosted nodes keep the catalogue alive, as
/// their plugin descriptions belong to it. A catalogue is used from one thread at a time.
public final class LV2Catalogue {
    let world: OpaquePointer
    /// Every plugin found, sorted by URI.
    public let plugins: [LV2PluginInfo]
    private let handles: [String: OpaquePointer]
    private var presetCache: [String: [LV2Preset]] = [:]

    /// Loads lilv and reads every installed bundle. Catalogues may be made on several threads
    /// at once: their reading takes turns (see `reading`).
    /// - Parameter searchPath: folders holding bundles, separated by `:` as in `LV2_PATH`, to
    ///   search instead of `LV2_PATH` or the standard folders; nil searches those.
    /// - Throws: ``LV2Error/libraryUnavailable(reason:)`` without liblilv.
    public init(searchPath: String? = nil) throws(LV2Error) {
        try LV2Library.load()
        let loaded: (world: OpaquePointer, plugins: [LV2PluginInfo], handles: [String: OpaquePointer])? = Self.reading.withLock { _ in
            guard let world = lilv_world_new() else { return nil }
            if let searchPath, let path = lilv_new_string(world, searchPath) {
                lilv_world_set_option(world, "http://drobilla.net/ns/lilv#lv2-path", path)
                lilv_node_free(path)
            }
            lilv_world_load_all(world)
            let uris = CatalogueURIs(world: world)
            defer { uris.free() }
            var found: [LV2PluginInfo] = []
            var handles: [String: OpaquePointer] = [:]
            let all = lilv_world_get_all_plugins(world)
            var iterator = lilv_plugins_begin(all)
            // Describing a plugin makes lilv read its data files (it loads them lazily), so
            // every file is read here, inside the lock.
            while !lilv_plugins_is_end(all, iterator) {
                if let plugin = lilv_plugins_get(all, iterator) {
                    let info = Self.describe(plugin, world: world, uris: uris)
                    found.append(info)
                    handles[info.uri] = plugin
                }
                iterator = lilv_plugins_next(all, iterator)
            }
            return (world, found, handles)
        }
        guard let loaded else { throw .libraryUnavailable(reason: "lilv_world_new failed") }
        world = loaded.world
        plugins = loaded.plugins.sorted { $0.uri < $1.uri }
        handles = loaded.handles
    }

    /// Held while a catalogue reads Turtle files. lilv 0.24 names the blank nodes of each
    /// file it reads from one static buffer shared by every world in the process
    /// (`lilv_world_blank_node_prefix`); two worlds reading at once race on it, and serd may
    /// then copy a prefix without its terminator and read past it (AddressSanitizer caught
    /// that in CI when two test suites made catalogues at once).
    private static let reading = Mutex(())

    deinit {
        lilv_world_free(world)
    }

    /// The plugin with `uri`.
    /// - Throws: ``LV2Error/unknownPlugin(uri:suggestions:)`` with the closest URIs.
    public func plugin(_ uri: String) throws(LV2Error) -> LV2PluginInfo {
        if let info = plugins.first(where: { $0.uri == uri }) { return info }
        throw .unknownPlugin(uri: uri, suggestions: closeMatches(to: uri))
    }

    func handle(_ uri: String) -> OpaquePointer? { handles[uri] }

    /// The plugin's default state (its `state:state` in the bundle), or nil when it has none.
    func defaultState(of plugin: OpaquePointer, map: UnsafeMutablePointer<LV2_URID_Map>) -> OpaquePointer? {
        lilv_state_new_from_world(world, map, lilv_plugin_get_uri(plugin))
    }

    /// The state a preset holds (its data was read with the catalogue), or nil.
    func presetState(_ uri: String, map: UnsafeMutablePointer<LV2_URID_Map>) -> OpaquePointer? {
        // As an address: a pointer is not Sendable, and the lock's closure result must be.
        let world = UInt(bitPattern: self.world), mapAddress = UInt(bitPattern: map)
        let state: UInt = Self.reading.withLock { _ in
            guard let world = OpaquePointer(bitPattern: world), let map = UnsafeMutablePointer<LV2_URID_Map>(bitPattern: mapAddress),
                  let node = lilv_new_uri(world, uri) else { return 0 }
            defer { lilv_node_free(node) }
            return UInt(bitPattern: lilv_state_new_from_world(world, map, node))
        }
        return OpaquePointer(bitPattern: state)
    }

    /// The presets the plugin `uri` has (its bundles' and the user's), by label; none for an
    /// unknown plugin. Read on first request and kept: presets can be megabytes of Turtle
    /// (ZynAddSubFX's 32 banks are 35 MB, a third of a second to read), which a catalogue
    /// that only lists or hosts plugins should not pay for.
    public func presets(of uri: String) -> [LV2Preset] {
        if let known = presetCache[uri] { return known }
        guard let plugin = handles[uri] else { return [] }
        // As addresses: pointers are not Sendable, and the lock's closure result must be.
        let world = UInt(bitPattern: self.world), pluginAddress = UInt(bitPattern: plugin)
        let presets = Self.reading.withLock { _ -> [LV2Preset] in
            guard let world = OpaquePointer(bitPattern: world), let plugin = OpaquePointer(bitPattern: pluginAddress) else { return [] }
            let uris = CatalogueURIs(world: world)
            defer { uris.free() }
            return Self.readPresets(of: plugin, world: world, uris: uris)
        }
        presetCache[uri] = presets
        return presets
    }

    /// The preset of the plugin `uri` whose label (without regard to case) or URI is `name`.
    public func preset(named name: String, of uri: String) -> LV2Preset? {
        let presets = presets(of: uri)
        return presets.first { $0.uri == name } ?? presets.first { $0.label.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Runs `body` with the catalogue's lilv world, while no other catalogue reads Turtle (see
    /// `reading`): saving and loading states read and write it.
    func withWorld<Result>(_ body: (OpaquePointer) -> Result) -> Result {
        // As an address: a pointer is not Sendable.
        let world = UInt(bitPattern: self.world)
        return Self.reading.withLock { _ in
            body(OpaquePointer(bitPattern: world)!)
        }
    }

    /// Up to five plugin URIs close to `query`: those whose URI or name contains it (or its
    /// last path component), else the nearest by edit distance (and those one edit further).
    public func closeMatches(to query: String) -> [String] {
        let lowered = query.lowercased()
        let tail = lowered.split(separator: "/").last.map(String.init) ?? lowered
        let containing = plugins.filter {
            let uri = $0.uri.lowercased(), name = $0.name.lowercased()
            return uri.contains(lowered) || name.contains(tail) || uri.hasSuffix("/" + tail) || (tail.count >= 3 && uri.contains(tail))
        }
        if !containing.isEmpty { return Array(containing.prefix(5).map(\.uri)) }
        let ranked = plugins.map { ($0.uri, editDistance(lowered, $0.uri.lowercased())) }
            .filter { $0.1 <= max(2, lowered.count / 8) }
            .sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
        // The nearest, and those one edit further: more would be noise.
        guard let best = ranked.first?.1 else { return [] }
        return Array(ranked.filter { $0.1 <= best + 1 }.prefix(5).map(\.0))
    }

    private static func describe(_ plugin: OpaquePointer, world: OpaquePointer, uris: CatalogueURIs) -> LV2PluginInfo {
        let uri = string(lilv_node_as_uri(lilv_plugin_get_uri(plugin)))
        let nameNode = lilv_plugin_get_name(plugin)
        let name = nameNode.map { string(lilv_node_as_string($0)) } ?? uri
        if let nameNode { lilv_node_free(nameNode) }
        // lilv names a class only when the bundle defining it is installed (lv2core.lv2, in Debian's
        // lv2-dev, which a plain system lacks): otherwise every plugin is a bare lv2:Plugin. The
        // plugin's own rdf:type statements say what its data says, installed ontology or not.
        var declaredTypes: [String] = []
        if let types = lilv_plugin_get_value(plugin, uris.rdfType) {
            var i = lilv_nodes_begin(types)
            while !lilv_nodes_is_end(types, i) {
                if let node = lilv_nodes_get(types, i) { declaredTypes.append(string(lilv_node_as_uri(node))) }
                i = lilv_nodes_next(types, i)
            }
            lilv_nodes_free(types)
            // In a fixed order, so a plugin declaring two classes is always given the same one.
            declaredTypes.sort()
        }
        let lilvClass = lilv_plugin_get_class(plugin).flatMap { lilv_plugin_class_get_uri($0) }.map { string(lilv_node_as_uri($0)) } ?? ""
        let classURI = lilvClass != LV2URI.plugin && !lilvClass.isEmpty ? lilvClass
            : declaredTypes.contains(LV2URI.instrumentPlugin) ? LV2URI.instrumentPlugin
            : declaredTypes.first { $0 != LV2URI.plugin } ?? LV2URI.plugin
        var features: [String] = []
        if let required = lilv_plugin_get_required_features(plugin) {
            var i = lilv_nodes_begin(required)
            while !lilv_nodes_is_end(required, i) {
                if let node = lilv_nodes_get(required, i) { features.append(string(lilv_node_as_uri(node))) }
                i = lilv_nodes_next(required, i)
            }
            lilv_nodes_free(required)
        }
        var ports: [LV2PortInfo] = []
        for index in 0..<lilv_plugin_get_num_ports(plugin) {
            guard let port = lilv_plugin_get_port_by_index(plugin, index) else { continue }
            ports.append(describePort(plugin, port, index: index, uris: uris))
        }
        let takesMIDI = ports.contains { $0.kind == .atom && $0.isInput && $0.supportsMIDI }
        let takesAudio = ports.contains { $0.kind == .audio && $0.isInput }
        let makesAudio = ports.contains { $0.kind == .audio && !$0.isInput }
        let kind: LV2PluginInfo.Kind = classURI == LV2URI.instrumentPlugin || (takesMIDI && makesAudio && !takesAudio) ? .instrument
            : takesAudio && makesAudio ? .effect : .other
        // lilv gives a plugin's features in an order that changes from one world to the next.
        var info = LV2PluginInfo(uri: uri, name: name, kind: kind, classURI: classURI, ports: ports, requiredFeatures: features.sorted())
        info.fileParameters = fileParameters(of: plugin, world: world, uris: uris)
        return info
    }

    /// The plugin's `patch:writable` parameters whose range is `atom:Path`, by URI.
    private static func fileParameters(of plugin: OpaquePointer, world: OpaquePointer, uris: CatalogueURIs) -> [LV2FileParameter] {
        guard let writable = lilv_plugin_get_value(plugin, uris.patchWritable) else { return [] }
        defer { lilv_nodes_free(writable) }
        var parameters: [LV2FileParameter] = []
        var i = lilv_nodes_begin(writable)
        while !lilv_nodes_is_end(writable, i) {
            defer { i = lilv_nodes_next(writable, i) }
            guard let node = lilv_nodes_get(writable, i), lilv_node_is_uri(node),
                  let range = lilv_world_get(world, node, uris.range, nil) else { continue }
            defer { lilv_node_free(range) }
            guard lilv_node_equals(range, uris.atomPath) else { continue }
            var parameter = LV2FileParameter(uri: string(lilv_node_as_uri(node)), label: "")
            parameter.label = parameter.shortName
            if let label = lilv_world_get(world, node, uris.label, nil) {
                parameter.label = string(lilv_node_as_string(label))
                lilv_node_free(label)
            }
            parameters.append(parameter)
        }
        return parameters.sorted { $0.uri < $1.uri }
    }

    /// The plugin's presets, by label: each one's data file is read for its label.
    private static func readPresets(of plugin: OpaquePointer, world: OpaquePointer, uris: CatalogueURIs) -> [LV2Preset] {
        guard let related = lilv_plugin_get_related(plugin, uris.preset) else { return [] }
        defer { lilv_nodes_free(related) }
        var presets: [LV2Preset] = []
        var i = lilv_nodes_begin(related)
        while !lilv_nodes_is_end(related, i) {
            if let node = lilv_nodes_get(related, i) {
                let uri = string(lilv_node_as_uri(node))
                _ = lilv_world_load_resource(world, node)
                var label = uri
                if let labelNode = lilv_world_get(world, node, uris.label, nil) {
                    let text = string(lilv_node_as_string(labelNode))
                    if !text.isEmpty { label = text }
                    lilv_node_free(labelNode)
                }
                presets.append(LV2Preset(uri: uri, label: label))
            }
            i = lilv_nodes_next(related, i)
        }
        return presets.sorted { $0.label != $1.label ? $0.label < $1.label : $0.uri < $1.uri }
    }

    private static func describePort(_ plugin: OpaquePointer, _ port: OpaquePointer, index: UInt32, uris: CatalogueURIs) -> LV2PortInfo {
        func isA(_ node: OpaquePointer) -> Bool { lilv_port_is_a(plugin, port, node) }
        func has(_ node: OpaquePointer) -> Bool { lilv_port_has_property(plugin, port, node) }
        let symbol = string(lilv_node_as_string(lilv_port_get_symbol(plugin, port)))
        let nameNode = lilv_port_get_name(plugin, port)
        let name = nameNode.map { string(lilv_node_as_string($0)) } ?? symbol
        if let nameNode { lilv_node_free(nameNode) }
        let kind: LV2PortInfo.Kind = isA(uris.audioPort) ? .audio : isA(uris.controlPort) ? .control
            : isA(uris.atomPort) ? .atom : isA(uris.cvPort) ? .cv : .other
        var info = LV2PortInfo(index: index, symbol: symbol, name: name, kind: kind, isInput: isA(uris.inputPort),
                               isOptional: has(uris.connectionOptional), supportsMIDI: false, minimumSize: nil,
                               defaultValue: nil, minimum: nil, maximum: nil, isToggle: has(uris.toggled),
                               isInteger: has(uris.integer), isSampleRateRelative: has(uris.sampleRate))
        if kind == .atom {
            info.supportsMIDI = lilv_port_supports_event(plugin, port, uris.midiEvent)
            info.supportsTimePosition = lilv_port_supports_event(plugin, port, uris.timePosition)
            if let size = lilv_port_get(plugin, port, uris.minimumSize) {
                if lilv_node_is_int(size) { info.minimumSize = Int(lilv_node_as_int(size)) }
                lilv_node_free(size)
            }
        }
        if kind == .control {
            if !info.isInput, has(uris.reportsLatency) {
                info.reportsLatency = true
            } else if !info.isInput, let designation = lilv_port_get(plugin, port, uris.designation) {
                info.reportsLatency = lilv_node_equals(designation, uris.latency)
                lilv_node_free(designation)
            }
            var def: OpaquePointer?, low: OpaquePointer?, high: OpaquePointer?
            lilv_port_get_range(plugin, port, &def, &low, &high)
            func number(_ node: OpaquePointer?) -> Float? {
                guard let node else { return nil }
                defer { lilv_node_free(node) }
                if lilv_node_is_float(node) || lilv_node_is_int(node) { return lilv_node_as_float(node) }
                return nil
            }
            info.defaultValue = number(def)
            info.minimum = number(low)
            info.maximum = number(high)
        }
        return info
    }
}

/// The class and property nodes the catalogue asks lilv about, made once per load.
private struct CatalogueURIs {
    let audioPort, controlPort, atomPort, cvPort, inputPort, midiEvent, timePosition, minimumSize: OpaquePointer
    let connectionOptional, toggled, integer, sampleRate, rdfType, preset, label: OpaquePointer
    let patchWritable, range, atomPath, reportsLatency, designation, latency: OpaquePointer

    init(world: OpaquePointer) {
        func node(_ uri: String) -> OpaquePointer { lilv_new_uri(world, uri) }
        audioPort = node(LV2URI.audioPort)
        controlPort = node(LV2URI.controlPort)
        atomPort = node(LV2URI.atomPort)
        cvPort = node(LV2URI.cvPort)
        inputPort = node(LV2URI.inputPort)
        midiEvent = node(LV2URI.midiEvent)
        timePosition = node(LV2URI.timePosition)
        minimumSize = node(LV2URI.minimumSize)
        connectionOptional = node(LV2URI.connectionOptional)
        toggled = node(LV2URI.toggled)
        integer = node(LV2URI.integer)
        sampleRate = node(LV2URI.sampleRateProperty)
        rdfType = node(LV2URI.rdfType)
        preset = node(LV2URI.preset)
        label = node(LV2URI.rdfsLabel)
        patchWritable = node(LV2URI.patchWritable)
        range = node(LV2URI.rdfsRange)
        atomPath = node(LV2URI.atomPath)
        reportsLatency = node(LV2URI.reportsLatency)
        designation = node(LV2URI.designation)
        latency = node(LV2URI.latency)
    }

    func free() {
        for node in [audioPort, controlPort, atomPort, cvPort, inputPort, midiEvent, timePosition, minimumSize, connectionOptional, toggled, integer, sampleRate,
                     rdfType, preset, label, patchWritable, range, atomPath, reportsLatency, designation, latency] {
            lilv_node_free(node)
        }
    }
}

private func string(_ pointer: UnsafePointer<CChar>?) -> String {
    pointer.map { String(cString: $0) } ?? ""
}

/// Levenshtein distance, for suggesting URIs close to a mistyped one.
private func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.utf8), b = Array(b.utf8)
    if a.isEmpty { return b.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...max(1, b.count) where !b.isEmpty {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
