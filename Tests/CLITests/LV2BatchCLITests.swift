import AudioTestSupport
import Foundation
import Testing

private let hasPluginFixtures = TestPlugins.compiler != nil && FileManager.default.fileExists(atPath: "/usr/lib/lv2/mda.lv2/manifest.ttl")
    && FileManager.default.fileExists(atPath: "/usr/bin/lv2ls")
private let pluginFixtures = "needs a C compiler (for the test plugin), lilv and mda-lv2 (Debian packages liblilv-0-0, lilv-utils, mda-lv2)"

/// The test plugin: an instrument that plays a constant while a note sounds and writes through
/// a null pointer on a note-on of velocity 1, as a buggy plugin would.
private let crasherSource = TestPlugins.abi + """
typedef struct { const uint8_t *events; float *left, *right; float level; } Crasher;
static void *instantiate(const void *d, double rate, const char *path, const void *const *features) { return calloc(1, sizeof(Crasher)); }
static void connect_port(void *h, uint32_t port, void *data) {
    Crasher *c = h;
    if (port == 0) c->events = data; else if (port == 1) c->left = data; else c->right = data;
}
static void run(void *h, uint32_t frames) {
    Crasher *c = h;
    FOR_EACH_MIDI_EVENT(c->events, frame, message, {
        if ((message[0] & 0xF0) == 0x90 && message[2] == 1) *(volatile int *)0 = 1;
        if ((message[0] & 0xF0) == 0x90) c->level = message[2] / 127.0f * 0.25f;
        if ((message[0] & 0xF0) == 0x80) c->level = 0;
    })
    for (uint32_t i = 0; i < frames; i++) { c->left[i] = c->level; c->right[i] = c->level; }
}
static void cleanup(void *h) { free(h); }
static const Descriptor descriptor = { "urn:tactus:test:crasher", instantiate, connect_port, 0, run, 0, cleanup, 0 };
const Descriptor *lv2_descriptor(uint32_t index) { return index == 0 ? &descriptor : 0; }
"""

private let crasherManifest = """
@prefix lv2: <http://lv2plug.in/ns/lv2core#> .
@prefix atom: <http://lv2plug.in/ns/ext/atom#> .
@prefix midi: <http://lv2plug.in/ns/ext/midi#> .
@prefix doap: <http://usefulinc.com/ns/doap#> .
<urn:tactus:test:crasher> a lv2:Plugin, lv2:InstrumentPlugin ;
    lv2:binary <crasher.so> ;
    doap:name "Crasher" ;
    lv2:port [ a lv2:InputPort, atom:AtomPort ; atom:bufferType atom:Sequence ; atom:supports midi:MidiEvent ;
               lv2:index 0 ; lv2:symbol "events" ; lv2:name "Events" ] ,
             [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "left" ; lv2:name "Left" ] ,
             [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 2 ; lv2:symbol "right" ; lv2:name "Right" ] .
"""

@Suite("tactus render FOLDER through LV2 plugins: fresh plugins per file, and a plugin's crash costs its file, not the batch",
       .enabled(if: hasPluginFixtures, "\(pluginFixtures)"))
struct LV2BatchCLITests {
    /// Builds the crashing plugin's bundle in `dir`/plugins and returns that folder (for LV2_PATH).
    func crasherBundle(in dir: URL) throws -> String {
        try TestPlugins.build(name: "crasher", source: crasherSource, manifest: crasherManifest, in: dir)
    }

    /// A format-0 MIDI file: C4 at velocity 100 for a beat, then D4 at velocity 1 (the crash).
    func crashingSong(at path: String) throws {
        let track: [UInt8] = [0x00, 0x90, 0x3C, 0x64, 0x83, 0x60, 0x80, 0x3C, 0x00, 0x00, 0x90, 0x3E, 0x01, 0x83, 0x60, 0x80, 0x3E, 0x00,
                              0x00, 0xFF, 0x2F, 0x00]
        let bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test("a batch through MDA Piano, MDA DX10 for channel 2 and MDA Delay renders each file as a single render does")
    func batchEqualsSingleRenders() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        for song in ["little-waltz.mid", "seven-eight.mid"] {
            try FileManager.default.copyItem(atPath: CLI.song(song), toPath: input.appendingPathComponent(song).path)
        }
        // Channel 2 (both songs play it) through a plugin of its own.
        let plugins = ["--instrument", "lv2:http://drobilla.net/plugins/mda/Piano", "--effect", "lv2:http://drobilla.net/plugins/mda/Delay,feedback=0.3",
                       "--channel-instrument", "2=lv2:http://drobilla.net/plugins/mda/DX10"]
        let batch = try CLI.run(["render", input.path, "-o", dir.appendingPathComponent("out").path, "--jobs", "2", "--quiet"] + plugins)
        #expect(batch.status == 0, "\(batch.stderr)")
        #expect(batch.stdout.isEmpty, "nothing but Tactus's own lines on standard output: \(batch.stdout)")
        for song in ["little-waltz", "seven-eight"] {
            let single = dir.appendingPathComponent("\(song).wav").path
            let result = try CLI.run(["render", input.appendingPathComponent("\(song).mid").path, "-o", single, "--quiet"] + plugins)
            #expect(result.status == 0, "\(result.stderr)")
            let fromBatch = try Data(contentsOf: dir.appendingPathComponent("out/\(song).wav"))
            #expect(fromBatch == (try Data(contentsOf: URL(fileURLWithPath: single))), "\(song): the batch's render differs from the single render")
        }
    }

    @Test("a plugin that crashes on one file: the batch goes on, that file is recorded as crashed, the others equal their single renders, exit 65")
    func aCrashCostsOneFile() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let lv2Path = try crasherBundle(in: dir)
        let input = dir.appendingPathComponent("in"), output = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        for song in ["little-waltz.mid", "seven-eight.mid"] {
            try FileManager.default.copyItem(atPath: CLI.song(song), toPath: input.appendingPathComponent(song).path)
        }
        try crashingSong(at: input.appendingPathComponent("bad.mid").path)
        var environment = ProcessInfo.processInfo.environment
        environment["LV2_PATH"] = lv2Path
        // Swift's crash report of each crash would only slow the test.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        let arguments = ["render", input.path, "-o", output.path, "--instrument", "lv2:urn:tactus:test:crasher", "--jobs", "2", "--tail", "0"]
        let batch = try CLI.run(arguments, environment: environment)
        #expect(batch.status == 65, "\(batch.stderr)")
        let restarts = batch.stderr.split(separator: "\n").filter { $0.hasPrefix("tactus: the batch's worker died by signal 11 (Segmentation fault)") }
        #expect((1...2).contains(restarts.count), "\(batch.stderr)")
        #expect(batch.stderr.contains("1 input failed; see \(output.path)/tactus-manifest.jsonl"), "\(batch.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.appendingPathComponent("bad.wav").path))
        let manifest = try String(contentsOf: output.appendingPathComponent("tactus-manifest.jsonl"), encoding: .utf8)
        #expect(manifest.split(separator: "\n").contains { $0.contains("\"input\":\"\(input.path)/bad.mid\"") && $0.contains("\"status\":\"crashed\"") },
                "\(manifest)")
        for song in ["little-waltz", "seven-eight"] {
            let single = dir.appendingPathComponent("\(song).wav").path
            let result = try CLI.run(["render", input.appendingPathComponent("\(song).mid").path, "-o", single, "--instrument",
                                      "lv2:urn:tactus:test:crasher", "--tail", "0"], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            let fromBatch = try Data(contentsOf: output.appendingPathComponent("\(song).wav"))
            #expect(fromBatch == (try Data(contentsOf: URL(fileURLWithPath: single))), "\(song): the batch's render differs from the single render")
        }
        // A rerun renders nothing, does not crash again, and still fails for the crashed file.
        let rerun = try CLI.run(arguments, environment: environment)
        #expect(rerun.status == 65, "\(rerun.stderr)")
        #expect(!rerun.stderr.contains("worker died"), "\(rerun.stderr)")
    }
}
