/// How ticks relate to time in a sequence: the SMF "division".
public enum TimeBase: Hashable, Sendable {
    /// Musical time: ticks per quarter note (1...32767); tempo events set the speed.
    case ticksPerQuarter(Int)
    /// Absolute time: SMPTE frames per second (24, 25, 29 for 29.97 drop frame, 30) and ticks
    /// per frame; tempo events do not change the speed.
    case smpte(framesPerSecond: Int, ticksPerFrame: Int)

    /// The default resolution of sequences Tactus creates.
    public static let standard = TimeBase.ticksPerQuarter(960)

    /// The 16-bit division word of an SMF header.
    public var divisionWord: UInt16 {
        switch self {
        case .ticksPerQuarter(let q): return UInt16(clamping: q) & 0x7FFF
        case .smpte(let fps, let tpf): return UInt16(UInt8(bitPattern: Int8(truncatingIfNeeded: -fps))) << 8 | UInt16(UInt8(clamping: tpf))
        }
    }

    /// Decodes an SMF division word.
    public init(divisionWord: UInt16) {
        if divisionWord & 0x8000 != 0 {
            self = .smpte(framesPerSecond: 256 - Int(divisionWord >> 8), ticksPerFrame: Int(divisionWord & 0xFF))
        } else {
            self = .ticksPerQuarter(Int(divisionWord))
        }
    }

    /// Ticks per quarter note used for beats and bars. For SMPTE time the quarter note is
    /// taken at 120 BPM (half a second), the tempo SMF assumes when none is given.
    public var ticksPerQuarterForBeats: Int {
        switch self {
        case .ticksPerQuarter(let q): return q
        case .smpte(let fps, let tpf): return max(1, Int((smpteFramesPerSecond(fps) * Double(tpf) / 2).rounded()))
        }
    }

    /// True when ticks can be turned into seconds (division not zero).
    public var isUsable: Bool {
        switch self {
        case .ticksPerQuarter(let q): return q > 0
        case .smpte(let fps, let tpf): return fps > 0 && tpf > 0
        }
    }
}

/// Frames per second of an SMPTE rate code; 29 means 29.97 (30000/1001).
@inlinable
public func smpteFramesPerSecond(_ code: Int) -> Double {
    code == 29 ? 30000.0 / 1001.0 : Double(code)
}

/// A tempo change: from `tick` on, a quarter note lasts `microsecondsPerQuarter`.
public struct TempoChange: Hashable, Sendable {
    /// Where the tempo takes effect.
    public var tick: Int64
    /// Microseconds per quarter note.
    public var microsecondsPerQuarter: Int

    /// Creates a tempo change.
    public init(tick: Int64, microsecondsPerQuarter: Int) {
        self.tick = tick
        self.microsecondsPerQuarter = microsecondsPerQuarter
    }

    /// The tempo in beats (quarter notes) per minute.
    public var bpm: Double { 60_000_000.0 / Double(microsecondsPerQuarter) }
}

/// Converts between ticks, beats and seconds, exactly, at any number of tempo changes.
///
/// Time is kept as an exact rational number of seconds, `numerator / denominator`, with a
/// fixed denominator for the whole map. Each segment stores the exact numerator at its start,
/// computed once from the previous segment; a conversion starts from its segment and never
/// sums per-event deltas, so nothing drifts however many tempo changes there are.
public struct TempoMap: Sendable, Hashable {
    /// One span of constant tempo.
    public struct Segment: Hashable, Sendable {
        /// First tick of the segment.
        public var startTick: Int64
        /// Exact time of `startTick` as a numerator over ``TempoMap/timeDenominator``.
        public var startTimeNumerator: Int64
        /// Numerator units per tick in this segment.
        public var unitsPerTick: Int64
        /// The tempo, for display (SMPTE maps report 120 BPM equivalents).
        public var microsecondsPerQuarter: Int
    }

    /// The time base the map converts for.
    public let timeBase: TimeBase
    /// Seconds = numerator / `timeDenominator`.
    public let timeDenominator: Int64
    /// The segments, sorted by start tick; the first starts at tick 0.
    public private(set) var segments: [Segment]

    /// The default tempo of a file that sets none: 120 BPM.
    public static let defaultMicrosecondsPerQuarter = 500_000

    /// Builds the map for a time base and tempo changes (any order; at one tick the last wins).
    /// SMPTE time bases ignore tempo changes, as the SMF specification says.
    public init(timeBase: TimeBase, changes: [TempoChange] = []) {
        self.timeBase = timeBase
        switch timeBase {
        case .smpte(let fps, let tpf):
            // seconds = tick / (fps * tpf); 29.97 is 30000/1001 frames per second.
            let (num, den): (Int64, Int64) = fps == 29 ? (1001, 30000) : (1, Int64(max(fps, 1)))
            timeDenominator = den * Int64(max(tpf, 1))
            segments = [Segment(startTick: 0, startTimeNumerator: 0, unitsPerTick: num,
                                microsecondsPerQuarter: TempoMap.defaultMicrosecondsPerQuarter)]
        case .ticksPerQuarter(let q):
            // seconds = sum(ticks * us_per_quarter) / (ppq * 1e6)
            timeDenominator = Int64(max(q, 1)) * 1_000_000
            let sorted = changes.enumerated().sorted { a, b in
                a.element.tick != b.element.tick ? a.element.tick < b.element.tick : a.offset < b.offset
            }.map(\.element)
            var segs: [Segment] = [Segment(startTick: 0, startTimeNumerator: 0,
                                           unitsPerTick: Int64(TempoMap.defaultMicrosecondsPerQuarter),
                                           microsecondsPerQuarter: TempoMap.defaultMicrosecondsPerQuarter)]
            for change in sorted where change.microsecondsPerQuarter > 0 {
                let tick = max(0, change.tick)
                var last = segs[segs.count - 1]
                if last.startTick == tick {
                    last.unitsPerTick = Int64(change.microsecondsPerQuarter)
                    last.microsecondsPerQuarter = change.microsecondsPerQuarter
                    segs[segs.count - 1] = last
                } else {
                    let start = TempoMap.saturatingAdd(last.startTimeNumerator,
                                                       TempoMap.saturatingMultiply(tick - last.startTick, last.unitsPerTick))
                    segs.append(Segment(startTick: tick, startTimeNumerator: start,
                                        unitsPerTick: Int64(change.microsecondsPerQuarter),
                                        microsecondsPerQuarter: change.microsecondsPerQuarter))
                }
            }
            segments = segs
        }
    }

    /// The index of the segment containing `tick`.
    @inlinable
    public func segmentIndex(atTick tick: Int64) -> Int {
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) >> 1
            if segments[mid].startTick <= tick { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Exact time of `tick` as a numerator over ``timeDenominator``.
    @inlinable
    public func timeNumerator(atTick tick: Int64) -> Int64 {
        let s = segments[segmentIndex(atTick: tick)]
        return TempoMap.saturatingAdd(s.startTimeNumerator, TempoMap.saturatingMultiply(tick - s.startTick, s.unitsPerTick))
    }

    /// Seconds from tick 0 to `tick`.
    public func seconds(atTick tick: Int64) -> Double {
        let n = timeNumerator(atTick: tick)
        let whole = n / timeDenominator
        let rest = n % timeDenominator
        return Double(whole) + Double(rest) / Double(timeDenominator)
    }

    /// The sample frame of `tick`: `round(seconds(tick) * sampleRate)`, computed exactly
    /// (half rounds up).
    public func frame(atTick tick: Int64, sampleRate: Int) -> Int64 {
        TempoMap.roundedRatio(timeNumerator(atTick: tick), Int64(sampleRate), timeDenominator)
    }

    /// The tick at `seconds` (fractional; beyond the last change the last tempo continues).
    public func tick(atSeconds seconds: Double) -> Double {
        let n = seconds * Double(timeDenominator)
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) >> 1
            if Double(segments[mid].startTimeNumerator) <= n { lo = mid } else { hi = mid - 1 }
        }
        let s = segments[lo]
        return Double(s.startTick) + (n - Double(s.startTimeNumerator)) / Double(s.unitsPerTick)
    }

    /// The first tick whose frame at `sampleRate` is at or after `frame`.
    public func firstTick(atOrAfterFrame frame: Int64, sampleRate: Int) -> Int64 {
        // Start from the floating estimate, then settle exactly on integer frames.
        var t = max(0, Int64(tick(atSeconds: Double(frame) / Double(sampleRate)).rounded(.down)) - 1)
        while t > 0 && self.frame(atTick: t - 1, sampleRate: sampleRate) >= frame { t -= 1 }
        while self.frame(atTick: t, sampleRate: sampleRate) < frame { t += 1 }
        return t
    }

    /// Beats (quarter notes) at `tick`.
    public func beats(atTick tick: Int64) -> Double {
        Double(tick) / Double(timeBase.ticksPerQuarterForBeats)
    }

    /// The tick at `beats` quarter notes (rounded to the nearest tick).
    public func tick(atBeats beats: Double) -> Int64 {
        Int64((beats * Double(timeBase.ticksPerQuarterForBeats)).rounded())
    }

    /// The tempo in effect at `tick`, in microseconds per quarter note.
    public func microsecondsPerQuarter(atTick tick: Int64) -> Int {
        segments[segmentIndex(atTick: tick)].microsecondsPerQuarter
    }

    /// The tempo in effect at `tick`, in beats per minute.
    public func bpm(atTick tick: Int64) -> Double {
        60_000_000.0 / Double(microsecondsPerQuarter(atTick: tick))
    }

    @usableFromInline
    static func saturatingMultiply(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, o) = a.multipliedReportingOverflow(by: b)
        return o ? ((a < 0) != (b < 0) ? .min : .max) : r
    }

    @usableFromInline
    static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, o) = a.addingReportingOverflow(b)
        return o ? (b < 0 ? .min : .max) : r
    }

    /// round(a * b / c) for non-negative c, half up, with a 128-bit intermediate.
    @usableFromInline
    static func roundedRatio(_ a: Int64, _ b: Int64, _ c: Int64) -> Int64 {
        let negative = (a < 0) != (b < 0)
        let product = a.magnitude.multipliedFullWidth(by: b.magnitude)
        let divisor = c.magnitude
        guard product.high < divisor else { return negative ? .min : .max }
        let (q, r) = divisor.dividingFullWidth(product)
        let rounded = r >= divisor - r ? q + 1 : q
        let value = Int64(clamping: rounded)
        return negative ? -value : value
    }
}
