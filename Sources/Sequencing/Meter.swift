/// A time signature as SMF stores it.
public struct TimeSignature: Hashable, Sendable, CustomStringConvertible {
    /// Beats per bar.
    public var numerator: UInt8
    /// The beat unit as a power of two: 2 means quarter notes, 3 eighths.
    public var denominatorPower: UInt8
    /// MIDI clocks per metronome click.
    public var clocksPerClick: UInt8
    /// Notated 32nd notes per MIDI quarter note (normally 8).
    public var thirtySecondsPerQuarter: UInt8

    /// Creates a time signature from its stored fields.
    public init(numerator: UInt8, denominatorPower: UInt8, clocksPerClick: UInt8 = 24, thirtySecondsPerQuarter: UInt8 = 8) {
        self.numerator = numerator
        self.denominatorPower = denominatorPower
        self.clocksPerClick = clocksPerClick
        self.thirtySecondsPerQuarter = thirtySecondsPerQuarter
    }

    /// Creates `numerator/denominator`; `denominator` is rounded down to a power of two.
    public init(_ numerator: Int, _ denominator: Int) {
        var power: UInt8 = 0
        while (1 << (power + 1)) <= max(denominator, 1) && power < 7 { power += 1 }
        self.init(numerator: UInt8(clamping: numerator), denominatorPower: power,
                  clocksPerClick: UInt8(clamping: 96 >> Int(power)), thirtySecondsPerQuarter: 8)
    }

    /// 4/4, assumed where a sequence sets no time signature.
    public static let common = TimeSignature(4, 4)

    /// The beat unit: 4 for quarter notes, 8 for eighths.
    public var denominator: Int { 1 << Int(min(denominatorPower, 30)) }

    public var description: String { "\(numerator)/\(denominator)" }

    /// Ticks in one beat at `ticksPerQuarter`.
    public func ticksPerBeat(ticksPerQuarter: Int) -> Int64 {
        max(1, Int64(ticksPerQuarter) * 4 / Int64(denominator))
    }
}

/// A position in bars, beats and ticks, counted from 1:1:0.
public struct BarBeatTick: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Bar number, from 1.
    public var bar: Int64
    /// Beat within the bar, from 1.
    public var beat: Int64
    /// Tick within the beat, from 0.
    public var tick: Int64

    /// Creates a position.
    public init(bar: Int64, beat: Int64 = 1, tick: Int64 = 0) {
        self.bar = bar
        self.beat = beat
        self.tick = tick
    }

    public static func < (a: BarBeatTick, b: BarBeatTick) -> Bool {
        (a.bar, a.beat, a.tick) < (b.bar, b.beat, b.tick)
    }

    public var description: String { "\(bar):\(beat):\(tick)" }
}

/// Converts ticks to and from bar:beat:tick through the time signatures of a sequence.
///
/// A time signature change starts a new bar, even where it falls in the middle of one, as
/// notation programs treat it.
public struct MeterMap: Sendable, Hashable {
    /// One span of constant time signature.
    public struct Segment: Hashable, Sendable {
        /// First tick of the span.
        public var startTick: Int64
        /// Bar number (from 1) at `startTick`.
        public var startBar: Int64
        /// The signature in force.
        public var signature: TimeSignature
        /// Ticks in one beat of this signature.
        public var ticksPerBeat: Int64
        /// Ticks in one bar of this signature.
        public var ticksPerBar: Int64
    }

    /// Spans sorted by start tick; the first starts at 0.
    public private(set) var segments: [Segment]
    /// Ticks per quarter note used for beats.
    public let ticksPerQuarter: Int

    /// Builds the map; at one tick the last signature wins; none means 4/4.
    public init(ticksPerQuarter: Int, changes: [(tick: Int64, signature: TimeSignature)]) {
        self.ticksPerQuarter = max(1, ticksPerQuarter)
        let tpq = self.ticksPerQuarter
        func segment(_ tick: Int64, _ bar: Int64, _ sig: TimeSignature) -> Segment {
            let beat = sig.ticksPerBeat(ticksPerQuarter: tpq)
            return Segment(startTick: tick, startBar: bar, signature: sig, ticksPerBeat: beat,
                           ticksPerBar: beat * Int64(max(sig.numerator, 1)))
        }
        var segs = [segment(0, 1, .common)]
        let sorted = changes.enumerated().sorted { a, b in
            a.element.tick != b.element.tick ? a.element.tick < b.element.tick : a.offset < b.offset
        }
        for (_, change) in sorted {
            let tick = max(0, change.tick)
            let last = segs[segs.count - 1]
            if last.startTick == tick {
                segs[segs.count - 1] = segment(tick, last.startBar, change.signature)
            } else {
                let elapsed = tick - last.startTick
                let bars = (elapsed + last.ticksPerBar - 1) / last.ticksPerBar
                segs.append(segment(tick, last.startBar + bars, change.signature))
            }
        }
        segments = segs
    }

    private func index(atTick tick: Int64) -> Int {
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) >> 1
            if segments[mid].startTick <= tick { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// The time signature in force at `tick`.
    public func signature(atTick tick: Int64) -> TimeSignature {
        segments[index(atTick: max(0, tick))].signature
    }

    /// The bar:beat:tick position of `tick`.
    public func barBeatTick(atTick tick: Int64) -> BarBeatTick {
        let s = segments[index(atTick: max(0, tick))]
        let offset = max(0, tick) - s.startTick
        let bar = s.startBar + offset / s.ticksPerBar
        let inBar = offset % s.ticksPerBar
        return BarBeatTick(bar: bar, beat: inBar / s.ticksPerBeat + 1, tick: inBar % s.ticksPerBeat)
    }

    /// The tick of a bar:beat:tick position. Beats and ticks past the end of a bar carry on
    /// into the following bars of the same signature.
    public func tick(at position: BarBeatTick) -> Int64 {
        var i = segments.count - 1
        while i > 0 && segments[i].startBar > position.bar { i -= 1 }
        let s = segments[i]
        return s.startTick + (position.bar - s.startBar) * s.ticksPerBar
            + (position.beat - 1) * s.ticksPerBeat + position.tick
    }

    /// The tick where bar `bar` begins.
    public func tick(atBar bar: Int64) -> Int64 { tick(at: BarBeatTick(bar: bar)) }

    /// Bars (fractional) spanned from tick 0 to `tick`.
    public func bars(atTick tick: Int64) -> Double {
        let s = segments[index(atTick: max(0, tick))]
        return Double(s.startBar - 1) + Double(max(0, tick) - s.startTick) / Double(s.ticksPerBar)
    }
}
