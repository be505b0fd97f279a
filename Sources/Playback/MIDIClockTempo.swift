import Sequencing

/// The tempo of an incoming MIDI clock (Timing Clock, 0xF8: 24 a quarter note), estimated from
/// the clocks' arrival times.
///
/// Smoothing: the tempo is the slope of a least-squares line through the arrival times of the
/// last ``window`` clocks (24, one quarter note). A line through all of them, rather than the
/// first and last alone, lets each clock's jitter count once: with 1 ms of jitter on every
/// clock the estimate at 120 BPM is within about 0.2 %. After a change of tempo the estimate
/// has settled once a whole window has arrived at the new tempo, one quarter note
/// (``settlingClocks``); it moves towards the new tempo from the first clock. A jump of tempo
/// shows sooner: three intervals in a row more than 15 % off the estimate, the same way and
/// alike, restart the window from those clocks (jitter of a millisecond or two moves one
/// interval by far less at any tempo a clock runs at, and not three the same way). Clocks held
/// up and then delivered together (a stalled sender) are not a jump: intervals under 0.4 or
/// over 2.5 times the tempo's do not count towards one, and the line through the window
/// absorbs them. A gap of more than eight intervals (the clock paused) starts over; the
/// first tempo comes with the third clock.
public struct MIDIClockTempoEstimator: Sendable {
    /// Clocks in a quarter note.
    public static let clocksPerQuarter = 24
    /// Clocks in the estimate's window.
    public let window: Int
    /// Clocks after a change of tempo before the estimate is the new tempo: the window.
    public var settlingClocks: Int { window }

    private var arrivals: [Int64]
    private var count = 0
    private var newest = -1
    /// Intervals in a row off the estimate by more than ``jumpFraction``, signed by direction.
    private var deviations = 0
    /// How far off one interval must be to count towards a jump.
    static let jumpFraction = 0.15
    /// Intervals in a row that make a jump.
    static let jumpIntervals = 3
    /// Intervals, in clock intervals, that can be a new tempo; shorter or longer ones are a
    /// burst or a stall, not a tempo a clock changes to at once.
    static let jumpRatios = 0.4...2.5
    /// How far apart, as a ratio, the intervals of one jump may be.
    static let jumpAgreement = 1.25
    /// A gap longer than this many intervals: the clock paused, and the estimate starts over.
    static let pauseIntervals = 8.0
    private var lastDeviation = 1.0

    /// An estimator over the last `window` clocks (at least 2).
    public init(window: Int = 24) {
        self.window = max(2, window)
        arrivals = [Int64](repeating: 0, count: self.window)
    }

    /// Forgets every clock (after Stop, or when the clock source changes).
    public mutating func reset() {
        count = 0
        newest = -1
        deviations = 0
    }

    /// The estimated tempo in quarter notes a minute, once three clocks have arrived.
    public var bpm: Double? {
        guard count >= 3 else { return nil }
        // Least squares of arrival time against clock index: x = 0..<n, oldest first.
        let n = Double(count)
        let meanX = (n - 1) / 2
        let oldest = arrivals[(newest - count + 1 + window) % window]
        var meanY = 0.0
        for i in 0..<count { meanY += Double(arrivals[(newest - count + 1 + i + window) % window] - oldest) }
        meanY /= n
        var covariance = 0.0, variance = 0.0
        for i in 0..<count {
            let x = Double(i) - meanX
            covariance += x * (Double(arrivals[(newest - count + 1 + i + window) % window] - oldest) - meanY)
            variance += x * x
        }
        let nanosPerClock = covariance / variance
        guard nanosPerClock > 0 else { return nil }
        return 60e9 / (nanosPerClock * Double(Self.clocksPerQuarter))
    }

    /// Adds a clock that arrived at `nanos` (any monotonic nanosecond clock); returns the tempo
    /// estimated with it.
    @discardableResult
    public mutating func receiveClock(atNanos nanos: Int64) -> Double? {
        if count >= 1 && nanos <= arrivals[newest] {
            reset()
        } else if count >= 3, let bpm {
            let interval = 60e9 / (bpm * Double(Self.clocksPerQuarter))
            let ratio = Double(nanos - arrivals[newest]) / interval
            if ratio > Self.pauseIntervals {
                reset()
            } else if Self.jumpRatios.contains(ratio) && abs(ratio - 1) > Self.jumpFraction {
                // Off the same way as the intervals before it, and like them: a new tempo.
                let direction = ratio > 1 ? 1 : -1
                let alike = deviations * direction > 0 && max(ratio, lastDeviation) / min(ratio, lastDeviation) <= Self.jumpAgreement
                deviations = alike ? deviations + direction : direction
                lastDeviation = ratio
            } else {
                // On the tempo, or a clock of a burst after a stall (far off either way): no jump.
                deviations = 0
            }
        } else if count >= 2 {
            // Filling after a start: a second interval unlike the first (a burst of clocks held
            // up somewhere) starts the window again from the newest clock.
            let previous = Double(arrivals[newest] - arrivals[(newest - 1 + window) % window])
            let gap = Double(nanos - arrivals[newest])
            if max(gap, previous) > 2 * min(gap, previous) {
                let kept = arrivals[newest]
                reset()
                newest = 0
                arrivals[0] = kept
                count = 1
            }
        }
        newest = (newest + 1) % window
        arrivals[newest] = nanos
        count = min(count + 1, window)
        if abs(deviations) >= Self.jumpIntervals {
            // The clocks of the jump alone: the intervals at the new tempo.
            count = min(count, Self.jumpIntervals + 1)
            deviations = 0
        }
        return bpm
    }
}

/// Where a clock follower's target plays, as it measures it.
public struct MIDIClockFollowingPosition: Sendable, Equatable {
    /// Beats (quarter notes) from the song's start.
    public var beats: Double
    /// The song's own tempo there, in quarter notes a minute (before the play rate).
    public var songBPM: Double

    /// Creates a position.
    public init(beats: Double, songBPM: Double) {
        self.beats = beats
        self.songBPM = songBPM
    }
}

/// A transport target whose tempo a MIDI clock can set: the follower reads where it plays and
/// sets its play rate so that the song's tempo becomes the clock's.
public protocol MIDIClockFollowingTarget: MIDITransportTarget {
    /// The position at monotonic time `nanos`, or nil while nothing is known of it.
    func clockFollowingPosition(atNanos nanos: Int64) -> MIDIClockFollowingPosition?
    /// Plays at `rate` times the song's own tempo.
    func transportSetRate(_ rate: Double)
}

extension Player: MIDIClockFollowingTarget {
    public func clockFollowingPosition(atNanos nanos: Int64) -> MIDIClockFollowingPosition? {
        let beats = self.beats
        return MIDIClockFollowingPosition(beats: beats, songBPM: tempoMap.bpm(atTick: tempoMap.tick(atBeats: beats)))
    }

    public func transportSetRate(_ rate: Double) { playRate = rate }
}

extension PlaybackSession: MIDIClockFollowingTarget {
    public func clockFollowingPosition(atNanos nanos: Int64) -> MIDIClockFollowingPosition? {
        guard let position, position.monotonicNanos > 0 else { return nil }
        // The control thread publishes the position every pass (20 ms apart on a device): move
        // it on by the time since, at the rate it plays.
        var beats = position.beats
        if position.isPlaying && nanos > position.monotonicNanos {
            beats += Double(nanos - position.monotonicNanos) / 60e9 * position.songBPM * position.rate
        }
        return MIDIClockFollowingPosition(beats: beats, songBPM: position.songBPM)
    }

    public func transportSetRate(_ rate: Double) { setRate(rate) }
}

/// Keeps a target's song on an incoming MIDI clock: its tempo (the play rate is the clock's
/// tempo over the song's) and its position, by a gentle correction of that rate.
///
/// From Start (beat 0) or Continue (the beat the last Song Position Pointer named), every clock
/// is 1/24 of a beat further on. Each clock compares where the target plays with where the
/// clock is. Within a quarter of a clock of it the rate is the clock's tempo alone; further off, it is
/// sped up or slowed down by 5 % for each clock of difference beyond that quarter (at most
/// 10 %), so a lag is made up without a jump and the tempo is left alone once it is.
struct MIDIClockPositionLock {
    var estimator = MIDIClockTempoEstimator()
    /// The beat the clock count starts from, and clocks counted since; nil while stopped.
    private(set) var origin: (beats: Double, clocks: Int)?
    /// The largest correction of the rate, as a fraction of it.
    static let maximumCorrection = 0.1
    /// The correction per clock of difference.
    static let correctionPerClock = 0.05
    /// The difference, in clocks, left alone.
    static let toleratedClocks = 0.25

    /// The clock starts counting from `beats` (Start: 0; Continue: where the SPP put it).
    mutating func run(fromBeats beats: Double) {
        origin = (beats, -1)
    }

    /// The clock stopped: the position is no longer followed.
    mutating func stop() {
        origin = nil
        estimator.reset()
    }

    /// The beat the clock is at after the clocks counted, nil while stopped.
    var clockBeats: Double? {
        origin.map { $0.beats + Double(max(0, $0.clocks)) / Double(MIDIClockTempoEstimator.clocksPerQuarter) }
    }

    /// A clock at `nanos`: the rate the target should play at, or nil to leave it.
    mutating func clock(atNanos nanos: Int64, position: MIDIClockFollowingPosition?) -> Double? {
        guard let bpm = estimator.receiveClock(atNanos: nanos) else {
            if origin != nil { origin!.clocks += 1 }
            return nil
        }
        guard let position, position.songBPM > 0 else { return nil }
        var rate = bpm / position.songBPM
        if origin != nil {
            // The first clock after Start or Continue is the beat the count starts from.
            origin!.clocks += 1
            let behind = (clockBeats! - position.beats) * Double(MIDIClockTempoEstimator.clocksPerQuarter)
            let beyond = behind > 0 ? max(0, behind - Self.toleratedClocks) : min(0, behind + Self.toleratedClocks)
            let correction = min(max(beyond * Self.correctionPerClock, -Self.maximumCorrection), Self.maximumCorrection)
            rate *= 1 + correction
        }
        return min(max(rate, Player.rateRange.lowerBound), Player.rateRange.upperBound)
    }
}
