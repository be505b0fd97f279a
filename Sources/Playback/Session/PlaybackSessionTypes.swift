import Sampler
import Sequencing

/// Why a ``PlaybackSession`` could not load, start or finish.
public enum PlaybackSessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A file (MIDI or SoundFont) is missing or cannot be read.
    case unreadableFile(path: String, reason: String)
    /// A file was read but its content is refused.
    case invalidFile(path: String, reason: String)
    /// The audio graph could not be built for the backend's format.
    case graph(reason: String)
    /// The backend failed to open, to start, or while playing.
    case backend(AudioBackendError)
    /// ``PlaybackSession/start(on:)`` was called on a session that already started.
    case alreadyStarted
    /// The graph has no node with this identifier, though a track is routed to it (`track`,
    /// an index into `MusicSequence.tracks`) or it is the node tracks without a destination
    /// play (`track` nil).
    case missingNode(UInt32, track: Int?)
    /// A track argument is not an index into `MusicSequence.tracks`, which holds `count`.
    case noSuchTrack(Int, count: Int)
    /// ``PlaybackSession/Options/shouldCancelPreparation`` asked the start to stop.
    case cancelled

    public var description: String {
        switch self {
        case .unreadableFile(let path, let reason), .invalidFile(let path, let reason): return "\(path): \(reason)"
        case .graph(let reason): return "cannot build the audio graph: \(reason)"
        case .backend(let error): return error.description
        case .alreadyStarted: return "the session has already started"
        case .missingNode(let node, let track?): return "track \(track) is routed to node \(node), which is not in the audio graph"
        case .missingNode(let node, nil): return "the audio graph has no node \(node) for the tracks without a destination"
        case .noSuchTrack(let track, let count): return "no track \(track): the sequence has \(count) tracks, numbered from 0"
        case .cancelled: return "cancelled while preparing the song"
        }
    }
}

/// What plays the tracks of a session.
public enum SessionInstrument {
    /// A SoundFont sampler with `soundFont` when given, else the bank of `$TACTUS_SOUNDFONT`,
    /// else the first bank at a standard path, else the built-in synthesizer: what `tactus
    /// play` and `tactus render` do without instrument options.
    case automatic(soundFont: String? = nil)
    /// The built-in General MIDI synthesizer.
    case builtIn
    /// An instrument the program built (a configured `SamplerNode`, for example).
    case custom(DefaultInstrument)
}

/// How important a log entry is.
public enum PlaybackLogLevel: Int, Sendable, Hashable, Comparable {
    /// Facts about what was chosen (the SoundFont, the granted format).
    case info
    /// Something was tolerated: a repaired file, an underrun.
    case warning
    /// Something failed.
    case error

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// One message for a session's ``PlaybackSession/Options/logHandler``.
public struct PlaybackLogEntry: Sendable, Hashable {
    /// How important it is.
    public var level: PlaybackLogLevel
    /// One line, starting with the path or device it is about.
    public var message: String

    /// Creates an entry.
    public init(level: PlaybackLogLevel, message: String) {
        self.level = level
        self.message = message
    }
}

/// Where playback is, as the session's control thread last saw it.
public struct PlaybackPosition: Sendable, Hashable {
    /// Tick in the sequence.
    public var tick: Int64
    /// Beats (quarter notes) from the start.
    public var beats: Double
    /// Bar, beat and tick under the sequence's meters.
    public var barBeatTick: BarBeatTick
    /// Seconds of song time from the start (at rate 1).
    public var seconds: Double
    /// True while the song advances (false when paused, stopped or past its end).
    public var isPlaying: Bool
    /// The play rate.
    public var rate: Double
    /// Frames the backend has played.
    public var outputFrame: Int64
    /// Underruns the backend recovered from so far.
    public var underruns: Int
    /// The song's own tempo at ``tick``, in quarter notes a minute (before ``rate``).
    public var songBPM: Double
    /// When the position was read, in monotonic nanoseconds (`monotonicNanoseconds()`); 0 when
    /// unknown.
    public var monotonicNanos: Int64

    /// Creates a position.
    public init(tick: Int64, beats: Double, barBeatTick: BarBeatTick, seconds: Double, isPlaying: Bool, rate: Double,
                outputFrame: Int64, underruns: Int = 0, songBPM: Double = 120, monotonicNanos: Int64 = 0) {
        self.songBPM = songBPM
        self.monotonicNanos = monotonicNanos
        self.tick = tick
        self.beats = beats
        self.barBeatTick = barBeatTick
        self.seconds = seconds
        self.isPlaying = isPlaying
        self.rate = rate
        self.outputFrame = outputFrame
        self.underruns = underruns
    }
}

/// How a session ended and what it played.
public struct PlaybackSummary: Sendable, Hashable {
    /// How playback ended.
    public enum Ending: Sendable, Hashable {
        /// The song (and its tail) played to the end.
        case reachedEnd
        /// ``PlaybackSession/stop(drain:)`` ended it.
        case stopped
    }

    /// How playback ended.
    public var ending: Ending
    /// Frames of the performance: to the end plus the tail, or to the stop.
    public var performanceFrames: Int64
    /// Frames the backend played, trailing silence included.
    public var framesPlayed: Int64
    /// Frames per second.
    public var sampleRate: Int
    /// Underruns the backend recovered from.
    public var underruns: Int
    /// The format the backend granted.
    public var format: AudioStreamFormat
    /// Frames by which the graph's output lags the events it plays (the limiter's look-ahead,
    /// a hosted plugin's grid and reported latency), heard on top of the device's buffer; an
    /// offline render drops them.
    public var graphLatencyFrames = 0

    /// Seconds of the performance.
    public var seconds: Double { Double(performanceFrames) / Double(sampleRate) }
}

/// Something that happened during playback, delivered in order through
/// ``PlaybackSession/events(positionInterval:)``.
public enum PlaybackEvent: Sendable, Hashable {
    /// Playback passed a user event (in order, with its tick and track).
    case userEvent(PlayedUserEvent)
    /// Playback passed a text, lyric or marker event of the song (in order with the user
    /// events, with its tick and track).
    case text(PlayedTextEvent)
    /// The transport loop jumped back to its start: pass `completedPasses` is over.
    case loopPass(completedPasses: Int)
    /// The song reached its end; the tail (releases, reverb) still plays.
    case endReached
    /// Where playback is, at the interval the stream was asked for.
    case position(PlaybackPosition)
    /// The backend recovered from an underrun; `total` counts them since the start.
    case underrun(total: Int)
    /// The backend failed; the session ends with this error.
    case deviceError(AudioBackendError)
    /// The session ended; the stream finishes after this event.
    case finished(PlaybackSummary)
}

/// Hooks a program runs on the session's control thread, with the ``Player`` itself: for
/// work that must follow the player closely, such as sending tracks to MIDI ports in step
/// with the audio. Every method has a default that does nothing.
public protocol PlaybackSessionObserver: AnyObject {
    /// The player exists, set up with the session's transport, before the backend starts.
    func sessionWillStartBackend(_ session: PlaybackSession, player: Player)
    /// The backend runs. When the session's options say the song does not start by itself,
    /// this is where the observer starts the player.
    func sessionDidStartBackend(_ session: PlaybackSession, player: Player)
    /// Called on every pass of the control loop (about every 20 ms on a device).
    func sessionService(_ session: PlaybackSession, player: Player)
    /// Playback is about to stop the backend (end, stop or failure).
    func sessionWillStopBackend(_ session: PlaybackSession, player: Player)
}

extension PlaybackSessionObserver {
    public func sessionWillStartBackend(_ session: PlaybackSession, player: Player) {}
    public func sessionDidStartBackend(_ session: PlaybackSession, player: Player) {}
    public func sessionService(_ session: PlaybackSession, player: Player) {}
    public func sessionWillStopBackend(_ session: PlaybackSession, player: Player) {}
}

extension Player {
    /// How many times the transport loop jumped back to its start.
    public var loopJumps: Int { engine.loopJumpCount.load(ordering: .acquiring) }
}
