import Sequencing

/// Gives the take time (see `MIDIRecorder` in the Recording module) of a host time.
public protocol RecordingClock {
    /// Seconds of the song at rate 1, unwrapped, heard at monotonic host time `nanos`; nil
    /// while the clock cannot tell yet (audio not started).
    func songSeconds(atHostTime nanos: Int64) -> Double?
}

/// A clock that runs on the monotonic clock alone: recording without audio. Song time
/// advances `rate` seconds per second from `originSongSeconds` at `originHostNanos`.
public struct MonotonicRecordingClock: RecordingClock, Hashable, Sendable {
    /// The host time at which the song is at `originSongSeconds`.
    public var originHostNanos: Int64
    /// Take time at `originHostNanos` (negative during a count-in).
    public var originSongSeconds: Double
    /// The play rate.
    public var rate: Double

    /// Creates a free-running clock.
    public init(originHostNanos: Int64, originSongSeconds: Double = 0, rate: Double = 1) {
        self.originHostNanos = originHostNanos
        self.originSongSeconds = originSongSeconds
        self.rate = rate
    }

    public func songSeconds(atHostTime nanos: Int64) -> Double? {
        originSongSeconds + Double(nanos - originHostNanos) / 1e9 * rate
    }
}

/// The clock of a playing ``Player``: take time follows the audio device, not the system
/// clock, so a long take does not drift against the backing.
///
/// It reads the engine's anchor (see ``Player/outputAnchor()``): the first block rendered
/// while playing fixes which song time goes with which output frame; from then on song time
/// is counted in output frames, which never jump, so a transport loop does not fold it
/// (the recorder folds loop passes itself). A host time becomes the output frame heard then.
///
/// The host time of an anchor is when the driver thread woke to render the block, which is
/// late by its scheduling delay, never early; so the clock keeps the earliest host time seen
/// for an output frame (the offset between the two clocks), letting it rise only as fast as
/// two crystal clocks can drift apart (200 ppm). Wake-up jitter then does not reach the take.
/// Call ``update(from:)`` from the player's control thread regularly.
public struct PlayerRecordingClock: RecordingClock, Sendable {
    /// Sample rate of the player.
    public let sampleRate: Int
    /// Subtracted from the song's time: the length of a count-in placed before the song.
    public let offsetSeconds: Double
    /// How fast the device clock may run slow against the host's: the offset's allowed rise.
    static let drift = 200e-6
    private var base: (outputFrame: Int64, songSeconds: Double, rate: Double)?
    /// Host nanoseconds at which output frame 0 would have been asked for, at best.
    private var frameZeroHost: Double?
    private var lastHost: Int64 = 0
    private var latencyFrames = 0

    /// A clock for a player at `sampleRate`; `offsetSeconds` is subtracted from song time.
    public init(sampleRate: Int, offsetSeconds: Double = 0) {
        self.sampleRate = sampleRate
        self.offsetSeconds = offsetSeconds
    }

    /// Reads the player's latest anchor (control thread).
    public mutating func update(from player: Player) {
        guard let anchor = player.outputAnchor() else { return }
        update(anchor: anchor, latencyFrames: player.heardLatencyFrames)
    }

    /// Takes an anchor as ``Player/outputAnchor()`` gives it; anchors of blocks rendered
    /// before the driver ran (host time 0) or while it filled the buffer are ignored.
    public mutating func update(anchor: PlaybackAnchor, latencyFrames: Int) {
        guard PlayerRecordingClock.isSteady(anchor, latencyFrames: latencyFrames) else { return }
        if base == nil, anchor.rateStep > 0 {
            base = (anchor.outputFrame,
                    Double(anchor.songPosition) / Double(Engine.positionUnitsPerFrame) / Double(sampleRate),
                    Double(anchor.rateStep) / Double(Engine.positionUnitsPerFrame))
        }
        let zero = Double(anchor.hostNanos) - Double(anchor.outputFrame) * 1e9 / Double(sampleRate)
        if let previous = frameZeroHost {
            let allowed = previous + Double(max(0, anchor.hostNanos - lastHost)) * Self.drift
            frameZeroHost = min(zero, allowed)
        } else {
            frameZeroHost = zero
        }
        lastHost = anchor.hostNanos
        self.latencyFrames = latencyFrames
    }

    /// True for an anchor whose host time tells when its frame is heard: while the driver
    /// fills the device's buffer at the start it asks for block after block as fast as they
    /// render, long before their frames play, so blocks before the buffer's length (the
    /// latency) say nothing about the device's clock.
    static func isSteady(_ anchor: PlaybackAnchor, latencyFrames: Int) -> Bool {
        anchor.hostNanos != 0 && anchor.outputFrame >= Int64(latencyFrames)
    }

    public func songSeconds(atHostTime nanos: Int64) -> Double? {
        guard let base, let frameZeroHost else { return nil }
        let heardFrame = (Double(nanos) - frameZeroHost) * Double(sampleRate) / 1e9 - Double(latencyFrames)
        return base.songSeconds + (heardFrame - Double(base.outputFrame)) * base.rate / Double(sampleRate) - offsetSeconds
    }
}
