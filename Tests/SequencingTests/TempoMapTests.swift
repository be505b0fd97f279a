import Testing
@testable import Sequencing

@Suite("Tempo map")
struct TempoMapTests {
    @Test("No tempo event means 120 BPM")
    func defaultTempo() {
        let map = TempoMap(timeBase: .ticksPerQuarter(480))
        #expect(map.seconds(atTick: 480) == 0.5)
        #expect(map.seconds(atTick: 960 * 60) == 60)
        #expect(map.bpm(atTick: 12345) == 120)
        #expect(map.frame(atTick: 480, sampleRate: 48000) == 24000)
    }

    @Test("10,000 tempo changes end exactly where the closed form says")
    func manyTempoChanges() {
        // Tempo i lasts `span` ticks at (400000 + 37 * i) microseconds per quarter.
        let ppq = 960
        let span: Int64 = 97
        let count = 10_000
        var changes: [TempoChange] = []
        for i in 0..<count {
            changes.append(TempoChange(tick: Int64(i) * span, microsecondsPerQuarter: 400_000 + 37 * i))
        }
        let map = TempoMap(timeBase: .ticksPerQuarter(ppq), changes: changes)
        // Closed form: sum over i of span * (400000 + 37 i) = span * (400000 n + 37 n(n-1)/2).
        let n = Int64(count)
        let totalMicrosTimesPPQ = span * (400_000 * n + 37 * n * (n - 1) / 2)
        let end = Int64(count) * span
        #expect(map.timeNumerator(atTick: end) == totalMicrosTimesPPQ)
        // In frames at 48 kHz: round(total_us / ppq * 48000 / 1e6), computed in integers.
        let numerator = totalMicrosTimesPPQ * 48_000
        let denominator = Int64(ppq) * 1_000_000
        let expectedFrame = (numerator + denominator / 2) / denominator
        #expect(map.frame(atTick: end, sampleRate: 48_000) == expectedFrame)
        // Every intermediate segment start is exact too.
        for i in stride(from: 0, to: count, by: 997) {
            let k = Int64(i)
            let closed = span * (400_000 * k + 37 * k * (k - 1) / 2)
            #expect(map.timeNumerator(atTick: k * span) == closed)
        }
        // Seconds agree with the exact value to double precision.
        let exactSeconds = Double(totalMicrosTimesPPQ) / Double(ppq) / 1e6
        #expect(abs(map.seconds(atTick: end) - exactSeconds) < 1e-9)
    }

    @Test("Seconds and ticks invert each other across tempo changes")
    func inverse() {
        let map = TempoMap(timeBase: .ticksPerQuarter(96), changes: [
            TempoChange(tick: 96, microsecondsPerQuarter: 250_000),
            TempoChange(tick: 192, microsecondsPerQuarter: 1_000_000),
        ])
        #expect(map.seconds(atTick: 96) == 0.5)
        #expect(map.seconds(atTick: 192) == 0.75)
        #expect(map.seconds(atTick: 384) == 2.75)
        for tick in stride(from: Int64(0), through: 1000, by: 7) {
            #expect(abs(map.tick(atSeconds: map.seconds(atTick: tick)) - Double(tick)) < 1e-9)
        }
    }

    @Test("Frames are round(seconds * rate), half up, and firstTick finds the boundary")
    func frames() {
        let map = TempoMap(timeBase: .ticksPerQuarter(7), changes: [TempoChange(tick: 3, microsecondsPerQuarter: 333_333)])
        for tick in Int64(0)..<200 {
            let seconds = map.seconds(atTick: tick)
            let expected = Int64((seconds * 44_100 + 0.5).rounded(.down))
            #expect(abs(map.frame(atTick: tick, sampleRate: 44_100) - expected) <= 0, "tick \(tick)")
        }
        for frame in stride(from: Int64(0), to: 400_000, by: 4_321) {
            let t = map.firstTick(atOrAfterFrame: frame, sampleRate: 44_100)
            #expect(map.frame(atTick: t, sampleRate: 44_100) >= frame)
            if t > 0 { #expect(map.frame(atTick: t - 1, sampleRate: 44_100) < frame) }
        }
    }

    @Test("SMPTE time ignores tempo and handles 29.97 drop frame")
    func smpte() {
        let map = TempoMap(timeBase: .smpte(framesPerSecond: 29, ticksPerFrame: 80), changes: [TempoChange(tick: 0, microsecondsPerQuarter: 1_000_000)])
        #expect(abs(map.seconds(atTick: 2320) - 2320.0 * 1001.0 / 30000.0 / 80.0) < 1e-12)
        let map25 = TempoMap(timeBase: .smpte(framesPerSecond: 25, ticksPerFrame: 40))
        #expect(map25.seconds(atTick: 1000) == 1.0)
        #expect(map25.frame(atTick: 1000, sampleRate: 48_000) == 48_000)
    }

    @Test("Division word round trip")
    func divisionWord() {
        for word: UInt16 in [96, 480, 960, 0x7FFF, 0xE804, 0xE728, 0xE350, 0xE264] {
            #expect(TimeBase(divisionWord: word).divisionWord == word)
        }
        #expect(TimeBase(divisionWord: 0xE350) == .smpte(framesPerSecond: 29, ticksPerFrame: 80))
    }

    @Test("Sequence tempo map honours tempo events in any track")
    func tempoFromTracks() {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        track.add(.meta(.tempo(bpm: 60)), at: 480)
        sequence.tracks = [track]
        let map = sequence.makeTempoMap()
        #expect(map.seconds(atTick: 480) == 0.5)
        #expect(map.seconds(atTick: 960) == 1.5)
    }
}
