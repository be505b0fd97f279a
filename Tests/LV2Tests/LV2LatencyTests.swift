import AudioGraph
import AudioTestSupport
import Foundation
import LV2
import MIDI
import Playback
import Sequencing
import Testing

/// The test plugin: an instrument with a look-ahead of 100 frames, as limiters and
/// linear-phase filters have. While a note is held it plays `level`, heard 100 frames later,
/// and reports that latency on a control output designated `lv2:latency` (set in `run`, so a
/// host must run it to know). It echoes the `level` it read on the control output `level_out`,
/// and has a CV input it adds to the left channel and a CV output, neither optional.
private let lookaheadSource = TestPlugins.abi + """
#define LATENCY 100
typedef struct {
    const uint8_t *events; float *left, *right; const float *level; float *levelOut, *latency;
    const float *mod; float *modOut; float ring[LATENCY]; uint32_t position; int held;
} Lookahead;
static void *instantiate(const void *d, double rate, const char *path, const void *const *features) { return calloc(1, sizeof(Lookahead)); }
static void connect_port(void *h, uint32_t port, void *data) {
    Lookahead *p = h;
    switch (port) {
    case 0: p->events = data; break;
    case 1: p->left = data; break;
    case 2: p->right = data; break;
    case 3: p->level = data; break;
    case 4: p->levelOut = data; break;
    case 5: p->latency = data; break;
    case 6: p->mod = data; break;
    default: p->modOut = data; break;
    }
}
static void activate(void *h) { Lookahead *p = h; memset(p->ring, 0, sizeof p->ring); p->position = 0; p->held = 0; }
static void run(void *h, uint32_t frames) {
    Lookahead *p = h;
    for (uint32_t i = 0; i < frames; i++) {
        FOR_EACH_MIDI_EVENT(p->events, frame, message, {
            if (frame == i && (message[0] & 0xF0) == 0x90 && message[2] > 0) p->held = 1;
            if (frame == i && ((message[0] & 0xF0) == 0x80 || ((message[0] & 0xF0) == 0x90 && message[2] == 0))) p->held = 0;
        })
        float heard = p->ring[p->position];
        p->ring[p->position] = p->held ? *p->level : 0;
        p->position = (p->position + 1) % LATENCY;
        p->left[i] = heard + p->mod[i];
        p->right[i] = heard;
        p->modOut[i] = p->mod[i] + 1;
    }
    *p->levelOut = *p->level;
    *p->latency = LATENCY;
}
static void cleanup(void *h) { free(h); }
static const Descriptor descriptor = { "urn:tactus:test:lookahead", instantiate, connect_port, activate, run, 0, cleanup, 0 };
const Descriptor *lv2_descriptor(uint32_t index) { return index == 0 ? &descriptor : 0; }
"""

private let lookaheadManifest = """
@prefix lv2: <http://lv2plug.in/ns/lv2core#> .
@prefix atom: <http://lv2plug.in/ns/ext/atom#> .
@prefix midi: <http://lv2plug.in/ns/ext/midi#> .
@prefix doap: <http://usefulinc.com/ns/doap#> .
<urn:tactus:test:lookahead> a lv2:Plugin, lv2:InstrumentPlugin ;
    lv2:binary <lookahead.so> ;
    doap:name "Look-ahead" ;
    lv2:port [ a lv2:InputPort, atom:AtomPort ; atom:bufferType atom:Sequence ; atom:supports midi:MidiEvent ;
               lv2:index 0 ; lv2:symbol "events" ; lv2:name "Events" ] ,
             [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "left" ; lv2:name "Left" ] ,
             [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 2 ; lv2:symbol "right" ; lv2:name "Right" ] ,
             [ a lv2:InputPort, lv2:ControlPort ; lv2:index 3 ; lv2:symbol "level" ; lv2:name "Level" ;
               lv2:default 0.5 ; lv2:minimum 0 ; lv2:maximum 1 ] ,
             [ a lv2:OutputPort, lv2:ControlPort ; lv2:index 4 ; lv2:symbol "level_out" ; lv2:name "Level read" ] ,
             [ a lv2:OutputPort, lv2:ControlPort ; lv2:index 5 ; lv2:symbol "latency" ; lv2:name "Latency" ;
               lv2:designation lv2:latency ] ,
             [ a lv2:InputPort, lv2:CVPort ; lv2:index 6 ; lv2:symbol "mod" ; lv2:name "Modulation" ] ,
             [ a lv2:OutputPort, lv2:CVPort ; lv2:index 7 ; lv2:symbol "mod_out" ; lv2:name "Modulation out" ] .
"""

private let lookahead = "urn:tactus:test:lookahead"
private let canBuildPlugins = TestPlugins.compiler != nil && (try? LV2Catalogue()) != nil

/// A Tactus instrument without latency: 0.25 on both channels from a note-on's exact frame
/// until its note-off.
private final class GateNode: AudioNode {
    let name = "Gate"
    let inputBusCount = 0
    let parameterInfos: [AudioParameterInfo] = []
    private var held = false
    func prepare(sampleRate: Double, maximumFrameCount: Int) {}
    func reset() { held = false }
    func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    func receive(_ message: MIDIMessage, atFrame frame: Int64) {
        if message.isNoteOn { held = true }
        if message.isNoteOff { held = false }
    }
    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.left.update(repeating: held ? 0.25 : 0, count: frameCount)
        output.right.update(repeating: held ? 0.25 : 0, count: frameCount)
    }
}

@Suite("A plugin's latency, control outputs and CV ports (a test plugin built from C)",
       .enabled(if: canBuildPlugins, "needs a C compiler (for the test plugin) and lilv (Debian package liblilv-0-0)"))
struct LV2LatencyTests {
    /// The test plugin's catalogue, built in a fresh folder.
    func catalogue(in dir: URL) throws -> LV2Catalogue {
        try LV2Catalogue(searchPath: TestPlugins.build(name: "lookahead", source: lookaheadSource, manifest: lookaheadManifest, in: dir))
    }

    @Test("the catalogue finds the latency port, and CV ports do not stop the plugin being hosted")
    func latencyPortAndCVPortsAreDescribed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-lv2-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let info = try catalogue(in: dir).plugin(lookahead)
        #expect(info.latencyPort?.symbol == "latency")
        #expect(info.controlOutputs.map(\.symbol) == ["level_out", "latency"])
        #expect(info.hostingProblem == nil)
    }

    /// The song plays one note through the plugin and the same note through a Tactus node
    /// without latency. The plugin's 100 frames and the grid's 64 are the graph's latency;
    /// the Tactus node's path is delayed to match and the render drops them, so both notes
    /// start at the note's frame, sample for sample the same at every block size.
    @Test("a reported latency is compensated: the plugin's note starts at the song's frame, with a Tactus node's", arguments: [1, 64, 65, 512])
    func reportedLatencyIsCompensated(blockSize: Int) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-lv2-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let node = try LV2PluginNode(uri: lookahead, catalogue: catalogue(in: dir))
        let graph = AudioGraph()
        graph.add(node, id: 2)
        graph.add(GateNode(), id: 3)
        graph.add(OutputNode(), id: 9)
        try graph.connect(2, to: 9)
        try graph.connect(3, to: 9)
        let compiled = try graph.compile(sampleRate: 44_100, maximumFrameCount: 4096)
        #expect(node.pluginLatencyFrames == 100)
        #expect(compiled.latencyFrames == 164)

        // 120 BPM, 480 ticks per quarter: the note at tick 480 is frame 22,050, for a beat.
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
        var throughPlugin = MusicTrack(), throughTactus = MusicTrack()
        throughPlugin.addNote(at: 480, channel: 0, key: 60, velocity: 100, duration: 480)
        throughTactus.addNote(at: 480, channel: 0, key: 60, velocity: 100, duration: 480)
        throughPlugin.destination = .node(2)
        throughTactus.destination = .node(3)
        sequence.tracks = [throughPlugin, throughTactus]
        let player = Player(sequence: sequence, graph: compiled, defaultNode: 2)
        var left: [Float] = [], right: [Float] = []
        _ = try player.renderToEnd(blockSize: blockSize, tail: .seconds(0.1)) { l, r, n in
            left.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
            right.append(contentsOf: UnsafeBufferPointer(start: r, count: n))
        }
        let sounding = left.indices.filter { left[$0] != 0 }
        #expect(sounding.first == 22_050 && sounding.last == 44_099, "\(sounding.first ?? -1)...\(sounding.last ?? -1)")
        #expect(sounding.count == 22_050)
        #expect(Set(sounding.map { left[$0] }) == [0.75] && sounding.allSatisfy { right[$0] == 0.75 },
                "the plugin's 0.5 and the gate's 0.25 together on every frame")
    }

    /// The default graph with the plugin as channel 10's instrument beside a Tactus instrument
    /// for the rest: the song's channel-1 note plays the Tactus node, its channel-10 note the
    /// plugin, each at its exact frame (the plugin's 164 frames of latency compensated, the
    /// limiter leaving these levels alone), at any block size; a note played live on
    /// channel 10 to the default node reaches the plugin too.
    @Test("a channel's own instrument plays that channel's notes, and only those, at their frames", arguments: [1, 64, 65, 512])
    func aChannelInstrumentPlaysItsChannel(blockSize: Int) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-lv2-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let plugin = try LV2PluginNode(uri: lookahead, catalogue: catalogue(in: dir))
        let defaults = DefaultGraph(instrument: .node(GateNode()), channelInstruments: [9: plugin])
        #expect(defaults.channelNodes == [9: DefaultGraph.channelInstrumentID(9)])
        let compiled = try defaults.graph.compile(sampleRate: 44_100, maximumFrameCount: 4096)
        // 120 BPM, 480 ticks per quarter: ticks 480 and 960 are frames 22,050 and 44,100.
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
        var track = MusicTrack()
        track.addNote(at: 480, channel: 0, key: 60, velocity: 100, duration: 240)
        track.addNote(at: 960, channel: 9, key: 36, velocity: 100, duration: 240)
        sequence.tracks = [track]
        let player = Player(sequence: sequence, graph: compiled, channelNodes: defaults.channelNodes)
        var left: [Float] = []
        _ = try player.renderToEnd(blockSize: blockSize, tail: .seconds(0.1)) { l, _, n in
            left.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
        }
        var wrong: [String] = []
        for frame in left.indices {
            let expected: Float = (22_050..<33_075).contains(frame) ? 0.25 : (44_100..<55_125).contains(frame) ? 0.5 : 0
            if left[frame] != expected, wrong.count < 5 { wrong.append("frame \(frame): \(left[frame]), expected \(expected)") }
        }
        #expect(left.count > 55_125 && wrong.isEmpty, "\(wrong)")

        // Live: a note-on for the default node on channel 10 is the plugin's.
        compiled.reset()
        player.sendMIDI(.noteOn(channel: 9, key: 36, velocity: 100), toNode: DefaultGraph.instrumentID)
        var live: [Float] = []
        let blockLeft = UnsafeMutablePointer<Float>.allocate(capacity: 64), blockRight = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        defer { blockLeft.deallocate(); blockRight.deallocate() }
        for _ in 0..<8 {
            player.engine.render(frameCount: 64, into: StereoBuffer(left: blockLeft, right: blockRight))
            live.append(contentsOf: UnsafeBufferPointer(start: blockLeft, count: 64))
        }
        #expect(live.contains(0.5) && !live.contains(0.25) && !live.contains(0.75), "the live note reached \(Set(live))")
    }

    /// A ramp of `level` from 0 to 1 over 1,280 frames, from frame 640: after each 64-frame
    /// render call the plugin has run the slice ending there, which read the ramp at the
    /// slice's last frame, and `level_out` shows that value.
    @Test("a control output reads back the ramped control's value at each slice's last frame")
    func controlOutputShowsTheRampAtSliceEnds() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-lv2-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let node = try LV2PluginNode(uri: lookahead, catalogue: catalogue(in: dir))
        let graph = AudioGraph()
        graph.add(node, id: 2)
        graph.add(OutputNode(), id: 9)
        try graph.connect(2, to: 9)
        let compiled = try graph.compile(sampleRate: 44_100, maximumFrameCount: 64)
        let level = try node.parameterID(for: "level")
        let ramp = ParameterRamp(from: 0, to: 1, length: 1_280)
        var mismatches: [String] = []
        for start in stride(from: Int64(0), to: 2_560, by: 64) {
            var events: [GraphEvent] = []
            if start == 640 {
                events.append(GraphEvent(offset: 0, nodeIndex: compiled.index(ofNode: 2)!,
                                         event: .parameterRamp(id: level, scope: .global, element: 0, ramp: ramp)))
            }
            events.withUnsafeBufferPointer { compiled.render(startFrame: start, frameCount: 64, events: $0) }
            let last = start + 63
            let expected: Float = last < 640 ? 0.5 : ramp.value(atElapsed: min(last - 640, 1_280))
            let read = try node.controlOutputValue("level_out")
            if abs(read - expected) > 1e-6, mismatches.count < 5 { mismatches.append("after frame \(last): \(read), expected \(expected)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(try node.controlOutputValue("Latency") == 100, "by name, without regard to case")
        #expect(throws: LV2Error.unknownControlOutput(plugin: "Look-ahead", name: "gain", outputs: ["level_out", "latency"])) {
            try node.controlOutputValue("gain")
        }
    }
}
