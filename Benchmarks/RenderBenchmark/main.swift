// Renders MIDI files (every one of a directory, or the files named) through the default
// graph (the same path as `tactus render`, without writing files) on one thread, with the
// built-in synthesizer or a SoundFont sampler, and prints the speed in times real time, the
// mean number of voices, voice-seconds rendered per second, the time from start to the first
// rendered block and the peak memory.
//
//     swift run -c release tactus-render-benchmark [DIRECTORY | FILE.mid...] [--block-size N]
//         [--sample-rate HZ] [--soundfont FILE [--polyphony N] [--no-reverb] [--no-chorus]]
import AudioGraph
import Foundation
import Instruments
import MIDIFile
import Playback
import Sampler
import Sequencing
import SoundFont

let clock = ContinuousClock()
let processStart = clock.now
var paths: [String] = []
var blockSize = 512
var sampleRate = 44_100
var soundFontPath: String?
var polyphony: Float?
var reverb = true, chorus = true
let usageText = """
    usage: tactus-render-benchmark [DIRECTORY | FILE.mid...] [--block-size N] [--sample-rate HZ]
                                   [--soundfont FILE [--polyphony N] [--no-reverb] [--no-chorus]]
    Renders the files (default: the openmsx set) through the default graph on one thread,
    without writing them, and prints speed, voices and peak memory.

    """

/// Prints one line to standard error and exits with `code` (64: usage, 65: a file that does
/// not read as MIDI, 66: a missing input).
func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("tactus-render-benchmark: \(message)\n".utf8))
    exit(code)
}

var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--help", "-h":
        print(usageText, terminator: "")
        exit(0)
    case "--block-size": blockSize = Int(arguments.popFirst() ?? "") ?? blockSize
    case "--sample-rate": sampleRate = Int(arguments.popFirst() ?? "") ?? sampleRate
    case "--soundfont": soundFontPath = arguments.popFirst()
    case "--polyphony": polyphony = Float(arguments.popFirst() ?? "")
    case "--no-reverb": reverb = false
    case "--no-chorus": chorus = false
    case let option where option.hasPrefix("-"):
        FileHandle.standardError.write(Data(usageText.utf8))
        fail("unknown option \(option)", code: 64)
    default: paths.append(argument)
    }
}
if paths.isEmpty { paths = ["/usr/share/games/openttd/baseset/openmsx"] }

var files: [String] = []
for path in paths {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
        files += ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .filter { $0.lowercased().hasSuffix(".mid") }.sorted().map { path + "/" + $0 }
    } else if FileManager.default.isReadableFile(atPath: path) {
        files.append(path)
    } else {
        fail("\(path): no such readable file or directory", code: 66)
    }
}
guard !files.isEmpty else {
    FileHandle.standardError.write(Data("\(paths.joined(separator: " ")): no .mid files\n".utf8))
    exit(66)
}
var bank: SoundFontBank?
if let soundFontPath {
    do {
        bank = try SoundFontReader.read(contentsOf: soundFontPath).bank
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(66)
    }
}

func peakResidentMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024 // ru_maxrss is in kilobytes on Linux
}

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }
var totalAudio = 0.0, totalTime = 0.0, totalVoiceSeconds = 0.0
var firstBlock: Duration?
print("file                              audio s   render s   x real time   mean voices   voice-s/s   peak dBFS")
for file in files {
    let name = (file as NSString).lastPathComponent
    let smf: StandardMIDIFile
    do {
        smf = try SMFReader.read(contentsOf: file)
    } catch {
        fail("\(error)", code: 65)
    }
    let sequence = smf.makeSequence()
    var instrument = DefaultInstrument.builtIn
    if let bank {
        let sampler = SamplerNode(bank: bank)
        if !reverb { sampler.setParameter(SamplerNode.Parameter.reverbLevel, value: 0) }
        if !chorus { sampler.setParameter(SamplerNode.Parameter.chorusLevel, value: 0) }
        if let polyphony { sampler.setParameter(SamplerNode.Parameter.voiceLimit, value: polyphony) }
        // A SoundFont 3 bank decodes the samples of the song's presets first (counted in the
        // time to the first block, as FluidSynth's decoding of the whole bank is in its).
        try sampler.prepareSamples(forNotes: sequence.samplerPlayedNotes())
        instrument = .sampler(sampler)
    }
    let defaults = DefaultGraph(instrument: instrument)
    let graph = try defaults.graph.compile(sampleRate: Double(sampleRate), maximumFrameCount: blockSize)
    let engine = Engine(graph: graph, schedule: Schedule(sequence: sequence, sampleRate: sampleRate, defaultNode: DefaultGraph.instrumentID))
    let renderer = OfflineRenderer(engine: engine, tailSeconds: 2)
    var voiceSum = 0, blocks = 0
    let start = clock.now
    let stats = try renderer.render(blockSize: blockSize) { _, _, _ in
        if firstBlock == nil { firstBlock = clock.now - processStart }
        voiceSum += defaults.activeVoiceCount
        blocks += 1
    }
    let elapsed = seconds(clock.now - start)
    totalAudio += stats.seconds
    totalTime += elapsed
    let meanVoices = Double(voiceSum) / Double(max(1, blocks))
    totalVoiceSeconds += meanVoices * stats.seconds
    print(name.padding(toLength: 32, withPad: " ", startingAt: 0),
          String(format: "%9.1f  %9.3f  %12.1f  %12.1f  %10.0f  %10.2f", stats.seconds, elapsed, stats.seconds / elapsed,
                 meanVoices, meanVoices * stats.seconds / elapsed, stats.peakDecibels))
}
print(String(format: "all %d files: %.1f s of audio in %.2f s = %.1fx real time; %.0f voice-seconds per second; first block %.1f ms after start; peak memory %.1f MB",
             files.count, totalAudio, totalTime, totalAudio / totalTime, totalVoiceSeconds / totalTime,
             seconds(firstBlock ?? .zero) * 1000, peakResidentMegabytes()))
