import AudioGraph
import AudioTestSupport
import Foundation
import Instruments
import MIDI
import Testing

/// A synthesizer wired straight to the output, and a way to play timed messages into it.
/// Dry by default (reverb level 0), so silence, pitch and envelopes can be measured directly.
struct SynthRig {
    let synth = GMSynthesizer()
    let graph: CompiledGraph
    let sampleRate = 44_100

    init(reverb: Bool = false) throws {
        if !reverb { synth.setParameter(GMSynthesizer.Parameter.reverbLevel, value: 0) }
        let g = AudioGraph()
        let s = g.add(synth), o = g.add(OutputNode())
        try g.connect(s, to: o)
        graph = try g.compile(sampleRate: Double(sampleRate), maximumFrameCount: 4096)
    }

    /// Renders `frames` frames in blocks from `blockSizes` (cycled), sending `messages` at their frames.
    func render(frames: Int, messages: [(frame: Int, message: MIDIMessage)], blockSizes: [Int] = [512]) -> (left: [Float], right: [Float]) {
        let sorted = messages.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }.map(\.element)
        return renderGraph(graph, frames: frames, blockSizes: blockSizes,
                           events: sorted.map { (frame: $0.frame, node: 0, event: NodeEvent.midi($0.message)) })
    }
}

/// Largest sample-to-sample jump of `x` in `range`.
func maximumJump(_ x: [Float], _ range: Range<Int>) -> Float {
    var m: Float = 0
    for i in max(1, range.lowerBound)..<min(x.count, range.upperBound) { m = max(m, abs(x[i] - x[i - 1])) }
    return m
}

/// Positive-going zero crossings per second in `x[range]`.
func crossingsPerSecond(_ x: [Float], _ range: Range<Int>, sampleRate: Int) -> Double {
    var n = 0
    for i in range.dropFirst() where x[i - 1] < 0 && x[i] >= 0 { n += 1 }
    return Double(n) * Double(sampleRate) / Double(range.count)
}

func fnv1a(_ samples: [Float]) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for s in samples {
        var b = s.bitPattern
        for _ in 0..<4 { h ^= UInt64(b & 0xFF); h &*= 0x100_0000_01b3; b >>= 8 }
    }
    return h
}

@Suite struct ClickTests {
    // Organ (program 16): additive sines, so any large jump is an envelope click, not a waveform edge.
    static let organ = MIDIMessage.programChange(channel: 0, program: 16)
    static let a3 = UInt8(57), e4 = UInt8(64)

    /// The steady-state jump of a held note: the bound for every transition.
    func steadyJump(_ rig: SynthRig) -> Float {
        let (l, _) = rig.render(frames: 22_050, messages: [(0, Self.organ), (0, .noteOn(channel: 0, key: Self.e4, velocity: 127))])
        return maximumJump(l, 11_025..<22_050)
    }

    @Test func noteStartAndEndAreClickFree() throws {
        let rig = try SynthRig()
        let steady = steadyJump(rig)
        rig.graph.reset()
        let on = 1001, off = 20_011
        let (l, r) = rig.render(frames: 30_000, messages: [(0, Self.organ), (on, .noteOn(channel: 0, key: Self.a3, velocity: 127)),
                                                           (off, .noteOff(channel: 0, key: Self.a3))])
        #expect(l[..<on].allSatisfy { $0 == 0 }, "silent before the note")
        #expect(abs(l[on]) < steady, "the first sample is not a step")
        #expect(maximumJump(l, on - 10..<on + 500) <= steady)
        #expect(maximumJump(r, off - 10..<off + 3000) <= steady)
        #expect(rms(l[(off + 8000)...]) < 1e-4, "released to silence")
    }

    @Test func stealingAndAllNotesOffAreClickFree() throws {
        let rig = try SynthRig()
        let steady = steadyJump(rig)
        rig.graph.reset()
        rig.synth.setParameter(GMSynthesizer.Parameter.voiceLimit, value: 1)
        let steal = 10_007, allOff = 20_003, second = 25_000, soundOff = 30_001
        let (l, _) = rig.render(frames: 40_000, messages: [
            (0, Self.organ), (0, .noteOn(channel: 0, key: Self.a3, velocity: 127)),
            (steal, .noteOn(channel: 0, key: Self.e4, velocity: 127)),
            (allOff, .controlChange(channel: 0, controller: MIDIController.allNotesOff, value: 0)),
            (second, .noteOn(channel: 0, key: Self.a3, velocity: 127)),
            (soundOff, .controlChange(channel: 0, controller: MIDIController.allSoundOff, value: 0)),
        ])
        // Old voice fading while the new one attacks: at most the sum of their slopes.
        #expect(maximumJump(l, steal - 10..<steal + 1000) <= 2 * steady)
        #expect(maximumJump(l, allOff - 10..<allOff + 3000) <= steady)
        #expect(maximumJump(l, soundOff - 10..<soundOff + 1000) <= steady)
        #expect(rms(l[(soundOff + 300)...]) == 0, "all sound off silences within milliseconds")
        #expect(rig.synth.activeVoiceCount == 0)
    }
}

@Suite struct SynthesizerTests {
    @Test func outputDoesNotDependOnBlockSize() throws {
        var messages: [(frame: Int, message: MIDIMessage)] = []
        let programs: [UInt8] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120]
        for (i, program) in programs.enumerated() {
            let ch = UInt8(i == 9 ? 10 : i)
            let t = i * 1733
            messages.append((t, .programChange(channel: ch, program: program)))
            messages.append((t + 5, .noteOn(channel: ch, key: UInt8(48 + i), velocity: UInt8(40 + i * 5))))
            messages.append((t + 9000, .noteOff(channel: ch, key: UInt8(48 + i))))
            messages.append((t + 3001, .pitchBend(channel: ch, value: 12_000)))
            messages.append((t + 4003, .controlChange(channel: ch, controller: MIDIController.modulationWheel, value: 100)))
            messages.append((t + 5005, .controlChange(channel: ch, controller: MIDIController.pan, value: UInt8(i * 8))))
        }
        for (i, key) in [36, 38, 42, 46, 49, 51, 56, 60, 75, 81].enumerated() {
            messages.append((i * 2203 + 7, .noteOn(channel: 9, key: UInt8(key), velocity: 110)))
        }
        var reference: UInt64?
        for sizes in [[1], [63], [64], [65], [512], [4096], randomBlockSizes(count: 300, maximum: 900, seed: 42)] {
            let rig = try SynthRig(reverb: true)
            let (l, r) = rig.render(frames: 44_100, messages: messages, blockSizes: sizes)
            let hash = fnv1a(l + r)
            if let reference { #expect(hash == reference, "block sizes \(sizes.prefix(3))") } else { reference = hash }
            #expect(rms(l[...]) > 0.01)
        }
    }

    @Test func pitchBendFollowsTheRPNBendRange() throws {
        func frequency(bendRange: UInt8?, bend: UInt16) throws -> Double {
            let rig = try SynthRig()
            var m: [(frame: Int, message: MIDIMessage)] = [(0, .programChange(channel: 0, program: 16))]
            if let bendRange {
                m += [(0, .controlChange(channel: 0, controller: MIDIController.rpnMSB, value: 0)),
                      (0, .controlChange(channel: 0, controller: MIDIController.rpnLSB, value: 0)),
                      (0, .controlChange(channel: 0, controller: MIDIController.dataEntryMSB, value: bendRange))]
            }
            m += [(0, .pitchBend(channel: 0, value: bend)), (0, .noteOn(channel: 0, key: 57, velocity: 100))]
            let (l, _) = rig.render(frames: 44_100, messages: m)
            return crossingsPerSecond(l, 4410..<44_100, sampleRate: 44_100)
        }
        let centre = try frequency(bendRange: nil, bend: 8192)
        #expect(abs(centre - 220) < 2)
        #expect(abs(try frequency(bendRange: nil, bend: 16383) / centre - pow(2, 2.0 / 12)) < 0.01)
        #expect(abs(try frequency(bendRange: 12, bend: 16383) / centre - 2) < 0.02)
        #expect(abs(try frequency(bendRange: 12, bend: 0) / centre - 0.5) < 0.01)
    }

    @Test func sustainPedalHoldsNotesUntilReleased() throws {
        let rig = try SynthRig()
        let (l, _) = rig.render(frames: 88_200, messages: [
            (0, .programChange(channel: 0, program: 16)),
            (0, .controlChange(channel: 0, controller: MIDIController.sustainPedal, value: 127)),
            (0, .noteOn(channel: 0, key: 60, velocity: 100)),
            (4410, .noteOff(channel: 0, key: 60)),
            (44_100, .controlChange(channel: 0, controller: MIDIController.sustainPedal, value: 0)),
        ])
        #expect(rms(l[30_000..<40_000]) > 0.01, "held by the pedal after the note-off")
        #expect(rms(l[60_000...]) < 1e-4, "released when the pedal goes up")
    }

    @Test func volumeExpressionAndResetAllControllers() throws {
        func level(_ extra: [MIDIMessage]) throws -> Float {
            let rig = try SynthRig()
            let m = ([.programChange(channel: 0, program: 16)] + extra + [.noteOn(channel: 0, key: 60, velocity: 100)]).map { (0, $0) }
            let (l, _) = rig.render(frames: 22_050, messages: m)
            return rms(l[11_025...])
        }
        let full = try level([])
        let halfVolume = try level([.controlChange(channel: 0, controller: MIDIController.volume, value: 50)])
        let lowExpression = try level([.controlChange(channel: 0, controller: MIDIController.expression, value: 64)])
        let reset = try level([.controlChange(channel: 0, controller: MIDIController.expression, value: 64),
                               .controlChange(channel: 0, controller: MIDIController.resetAllControllers, value: 0)])
        #expect(abs(halfVolume / full - pow(50.0 / 100.0, 2)) < 0.02, "GM volume is squared, default 100")
        #expect(abs(lowExpression / full - Float(pow(64.0 / 127.0, 2))) < 0.02)
        #expect(abs(reset / full - 1) < 0.01)
    }

    @Test func reverbSendFeedsARingingTail() throws {
        func tail(send: UInt8?) throws -> Float {
            let rig = try SynthRig(reverb: true)
            var m: [(frame: Int, message: MIDIMessage)] = [(0, .programChange(channel: 0, program: 16))]
            if let send { m.append((0, .controlChange(channel: 0, controller: MIDIController.reverbSend, value: send))) }
            m += [(0, .noteOn(channel: 0, key: 60, velocity: 100)), (11_025, .noteOff(channel: 0, key: 60))]
            let (l, _) = rig.render(frames: 44_100, messages: m)
            return rms(l[22_050...])
        }
        #expect(try tail(send: 0) < 1e-9, "no send: the dry note has ended (only the anti-denormal offset remains)")
        let normal = try tail(send: nil), full = try tail(send: 127)
        #expect(normal > 1e-3, "GM default send 40 rings on")
        #expect(full > normal * 2)
    }

    @Test func everyGMKitKeySoundsAndDecays() throws {
        for key in 35...81 {
            let rig = try SynthRig()
            let (l, r) = rig.render(frames: 44_100 * 3, messages: [(0, .noteOn(channel: 9, key: UInt8(key), velocity: 100))])
            #expect(rms(l[..<4410]) + rms(r[..<4410]) > 0.003, "key \(key) is audible")
            #expect(rig.synth.activeVoiceCount == 0, "key \(key) ends by itself")
        }
    }

    @Test func programsSoundDifferent() throws {
        var hashes = Set<UInt64>()
        for family in 0..<16 {
            let rig = try SynthRig()
            let (l, _) = rig.render(frames: 22_050, messages: [(0, .programChange(channel: 0, program: UInt8(family * 8))),
                                                             (0, .noteOn(channel: 0, key: 60, velocity: 100))])
            #expect(rms(l[...]) > 0.003, "family \(family) is audible")
            #expect(l.allSatisfy { abs($0) < 1 })
            hashes.insert(fnv1a(l))
        }
        #expect(hashes.count == 16)
    }

    @Test func voiceLimitIsRespected() throws {
        let rig = try SynthRig()
        rig.synth.setParameter(GMSynthesizer.Parameter.voiceLimit, value: 8)
        let messages = (0..<40).map { (frame: $0 * 10, message: MIDIMessage.noteOn(channel: 0, key: UInt8(40 + $0), velocity: 90)) }
        _ = rig.render(frames: 1000, messages: messages)
        // Eight held voices, plus at most the stolen ones still inside their 3 ms fade.
        #expect(rig.synth.activeVoiceCount <= 8 + 14)
        _ = rig.render(frames: 2000, messages: [])
        #expect(rig.synth.activeVoiceCount == 8)
    }
}
