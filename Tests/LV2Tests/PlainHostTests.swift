import CLilv
import Foundation
import LV2
import Testing

/// What the fixed grid is for: a plain host that hands each block to `run` gets different
/// samples from MDA JX10 at 64- and 65-frame blocks (part of its state advances per `run`,
/// not per frame), where `LV2PluginNode` gives the same at any block size (LV2InstrumentTests).
@Suite(.enabled(if: hasMDAPlugins, "\(needsPlugins)"))
struct PlainHostTests {
    /// 20,000 frames of JX10's left output, run in blocks of `block` frames by a minimal
    /// host (URID map only, as JX10 requires), with notes at fixed frames.
    func plainRender(block: Int) throws -> [Float] {
        let uri = mda("JX10")
        let info = try LV2Catalogue().plugin(uri)
        let world = try #require(lilv_world_new())
        defer { lilv_world_free(world) }
        lilv_world_load_all(world)
        let uriNode = lilv_new_uri(world, uri)
        defer { lilv_node_free(uriNode) }
        let plugin = try #require(lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), uriNode))
        let map = try #require(tactus_urid_map_new())
        defer { tactus_urid_map_free(map) }
        let mapURI = strdup("http://lv2plug.in/ns/ext/urid#map")!
        defer { free(mapURI) }
        var feature = LV2_Feature(URI: mapURI, data: UnsafeMutableRawPointer(tactus_urid_map_feature(map)))
        let instance = try withUnsafePointer(to: &feature) { pointer in
            var list: [UnsafePointer<LV2_Feature>?] = [pointer, nil]
            return try #require(lilv_plugin_instantiate(plugin, 44_100, &list))
        }
        defer { lilv_instance_free(instance) }
        let descriptor = instance.pointee.lv2_descriptor.pointee, handle = instance.pointee.lv2_handle
        let controls = UnsafeMutablePointer<Float>.allocate(capacity: info.ports.count)
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block), right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let sequence = UnsafeMutableRawPointer.allocate(byteCount: 8192, alignment: 8)
        defer { controls.deallocate(); left.deallocate(); right.deallocate(); sequence.deallocate() }
        var outputs = [left, right]
        for port in info.ports {
            switch port.kind {
            case .control:
                controls[Int(port.index)] = port.defaultValue ?? 0
                descriptor.connect_port?(handle, port.index, controls + Int(port.index))
            case .audio: descriptor.connect_port?(handle, port.index, outputs.removeFirst())
            case .atom: descriptor.connect_port?(handle, port.index, sequence)
            default: descriptor.connect_port?(handle, port.index, nil)
            }
        }
        descriptor.activate?(handle)
        let notes: [(frame: Int, bytes: [UInt8])] = [(100, [0x90, 60, 100]), (5_000, [0x90, 67, 90]), (9_000, [0x80, 60, 0]), (14_000, [0x80, 67, 0])]
        let sequenceType = tactus_urid_map_uri(map, "http://lv2plug.in/ns/ext/atom#Sequence")
        let midiType = tactus_urid_map_uri(map, "http://lv2plug.in/ns/ext/midi#MidiEvent")
        var out: [Float] = []
        var position = 0
        while position < 20_000 {
            let n = min(block, 20_000 - position)
            var used = 16
            for note in notes where note.frame >= position && note.frame < position + n {
                (sequence + used).storeBytes(of: Int64(note.frame - position), as: Int64.self)
                (sequence + used + 8).storeBytes(of: UInt32(3), as: UInt32.self)
                (sequence + used + 12).storeBytes(of: midiType, as: UInt32.self)
                for (i, byte) in note.bytes.enumerated() { (sequence + used + 16 + i).storeBytes(of: byte, as: UInt8.self) }
                used += 24
            }
            sequence.storeBytes(of: UInt32(used - 8), as: UInt32.self)
            (sequence + 4).storeBytes(of: sequenceType, as: UInt32.self)
            (sequence + 8).storeBytes(of: UInt64(0), as: UInt64.self)
            descriptor.run?(handle, UInt32(n))
            out.append(contentsOf: UnsafeBufferPointer(start: left, count: n))
            position += n
        }
        descriptor.deactivate?(handle)
        return out
    }

    @Test func jx10DependsOnTheBlockSizeInAPlainHost() throws {
        let at64 = try plainRender(block: 64)
        let at65 = try plainRender(block: 65)
        #expect(at64.contains { $0 != 0 })
        #expect(at64 != at65)
    }
}
