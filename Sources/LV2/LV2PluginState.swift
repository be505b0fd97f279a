import CLilv
import Foundation

extension LV2PluginNode {
    /// The file a saved state's folder holds its description in.
    public static let stateFileName = "state.ttl"

    /// Saves the plugin's state in the folder `directory` (made if missing): its control
    /// values and what its state interface saves (a sampler's sample, a synthesizer's whole
    /// patch), described in ``stateFileName``. Files the state names are copied into the
    /// folder and named relative to it, so the folder can move as a whole and the originals
    /// can change or go. Call it on the
    /// control side while the node is not rendering.
    /// - Throws: ``LV2Error/stateFailed(path:reason:)`` when the folder cannot be made or
    ///   written.
    public func saveState(to directory: String) throws(LV2Error) {
        let folder = (directory as NSString).standardizingPath
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw .stateFailed(path: folder, reason: "cannot create the folder (\(error.localizedDescription))")
        }
        guard let instance else { throw .stateFailed(path: folder, reason: "\(info.name) is not instantiated") }
        let values = StateValues(node: self, map: features.map)
        let context = Unmanaged.passUnretained(values).toOpaque()
        let map = tactus_urid_map_feature(features.map), unmap = tactus_urid_unmap_feature(features.map)
        let saved: Int32 = catalogue.withWorld { world in
            guard let state = lilv_state_new_from_instance(plugin, instance, map, nil, folder, folder, folder, { symbol, context, size, type in
                guard let symbol, let context, let size, let type else { return nil }
                return Unmanaged<StateValues>.fromOpaque(context).takeUnretainedValue().value(of: String(cString: symbol), size: size, type: type)
            }, context, 3 /* LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE */, features.featureList) else { return -1 }
            defer { lilv_state_free(state) }
            return lilv_state_save(world, map, unmap, state, nil, folder, Self.stateFileName)
        }
        guard saved == 0 else { throw .stateFailed(path: folder, reason: "lilv could not save \(info.name)'s state there") }
        // lilv links the files the state names (a sample outside the folder); copies instead
        // keep the state whole wherever the folder goes, and whatever becomes of the originals.
        let fileManager = FileManager.default
        for name in (try? fileManager.contentsOfDirectory(atPath: folder)) ?? [] {
            let link = (folder as NSString).appendingPathComponent(name)
            guard let target = try? fileManager.destinationOfSymbolicLink(atPath: link) else { continue }
            let source = target.hasPrefix("/") ? target : ((folder as NSString).appendingPathComponent(target) as NSString).standardizingPath
            do {
                try fileManager.removeItem(atPath: link)
                try fileManager.copyItem(atPath: source, toPath: link)
            } catch {
                throw .stateFailed(path: link, reason: "cannot copy \(source) into the state's folder (\(error.localizedDescription))")
            }
        }
    }

    /// Loads a state saved by ``saveState(to:)`` (or by another host, such as jalv) from the
    /// folder `directory` (or its ``stateFileName`` named directly): control values into the
    /// parameters, the rest through the plugin's state interface, then the work it schedules
    /// (loading the files the state names). Call it on the control side while the node is not
    /// rendering; values set afterwards override the state's.
    /// - Throws: ``LV2Error/stateFailed(path:reason:)`` when there is no readable state there,
    ///   or it is another plugin's.
    public func loadState(from directory: String) throws(LV2Error) {
        var path = (directory as NSString).standardizingPath
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            path = (path as NSString).appendingPathComponent(Self.stateFileName)
        }
        guard FileManager.default.isReadableFile(atPath: path) else { throw .stateFailed(path: path, reason: "no readable state file") }
        let map = tactus_urid_map_feature(features.map)
        // As an address: a pointer is not Sendable.
        let loaded: UInt = catalogue.withWorld { world in UInt(bitPattern: lilv_state_new_from_file(world, map, nil, path)) }
        guard let state = OpaquePointer(bitPattern: loaded) else { throw .stateFailed(path: path, reason: "not a state lilv can read") }
        let owner = lilv_state_get_plugin_uri(state).flatMap { lilv_node_as_uri($0) }.map { String(cString: $0) } ?? "no plugin"
        guard owner == info.uri else {
            lilv_state_free(state)
            throw .stateFailed(path: path, reason: "a state of \(owner), not of \(info.uri)")
        }
        guard let instance else {
            lilv_state_free(state)
            throw .stateFailed(path: path, reason: "\(info.name) is not instantiated")
        }
        restore(state, into: instance)
    }
}

/// The control values a state being saved reads, one at a time: lilv copies each before it
/// asks for the next.
private final class StateValues {
    let node: LV2PluginNode
    let floatType: LV2_URID
    private let current = UnsafeMutablePointer<Float>.allocate(capacity: 1)

    init(node: LV2PluginNode, map: OpaquePointer) {
        self.node = node
        floatType = tactus_urid_map_uri(map, "http://lv2plug.in/ns/ext/atom#Float")
    }

    deinit { current.deallocate() }

    func value(of symbol: String, size: UnsafeMutablePointer<UInt32>, type: UnsafeMutablePointer<UInt32>) -> UnsafeRawPointer? {
        guard let port = node.info.controlInputs.first(where: { $0.symbol == symbol }),
              let value = node.parameters.current(port.index) else { return nil }
        current.pointee = value
        size.pointee = 4
        type.pointee = floatType
        return UnsafeRawPointer(current)
    }
}

extension LV2PluginNode {
    /// Restores the plugin's default state: its properties through the plugin's state
    /// interface (lilv adds the path features; the worker is offered for plugins that load
    /// files through it), and its port values into the parameters, each read with its type.
    func restoreDefaultState(_ instance: UnsafeMutablePointer<LilvInstance>) {
        guard let state = catalogue.defaultState(of: plugin, map: tactus_urid_map_feature(features.map)) else { return }
        restore(state, into: instance)
    }

    /// Loads the preset whose label or URI is `name` (``LV2Catalogue/presets(of:)``): its control
    /// values become the parameters' values, and a plugin with state gets the preset's state.
    /// Call it on the control side while the node is not rendering; values set afterwards
    /// (automation, `setParameter(_:value:)`) override the preset's.
    /// - Throws: ``LV2Error/unknownPreset(plugin:name:presets:)`` naming the plugin's presets.
    public func loadPreset(_ name: String) throws(LV2Error) {
        guard let preset = catalogue.preset(named: name, of: info.uri),
              let state = catalogue.presetState(preset.uri, map: tactus_urid_map_feature(features.map)) else {
            throw .unknownPreset(plugin: info.name, name: name, presets: catalogue.presets(of: info.uri).map(\.label))
        }
        guard let instance else {
            lilv_state_free(state)
            return
        }
        restore(state, into: instance)
    }

    /// Restores `state` (freed here): port values into the parameters, properties through
    /// the plugin's state interface, then the work it scheduled.
    func restore(_ state: OpaquePointer, into instance: UnsafeMutablePointer<LilvInstance>) {
        defer { lilv_state_free(state) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        workingHere {
            lilv_state_restore(state, instance, { symbol, context, value, size, type in
                guard let symbol, let context, let value else { return }
                let node = Unmanaged<LV2PluginNode>.fromOpaque(context).takeUnretainedValue()
                node.restorePort(String(cString: symbol), value: value, size: size, type: type)
            }, context, 0, features.featureList)
            features.worker.perform(handle: instance.pointee.lv2_handle)
            features.worker.drain(handle: instance.pointee.lv2_handle)
        }
    }

    private func restorePort(_ symbol: String, value: UnsafeRawPointer, size: UInt32, type: LV2_URID) {
        guard let port = info.controlInputs.first(where: { $0.symbol == symbol }) else { return }
        let map = features.map
        let number: Float?
        switch type {
        case tactus_urid_map_uri(map, LV2URI.atomFloat) where size >= 4: number = value.loadUnaligned(as: Float.self)
        case tactus_urid_map_uri(map, LV2URI.atomDouble) where size >= 8: number = Float(value.loadUnaligned(as: Double.self))
        case tactus_urid_map_uri(map, LV2URI.atomInt) where size >= 4: number = Float(value.loadUnaligned(as: Int32.self))
        case tactus_urid_map_uri(map, LV2URI.atomLong) where size >= 8: number = Float(value.loadUnaligned(as: Int64.self))
        case tactus_urid_map_uri(map, LV2URI.atomBool) where size >= 4: number = value.loadUnaligned(as: Int32.self) != 0 ? 1 : 0
        default: number = nil
        }
        if let number { parameters.jump(port.index, to: number) }
    }
}
