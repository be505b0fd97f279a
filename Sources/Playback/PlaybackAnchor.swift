/// The engine's clock at the start of a rendered block, as ``Player/outputAnchor()`` reads it.
public struct PlaybackAnchor: Hashable, Sendable {
    /// Output frames rendered before the block; counts up by the block size, never jumps.
    public var outputFrame: Int64
    /// The song position at the block's first frame, in 1/65536 frames.
    public var songPosition: Int64
    /// Song position units per output frame (0 while stopped).
    public var rateStep: Int64
    /// Monotonic host time at which the driver asked for the block, or 0 offline.
    public var hostNanos: Int64

    /// Creates an anchor.
    public init(outputFrame: Int64, songPosition: Int64, rateStep: Int64, hostNanos: Int64) {
        self.outputFrame = outputFrame
        self.songPosition = songPosition
        self.rateStep = rateStep
        self.hostNanos = hostNanos
    }
}
