import MIDIFile
import Playback
import Sequencing

/// Why a recording could not start.
public enum RecordingSessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The options do not make a take (a punch-out before the punch-in, a track that does not
    /// exist...); the reason says which.
    case invalidOptions(String)
    /// The audio for the backing, clicks and thru could not start.
    case audio(PlaybackSessionError)
    /// An input could not start.
    case input(RecordingInputError)
    /// The journal could not be created.
    case journal(RecordingJournalError)
    /// ``RecordingSession/start(inputs:on:)`` was called a second time.
    case alreadyStarted

    public var description: String {
        switch self {
        case .invalidOptions(let reason): return reason
        case .audio(let error): return "\(error)"
        case .input(let error): return "MIDI input \(error)"
        case .journal(let error): return "\(error)"
        case .alreadyStarted: return "the recording session was already started"
        }
    }
}

/// Why a take ended. Whatever the reason, everything received until then is in the take.
public enum RecordingEnding: Sendable, Hashable {
    /// ``RecordingSession/stop()`` was called.
    case stopped
    /// The take reached its end: the duration asked for, or the end of the backing.
    case reachedEnd
    /// The audio backend failed while recording (the device went away, the server stopped).
    case audioFailed(PlaybackSessionError)
    /// An input stopped by itself (a device read failed).
    case inputFailed(input: String, reason: String)
    /// The journal could no longer be written (the disk filled up); the take in memory is whole.
    case journalFailed(RecordingJournalError)

    /// True for an ending that is not the program's or the take's own (a device, an input or
    /// the journal failed).
    public var isFailure: Bool {
        switch self {
        case .stopped, .reachedEnd: return false
        case .audioFailed, .inputFailed, .journalFailed: return true
        }
    }
}

/// One input message as it went into the take.
public struct RecordedMessage: Sendable, Hashable {
    /// The message: a short message, or a whole sysex from F0 to F7.
    public var bytes: [UInt8]
    /// Take time: seconds of the song at rate 1, unwrapped across loop passes, negative during
    /// a count-in (see ``MIDIRecorder``).
    public var seconds: Double
    /// The loop pass (0 without a loop); nil before the take's start.
    public var pass: Int?
    /// The tick on the song's timeline as played, before input quantize; nil before the
    /// take's start.
    public var tick: Int64?
    /// False when the recorder dropped it: before the start, outside the punch span.
    public var kept: Bool

    /// Creates a recorded message.
    public init(bytes: [UInt8], seconds: Double, pass: Int?, tick: Int64?, kept: Bool) {
        self.bytes = bytes
        self.seconds = seconds
        self.pass = pass
        self.tick = tick
        self.kept = kept
    }
}

/// Where a recording is.
public struct RecordingPosition: Sendable, Hashable {
    /// Take time in seconds (negative during the count-in).
    public var seconds: Double
    /// Seconds left of the count-in; 0 once recording runs.
    public var countInRemaining: Double
    /// The loop pass (0 without a loop) and the tick on the song's timeline; nil during the
    /// count-in.
    public var pass: Int?
    /// The tick on the song's timeline (folded into the loop); nil during the count-in.
    public var tick: Int64?
    /// Input messages received so far.
    public var receivedCount: Int

    /// Creates a position.
    public init(seconds: Double, countInRemaining: Double, pass: Int?, tick: Int64?, receivedCount: Int) {
        self.seconds = seconds
        self.countInRemaining = countInRemaining
        self.pass = pass
        self.tick = tick
        self.receivedCount = receivedCount
    }
}

/// Something that happened while recording, delivered in order through
/// ``RecordingSession/events(positionInterval:)``.
public enum RecordingEvent: Sendable, Hashable {
    /// The count-in is over (at once without one): what is played now is recorded.
    case recordingStarted
    /// An input message went into the take (or was dropped; see ``RecordedMessage/kept``).
    case message(RecordedMessage)
    /// Loop recording: pass `pass` (1 for the second time round) began.
    case passStarted(Int)
    /// Where the recording is, at the interval the stream was asked for.
    case position(RecordingPosition)
    /// The take ended; the stream finishes after this event.
    case finished(RecordingEnding)
}

/// What a recording produced: the recorded tracks, ready to merge into the backing or save.
public struct RecordingTake: Sendable {
    /// The recorder, finished: its takes, counts and settings.
    public let recorder: MIDIRecorder
    /// The sequence recorded over (the backing, or the empty song with its tempo and meter).
    public let base: MusicSequence
    /// Why the take ended.
    public let ending: RecordingEnding
    /// Seconds recorded after the count-in.
    public let recordedSeconds: Double
    /// The journal that holds the take on disk until ``write(to:)`` succeeds (nil without one).
    public let journalPath: String?

    /// Creates a take (the session makes them; a program may rebuild one from a journal with
    /// ``RecordingSession/recover(journal:backing:)``).
    public init(recorder: MIDIRecorder, base: MusicSequence, ending: RecordingEnding, recordedSeconds: Double, journalPath: String?) {
        self.recorder = recorder
        self.base = base
        self.ending = ending
        self.recordedSeconds = recordedSeconds
        self.journalPath = journalPath
    }

    /// The recorded tracks: one, or one per loop pass that received something.
    public var tracks: [MusicTrack] { recorder.takes.map(\.track) }

    /// The base with the take in it: in the target track (overdub or replace) or in new tracks.
    public func merged() -> MusicSequence { recorder.merged(into: base) }

    /// Notes in the take.
    public var noteCount: Int {
        tracks.reduce(0) { n, track in
            n + track.events.filter { if case .note = $0.event { return true } else { return false } }.count
        }
    }

    /// Events in the take.
    public var eventCount: Int { tracks.reduce(0) { $0 + $1.count } }

    /// Writes ``merged()`` as a format-1 Standard MIDI File, atomically (a regular file is
    /// replaced only when complete; a device or FIFO is written in place); then the journal,
    /// no longer needed, is removed. When writing fails the journal stays.
    /// - Throws: ``RecordingTakeError`` naming the path.
    public func write(to path: String) throws(RecordingTakeError) {
        do {
            let bytes = try SMFWriter.checkedBytes(of: merged(), layout: .format1)
            // The journal goes only once the take is known to read back: a take Tactus itself
            // refuses would lose the recording.
            do {
                _ = try SMFReader.read(bytes)
            } catch {
                throw RecordingTakeError(path: path, reason: "the take would not read back (\(error)); nothing written",
                                         journalPath: journalPath)
            }
            try SMFWriter.writeAtomically(bytes, to: path)
        } catch let error as RecordingTakeError {
            throw error
        } catch {
            throw RecordingTakeError(path: path, reason: "\(error)", journalPath: journalPath)
        }
        if let journalPath { removeFile(journalPath) }
    }

    /// Removes the journal without writing the take (a program that keeps the take in
    /// memory, or throws it away).
    public func discardJournal() {
        if let journalPath { removeFile(journalPath) }
    }
}

/// A take that could not be written; the journal, if any, still holds it.
public struct RecordingTakeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file that could not be written.
    public var path: String
    /// Why.
    public var reason: String
    /// The journal that still holds the take.
    public var journalPath: String?

    /// Creates an error.
    public init(path: String, reason: String, journalPath: String?) {
        self.path = path
        self.reason = reason
        self.journalPath = journalPath
    }

    public var description: String { reason.hasPrefix(path) ? reason : "\(path): \(reason)" }
}
