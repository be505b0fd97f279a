import enum AudioTestSupport.ExternalTools
import func AudioTestSupport.writeSineWAV
import AudioGraph
import CLilv
import Foundation
import LV2
import MIDI
import Testing
import TactusTestSupport

@Suite struct URIDMapTests {
    /// Some plugins map thousands of URIs: the map has no fixed size, unmap returns each URI,
    /// and mapping a URI already mapped allocates nothing (the audio thread's path).
    @Test func mapsFifteenThousandURIsAndRemapsWithoutAllocating() throws {
        let map = try #require(tactus_urid_map_new())
        defer { tactus_urid_map_free(map) }
        let uris = (0..<15_000).map { "http://example.org/ns#thing\($0)" }
        let ids = uris.map { tactus_urid_map_uri(map, $0) }
        #expect(ids == Array(1...15_000).map(UInt32.init))
        #expect(tactus_urid_map_count(map) == 15_000)
        for (uri, id) in zip(uris, ids) where id % 997 == 0 {
            #expect(String(cString: tactus_urid_unmap(map, id)) == uri)
        }
        #expect(tactus_urid_unmap(map, 15_001) == nil)
        let cStrings = uris.map { strdup($0)! }
        defer { cStrings.forEach { free($0) } }
        let again = UnsafeMutablePointer<UInt32>.allocate(capacity: cStrings.count)
        defer { again.deallocate() }
        let counted = AllocationCounter.count {
            // An index loop: for-in over an array of pointers allocates in unoptimized builds.
            for i in 0..<cStrings.count { again[i] = tactus_urid_map_uri(map, cStrings[i]) }
        }
        #expect(Array(UnsafeBufferPointer(start: again, count: cStrings.count)) == ids)
        if AllocationCounter.isWorking { #expect(counted.isZero, "\(counted)") }
    }

    /// Threads mapping the same new URIs while the tables grow agree on every id.
    @Test func concurrentMappingAgrees() async throws {
        let map = try #require(tactus_urid_map_new())
        defer { tactus_urid_map_free(map) }
        let address = UInt(bitPattern: map)
        let results = await withTaskGroup(of: [UInt32].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let shared = OpaquePointer(bitPattern: address)!
                    return (0..<5_000).map { tactus_urid_map_uri(shared, "urn:tactus:test:\($0)") }
                }
            }
            var all: [[UInt32]] = []
            for await ids in group { all.append(ids) }
            return all
        }
        #expect(Set(results).count == 1)
        #expect(Set(results[0]).count == 5_000)
    }
}

/// eg-sampler loads its samples with libsndfile, which lilv cannot load it without.
let hasEgSampler: Bool = {
    guard ExternalTools.libraryLoads("libsndfile.so.1") else { return false }
    return (try? LV2Catalogue())?.plugins.contains { $0.uri == "http://lv2plug.in/plugins/eg-sampler" } ?? false
}()

let needsEgSampler = "needs lilv, eg-sampler and libsndfile (Debian packages liblilv-0-0, lv2-examples, libsndfile1)"

@Suite(.enabled(if: hasMDAPlugins, "\(needsPlugins)"))
struct LV2CatalogueConcurrencyTests {
    /// Programs (and test suites) make catalogues on several threads: each reads every bundle
    /// whole and finds what a catalogue made alone finds. (lilv shares one buffer between its
    /// worlds while reading; unserialized, AddressSanitizer saw serd read past a blank node
    /// prefix.)
    @Test func cataloguesMadeOnFourThreadsAtOnceAgreeWithOneMadeAlone() async throws {
        let alone = try LV2Catalogue().plugins
        #expect(alone.count > 20)
        let together = try await withThrowingTaskGroup(of: [LV2PluginInfo].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var last: [LV2PluginInfo] = []
                    for _ in 0..<3 { last = try LV2Catalogue().plugins }
                    return last
                }
            }
            var all: [[LV2PluginInfo]] = []
            for try await plugins in group { all.append(plugins) }
            return all
        }
        #expect(together.count == 4)
        for plugins in together {
            #expect(plugins.map(\.uri) == alone.map(\.uri))
            let differing = zip(plugins, alone).filter { $0 != $1 }.map { found, expected in
                "\(found.uri): \(found.ports.count) ports, \(found.requiredFeatures), class \(found.classURI); alone \(expected.ports.count), \(expected.requiredFeatures), class \(expected.classURI)"
            }
            #expect(differing.isEmpty, "\(differing.prefix(3))")
        }
    }
}

@Suite(.enabled(if: hasMDAPlugins, "\(needsPlugins)"))
struct LV2NodeBehaviourTests {
    /// eg-sampler requires its default state loaded: restored at instantiation, it plays
    /// its sample, the same samples at any block size.
    @Test(.enabled(if: hasEgSampler, "\(needsEgSampler)")) func egSamplerPlaysItsDefaultSample() throws {
        var renders: [[Float]] = []
        for sizes in [[64], [1], [65], randomBlockSizes(count: 50, maximum: 900, seed: 9)] {
            let node = try LV2PluginNode(uri: "http://lv2plug.in/plugins/eg-sampler", catalogue: LV2Catalogue())
            let (left, right) = try NodeRenderer(node: node, events: notes(), frameCount: 30_000, blockSizes: sizes).render()
            renders.append(left + right)
        }
        #expect(renders.allSatisfy { $0 == renders[0] })
        #expect(renders[0].contains { $0 != 0 })
    }

    func notes() -> [FramedNodeEvent] {
        (0..<24).flatMap { i -> [FramedNodeEvent] in
            let frame = Int64(i * 1_531 + (i % 5) * 7)
            return [.midi(.noteOn(channel: 0, key: UInt8(40 + i), velocity: 100), at: frame),
                    .midi(.noteOff(channel: 0, key: UInt8(40 + i)), at: frame + 3_001)]
        }
    }

    /// A 0.25 s 16-bit mono WAV of a 660 Hz sine.
    func sineWAV() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-lv2-\(UUID().uuidString).wav")
        try writeSineWAV(frequency: 660, frames: 11_025, to: url)
        return url
    }

    /// patch:Set of eg-sampler's sample: the plugin loads the file in its worker, which runs
    /// right after the slice, so every render plays the new sample from the same frame.
    @Test(.enabled(if: hasEgSampler, "\(needsEgSampler)")) func aFileParameterLoadsThroughTheWorker() throws {
        let wav = try sineWAV()
        defer { try? FileManager.default.removeItem(at: wav) }
        let sampler = "http://lv2plug.in/plugins/eg-sampler"
        let plain = try NodeRenderer(node: LV2PluginNode(uri: sampler, catalogue: LV2Catalogue()), events: notes(), frameCount: 30_000).render()
        var renders: [[Float]] = []
        for sizes in [[64], [1], [65], randomBlockSizes(count: 50, maximum: 900, seed: 11)] {
            let node = try LV2PluginNode(uri: sampler, catalogue: LV2Catalogue())
            node.setFile(wav.path, forProperty: "http://lv2plug.in/plugins/eg-sampler#sample")
            let (left, right) = try NodeRenderer(node: node, events: notes(), frameCount: 30_000, blockSizes: sizes).render()
            renders.append(left + right)
        }
        #expect(renders.allSatisfy { $0 == renders[0] })
        #expect(Array(renders[0].prefix(30_000)) != plain.left)
        #expect(renders[0].contains { $0 != 0 })
    }

    @Test func renderingAllocatesNothing() throws {
        for plugin in ["Piano", "JX10"] {
            let node = try LV2PluginNode(uri: mda(plugin), catalogue: LV2Catalogue())
            let renderer = try NodeRenderer(node: node, events: notes(), frameCount: 50_000,
                                            blockSizes: randomBlockSizes(count: 97, maximum: 700, seed: 27))
            #expect(AllocationCounter.isWorking)
            let counted = renderer.renderAllocations()
            #expect(counted.isZero, "\(plugin): \(counted)")
        }
    }

    /// An effect hears its input one grid late (the latency offline renders drop) and gives
    /// the same samples at any block size.
    @Test func anEffectOnTheGrid() throws {
        var renders: [[Float]] = []
        for sizes in [[64], [1], [65], randomBlockSizes(count: 50, maximum: 900, seed: 5)] {
            let node = try LV2PluginNode(uri: mda("Overdrive"), catalogue: LV2Catalogue())
            #expect(node.inputBusCount == 1 && node.latencyFrames == 64)
            node.setParameter(try node.parameterID(for: "drive"), value: 0.7)
            let (left, right) = try NodeRenderer(node: node, frameCount: 30_000, blockSizes: sizes).render()
            renders.append(left + right)
        }
        #expect(renders.allSatisfy { $0 == renders[0] })
        let left = renders[0].prefix(30_000)
        #expect(left.prefix(64).allSatisfy { $0 == 0 })
        #expect(left.dropFirst(64).prefix(200).contains { $0 != 0 })
    }

    /// Control inputs are parameters named as the ports, found by symbol or name, with the
    /// declared range and default; a change is heard.
    @Test func controlInputsAreParameters() throws {
        let node = try LV2PluginNode(uri: mda("Piano"), catalogue: LV2Catalogue())
        #expect(node.parameterInfos.count == 12)
        let decay = try node.parameterID(for: "env_decay")
        #expect(try node.parameterID(for: "envelope decay") == decay)
        let info = try #require(node.parameterInfo(decay))
        #expect(info.name == "Envelope Decay" && info.range == 0...1 && info.defaultValue == 0.5)
        #expect(throws: LV2Error.unknownParameter(plugin: "MDA Piano", name: "loudness")) { try node.parameterID(for: "loudness") }
        let graph = AudioGraph()
        let id = graph.add(node)
        #expect(try graph.parameterID(node: id, named: "Fine Tuning") == node.parameterID(for: "fine_tuning"))

        let plain = try NodeRenderer(node: LV2PluginNode(uri: mda("Piano"), catalogue: LV2Catalogue()), events: notes(), frameCount: 20_000).render()
        let tuned = try LV2PluginNode(uri: mda("Piano"), catalogue: LV2Catalogue())
        tuned.setParameter(try tuned.parameterID(for: "fine_tuning"), value: 0.9)
        #expect(tuned.parameterValue(try tuned.parameterID(for: "fine_tuning")) == 0.9)
        let changed = try NodeRenderer(node: tuned, events: notes(), frameCount: 20_000).render()
        #expect(changed.left != plain.left)
        #expect(plain.left.contains { $0 != 0 })
    }

    @Test func refusesWhatItCannotHost() throws {
        let catalogue = try LV2Catalogue()
        try #require(catalogue.plugins.contains { $0.uri == "http://lv2plug.in/plugins/eg-fifths" }, "needs lv2-examples")
        #expect(throws: LV2Error.notHostable(plugin: "Example Fifths (http://lv2plug.in/plugins/eg-fifths)",
                                             reason: "0 audio outputs (Tactus takes 1 or 2)")) {
            try LV2PluginNode(uri: "http://lv2plug.in/plugins/eg-fifths", catalogue: catalogue)
        }
        #expect(throws: LV2Error.unknownPlugin(uri: "http://drobilla.net/plugins/mda/JX1O", suggestions: [mda("JX10"), mda("DX10")])) {
            try LV2PluginNode(uri: "http://drobilla.net/plugins/mda/JX1O", catalogue: catalogue)
        }
    }
}
