import MIDI
import Testing
@testable import Sequencing

@Suite("Editing operations")
struct EditingTests {
    struct Rng {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
    }

    /// A random sequence: a tempo track with tempo changes and two note tracks.
    static func randomSequence(seed: UInt64) -> MusicSequence {
        var rng = Rng(state: seed)
        var tempo = MusicTrack()
        tempo.add(.meta(.tempo(bpm: 90 + Double(rng.next(60)))), at: 0)
        for _ in 0..<4 { tempo.add(.meta(.tempo(bpm: 60 + Double(rng.next(120)))), at: Int64(rng.next(40)) * 96) }
        var tracks: [MusicTrack] = []
        for t in 0..<2 {
            var track = MusicTrack()
            for _ in 0..<60 {
                track.addNote(at: Int64(rng.next(4000)), channel: UInt8(t), key: UInt8(30 + rng.next(70)), velocity: UInt8(1 + rng.next(126)), duration: Int64(1 + rng.next(500)))
            }
            track.add(.message(.controlChange(channel: UInt8(t), controller: 7, value: UInt8(rng.next(128)))), at: Int64(rng.next(4000)))
            tracks.append(track)
        }
        return MusicSequence(timeBase: .ticksPerQuarter(96), tempoTrack: tempo, tracks: tracks)
    }

    /// Notes of a track as (tick, channel, key, velocity, duration), sorted.
    static func notes(_ track: MusicTrack) -> [[Int64]] {
        track.events.compactMap { e -> [Int64]? in
            guard case .note(let n) = e.event else { return nil }
            return [e.tick, Int64(n.channel), Int64(n.key), Int64(n.velocity), n.duration]
        }.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Every event as comparable values, sorted (same-tick order aside).
    static func content(_ track: MusicTrack) -> [String] {
        track.events.map { e in
            if case .note(let n) = e.event {
                return "\(e.tick) note \(n.channel) \(n.key) \(n.velocity) \(n.releaseVelocity) \(n.duration) \(n.releasedByZeroVelocityNoteOn)"
            }
            return "\(e.tick) \(e.event)"
        }.sorted()
    }

    @Test("Transpose by +n then -n is the identity within range; drums stay")
    func transposeInverse() {
        for seed in UInt64(1)...20 {
            var s = Self.randomSequence(seed: seed)
            s.tracks[1].addNote(at: 0, channel: 9, key: 36, velocity: 100, duration: 10)
            let original = s
            let n = 1 + Int(seed % 20)
            s.transpose(by: n, policy: .clamp)
            s.transpose(by: -n, policy: .clamp)
            // Notes pushed past 127 were clamped; all others come back exactly.
            for (a, b) in zip(Self.notes(original.tracks[0]), Self.notes(s.tracks[0])) where a[2] + Int64(n) <= 127 {
                #expect(a == b)
            }
            #expect(Self.notes(original.tracks[1]).filter { $0[1] == 9 } == Self.notes(s.tracks[1]).filter { $0[1] == 9 })
        }
    }

    @Test("Transpose overflow policies")
    func transposePolicies() {
        var track = MusicTrack()
        track.addNote(at: 0, channel: 0, key: 120, velocity: 100, duration: 10)
        track.addNote(at: 10, channel: 0, key: 60, velocity: 100, duration: 10)
        let base = MusicSequence(tracks: [track])
        var clamp = base, fold = base, drop = base
        clamp.transpose(by: 12, policy: .clamp)
        fold.transpose(by: 12, policy: .foldOctave)
        drop.transpose(by: 12, policy: .drop)
        #expect(Self.notes(clamp.tracks[0]).map { $0[2] } == [127, 72])
        #expect(Self.notes(fold.tracks[0]).map { $0[2] } == [120, 72])
        #expect(Self.notes(drop.tracks[0]).map { $0[2] } == [72])
        // Drums move only when channel 10 is named.
        var drums = MusicTrack()
        drums.addNote(at: 0, channel: 9, key: 36, velocity: 100, duration: 10)
        var d = MusicSequence(tracks: [drums])
        d.transpose(by: 2)
        #expect(Self.notes(d.tracks[0])[0][2] == 36)
        d.transpose(by: 2, scope: EditScope(channels: [9]))
        #expect(Self.notes(d.tracks[0])[0][2] == 38)
    }

    @Test("Velocity: set, scale, compress, in a key range")
    func velocities() {
        var track = MusicTrack()
        for (i, v) in [1, 64, 127].enumerated() { track.addNote(at: Int64(i), channel: 0, key: UInt8(60 + i), velocity: UInt8(v), duration: 5) }
        var s = MusicSequence(tracks: [track])
        s.compressVelocity(into: 40...100)
        #expect(Self.notes(s.tracks[0]).map { $0[3] } == [40, 70, 100])
        s.scaleVelocity(percent: 200, scope: EditScope(keys: 61...62))
        #expect(Self.notes(s.tracks[0]).map { $0[3] } == [40, 127, 127])
        s.setVelocity(10, scope: EditScope(range: 0..<1))
        #expect(Self.notes(s.tracks[0]).map { $0[3] } == [10, 127, 127])
    }

    @Test("Quantize: exact targets, strength, swing, triplets, ends")
    func quantize() {
        var track = MusicTrack()
        for tick: Int64 in [5, 118, 250, 370] { track.addNote(at: tick, channel: 0, key: 60, velocity: 90, duration: 100) }
        let base = MusicSequence(timeBase: .ticksPerQuarter(480), tracks: [track])
        // 1/16 at 480 ppq is 120 ticks.
        var full = base
        full.quantize(grid: QuantizeGrid(parsing: "1/16")!)
        #expect(Self.notes(full.tracks[0]).map { $0[0] } == [0, 120, 240, 360])
        var half = base
        half.quantize(grid: QuantizeGrid(parsing: "1/16")!, strength: 0.5)
        #expect(Self.notes(half.tracks[0]).map { $0[0] } == [2, 119, 245, 365])
        var swung = base
        swung.quantize(grid: QuantizeGrid(parsing: "1/16")!, swing: 0.5)
        // Odd grid lines are 30 ticks late (half of half a step).
        #expect(Self.notes(swung.tracks[0]).map { $0[0] } == [0, 150, 240, 390])
        var triplet = base
        triplet.quantize(grid: QuantizeGrid(parsing: "1/8t")!)
        #expect(Self.notes(triplet.tracks[0]).map { $0[0] } == [0, 160, 320, 320])
        var ends = base
        ends.quantize(grid: QuantizeGrid(parsing: "1/8")!, ends: true)
        // Ends snap too; a note whose end would land on or before its start keeps its length.
        #expect(Self.notes(ends.tracks[0]).map { [$0[0], $0[0] + $0[4]] } == [[0, 100], [0, 240], [240, 340], [480, 580]])
        #expect(QuantizeGrid(parsing: "1/4.")!.ticks(ticksPerQuarter: 480) == 720)
        #expect(QuantizeGrid(parsing: "1/7") == nil)
    }

    @Test("Quantize moves a note's initial bend, pressure and CC 74 with a note it moves earlier; other channels' and later expression stay")
    func quantizeCarriesInitialExpression() {
        var track = MusicTrack()
        let bend = MIDIMessage(status: 0xE3, data1: 0, data2: 80), pressure = MIDIMessage(status: 0xD3, data1: 90, data2: 0)
        let timbre = MIDIMessage(status: 0xB3, data1: 74, data2: 20), volume = MIDIMessage(status: 0xB3, data1: 7, data2: 100)
        let otherChannel = MIDIMessage(status: 0xE4, data1: 0, data2: 10), during = MIDIMessage(status: 0xE3, data1: 0, data2: 90)
        for m in [bend, pressure, timbre, volume, otherChannel] { track.add(.message(m), at: 125) }
        track.addNote(at: 125, channel: 3, key: 60, velocity: 90, duration: 100)
        track.add(.message(during), at: 130)
        // A note moved later (to 240) leaves its expression where it was, before it.
        let lateBend = MIDIMessage(status: 0xE5, data1: 0, data2: 70)
        track.add(.message(lateBend), at: 235)
        track.addNote(at: 235, channel: 5, key: 62, velocity: 90, duration: 100)
        var s = MusicSequence(timeBase: .ticksPerQuarter(480), tracks: [track])
        s.quantize(grid: QuantizeGrid(parsing: "1/16")!)
        var ticks: [MIDIMessage: Int64] = [:]
        for e in s.tracks[0].events { if case .message(let m) = e.event { ticks[m] = e.tick } }
        #expect(Self.notes(s.tracks[0]).map { $0[0] } == [120, 240])
        #expect(ticks[bend] == 120 && ticks[pressure] == 120 && ticks[timbre] == 120)
        #expect(ticks[volume] == 125 && ticks[otherChannel] == 125 && ticks[during] == 130 && ticks[lateBend] == 235)
    }

    @Test("Quantize with strength 0 changes nothing")
    func quantizeZero() {
        for seed in UInt64(1)...10 {
            let original = Self.randomSequence(seed: seed)
            var s = original
            s.quantize(grid: QuantizeGrid(noteValue: 16), strength: 0, swing: 0.3, starts: true, ends: true)
            #expect(s == original)
        }
    }

    @Test("Cut then paste at the same place restores the sequence")
    func cutPaste() {
        for seed in UInt64(1)...20 {
            let original = Self.randomSequence(seed: seed)
            var s = original
            var rng = Rng(state: seed)
            let start = Int64(rng.next(3000))
            let range = start..<(start + 1 + Int64(rng.next(1500)))
            let clip = s.cut(range)
            #expect(s.length <= original.length)
            s.paste(clip, at: range.lowerBound)
            for t in original.tracks.indices {
                #expect(Self.content(s.tracks[t]) == Self.content(original.tracks[t]), "seed \(seed) track \(t)")
            }
            // The tempo map is the same at every tick (a carried tempo may add a redundant event).
            let a = original.makeTempoMap(), b = s.makeTempoMap()
            for tick in stride(from: Int64(0), to: 6000, by: 17) { #expect(a.timeNumerator(atTick: tick) == b.timeNumerator(atTick: tick)) }
        }
    }

    @Test("Delete closes the gap and keeps the tempo in force after it; clear leaves it")
    func deleteAndClear() {
        var tempo = MusicTrack()
        tempo.add(.meta(.tempo(bpm: 120)), at: 0)
        tempo.add(.meta(.tempo(bpm: 60)), at: 200)
        var track = MusicTrack()
        for tick: Int64 in [0, 100, 200, 300, 400] { track.addNote(at: tick, channel: 0, key: 60, velocity: 90, duration: 50) }
        let base = MusicSequence(timeBase: .ticksPerQuarter(96), tempoTrack: tempo, tracks: [track])
        var cleared = base
        cleared.clear(100..<300)
        #expect(Self.notes(cleared.tracks[0]).map { $0[0] } == [0, 300, 400])
        var deleted = base
        deleted.delete(100..<300)
        #expect(Self.notes(deleted.tracks[0]).map { $0[0] } == [0, 100, 200])
        // 60 BPM, which started inside the deleted span, now starts where the gap closed.
        #expect(deleted.makeTempoMap().bpm(atTick: 150) == 60)
        #expect(deleted.makeTempoMap().bpm(atTick: 50) == 120)
        var inserted = base
        inserted.insertSilence(at: 150, length: 96)
        #expect(Self.notes(inserted.tracks[0]).map { $0[0] } == [0, 100, 296, 396, 496])
        var moved = base
        moved.move(by: -150, scope: EditScope(range: 100..<500))
        #expect(Self.notes(moved.tracks[0]).map { $0[0] } == [0, 0, 50, 150, 250])
    }

    @Test("Paste overwrite replaces what starts in the clip's span")
    func pasteOverwrite() {
        var track = MusicTrack()
        for tick: Int64 in [0, 100, 200, 300] { track.addNote(at: tick, channel: 0, key: UInt8(60 + tick / 100), velocity: 90, duration: 50) }
        var s = MusicSequence(timeBase: .ticksPerQuarter(96), tracks: [track])
        let clip = s.copy(0..<100)
        s.paste(clip, at: 200, mode: .overwrite)
        #expect(Self.notes(s.tracks[0]).map { [$0[0], $0[2]] } == [[0, 60], [100, 61], [200, 60], [300, 63]])
    }

    @Test("Keep-seconds tempo changes leave every event's time unchanged (within one tick)")
    func keepSeconds() {
        for seed in UInt64(1)...15 {
            let original = Self.randomSequence(seed: seed)
            let before = original.makeTempoMap()
            var edits: [MusicSequence] = []
            var a = original; a.setConstantTempo(bpm: 97, keep: .seconds); edits.append(a)
            var b = original; b.scaleTempo(by: 1.37, keep: .seconds); edits.append(b)
            var c = original; c.insertTempo(bpm: 171, at: 1234, keep: .seconds); edits.append(c)
            var d = original; d.tempoRamp(from: 80, to: 140, over: 500..<2500, keep: .seconds); edits.append(d)
            for edited in edits {
                let after = edited.makeTempoMap()
                for t in original.tracks.indices {
                    let x = Self.notes(original.tracks[t]), y = Self.notes(edited.tracks[t])
                    #expect(x.count == y.count)
                    let xs = x.map { before.seconds(atTick: $0[0]) }.sorted()
                    let ys = y.map { after.seconds(atTick: $0[0]) }.sorted()
                    for (p, q) in zip(xs, ys) {
                        // One tick at the new tempo, at the slowest tempo used (40 BPM at 96 ppq).
                        #expect(abs(p - q) <= 60.0 / 40.0 / 96.0, "seed \(seed)")
                    }
                }
            }
        }
    }

    @Test("Keep-beats tempo changes keep ticks and change seconds")
    func keepBeats() {
        let original = Self.randomSequence(seed: 3)
        var s = original
        s.setConstantTempo(bpm: 60, keep: .beats)
        #expect(Self.notes(s.tracks[0]) == Self.notes(original.tracks[0]))
        #expect(s.tempoChanges == [TempoChange(tick: 0, microsecondsPerQuarter: 1_000_000)])
        #expect(s.makeTempoMap().seconds(atTick: 96) == 1)
    }

    @Test("Tracks: merge, split by channel and key, duplicate, move, signatures, remove kinds")
    func tracks() {
        var a = MusicTrack(), b = MusicTrack()
        a.addNote(at: 0, channel: 0, key: 60, velocity: 90, duration: 10)
        b.addNote(at: 5, channel: 9, key: 36, velocity: 90, duration: 10)
        b.addNote(at: 6, channel: 9, key: 49, velocity: 90, duration: 10)
        b.add(.sysex(SysexEvent(payload: [0x7E, 0xF7])), at: 0)
        b.add(.message(.controlChange(channel: 9, controller: 7, value: 90)), at: 0)
        var s = MusicSequence(tracks: [a, b])
        s.mergeTracks([0, 1])
        #expect(s.tracks.count == 1 && s.tracks[0].count == 5)
        s.splitTrackByChannel(0)
        #expect(s.tracks.count == 3)
        s.splitTrackByKey(2, at: 40)
        #expect(Self.notes(s.tracks[3]).map { $0[2] } == [49])
        s.duplicateTrack(3)
        #expect(s.tracks.count == 5)
        s.moveTrack(from: 4, to: 0)
        #expect(Self.notes(s.tracks[0]).map { $0[2] } == [49])
        s.setTimeSignature(TimeSignature(3, 4), at: 0)
        s.setTimeSignature(TimeSignature(6, 8), at: 0)
        #expect(s.timeSignatures.map(\.signature.description) == ["6/8"])
        s.setKeySignature(KeySignature(sharpsOrFlats: -2, isMinor: true), at: 96)
        #expect(s.keySignatures.map(\.key) == [KeySignature(sharpsOrFlats: -2, isMinor: true)])
        let before = s.allTracks.map(\.count).reduce(0, +)
        s.removeEvents(.sysex)
        s.removeEvents(.controller(7))
        #expect(s.allTracks.map(\.count).reduce(0, +) == before - 2)
    }

    @Test("Position and range parsing")
    func positions() throws {
        var s = MusicSequence(timeBase: .ticksPerQuarter(480))
        s.tempoTrack.add(.meta(.timeSignature(TimeSignature(3, 4))), at: 0)
        #expect(try MusicPosition(parsing: "9:1").tick(in: s) == 8 * 1440)
        #expect(try MusicPosition(parsing: "2:3:10").tick(in: s) == 1440 + 960 + 10)
        #expect(try MusicPosition(parsing: "1.5s").tick(in: s) == 1440)
        #expect(try MusicPosition(parsing: "77t").tick(in: s) == 77)
        #expect(try MusicRange(parsing: "2:1-3:1").ticks(in: s) == 1440..<2880)
        #expect(try MusicRange(parsing: "3:1-2:1").ticks(in: s) == nil)
        #expect(throws: MusicPosition.ParseError.self) { try MusicPosition(parsing: "0:1") }
        #expect(throws: MusicPosition.ParseError.self) { try MusicPosition(parsing: "bar nine") }
        #expect(throws: MusicPosition.ParseError.self) { try MusicRange(parsing: "9:1") }
    }
}

@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    @Test("A position of 10^47 seconds is refused, not a trap (fuzz-positions crash-1527fca8)")
    func hugeSeconds() throws {
        #expect(throws: MusicPosition.ParseError.self) { try MusicPosition(parsing: "4666666666666666666666666666666666666666666662.5s") }
        #expect(throws: MusicPosition.ParseError.self) { try MusicPosition(parsing: "99999999999999:1") }
        #expect(throws: MusicPosition.ParseError.self) { try MusicPosition(parsing: "99999999999999999t") }
        let s = MusicSequence(timeBase: .ticksPerQuarter(480))
        #expect(try MusicPosition(parsing: "10000000s").tick(in: s) == 9_600_000_000)
    }
}
