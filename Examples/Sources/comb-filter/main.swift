// A custom effect (Sources/SynthVoices/CombFilter.swift) whose delay and feedback are
// automated by a track: the built-in synthesizer plays a riff through the comb, whose delay
// sweeps from 1 to 12 ms and back while its feedback rises and turns negative.
//
//     swift run comb-filter [OUT.wav] [BLOCK-SIZE]
import Foundation
import SynthVoices
import Tactus

let arguments = CommandLine.arguments
let path = arguments.count > 1 ? arguments[1] : "comb-filter.wav"
let blockSize = arguments.count > 2 ? Int(arguments[2]) ?? 512 : 512
let sampleRate = 44_100
let quarter: Int64 = 960

do {
    let graph = AudioGraph()
    let synth = graph.add(GMSynthesizer())
    let comb = graph.add(SweepingCombFilter())
    let limiter = graph.add(LimiterNode())
    let output = graph.add(OutputNode())
    try graph.connect(synth, to: comb)
    try graph.connect(comb, to: limiter)
    try graph.connect(limiter, to: output)

    var track = MusicTrack()
    track.destination = .node(synth)
    track.add(.message(.programChange(channel: 0, program: 30)), at: 0) // distortion guitar
    for step in 0..<32 {
        let key: UInt8 = [40, 40, 52, 40, 43, 45, 40, 47][step % 8]
        track.addNote(at: Int64(step) * quarter / 2, channel: 0, key: key, velocity: 100, duration: quarter / 2 - 40)
    }
    // Two lanes on the comb, addressed by parameter name.
    track.addAutomation(try graph.parameterAddress(node: comb, named: "Delay"), points: [
        AutomationPoint(tick: 0, value: 1, curveToNext: .exponential),
        AutomationPoint(tick: 8 * quarter, value: 12, curveToNext: .exponential),
        AutomationPoint(tick: 16 * quarter, value: 1),
    ])
    track.addAutomation(try graph.parameterAddress(node: comb, named: "Feedback"), points: [
        AutomationPoint(tick: 0, value: 0.2, curveToNext: .linear),
        AutomationPoint(tick: 8 * quarter, value: 0.9, curveToNext: .linear),
        AutomationPoint(tick: 16 * quarter, value: -0.9),
    ])
    let sequence = MusicSequence(tracks: [track])

    let schedule = Schedule(sequence: sequence, sampleRate: sampleRate, defaultNode: synth)
    let engine = Engine(graph: try graph.compile(sampleRate: Double(sampleRate), maximumFrameCount: blockSize), schedule: schedule)
    let wav = try WAVWriter(path: path, sampleRate: sampleRate, channelCount: 2, format: .f32)
    let stats = try OfflineRenderer(engine: engine, tailSeconds: 1).render(blockSize: blockSize) { left, right, count in
        try wav.write(left: left, right: right, count: count)
    }
    try wav.finish()
    print("\(path): \(stats.frameCount) frames in blocks of \(blockSize), peak \(String(format: "%.1f", stats.peakDecibels)) dBFS")
} catch {
    FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
    exit(1)
}
