// AudioKit's subtractive synth tutorial: oscillator -> low-pass filter -> ADSR as a custom
// instrument (Sources/SynthVoices/SubtractiveVoice.swift), played by a track that also sweeps
// the filter's cutoff (Sources/SynthVoices/SubtractiveSong.swift).
//
//     swift run subtractive-synth            plays on the default sound device, or writes
//                                            subtractive-synth.wav when there is none
//     swift run subtractive-synth OUT.wav    writes OUT.wav (32-bit float), as fast as it can
import Foundation
import SynthVoices
import Tactus

let fileGiven = CommandLine.arguments.count > 1
let path = fileGiven ? CommandLine.arguments[1] : "subtractive-synth.wav"
let sampleRate = 44_100

do {
    let song = try SubtractiveSong()
    // The same session plays live or offline: every event and automation point at its exact
    // frame either way.
    let session = try song.session(sampleRate: sampleRate)
    var playedLive = false
    if !fileGiven {
        do {
            try session.start(on: ALSAPCMBackend())
            playedLive = true
        } catch {
            print("\(error); writing \(path) instead")
        }
    }
    if !playedLive {
        try session.start(on: OfflineBackend(destination: .wavFile(path: path, format: .f32, channelCount: 2)))
    }
    let summary = try await session.finished()

    // Beside the audio: the frame of every beat and the cutoff automated there, for the check.
    let quarter = SubtractiveSong.quarter
    let tempo = song.sequence.makeTempoMap()
    let sweepEnd = tempo.frame(atTick: 16 * quarter, sampleRate: sampleRate)
    let ramp = ParameterRamp(from: 150, to: 8_000, length: sweepEnd, shape: .exponential)
    let lines = (0..<16).map { beat -> String in
        let frame = tempo.frame(atTick: Int64(beat) * quarter, sampleRate: sampleRate)
        return "\(frame) \(ramp.value(atElapsed: frame))"
    }
    if !playedLive {
        try (lines.joined(separator: "\n") + "\n").write(toFile: path + ".points", atomically: true, encoding: .utf8)
    }
    print("\(playedLive ? "played" : path + ":") \(summary.framesPlayed) frames, cutoff 150 Hz -> 8 kHz")
} catch {
    FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
    exit(1)
}
