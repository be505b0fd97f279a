// Csound for iOS's score events and offline rendering: a score of timed events, written as
// text in Csound's style, becomes a sequence that is rendered offline to a WAV file, the
// same bytes at every block size.
//
//     swift run score-render [OUT.wav] [BLOCK-SIZE] [SCORE-FILE]
//
// Score statements, one per line (";" starts a comment):
//     t 0 BPM                                  tempo
//     i INSTR START DURATION PITCH AMPLITUDE   a note: START and DURATION in beats, PITCH in
//                                              Csound's octave.pitch-class (8.00 = middle C),
//                                              AMPLITUDE 0...1; INSTR 1-3 picks the sound
import Foundation
import Tactus

let arguments = CommandLine.arguments
let path = arguments.count > 1 ? arguments[1] : "score-render.wav"
let blockSize = arguments.count > 2 ? max(1, Int(arguments[2]) ?? 512) : 512

let builtInScore = """
t 0 96
; instr start dur  pitch amp
i 3  0    4    6.00  0.8   ; bass
i 3  4    4    5.10  0.8
i 1  0    1    8.00  0.6   ; piano
i 1  1    1    8.04  0.6
i 1  2    1    8.07  0.6
i 1  3    1    9.00  0.7
i 1  4    2    8.10  0.6
i 1  6    2    8.05  0.6
i 2  0.5  3.5  9.07  0.4   ; flute
i 2  4    4    9.05  0.4
"""

/// A score line that cannot be read.
struct ScoreError: Error, CustomStringConvertible {
    var line: Int
    var reason: String
    var description: String { "line \(line): \(reason)" }
}

/// General MIDI programs and channels of the score's instruments.
let instruments: [Int: (channel: UInt8, program: UInt8)] = [1: (0, 0), 2: (1, 73), 3: (2, 32)]

func sequence(fromScore text: String) throws -> MusicSequence {
    let ticksPerBeat = 960.0
    var tempoTrack = MusicTrack()
    var tracks: [Int: MusicTrack] = [:]
    for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let fields = raw.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0].split(whereSeparator: \.isWhitespace)
        guard let statement = fields.first else { continue }
        let values = try fields.dropFirst().map { field -> Double in
            guard let v = Double(field) else { throw ScoreError(line: number + 1, reason: "'\(field)' is not a number") }
            return v
        }
        switch statement {
        case "t":
            guard values.count == 2, values[1] > 0 else { throw ScoreError(line: number + 1, reason: "a tempo statement is 't 0 BPM'") }
            tempoTrack.add(.meta(.tempo(bpm: values[1])), at: 0)
        case "i":
            guard values.count == 5 else { throw ScoreError(line: number + 1, reason: "a note is 'i INSTR START DUR PITCH AMP'") }
            guard let instrument = instruments[Int(values[0])] else {
                throw ScoreError(line: number + 1, reason: "no instrument \(Int(values[0])) (1 piano, 2 flute, 3 bass)")
            }
            // Octave.pitch-class: 8.00 is middle C (MIDI 60), the fraction counts semitones.
            let octave = values[3].rounded(.down)
            let key = Int(octave) * 12 + Int(((values[3] - octave) * 100).rounded()) - 36
            guard (0...127).contains(key), values[1] >= 0, values[2] > 0, (0...1).contains(values[4]) else {
                throw ScoreError(line: number + 1, reason: "start, duration, pitch or amplitude out of range")
            }
            var track = tracks[Int(values[0])] ?? {
                var t = MusicTrack()
                t.add(.message(.programChange(channel: instrument.channel, program: instrument.program)), at: 0)
                return t
            }()
            track.addNote(at: Int64((values[1] * ticksPerBeat).rounded()), channel: instrument.channel, key: UInt8(key),
                          velocity: UInt8(max(1, (values[4] * 127).rounded())), duration: Int64((values[2] * ticksPerBeat).rounded()))
            tracks[Int(values[0])] = track
        default:
            throw ScoreError(line: number + 1, reason: "unknown statement '\(statement)' (t or i)")
        }
    }
    return MusicSequence(tempoTrack: tempoTrack, tracks: tracks.keys.sorted().map { tracks[$0]! })
}

let scorePath = arguments.count > 3 ? arguments[3] : nil
do {
    let text: String
    if let scorePath {
        do { text = try String(contentsOfFile: scorePath, encoding: .utf8) } catch {
            FileHandle.standardError.write(Data("\(scorePath): cannot read the score (\(error.localizedDescription))\n".utf8))
            exit(66)
        }
    } else {
        text = builtInScore
    }
    let song: MusicSequence
    do { song = try sequence(fromScore: text) } catch {
        FileHandle.standardError.write(Data("\(scorePath ?? "built-in score"): \(error)\n".utf8))
        exit(65)
    }
    let engine = try Engine.makeDefault(sequence: song, sampleRate: 44_100, maximumFrameCount: blockSize, instrument: .builtIn)
    let wav = try WAVWriter(path: path, sampleRate: 44_100, channelCount: 2, format: .s16)
    let stats = try OfflineRenderer(engine: engine, tailSeconds: 1.5).render(blockSize: blockSize) { left, right, count in
        try wav.write(left: left, right: right, count: count)
    }
    try wav.finish()
    print("\(path): \(stats.frameCount) frames in blocks of \(blockSize), peak \(String(format: "%.1f", stats.peakDecibels)) dBFS")
} catch {
    FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
    exit(73)
}
