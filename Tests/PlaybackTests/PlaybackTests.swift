import AudioEffects
import AudioGraph
import Foundation
import Instruments
import MallocCounter
import MIDI
import MIDIFile
import Playback
import Sequencing
import TactusTestSupport
import Testing

let allBlockSizes: [[Int]] = [[1], [63], [64], [65], [512], [4096], randomSizes(count: 2000, maximum: 3000, seed: 99)]

func randomSizes(count: Int, maximum: Int, seed: UInt64) -> [Int] {
    var s = seed
    return (0..<count).map { _ in
        s = s &* 6364136223846793005 &+ 1442695040888963407
        return Int((s >> 33) % UInt64(maximum)) + 1
    }
}

/// Renders `frames` frames through `engine` in blocks from `sizes` (cycled).
func render(_ engine: Engine, frames: Int, sizes: [Int]) -> (left: [Float], right: [Float]) {
    let capacity = sizes.max()!
    let l = UnsafeMutablePointer<Float>.allocate(capacity: capacity), r = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
    defer { l.deallocate(); r.deallocate() }
    var left: [Float] = [], right: [Float] = []
    var done = 0, i = 0
    while done < frames {
        let n = min(sizes[i % sizes.count], frames - done)
        i += 1
        engine.render(frameCount: n, into: StereoBuffer(left: l, right: r))
        left.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
        right.append(contentsOf: UnsafeBufferPointer(start: r, count: n))
        done += n
    }
    return (left, right)
}

/// round(seconds(tick) * rate), half up, computed here independently of TempoMap: the sum of
/// each tempo segment's ticks times its microseconds per quarter, over ppq * 10^6.
func expectedFrame(tick: Int64, ppq: Int64, tempos: [(tick: Int64, usPerQuarter: Int64)], rate: Int64) -> Int64 {
    var numerator: Int64 = 0
    var segmentStart: Int64 = 0, tempo: Int64 = 500_000
    for change in tempos where change.tick < tick {
        numerator += (change.tick - segmentStart) * tempo
        segmentStart = change.tick
        tempo = change.usPerQuarter
    }
    numerator += (tick - segmentStart) * tempo
    let den = ppq * 1_000_000
    return (2 * numerator * rate + den) / (2 * den)
}

func fnv1a(_ samples: [Float]) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for s in samples {
        var b = s.bitPattern
        for _ in 0..<4 { h ^= UInt64(b & 0xFF); h &*= 0x100_0000_01b3; b >>= 8 }
    }
    return h
}

/// A test song built with the Sequencing API: 4 tracks, drums, chords, bends, controllers,
/// program changes and tempo changes at awkward ticks.
func makeSong() -> MusicSequence {
    var seq = MusicSequence(timeBase: .ticksPerQuarter(480))
    seq.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
    seq.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 433_333)), at: 1_441)
    seq.tempoTrack.add(.meta(.tempo(bpm: 97.3)), at: 3_847)
    var lead = MusicTrack(), bass = MusicTrack(), pad = MusicTrack(), drums = MusicTrack()
    lead.add(.message(.programChange(channel: 0, program: 81)), at: 0)
    bass.add(.message(.programChange(channel: 1, program: 33)), at: 0)
    pad.add(.message(.programChange(channel: 2, program: 89)), at: 0)
    pad.add(.message(.controlChange(channel: 2, controller: MIDIController.pan, value: 20)), at: 0)
    let melody: [UInt8] = [72, 74, 76, 79, 77, 76, 74, 72, 71, 72]
    for (i, key) in melody.enumerated() {
        lead.addNote(at: Int64(i * 480 + (i % 3) * 7), channel: 0, key: key, velocity: UInt8(70 + i * 5), duration: 400)
    }
    lead.add(.message(.pitchBend(channel: 0, value: 10_000)), at: 2_000)
    lead.add(.message(.pitchBend(channel: 0, value: 8192)), at: 2_400)
    lead.add(.message(.controlChange(channel: 0, controller: MIDIController.modulationWheel, value: 90)), at: 3_000)
    for bar in 0..<5 {
        bass.addNote(at: Int64(bar * 960), channel: 1, key: UInt8(36 + [0, 5, 7, 3, 0][bar]), velocity: 100, duration: 900)
        for (k, key) in [60, 64, 67].enumerated() {
            pad.addNote(at: Int64(bar * 960 + k), channel: 2, key: UInt8(key + [0, 5, 7, 3, 0][bar]), velocity: 60, duration: 950)
        }
        for beat in 0..<8 {
            let t = Int64(bar * 960 + beat * 120)
            drums.addNote(at: t, channel: 9, key: 42, velocity: 80, duration: 60)
            if beat % 4 == 0 { drums.addNote(at: t, channel: 9, key: 36, velocity: 120, duration: 60) }
            if beat % 4 == 2 { drums.addNote(at: t, channel: 9, key: 38, velocity: 110, duration: 60) }
        }
    }
    drums.addNote(at: 4_800, channel: 9, key: 49, velocity: 120, duration: 10)
    pad.add(.message(.controlChange(channel: 2, controller: MIDIController.sustainPedal, value: 127)), at: 3_800)
    pad.add(.message(.controlChange(channel: 2, controller: MIDIController.sustainPedal, value: 0)), at: 4_500)
    seq.tracks = [lead, bass, pad, drums]
    return seq
}

@Suite struct SampleAccuracyTests {
    @Test(arguments: [44_100, 48_000, 96_000])
    func everyEventLandsOnItsExactFrame(sampleRate: Int) throws {
        var seq = MusicSequence(timeBase: .ticksPerQuarter(384))
        let tempos: [(tick: Int64, usPerQuarter: Int64)] = [(0, 512_345), (1_000, 333_333), (1_001, 700_001), (5_555, 250_000), (9_000, 1_234_567)]
        for t in tempos { seq.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: Int(t.usPerQuarter))), at: t.tick) }
        var track = MusicTrack()
        var ticks: [Int64] = []
        var t: Int64 = 0
        var s: UInt64 = 5
        while t < 12_000 {
            s = s &* 6364136223846793005 &+ 1442695040888963407
            t += Int64((s >> 40) % 97)
            ticks.append(t)
        }
        for (i, tick) in ticks.enumerated() {
            track.add(.message(.controlChange(channel: UInt8(i % 16), controller: 20, value: UInt8(i % 128))), at: tick)
        }
        seq.tracks = [track]
        let expected = ticks.map { expectedFrame(tick: $0, ppq: 384, tempos: tempos, rate: Int64(sampleRate)) }
        let schedule = Schedule(sequence: seq, sampleRate: sampleRate, defaultNode: 1)
        for sizes in allBlockSizes {
            let g = AudioGraph()
            let recorder = EventRecordingNode()
            g.add(recorder, id: 1)
            g.add(OutputNode(), id: 2)
            try g.connect(1, to: 2)
            let engine = Engine(graph: try g.compile(sampleRate: Double(sampleRate), maximumFrameCount: 4096), schedule: schedule)
            _ = render(engine, frames: Int(schedule.endFrame) + 10, sizes: sizes)
            #expect(recorder.records.map(\.frame) == expected, "block sizes \(sizes.prefix(3))")
            #expect(recorder.records.map(\.message.data2) == (0..<ticks.count).map { UInt8($0 % 128) })
        }
    }

    @Test func noteOnsAreHeardOnTheirFrameThroughTheAudioPath() throws {
        let seq = makeSong()
        let schedule = Schedule(sequence: seq, sampleRate: 44_100, defaultNode: 1)
        let tempo = seq.makeTempoMap()
        var onFrames = Set<Int>()
        for track in seq.tracks { for e in track.events { if case .note = e.event { onFrames.insert(Int(tempo.frame(atTick: e.tick, sampleRate: 44_100))) } } }
        for sizes in allBlockSizes {
            let g = AudioGraph()
            g.add(EventRecordingNode(), id: 1)
            g.add(OutputNode(), id: 2)
            try g.connect(1, to: 2)
            let engine = Engine(graph: try g.compile(sampleRate: 44_100, maximumFrameCount: 4096), schedule: schedule)
            let (l, _) = render(engine, frames: Int(schedule.endFrame) + 1, sizes: sizes)
            let impulses = Set(l.indices.filter { l[$0] == 1 })
            #expect(impulses == onFrames, "block sizes \(sizes.prefix(3))")
        }
    }
}

@Suite struct ScheduleTests {
    @Test func sameTickOrderAndZeroLengthNotes() {
        var seq = MusicSequence(timeBase: .ticksPerQuarter(96))
        var track = MusicTrack()
        track.addNote(at: 0, channel: 0, key: 60, velocity: 100, duration: 96)
        track.addNote(at: 96, channel: 0, key: 60, velocity: 90, duration: 0)
        track.add(.message(.programChange(channel: 0, program: 5)), at: 96)
        track.add(.message(.controlChange(channel: 0, controller: 7, value: 80)), at: 96)
        seq.tracks = [track]
        let events = Schedule(sequence: seq, sampleRate: 48_000, defaultNode: 1).events.map(\.event)
        #expect(events == [
            .midi(.noteOn(channel: 0, key: 60, velocity: 100)),
            .midi(.noteOff(channel: 0, key: 60)),
            .midi(.programChange(channel: 0, program: 5)),
            .midi(.controlChange(channel: 0, controller: 7, value: 80)),
            .midi(.noteOn(channel: 0, key: 60, velocity: 90)),
            .midi(.noteOff(channel: 0, key: 60)),
        ])
    }

    @Test func muteSoloAndDestinations() {
        var seq = MusicSequence(timeBase: .ticksPerQuarter(96))
        var a = MusicTrack(), b = MusicTrack(), c = MusicTrack()
        a.addNote(at: 0, channel: 0, key: 60, velocity: 100, duration: 10)
        b.addNote(at: 0, channel: 1, key: 61, velocity: 100, duration: 10)
        c.addNote(at: 0, channel: 2, key: 62, velocity: 100, duration: 10)
        c.destination = .node(7)
        seq.tracks = [a, b, c]
        func keys(_ s: MusicSequence) -> [UInt8: UInt32] {
            var result: [UInt8: UInt32] = [:]
            for e in Schedule(sequence: s, sampleRate: 44_100, defaultNode: 1).events {
                if case .midi(let m) = e.event, m.isNoteOn { result[m.data1] = e.node }
            }
            return result
        }
        #expect(keys(seq) == [60: 1, 61: 1, 62: 7])
        seq.tracks[0].isMuted = true
        #expect(keys(seq) == [61: 1, 62: 7])
        seq.tracks[1].isSoloed = true
        #expect(keys(seq) == [61: 1])
    }
}

@Suite struct RenderTests {
    /// Golden hash of the test song through the default graph at 44.1 kHz. Re-record only on
    /// purpose, when the synthesizer's sound is meant to change.
    static let goldenHash: UInt64 = 12_088_741_826_847_752_059

    @Test func songIsBitIdenticalAtEveryBlockSizeAndMatchesTheGoldenHash() throws {
        let seq = makeSong()
        var hashes: [UInt64] = []
        for sizes in allBlockSizes {
            let engine = try Engine.makeDefault(sequence: seq, sampleRate: 44_100)
            let renderer = OfflineRenderer(engine: engine, tailSeconds: 1)
            var left: [Float] = [], right: [Float] = []
            if sizes.count == 1 {
                let stats = try renderer.render(blockSize: sizes[0]) { l, r, n in
                    left.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
                    right.append(contentsOf: UnsafeBufferPointer(start: r, count: n))
                }
                #expect(stats.peak <= 1 && stats.peak > 0.1)
            } else {
                // The offline renderer takes one block size; random sizes drive the engine directly,
                // dropping the limiter's latency the way the renderer does.
                let latency = engine.graph.latencyFrames
                let (l, r) = render(engine, frames: Int(renderer.totalFrames) + latency, sizes: sizes)
                left = Array(l[latency...])
                right = Array(r[latency...])
            }
            #expect(left.count == Int(renderer.totalFrames))
            hashes.append(fnv1a(left + right))
        }
        #expect(Set(hashes).count == 1, "\(hashes)")
        #expect(hashes[0] == Self.goldenHash, "golden hash changed: \(hashes[0])")
    }

    @Test func parameterEventsOnATrackMoveAnEffectParameterAtTheirFrame() throws {
        var seq = MusicSequence(timeBase: .ticksPerQuarter(480))
        seq.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 411_111)), at: 0)
        var automation = MusicTrack()
        let gainNode: UInt32 = 5
        automation.add(.parameter(ParameterEvent(node: gainNode, parameter: GainNode.Parameter.gain, value: -20)), at: 1_237)
        automation.add(.parameter(ParameterEvent(node: 9, parameter: 0, value: 0.25)), at: 1_237)
        seq.tracks = [automation]
        let frame = Int(seq.makeTempoMap().frame(atTick: 1_237, sampleRate: 48_000))
        for sizes in allBlockSizes {
            let g = AudioGraph()
            let probe = EventRecordingNode()
            g.add(ConstantNode(0.5), id: 1)
            g.add(GainNode(), id: gainNode)
            g.add(probe, id: 9)
            g.add(OutputNode(), id: 3)
            try g.connect(1, to: gainNode)
            try g.connect(gainNode, to: 3)
            let schedule = Schedule(sequence: seq, sampleRate: 48_000, defaultNode: 1)
            let engine = Engine(graph: try g.compile(sampleRate: 48_000, maximumFrameCount: 4096), schedule: schedule)
            let (l, _) = render(engine, frames: frame + 5000, sizes: sizes)
            #expect(l[..<frame].allSatisfy { $0 == 0.5 }, "unchanged before frame \(frame)")
            #expect(l[frame] < 0.5, "moving at frame \(frame)")
            #expect(abs(l[frame + 4999] - 0.05) < 1e-4)
            #expect(probe.parameterChanges.map(\.frame) == [Int64(frame)])
        }
    }

    @Test func renderingAllocatesNothingAfterWarmUp() throws {
        // Sanity: the counter sees allocations on this thread.
        malloc_counter_start()
        let array = [Int](repeating: 1, count: Int.random(in: 100...200))
        #expect(malloc_counter_stop() > 0)
        #expect(array.count >= 100)

        let song = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Songs/seven-eight.mid").path
        let smf = try SMFReader.read(contentsOf: song)
        let engine = try Engine.makeDefault(sequence: smf.makeSequence(), sampleRate: 44_100, maximumFrameCount: 512)
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 512), r = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { l.deallocate(); r.deallocate() }
        let out = StereoBuffer(left: l, right: r)
        for _ in 0..<100 { engine.render(frameCount: 512, into: out) }
        let blocks = 44_100 * 60 / 512
        malloc_counter_start()
        for i in 0..<blocks { engine.render(frameCount: i % 3 == 0 ? 512 : 301, into: out) }
        let allocations = malloc_counter_stop()
        #expect(allocations == 0)
        #expect(engine.cursor > 1000, "the render went through many events")
    }
}

@Suite struct RenderPeakTests {
    @Test func thePeakIsTheLargestMagnitudeOfEitherSideWhereverItFallsAndANaNIsNotOne() throws {
        // The peak a render reports (and --tail auto and the manifest use) is found four
        // frames at a time; each case puts the loudest sample somewhere else: either side,
        // negative or positive, inside a group of four or in a block's last frames.
        var random = SystemRandomNumberGenerator()
        for (index, side) in [(0, 0), (1, 1), (2, 0), (3, 1), (510, 0), (511, 1), (1_000, 0), (1_498, 1), (1_499, 0)] {
            for sign: Float in [-1, 1] {
                var left = (0..<1_500).map { _ in Float.random(in: -0.5...0.5, using: &random) }
                var right = (0..<1_500).map { _ in Float.random(in: -0.5...0.5, using: &random) }
                left[7] = -0.0
                right[9] = .nan
                if side == 0 { left[index] = 0.75 * sign } else { right[index] = 0.75 * sign }
                let graph = AudioGraph()
                graph.add(SampleListNode(left: left, right: right), id: 1)
                graph.add(OutputNode(), id: 2)
                try graph.connect(1, to: 2)
                for blockSize in [7, 512] {
                    let engine = Engine(graph: try graph.compile(sampleRate: 48_000, maximumFrameCount: 512),
                                        schedule: Schedule(sequence: MusicSequence(), sampleRate: 48_000, defaultNode: 1))
                    let stats = try OfflineRenderer(engine: engine, tailSeconds: 1_500.0 / 48_000).render(blockSize: blockSize) { _, _, _ in }
                    #expect(stats.frameCount == 1_500)
                    #expect(stats.peak == 0.75, "loudest at \(index) on side \(side), sign \(sign), blocks of \(blockSize)")
                }
            }
        }
    }
}

/// Plays a fixed list of stereo samples from frame 0, then silence.
final class SampleListNode: AudioNode {
    let name = "Samples"
    let inputBusCount = 0
    let parameterInfos: [AudioParameterInfo] = []
    let left: [Float], right: [Float]
    init(left: [Float], right: [Float]) {
        self.left = left
        self.right = right
    }
    func prepare(sampleRate: Double, maximumFrameCount: Int) {}
    func reset() {}
    func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        for i in 0..<frameCount {
            let frame = Int(startFrame) + i
            output.left[i] = frame < left.count ? left[frame] : 0
            output.right[i] = frame < right.count ? right[frame] : 0
        }
    }
}

@Suite struct LimiterInTheDefaultGraphTests {
    @Test func hotRenderNeverExceedsTheCeiling() throws {
        let engine = try Engine.makeDefault(sequence: makeSong(), sampleRate: 48_000, gainDecibels: 24)
        let stats = try OfflineRenderer(engine: engine, tailSeconds: 0.5).render(blockSize: 777) { _, _, _ in }
        #expect(stats.peak <= decibelsToGain(-0.3))
        #expect(stats.peak > decibelsToGain(-1), "+24 dB drives the limiter")
    }
}
