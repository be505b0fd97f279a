// A two-operator FM instrument with rate-based envelopes (the fixed-point iOS FM synthesizer
// article): the voice is in Sources/SynthVoices/FMVoice.swift. A short phrase, rendered offline.
//
//     swift run fm-synth [OUT.wav]
import Foundation
import SynthVoices
import Tactus

let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "fm-synth.wav"
let sampleRate = 44_100
let quarter: Int64 = 960

do {
    let graph = AudioGraph()
    let fm = graph.add(FMSynth.make())
    let reverb = graph.add(ReverbNode(roomSize: 0.5, wet: 0.15))
    let output = graph.add(OutputNode())
    try graph.connect(fm, to: reverb)
    try graph.connect(reverb, to: output)

    // The first note rings alone for two seconds (the timbre falls from bright to mellow as the
    // modulator's envelope decays), then a phrase.
    var track = MusicTrack()
    track.destination = .node(fm)
    track.addNote(at: 0, channel: 0, key: 57, velocity: 120, duration: 4 * quarter)
    for (i, key) in [69, 72, 76, 81, 79, 76, 72, 74].enumerated() {
        track.addNote(at: 4 * quarter + Int64(i) * quarter / 2, channel: 0, key: UInt8(key), velocity: 100, duration: quarter / 2)
    }
    let sequence = MusicSequence(tracks: [track])

    let schedule = Schedule(sequence: sequence, sampleRate: sampleRate, defaultNode: fm)
    let engine = Engine(graph: try graph.compile(sampleRate: Double(sampleRate), maximumFrameCount: 256), schedule: schedule)
    let wav = try WAVWriter(path: path, sampleRate: sampleRate, channelCount: 2, format: .f32)
    let stats = try OfflineRenderer(engine: engine, tailSeconds: 1.5).render(blockSize: 256) { left, right, count in
        try wav.write(left: left, right: right, count: count)
    }
    try wav.finish()
    print("\(path): \(stats.frameCount) frames, peak \(String(format: "%.1f", stats.peakDecibels)) dBFS")
} catch {
    FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
    exit(1)
}
