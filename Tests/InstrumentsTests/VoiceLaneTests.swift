import AudioGraph
import Foundation
@testable import Instruments
import MIDI
import Testing

/// The built-in synthesizer renders voices of one patch family four to a SIMD lane; each lane
/// must give exactly the samples of the one-voice loop, or renders would change with how the
/// voices happen to be grouped.
@Suite struct VoiceLaneTests {
    /// Every GM program in three-note chords (so voices share lanes) on the fifteen melodic
    /// channels, with releases that end inside control intervals; a drum pattern with
    /// simultaneous hits; the sustain pedal, pitch bend, pan and a voice limit that steals.
    static func performance(programSpacing: Int) -> [(frame: Int, message: MIDIMessage)] {
        var messages: [(frame: Int, message: MIDIMessage)] = []
        for program in 0..<128 {
            let start = program * programSpacing
            let channel = UInt8(program % 15 < 9 ? program % 15 : program % 15 + 1)
            messages.append((start, .programChange(channel: channel, program: UInt8(program))))
            messages.append((start, .controlChange(channel: channel, controller: 10, value: UInt8((program * 37) % 128))))
            if program % 5 == 0 { messages.append((start + 300, .pitchBend(channel: channel, value: UInt16(8192 + (program * 91) % 3000)))) }
            let root = UInt8(40 + program % 30)
            for (n, interval) in [0, 4, 7].enumerated() {
                let key = root + UInt8(interval)
                messages.append((start + n * 3, .noteOn(channel: channel, key: key, velocity: UInt8(40 + (program * 13 + n * 29) % 88))))
                messages.append((start + 500 + (program * 7 + n * 11) % 400, .noteOff(channel: channel, key: key, velocity: 64)))
            }
        }
        let end = 128 * programSpacing
        for (n, frame) in stride(from: 0, to: end, by: 700).enumerated() {
            messages.append((frame, .noteOn(channel: 9, key: UInt8(35 + n % 47), velocity: 100)))
            messages.append((frame, .noteOn(channel: 9, key: UInt8(35 + (n * 5 + 3) % 47), velocity: 90)))
        }
        messages.append((end / 4, .controlChange(channel: 0, controller: 64, value: 127)))
        messages.append((end / 2, .controlChange(channel: 0, controller: 64, value: 0)))
        return messages
    }

    @Test("Voices rendered four to a SIMD lane give the samples of the one-voice loop, to the bit")
    func lanesMatchTheOneVoiceLoop() throws {
        let spacing = 1_100
        let messages = Self.performance(programSpacing: spacing)
        var outputs: [[UInt32]] = []
        for inLanes in [true, false] {
            let rig = try SynthRig(reverb: true)
            rig.synth.rendersVoicesInLanes = inLanes
            rig.synth.setParameter(GMSynthesizer.Parameter.voiceLimit, value: 20)
            let (left, right) = rig.render(frames: 128 * spacing + 22_050, messages: messages, blockSizes: [512, 37, 1, 100])
            outputs.append((left + right).map(\.bitPattern))
            if inLanes {
                #expect(rig.synth.voicesRenderedInLanes > 10_000, "the lanes rendered \(rig.synth.voicesRenderedInLanes) voice intervals")
            } else {
                #expect(rig.synth.voicesRenderedInLanes == 0)
            }
            #expect(left.contains { abs($0) > 0.05 }, "the performance is audible")
        }
        // Compared as a Bool: a failed array comparison would print both arrays.
        let firstDifference = outputs[0].indices.first { outputs[0][$0] != outputs[1][$0] }
        #expect(firstDifference == nil, "first difference at sample \(firstDifference ?? -1) of \(outputs[0].count)")
    }
}
