// The Audio Unit tone generator article: a sine tone started and stopped live, with fades so
// that neither the start nor the stop clicks. The program plays the part of the audio device
// (asking the player for 256-frame blocks) and of the user (pressing and releasing keys
// between blocks); the blocks go to a WAV file.
//
//     swift run tone-generator [OUT.wav]
import Foundation
import SynthVoices
import Tactus

let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "tone-generator.wav"
let sampleRate = 44_100
let blockSize = 256

do {
    let graph = AudioGraph()
    let tone = graph.add(ToneGenerator())
    let output = graph.add(OutputNode())
    try graph.connect(tone, to: output)
    let player = Player(sequence: MusicSequence(), graph: try graph.compile(sampleRate: Double(sampleRate), maximumFrameCount: blockSize),
                        defaultNode: tone)

    // What "the user" does, by time in seconds: live messages reach the generator at the
    // start of the next block, wherever the sine's phase is.
    let actions: [(seconds: Double, message: MIDIMessage)] = [
        (0.25, .noteOn(channel: 0, key: 69, velocity: 100)),
        (1.00, .noteOff(channel: 0, key: 69)),
        (1.25, .noteOn(channel: 0, key: 76, velocity: 100)),
        (2.00, .noteOff(channel: 0, key: 76)),
    ]
    let totalFrames = Int(2.5 * Double(sampleRate))
    let wav = try WAVWriter(path: path, sampleRate: sampleRate, channelCount: 2, format: .f32)
    let left = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
    defer { left.deallocate(); right.deallocate() }
    var next = 0
    var rendered = 0
    while rendered < totalFrames {
        while next < actions.count && Int(actions[next].seconds * Double(sampleRate)) <= rendered {
            player.sendMIDI(actions[next].message, toNode: tone)
            next += 1
        }
        player.render(frameCount: blockSize, into: StereoBuffer(left: left, right: right))
        _ = player.service()
        try wav.write(left: left, right: right, count: blockSize)
        rendered += blockSize
    }
    try wav.finish()
    print("\(path): \(rendered) frames, two tones started and stopped live")
} catch {
    FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
    exit(1)
}
