import MIDI
import Sequencing

/// The song a soak run plays: a probe track whose notes each carry a unique number, noise
/// tracks that the run edits while playing, and tempo changes.
///
/// Probe note `n` (one every sixteenth, a thirty-second long) encodes `n` in its channel, key
/// and velocity, so the notes an instrument receives can be checked for order, gaps and
/// repeats without knowing when transport actions landed.
public struct SoakSong: Sendable {
    /// Node identifier of the instrument the probe track plays.
    public static let probeNode: UInt32 = 1
    /// Node identifier of the instrument the noise tracks play.
    public static let noiseNode: UInt32 = 2
    /// Node identifier of the instrument live input plays.
    public static let liveNode: UInt32 = 3
    /// Ticks per quarter note.
    public static let ticksPerQuarter: Int64 = 480
    /// Ticks between two probe notes (a sixteenth).
    public static let probeSpacing: Int64 = ticksPerQuarter / 4
    /// Ticks per 4/4 bar.
    public static let barTicks: Int64 = ticksPerQuarter * 4
    /// Number of noise tracks.
    public static let noiseTrackCount = 4
    /// The most probe notes the encoding distinguishes.
    public static let maximumProbeNotes = 16 * 128 * 127

    /// The sequence: track 1 is the probe, tracks 2... are noise.
    public let sequence: MusicSequence
    /// Number of probe notes.
    public let probeCount: Int
    /// The song's length in ticks (the end of the last bar).
    public var lengthTicks: Int64 { Int64(probeCount) * Self.probeSpacing }

    /// A song of `bars` bars of 4/4 (at most 4,064).
    public init(bars: Int, seed: UInt64) {
        precondition(bars > 0 && bars * 16 <= Self.maximumProbeNotes, "bars out of range")
        probeCount = bars * 16
        var conductor = MusicTrack()
        conductor.add(.meta(.timeSignature(TimeSignature(numerator: 4, denominatorPower: 2))), at: 0)
        // A tempo change every 8 bars: the schedule's frames come from a real tempo map.
        let tempos: [Double] = [120, 150, 96, 132, 180, 108, 140, 90]
        for (i, bar) in stride(from: 0, to: bars, by: 8).enumerated() {
            conductor.add(.meta(.tempo(bpm: tempos[i % tempos.count])), at: Int64(bar) * Self.barTicks)
        }
        var probe = MusicTrack()
        probe.destination = .node(Self.probeNode)
        for n in 0..<probeCount {
            let id = Self.probeIdentity(n)
            _ = probe.addNote(at: Int64(n) * Self.probeSpacing, channel: id.channel, key: id.key, velocity: id.velocity,
                              duration: Self.probeSpacing / 2)
        }
        var rng = SoakRandom(seed: seed)
        var tracks = [probe]
        for t in 0..<Self.noiseTrackCount {
            tracks.append(Self.noiseTrack(channel: UInt8(t), bars: bars, random: &rng))
        }
        sequence = MusicSequence(timeBase: .ticksPerQuarter(Int(Self.ticksPerQuarter)), tempoTrack: conductor, tracks: tracks)
    }

    /// A noise track: random notes and controllers on `channel`, played by ``noiseNode``.
    public static func noiseTrack(channel: UInt8, bars: Int, random: inout SoakRandom) -> MusicTrack {
        var track = MusicTrack()
        track.destination = .node(noiseNode)
        let length = Int64(bars) * barTicks
        var tick: Int64 = 0
        while tick < length {
            let duration = Int64(random.next(in: 30...960))
            _ = track.addNote(at: tick, channel: channel, key: UInt8(random.next(in: 30...90)),
                              velocity: UInt8(random.next(in: 20...127)), duration: min(duration, length - tick))
            if random.next(in: 0...7) == 0 {
                track.add(.message(.controlChange(channel: channel, controller: 7, value: UInt8(random.next(in: 0...127)))), at: tick)
            }
            tick += Int64(random.next(in: 40...480))
        }
        return track
    }

    /// The channel, key and velocity of probe note `n`.
    public static func probeIdentity(_ n: Int) -> (channel: UInt8, key: UInt8, velocity: UInt8) {
        (UInt8(n / (128 * 127) % 16), UInt8(n % 128), UInt8(1 + n / 128 % 127))
    }

    /// The probe note number a note-on encodes.
    public static func probeNumber(of message: MIDIMessage) -> Int {
        Int(message.channel) * 128 * 127 + (Int(message.data2) - 1) * 128 + Int(message.data1)
    }

    /// The first probe note at or after `tick`.
    public func firstProbe(atOrAfter tick: Int64) -> Int {
        Int((max(0, tick) + Self.probeSpacing - 1) / Self.probeSpacing)
    }

    /// The last probe note before `tick`.
    public func lastProbe(before tick: Int64) -> Int {
        firstProbe(atOrAfter: tick) - 1
    }
}

/// A small deterministic random generator (SplitMix64), so a run can be repeated from its
/// seed.
public struct SoakRandom: Sendable {
    private var generator: SplitMix64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 { generator.next() }

    /// A number in `range`.
    public mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }
}
