/// A position as a musician writes it: `BAR:BEAT[:TICK]` (from 1:1), seconds (`42.5s`), or
/// raw ticks (`1920t`).
public enum MusicPosition: Hashable, Sendable, CustomStringConvertible {
    /// Bar, beat and tick through the sequence's time signatures (`9:1:240`).
    case barBeatTick(BarBeatTick)
    /// Seconds from the start through the tempo map (`42.5s`).
    case seconds(Double)
    /// Ticks from the start (`1920t`).
    case ticks(Int64)

    /// Why a position could not be parsed.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The text that was refused.
        public var text: String
        /// Why, in words.
        public var reason: String
        public var description: String { "'\(text)': \(reason)" }
    }

    /// Positions beyond these are refused: no song is that long, and bounding them keeps every
    /// conversion to ticks and frames far from overflow.
    public static let maximumSeconds: Double = 10_000_000
    /// The largest bar number accepted.
    public static let maximumBars: Int64 = 1_000_000
    /// The largest tick count accepted.
    public static let maximumTicks: Int64 = 1 << 40

    /// Parses a position.
    public init(parsing text: String) throws(ParseError) {
        let t = String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        func fail(_ reason: String) -> ParseError { ParseError(text: text, reason: reason) }
        if t.hasSuffix("s"), let seconds = Double(t.dropLast()), seconds.isFinite {
            guard seconds >= 0 else { throw fail("seconds must not be negative") }
            guard seconds <= Self.maximumSeconds else { throw fail("more than \(Int(Self.maximumSeconds)) seconds") }
            self = .seconds(seconds)
            return
        }
        if t.hasSuffix("t"), let ticks = Int64(t.dropLast()) {
            guard ticks >= 0 else { throw fail("ticks must not be negative") }
            guard ticks <= Self.maximumTicks else { throw fail("more than \(Self.maximumTicks) ticks") }
            self = .ticks(ticks)
            return
        }
        let parts = t.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let bar = Int64(parts[0]) else {
            throw fail("expected BAR:BEAT[:TICK] (like 9:1 or 9:1:240), seconds (like 42.5s) or ticks (like 1920t)")
        }
        let beat = parts.count > 1 ? Int64(parts[1]) : 1
        let tick = parts.count > 2 ? Int64(parts[2]) : 0
        guard let beat, let tick else { throw fail("beat and tick must be whole numbers") }
        guard bar >= 1, beat >= 1 else { throw fail("bars and beats count from 1") }
        guard tick >= 0 else { throw fail("the tick must not be negative") }
        guard bar <= Self.maximumBars, beat <= 10_000, tick <= Self.maximumTicks else { throw fail("position out of range (at most bar \(Self.maximumBars))") }
        self = .barBeatTick(BarBeatTick(bar: bar, beat: beat, tick: tick))
    }

    /// The tick of this position in `sequence`.
    public func tick(in sequence: MusicSequence) -> Int64 {
        switch self {
        case .ticks(let t): return t
        case .barBeatTick(let p): return sequence.makeMeterMap().tick(at: p)
        case .seconds(let s):
            let tick = sequence.makeTempoMap().tick(atSeconds: s).rounded()
            return tick.isFinite ? Int64(min(max(tick, 0), Double(Self.maximumTicks) * 4096)) : 0
        }
    }

    public var description: String {
        switch self {
        case .barBeatTick(let p): return p.tick == 0 ? "\(p.bar):\(p.beat)" : "\(p)"
        case .seconds(let s): return "\(s)s"
        case .ticks(let t): return "\(t)t"
        }
    }
}

/// A span between two positions, written `START-END` (like `9:1-13:1` or `10s-20.5s`).
public struct MusicRange: Hashable, Sendable, CustomStringConvertible {
    /// Where the range starts (included).
    public var start: MusicPosition
    /// Where it ends (excluded).
    public var end: MusicPosition

    /// Parses `START-END`.
    public init(parsing text: String) throws(MusicPosition.ParseError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw MusicPosition.ParseError(text: text, reason: "expected a range START-END, like 9:1-13:1")
        }
        start = try MusicPosition(parsing: String(parts[0]))
        end = try MusicPosition(parsing: String(parts[1]))
    }

    /// The tick range in `sequence`, or nil when it ends before it starts or is empty.
    public func ticks(in sequence: MusicSequence) -> Range<Int64>? {
        let a = start.tick(in: sequence), b = end.tick(in: sequence)
        return b > a ? a..<b : nil
    }

    public var description: String { "\(start)-\(end)" }
}

