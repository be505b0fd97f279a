import AudioEffects
import AudioGraph
import Foundation
import Instruments
import MIDI
import Playback
import Sampler
import SoundFont
import TactusTestSupport
import Testing

/// A plain voice for the helper's tests: a sine at the note's frequency (times pitch bend)
/// scaled by the "Level" parameter, with a 10 ms linear release.
struct TestSineVoice: SynthVoice {
    var phase = 0.0, step = 0.0, sampleRate = 44_100.0, gain: Float = 0, releasing = false, releaseStep: Float = 0
    var frequency = 0.0
    mutating func prepare(sampleRate: Double) { self.sampleRate = sampleRate }
    mutating func start(_ note: VoiceNote, context: VoiceContext) {
        frequency = note.frequency
        phase = 0
        gain = note.gain
        releasing = false
        releaseStep = Float(1 / (0.01 * sampleRate))
    }
    mutating func release() { releasing = true }
    var isFinished: Bool { gain <= 0 }
    mutating func render(into output: UnsafeMutablePointer<Float>, frameCount: Int, context: VoiceContext) {
        let level = context.parameters[0]
        let step = frequency * context.pitchBend / sampleRate
        for i in 0..<frameCount {
            output[i] = Float(sin(2 * Double.pi * phase)) * gain * level
            phase += step
            if phase >= 1 { phase -= 1 }
            if releasing { gain = max(0, gain - releaseStep * 127 / 127) }
        }
    }
}

func testInstrument(voices: Int = 4) -> PolyphonicInstrument<TestSineVoice> {
    PolyphonicInstrument(name: "Test sine", parameters: [
        AudioParameterInfo(id: 0, name: "Level", range: 0...1, unit: .linearGain, defaultValue: 0.5, smoothingSeconds: 0.002),
    ], voiceLimit: voices) { TestSineVoice() }
}

let timGM6mbPath = "/usr/share/sounds/sf2/TimGM6mb.sf2"

@Suite struct RealTimeContractTests {
    /// Notes, controllers, pitch bend and sustain on two channels, then a ramp and a plain
    /// change of every declared parameter of `node` across its range.
    static func workout(for node: any AudioNode, frames: Int64) -> [FramedNodeEvent] {
        var events: [FramedNodeEvent] = []
        for i in 0..<40 {
            let frame = Int64(i) * frames / 48
            let key = UInt8(36 + (i * 7) % 48)
            events.append(.midi(.noteOn(channel: UInt8(i % 2), key: key, velocity: 100), at: frame))
            events.append(.midi(.noteOff(channel: UInt8(i % 2), key: key), at: frame + frames / 20))
        }
        events.append(.midi(.controlChange(channel: 0, controller: 64, value: 127), at: frames / 5))
        events.append(.midi(.controlChange(channel: 0, controller: 64, value: 0), at: frames / 3))
        events.append(.midi(.pitchBend(channel: 1, value: 12_000), at: frames / 4))
        for (k, info) in node.parameterInfos.enumerated() where info.scope == .global {
            let start = frames / 2 + Int64(k) * 100
            let ramp = ParameterRamp(from: info.range.lowerBound, to: info.range.upperBound, length: frames / 8,
                                     shape: k % 2 == 0 ? .linear : .exponential)
            events.append(FramedNodeEvent(frame: start, event: .parameterRamp(id: info.id, scope: .global, element: 0, ramp: ramp)))
            events.append(FramedNodeEvent(frame: start + frames / 4, event: .parameter(id: info.id, scope: .global, element: 0,
                                                                                   value: info.defaultValue)))
        }
        return events
    }

    /// Every built-in node but the output node, which ends every graph the renderer builds.
    static func builtInNodes() throws -> [any AudioNode] {
        var nodes: [any AudioNode] = [
            GainNode(decibels: -6), BiquadFilterNode(kind: .lowPass, frequency: 800, q: 2), CombFilterNode(), DelayNode(),
            LimiterNode(), CompressorNode(), ReverbNode(), ChorusNode(), MixerNode(inputCount: 3),
            EventRecordingNode(capacity: 4096), GMSynthesizer(), testInstrument(), MIDIPortTap(portName: "test:midi_in"),
        ]
        if FileManager.default.fileExists(atPath: timGM6mbPath) {
            nodes.append(SamplerNode(bank: try SoundFontReader.read(contentsOf: timGM6mbPath).bank))
        }
        return nodes
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: timGM6mbPath),
                   "the sampler's check needs /usr/share/sounds/sf2/TimGM6mb.sf2: install the Debian package timgm6mb-soundfont"))
    func everyBuiltInNodeRendersWithoutAllocatingOrFreeing() throws {
        #expect(AllocationCounter.isWorking)
        let frames = 44_100
        for node in try Self.builtInNodes() {
            let renderer = try NodeRenderer(node: node, events: Self.workout(for: node, frames: Int64(frames)), frameCount: frames,
                                            blockSizes: [256, 1, 93, 512])
            let count = renderer.renderAllocations()
            #expect(count.isZero, "\(node.name): \(count)")
        }
    }

    @Test func everyBuiltInNodeFollowsARampTheSameWayAtEveryBlockSize() throws {
        let frames = 20_000
        for (index, node) in try Self.builtInNodes().enumerated() {
            let events = Self.workout(for: node, frames: Int64(frames))
            let reference = try NodeRenderer(node: node, events: events, frameCount: frames, blockSizes: [512]).render()
            let fresh = try Self.builtInNodes()[index]
            let out = try NodeRenderer(node: fresh, events: events, frameCount: frames,
                                       blockSizes: randomBlockSizes(count: 300, maximum: 300, seed: UInt64(index + 1))).render()
            #expect(out.left == reference.left && out.right == reference.right, "\(node.name)")
        }
    }

    @Test func everyBuiltInParameterHasAUniqueNameAndADefaultInsideItsRange() throws {
        for node in try Self.builtInNodes() {
            let names = node.parameterInfos.filter { $0.scope == .global }.map { $0.name.lowercased() }
            #expect(Set(names).count == names.count, "\(node.name)")
            for info in node.parameterInfos {
                #expect(info.range.contains(info.defaultValue), "\(node.name).\(info.name)")
            }
        }
    }
}

@Suite struct PolyphonicInstrumentTests {
    func render(_ events: [FramedNodeEvent], frames: Int = 8000, voices: Int = 4) throws -> (PolyphonicInstrument<TestSineVoice>, [Float]) {
        let instrument = testInstrument(voices: voices)
        let out = try NodeRenderer(node: instrument, events: events, frameCount: frames, blockSizes: [128]).render()
        return (instrument, out.left)
    }

    @Test func aNoteBeyondTheLimitStealsTheOldestVoiceWithAFadeNotAClick() throws {
        let events = (0..<6).map { FramedNodeEvent.midi(.noteOn(channel: 0, key: UInt8(60 + $0), velocity: 127), at: Int64($0) * 500) }
        let (instrument, out) = try render(events, frames: 4000)
        // Four sounding: the two oldest were stolen and have faded out.
        #expect(instrument.activeVoiceCount == 4)
        var largestStep: Float = 0
        for i in 1..<out.count { largestStep = max(largestStep, abs(out[i] - out[i - 1])) }
        // Four full-scale sines at level 0.5 and these frequencies move at most ~0.1 per sample.
        #expect(largestStep < 0.15)
    }

    @Test func theSustainPedalHoldsReleasedNotesUntilItIsLifted() throws {
        let events: [FramedNodeEvent] = [
            .midi(.controlChange(channel: 0, controller: 64, value: 127), at: 0),
            .midi(.noteOn(channel: 0, key: 60, velocity: 100), at: 10),
            .midi(.noteOff(channel: 0, key: 60), at: 1000),
            .midi(.controlChange(channel: 0, controller: 64, value: 0), at: 4000),
        ]
        let (instrument, out) = try render(events, frames: 8000)
        let held = out[3000..<3500].map(abs).max()!
        let after = out[6000..<8000].map(abs).max()!
        #expect(held > 0.3, "held by the pedal")
        #expect(after == 0, "released when the pedal lifts")
        #expect(instrument.activeVoiceCount == 0)
    }

    @Test func pitchBendScalesTheVoicesFrequency() throws {
        // Key 69 is 440 Hz; full bend up at a 2-semitone range is 493.88 Hz.
        let events: [FramedNodeEvent] = [
            .midi(.pitchBend(channel: 0, value: 16_383), at: 0),
            .midi(.noteOn(channel: 0, key: 69, velocity: 127), at: 0),
        ]
        let (_, out) = try render(events, frames: 44_100)
        var crossings = 0
        for i in 1..<out.count where out[i - 1] < 0 && out[i] >= 0 { crossings += 1 }
        #expect(abs(crossings - 494) <= 1, "\(crossings) cycles in one second")
    }
}
