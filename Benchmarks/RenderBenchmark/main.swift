// Renders every MIDI file of a directory with the built-in synthesizer through the default
// graph (the same path as `tactus render`, without writing files) on one thread, and prints
// the speed in times real time and the peak memory.
//
//     swift run -c release tactus-render-benchmark [DIRECTORY] [--block-size N] [--sample-rate HZ]
import AudioGraph
import Foundation
import Instruments
import MIDIFile
import Playback
import Sequencing

var directory = "/usr/share/games/openttd/baseset/openmsx"
var blockSize = 512
var sampleRate = 44_100
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--block-size": blockSize = Int(arguments.popFirst() ?? "") ?? blockSize
    case "--sample-rate": sampleRate = Int(arguments.popFirst() ?? "") ?? sampleRate
    default: directory = argument
    }
}

let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
    .filter { $0.lowercased().hasSuffix(".mid") }.sorted()
guard !files.isEmpty else {
    FileHandle.standardError.write(Data("\(directory): no .mid files\n".utf8))
    exit(66)
}

func peakResidentMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024 // ru_maxrss is in kilobytes on Linux
}

let clock = ContinuousClock()
func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }
var totalAudio = 0.0, totalTime = 0.0
print("file                              audio s   render s   x real time   mean voices   peak dBFS")
for name in files {
    let smf = try SMFReader.read(contentsOf: directory + "/" + name)
    let sequence = smf.makeSequence()
    let defaults = DefaultGraph()
    let graph = try defaults.graph.compile(sampleRate: Double(sampleRate), maximumFrameCount: blockSize)
    let engine = Engine(graph: graph, schedule: Schedule(sequence: sequence, sampleRate: sampleRate, defaultNode: DefaultGraph.instrumentID))
    let renderer = OfflineRenderer(engine: engine, tailSeconds: 2)
    var voiceSum = 0, blocks = 0
    let start = clock.now
    let stats = try renderer.render(blockSize: blockSize) { _, _, _ in
        voiceSum += defaults.activeVoiceCount
        blocks += 1
    }
    let elapsed = seconds(clock.now - start)
    totalAudio += stats.seconds
    totalTime += elapsed
    print(name.padding(toLength: 32, withPad: " ", startingAt: 0),
          String(format: "%9.1f  %9.3f  %12.1f  %12.1f  %10.2f", stats.seconds, elapsed, stats.seconds / elapsed,
                 Double(voiceSum) / Double(max(1, blocks)), stats.peakDecibels))
}
print(String(format: "all %d files: %.1f s of audio in %.2f s = %.1fx real time; peak memory %.1f MB",
             files.count, totalAudio, totalTime, totalAudio / totalTime, peakResidentMegabytes()))
