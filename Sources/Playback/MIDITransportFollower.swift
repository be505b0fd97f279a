import Sequencing

/// A MIDI transport message: what a drum machine or another sequencer sends to start, stop or
/// move the sequencers that follow it.
public enum MIDITransportMessage: Sendable, Equatable {
    /// Start (0xFA): play from the beginning.
    case start
    /// Stop (0xFC): stop where playback is.
    case stop
    /// Continue (0xFB): play on from where playback stopped or a Song Position Pointer moved it.
    case `continue`
    /// Song Position Pointer (0xF2): move to this many sixteenth notes from the start.
    case songPosition(sixteenths: Int)

    /// Parses a complete message; nil for anything else (channel messages, clock, sysex).
    public init?(bytes: [UInt8]) {
        switch bytes.first {
        case 0xFA where bytes.count == 1: self = .start
        case 0xFC where bytes.count == 1: self = .stop
        case 0xFB where bytes.count == 1: self = .continue
        case 0xF2 where bytes.count == 3 && bytes[1] < 0x80 && bytes[2] < 0x80:
            self = .songPosition(sixteenths: Int(bytes[1]) | Int(bytes[2]) << 7)
        default: return nil
        }
    }
}

/// What a ``MIDITransportFollower`` moves: a ``Player`` or a ``PlaybackSession``.
public protocol MIDITransportTarget: AnyObject {
    /// Moves to `tick` (playing on from there if playing).
    func transportLocate(toTick tick: Int64)
    /// Plays from the current position.
    func transportPlay()
    /// Stops where playback is.
    func transportStop()
}

extension Player: MIDITransportTarget {
    public func transportLocate(toTick tick: Int64) { locate(toTick: tick) }
    public func transportPlay() { start() }
    public func transportStop() { stop() }
}

extension PlaybackSession: MIDITransportTarget {
    public func transportLocate(toTick tick: Int64) { locate(toTick: tick) }
    public func transportPlay() { resume() }
    public func transportStop() { pause() }
}

/// Applies MIDI transport messages received from another device to a player or session: Start plays
/// from the beginning, Stop stops, Song Position Pointer moves to its sixteenth, Continue plays
/// on from there. Made with ``init(followingClockOf:ticksPerQuarter:)``, it also follows the
/// clock (0xF8): the song plays at the clock's tempo, estimated as ``MIDIClockTempoEstimator``
/// says, and its position is held to the clock's count from Start or Continue by small changes
/// of the play rate; otherwise the song keeps its own tempo.
///
/// Call `receive(_:)` from the one thread that reads the input; the player's commands are
/// queued for the audio thread, so nothing waits on it.
public final class MIDITransportFollower: @unchecked Sendable {
    private let target: any MIDITransportTarget
    private let clockTarget: (any MIDIClockFollowingTarget)?
    private let ticksPerSixteenth: (numerator: Int64, denominator: Int64)
    // Touched only by the thread that calls `receive`.
    private var lock = MIDIClockPositionLock()
    private var locatedBeats = 0.0

    /// Follows transport messages for `target`, whose sequence has `ticksPerQuarter`.
    public init(_ target: any MIDITransportTarget, ticksPerQuarter: Int) {
        self.target = target
        clockTarget = nil
        ticksPerSixteenth = (Int64(ticksPerQuarter), 4)
    }

    /// Follows transport messages and the clock's tempo for `target`, whose sequence has
    /// `ticksPerQuarter`. Give clocks with their arrival times (``receive(_:atNanos:)``).
    public init(followingClockOf target: any MIDIClockFollowingTarget, ticksPerQuarter: Int) {
        self.target = target
        clockTarget = target
        ticksPerSixteenth = (Int64(ticksPerQuarter), 4)
    }

    /// The clock's tempo as last estimated, in quarter notes a minute; nil without a clock.
    public var clockBPM: Double? { lock.estimator.bpm }

    /// The beat the clock has counted to since Start or Continue; nil while stopped or when
    /// the clock is not followed.
    public var clockBeats: Double? { lock.clockBeats }

    /// Applies one message that arrived at monotonic time `nanos` (as `monotonicNanoseconds()`
    /// gives): a clock sets the tempo when the clock is followed. Returns true for a transport
    /// message or a followed clock.
    @discardableResult
    public func receive(_ bytes: [UInt8], atNanos nanos: Int64) -> Bool {
        if bytes == [0xF8] {
            guard let clockTarget else { return false }
            if let rate = lock.clock(atNanos: nanos, position: clockTarget.clockFollowingPosition(atNanos: nanos)) {
                clockTarget.transportSetRate(rate)
            }
            return true
        }
        return receive(bytes)
    }

    /// The tick a Song Position Pointer names.
    public func tick(ofSixteenth sixteenth: Int) -> Int64 {
        Int64(sixteenth) * ticksPerSixteenth.numerator / ticksPerSixteenth.denominator
    }

    /// Applies one message; returns true when it was a transport message.
    @discardableResult
    public func receive(_ bytes: [UInt8]) -> Bool {
        guard let message = MIDITransportMessage(bytes: bytes) else { return false }
        receive(message)
        return true
    }

    /// Applies one message.
    public func receive(_ message: MIDITransportMessage) {
        switch message {
        case .start:
            target.transportLocate(toTick: 0)
            target.transportPlay()
            locatedBeats = 0
            lock.run(fromBeats: 0)
        case .stop:
            target.transportStop()
            if let beats = lock.clockBeats { locatedBeats = beats }
            lock.stop()
        case .continue:
            target.transportPlay()
            lock.run(fromBeats: locatedBeats)
        case .songPosition(let sixteenths):
            target.transportLocate(toTick: tick(ofSixteenth: sixteenths))
            locatedBeats = Double(sixteenths) / 4
        }
    }
}
