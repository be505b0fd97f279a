/// What a session asks of a backend when it opens it.
public struct AudioStreamRequest: Sendable, Hashable {
    /// Frames per second wanted; a device may grant another rate (see ``AudioStreamFormat``).
    public var sampleRate: Int
    /// Output latency wanted, in seconds: what a device buffers ahead of the speaker.
    public var latencySeconds: Double

    /// Creates a request.
    public init(sampleRate: Int = 44_100, latencySeconds: Double = 0.05) {
        self.sampleRate = sampleRate
        self.latencySeconds = latencySeconds
    }
}

/// What a backend granted: the session builds its graph and schedule for this.
public struct AudioStreamFormat: Sendable, Hashable {
    /// Frames per second the backend plays.
    public var sampleRate: Int
    /// Most frames the backend asks for in one call of ``PlaybackRenderer/render(frameCount:left:right:)``.
    public var periodFrames: Int
    /// Frames between rendering a frame and hearing it (0 for files and buffers).
    public var latencyFrames: Int

    /// Creates a format.
    public init(sampleRate: Int, periodFrames: Int, latencyFrames: Int) {
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.latencyFrames = latencyFrames
    }
}

/// A backend failure: which backend, what kind of failure, and why.
public struct AudioBackendError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of failure a program may react to differently.
    public enum Kind: Sendable, Hashable {
        /// The device, server or system library is not there (no sound card, no libasound).
        case unavailable
        /// The device exists but refused to open or to take the format.
        case cannotOpen
        /// The output file or buffer cannot be created.
        case cannotCreateOutput
        /// Playing failed after it started (a device write, a file write).
        case io
        /// The graph made a sample that is not a number or is infinite (an instrument's
        /// arithmetic overflowed); an offline backend stops rather than write it.
        case nonFiniteAudio
    }

    /// The kind of failure.
    public var kind: Kind
    /// The backend's name: a device like `default`, a file path, or `null`.
    public var backend: String
    /// What went wrong, in words.
    public var reason: String

    /// Creates an error.
    public init(_ kind: Kind, backend: String, reason: String) {
        self.kind = kind
        self.backend = backend
        self.reason = reason
    }

    public var description: String { "\(backend): \(reason)" }
}

/// Where a ``PlaybackSession`` sends its audio: an ALSA device, a WAV file or memory buffer,
/// a null sink for tests (and later a JACK client).
///
/// The session opens the backend, builds its graph for the granted format, then starts it
/// with a ``PlaybackRenderer``. From then on the backend calls the renderer's
/// ``PlaybackRenderer/render(frameCount:left:right:)`` once per period from a thread that is
/// not the caller's: a blocking backend (ALSA) runs a thread of its own that renders and
/// writes; a callback backend (JACK) calls it from the server's process callback; an offline
/// backend renders as fast as the renderer lets it. The session reads the backend's clock
/// (``framesConsumed``), ``underrunCount`` and ``failure`` from its control thread, so these
/// must be safe to read from any thread.
///
/// A backend is used by one session, once: open, start, stop.
public protocol AudioBackend: AnyObject, Sendable {
    /// A name for messages: the device, the file, or `null`.
    var name: String { get }
    /// True when the backend plays at the pace of a clock (a device); false when it renders as
    /// fast as it can (a file or a memory buffer).
    var isRealTime: Bool { get }
    /// Opens the device or output for `request` and says what it granted.
    func open(_ request: AudioStreamRequest) throws(AudioBackendError) -> AudioStreamFormat
    /// Starts calling `renderer` once per period.
    func start(_ renderer: PlaybackRenderer) throws(AudioBackendError)
    /// Stops calling the renderer and closes the output. With `drain`, what the device holds
    /// is played out (and a file is completed); without, it is dropped. Idempotent.
    func stop(drain: Bool) throws(AudioBackendError)
    /// Frames the backend has played or written so far: the session's output clock.
    var framesConsumed: Int64 { get }
    /// Underruns the backend recovered from so far.
    var underrunCount: Int { get }
    /// The failure that stopped the backend, if any.
    var failure: AudioBackendError? { get }
    /// False once the backend stopped calling the renderer (by ``stop(drain:)``, a failure, or
    /// an offline backend reaching the renderer's end).
    var isRunning: Bool { get }
}
