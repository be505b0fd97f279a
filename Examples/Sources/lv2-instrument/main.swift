// A song played through an LV2 instrument you have installed (MDA Piano, Debian's mda-lv2),
// with one of the plugin's controls automated: the piano's muffling filter opens from dark to
// bright over the first eight bars and closes again by bar 16. The plugin is a node of the
// graph like any other; its controls are parameters, addressed by name.
//
//     swift run lv2-instrument                    plays on the default sound device, or writes
//                                                 lv2-instrument.wav when there is none
//     swift run lv2-instrument OUT.wav [BLOCK] [still]
//                                                 writes OUT.wav (32-bit float), as fast as it
//                                                 can, in blocks of BLOCK frames (512); `still`
//                                                 leaves the filter alone, to hear the difference
import ExampleSongs
import Foundation
import Tactus

let arguments = CommandLine.arguments
let fileGiven = arguments.count > 1
let path = fileGiven ? arguments[1] : "lv2-instrument.wav"
let blockSize = arguments.count > 2 ? Int(arguments[2]) ?? 512 : 512
let automated = !(arguments.count > 3 && arguments[3] == "still")
let pianoURI = "http://drobilla.net/plugins/mda/Piano"

do {
    let piano: LV2PluginNode
    do {
        piano = try LV2PluginNode(uri: pianoURI, catalogue: LV2Catalogue())
    } catch {
        ExampleSongs.fail("lv2-instrument: \(error) (install Debian's mda-lv2 and liblilv-0-0)")
    }
    let graph = AudioGraph()
    let instrument = graph.add(piano)
    let limiter = graph.add(LimiterNode())
    let output = graph.add(OutputNode())
    try graph.connect(instrument, to: limiter)
    try graph.connect(limiter, to: output)

    var song = try SMFReader.read(contentsOf: ExampleSongs.path("Songs/little-waltz.mid")).makeSequence()
    let bar = 3 * Int64(song.ticksPerQuarter) // the waltz's bars of three beats
    var automation = MusicTrack()
    automation.addAutomation(try graph.parameterAddress(node: instrument, named: "Muffling Filter"), points: [
        AutomationPoint(tick: 0, value: 0.1, curveToNext: .linear),
        AutomationPoint(tick: 8 * bar, value: 1, curveToNext: .linear),
        AutomationPoint(tick: 16 * bar, value: 0.1),
    ])
    if automated { song.tracks.append(automation) }

    // The same session plays live or offline; live, the plugin's own work (a sampler plugin
    // loading a file) runs on a thread of its own, so the audio thread never waits for it.
    let session = try PlaybackSession(sequence: song, graph: graph, defaultNode: instrument)
    var playedLive = false
    if !fileGiven {
        piano.worksInBackground = true
        do {
            try session.start(on: ALSAPCMBackend())
            playedLive = true
        } catch {
            print("\(error); writing \(path) instead")
            piano.worksInBackground = false
        }
    }
    if !playedLive {
        try session.start(on: OfflineBackend(destination: .wavFile(path: path, format: .f32, channelCount: 2), blockSize: blockSize))
    }
    let summary = try await session.finished()
    print("\(playedLive ? "played" : path + ":") \(summary.framesPlayed) frames through \(piano.name)\(automated ? ", muffling filter 0.1 -> 1 -> 0.1" : "")")
} catch {
    ExampleSongs.fail("\(path): \(error)")
}
