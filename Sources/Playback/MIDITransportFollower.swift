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
/// on from there. The follower keeps its own tempo (following the clock's tempo is not done).
///
/// Call `receive(_:)` from the thread that reads the input; the player's commands are
/// queued for the audio thread, so nothing waits on it.
public final class MIDITransportFollower: @unchecked Sendable {
    private let target: any MIDITransportTarget
    private let ticksPerSixteenth: (numerator: Int64, denominator: Int64)

    /// Follows transport messages for `target`, whose sequence has `ticksPerQuarter`.
    public init(_ target: any MIDITransportTarget, ticksPerQuarter: Int) {
        self.target = target
        ticksPerSixteenth = (Int64(ticksPerQuarter), 4)
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
        case .stop:
            target.transportStop()
        case .continue:
            target.transportPlay()
        case .songPosition(let sixteenths):
            target.transportLocate(toTick: tick(ofSixteenth: sixteenths))
        }
    }
}
