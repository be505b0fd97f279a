// AudioKit's subtractive synth tutorial: oscillator -> low-pass filter -> ADSR as a custom
// instrument (Sources/SynthVoices/SubtractiveVoice.swift), played by a track that also sweeps
// the filter's cutoff, rendered offline to a WAV file.
//
//     swift run subtractive-synth [OUT.wav]
import Foundation
import SynthVoices
import Tactus

let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "subtractive-synth.wav"
let sampleRate = 44_100
let quarter: Int64 = 960

do {
    // The graph: the custom instrument into the output.
    let graph = AudioGraph()
    let synth = graph.add(SubtractiveSynth.make())
    let output = graph.add(OutputNode())
    try graph.connect(synth, to: output)

    // Four bars: a bass note on every beat under a held chord.
    var track = MusicTrack()
    track.destination = .node(synth)
    for bar in 0..<4 {
        let start = Int64(bar) * 4 * quarter
        for (beat, key) in [36, 43, 48, 43].enumerated() {
            track.addNote(at: start + Int64(beat) * quarter, channel: 0, key: UInt8(key), velocity: 110, duration: quarter - 60)
        }
        for key in [60, 63, 67] {
            track.addNote(at: start, channel: 0, key: UInt8(key), velocity: 80, duration: 4 * quarter - 30)
        }
    }
    // The automation lane: the cutoff sweeps from 150 Hz to 8 kHz over the four bars, evenly
    // in pitch (an exponential ramp).
    let cutoff = try graph.parameterAddress(node: synth, named: "Cutoff")
    track.addAutomation(cutoff, points: [
        AutomationPoint(tick: 0, value: 150, curveToNext: .exponential),
        AutomationPoint(tick: 16 * quarter, value: 8_000),
    ])
    let sequence = MusicSequence(tracks: [track])

    // Offline: the engine renders as fast as the CPU allows, every event at its exact frame.
    let schedule = Schedule(sequence: sequence, sampleRate: sampleRate, defaultNode: synth)
    let engine = Engine(graph: try graph.compile(sampleRate: Double(sampleRate), maximumFrameCount: 512), schedule: schedule)
    let wav = try WAVWriter(path: path, sampleRate: sampleRate, channelCount: 2, format: .f32)
    let stats = try OfflineRenderer(engine: engine, tailSeconds: 1).render(blockSize: 512) { left, right, count in
        try wav.write(left: left, right: right, count: count)
    }
    try wav.finish()

    // Beside the audio: the frame of every beat and the cutoff automated there, for the check.
    let tempo = sequence.makeTempoMap()
    let sweepEnd = tempo.frame(atTick: 16 * quarter, sampleRate: sampleRate)
    let ramp = ParameterRamp(from: 150, to: 8_000, length: sweepEnd, shape: .exponential)
    let lines = (0..<16).map { beat -> String in
        let frame = tempo.frame(atTick: Int64(beat) * quarter, sampleRate: sampleRate)
        return "\(frame) \(ramp.value(atElapsed: frame))"
    }
    try (lines.joined(separator: "\n") + "\n").write(toFile: path + ".points", atomically: true, encoding: .utf8)
    print("\(path): \(stats.frameCount) frames, peak \(String(format: "%.1f", stats.peakDecibels)) dBFS, cutoff 150 Hz -> 8 kHz")
} catch {
    FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
    exit(1)
}
