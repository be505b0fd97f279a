import Sequencing

/// MIDI clock and transport messages for playback from `fromTick` to `endTick`: what a
/// follower needs to run in step (24 clocks per quarter note, Start or Song Position Pointer
/// and Continue, Stop).
///
/// Clock `k` falls on tick `k * ticksPerQuarter / 24`, which need not be a whole tick; its
/// time is exact, as a rational number of seconds, because a tempo segment never changes
/// inside a tick. So clocks never drift from the song, however long it plays.
public struct MIDIClockTimeline: Sendable {
    /// Clocks per quarter note, as MIDI defines them.
    public static let clocksPerQuarter: Int64 = 24
    /// Clocks per Song Position Pointer unit (a sixteenth note).
    public static let clocksPerSixteenth: Int64 = 6

    /// The song's tempo map.
    public let tempo: TempoMap
    /// The tick playback starts from.
    public let fromTick: Int64
    /// The tick playback ends at.
    public let endTick: Int64
    /// The play rate (2 is twice as fast), which scales the clock's pace.
    public let rate: Double

    /// A timeline for playing `tempo` from `fromTick` to `endTick` at `rate`.
    public init(tempo: TempoMap, fromTick: Int64, endTick: Int64, rate: Double) {
        self.tempo = tempo
        self.fromTick = fromTick
        self.endTick = endTick
        self.rate = rate
    }

    private var ticksPerQuarter: Int64 { Int64(tempo.timeBase.ticksPerQuarterForBeats) }

    /// The sixteenth the Song Position Pointer names when playback starts at `fromTick`: the
    /// first at or after it (a follower starts on the clock after Continue, so the clocks
    /// must start on a sixteenth).
    public var startSixteenth: Int64 {
        let q = ticksPerQuarter
        return (fromTick * 4 + q - 1) / q
    }

    /// Nanoseconds from the start of playback to clock `k` (counted from the song's start).
    public func nanoseconds(ofClock k: Int64) -> UInt64 {
        // Tick of clock k = whole + fraction / 24, with whole and fraction integers.
        let scaled = k * ticksPerQuarter
        let whole = scaled / Self.clocksPerQuarter
        let fraction = scaled % Self.clocksPerQuarter
        let segment = tempo.segments[tempo.segmentIndex(atTick: whole)]
        let start = tempo.timeNumerator(atTick: fromTick)
        let numerator = Double(tempo.timeNumerator(atTick: whole) - start) + Double(fraction * segment.unitsPerTick) / Double(Self.clocksPerQuarter)
        return UInt64(max(0, (numerator / Double(tempo.timeDenominator) * 1e9 / rate).rounded()))
    }

    /// The transport messages: Start or SPP + Continue at time 0, the clocks before `endTick`,
    /// and Stop at `endNanoseconds`.
    public func messages(endNanoseconds: UInt64) -> [TimedMIDIMessage] {
        var result: [TimedMIDIMessage] = []
        let first: Int64
        if fromTick == 0 {
            result.append(TimedMIDIMessage(nanoseconds: 0, bytes: [0xFA]))
            first = 0
        } else {
            let sixteenth = min(startSixteenth, 0x3FFF)
            result.append(TimedMIDIMessage(nanoseconds: 0, bytes: [0xF2, UInt8(sixteenth & 0x7F), UInt8(sixteenth >> 7)]))
            result.append(TimedMIDIMessage(nanoseconds: 0, bytes: [0xFB]))
            first = startSixteenth * Self.clocksPerSixteenth
        }
        var k = first
        while k * ticksPerQuarter < endTick * Self.clocksPerQuarter {
            result.append(TimedMIDIMessage(nanoseconds: nanoseconds(ofClock: k), bytes: [0xF8]))
            k += 1
        }
        result.append(TimedMIDIMessage(nanoseconds: max(endNanoseconds, result.last?.nanoseconds ?? 0), bytes: [0xFC]))
        return result
    }
}
