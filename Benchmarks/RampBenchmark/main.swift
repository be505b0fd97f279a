// What a ramp costs: each built-in node renders 10 s at 44.1 kHz in 512-frame blocks, once
// with steady parameters and once while one parameter ramps for the whole time (ramping
// nodes render frame by frame). Prints nanoseconds per frame for both and their ratio.
//
//     swift run -c release tactus-ramp-benchmark
import AudioEffects
import AudioGraph
import Foundation
import Instruments
import MIDI
import Sampler
import SoundFont
import TactusTestSupport

let frames = 441_000
let bankPath = "/usr/share/sounds/sf2/TimGM6mb.sf2"

func notes() -> [FramedNodeEvent] {
    (0..<80).flatMap { i -> [FramedNodeEvent] in
        let key = UInt8(48 + (i * 7) % 24), at = Int64(i) * Int64(frames) / 80
        return [.midi(.noteOn(channel: 0, key: key, velocity: 100), at: at), .midi(.noteOff(channel: 0, key: key), at: at + 20_000)]
    }
}

func seconds(_ node: any AudioNode, _ events: [FramedNodeEvent]) throws -> Double {
    let renderer = try NodeRenderer(node: node, events: events, frameCount: frames, blockSizes: [512])
    let start = DispatchTime.now().uptimeNanoseconds
    _ = renderer.render()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

var makers: [(String, UInt32, () throws -> any AudioNode)] = [
    ("Gain", GainNode.Parameter.gain, { GainNode() }),
    ("Biquad", BiquadFilterNode.Parameter.frequency, { BiquadFilterNode() }),
    ("Comb", CombFilterNode.Parameter.feedback, { CombFilterNode() }),
    ("Delay", DelayNode.Parameter.mix, { DelayNode() }),
    ("Limiter", LimiterNode.Parameter.inputGain, { LimiterNode() }),
    ("Compressor", CompressorNode.Parameter.threshold, { CompressorNode() }),
    ("Reverb", ReverbNode.Parameter.wet, { ReverbNode() }),
    ("Chorus", ChorusNode.Parameter.depth, { ChorusNode() }),
    ("GM synthesizer", GMSynthesizer.Parameter.volume, { GMSynthesizer() }),
]
if FileManager.default.fileExists(atPath: bankPath) {
    let bank = try SoundFontReader.read(contentsOf: bankPath).bank
    makers.append(("Sampler (TimGM6mb)", SamplerNode.Parameter.volume, { SamplerNode(bank: bank) }))
}
print("node                  steady ns/frame  ramping ns/frame  ratio")
for (name, parameter, make) in makers {
    let node = try make()
    guard let info = node.parameterInfo(parameter) else { continue }
    let ramp = ParameterRamp(from: info.range.lowerBound, to: info.defaultValue, length: Int64(frames))
    let rampEvents = notes() + [FramedNodeEvent(frame: 0, event: .parameterRamp(id: parameter, scope: .global, element: 0, ramp: ramp))]
    let steady = try seconds(make(), notes()) / Double(frames) * 1e9
    let ramping = try seconds(make(), rampEvents) / Double(frames) * 1e9
    print(name.padding(toLength: 22, withPad: " ", startingAt: 0)
          + String(format: "%15.1f  %16.1f  %5.1fx", steady, ramping, ramping / steady))
}
