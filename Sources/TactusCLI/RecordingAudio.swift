import ALSA
import ArgumentParser
import Foundation
import JACK
import Playback
import Sequencing

/// Where `tactus record` plays the backing, the clicks and the thru: an ALSA PCM driven here,
/// or a JACK client through a playback session. Either way a ``Player`` renders, and its output
/// anchors time the take.
protocol RecordingAudio: AnyObject {
    /// The player: its anchors give the recording clock, its live input takes the thru.
    var player: Player { get }
    /// Starts the backing (the device already runs, or starts now).
    func start() throws
    /// Called on every pass of the record loop; the failure, in words, once playing failed.
    func service() -> String?
    /// Stops the backing, letting what the device holds play out.
    func stop()
}

/// The ALSA PCM path: the record loop services the player itself.
final class ALSARecordingAudio: RecordingAudio {
    let output: PCMOutput
    let player: Player
    let source: PlayerPCMSource
    let deviceName: String

    init(output: PCMOutput, player: Player, source: PlayerPCMSource, deviceName: String) {
        self.output = output
        self.player = player
        self.source = source
        self.deviceName = deviceName
    }

    func start() throws {
        source.prerollLatency()
        player.start()
        do {
            try output.start(source: source)
        } catch {
            printError("tactus: audio device '\(deviceName)': cannot start (\(error.reason))")
            throw ExitCode(ExitStatus.unavailable)
        }
    }

    func service() -> String? {
        player.service()
        return output.error.map { "\($0)" }
    }

    func stop() {
        player.stop()
        player.allNotesOff()
        let target = output.framesWritten + Int64(output.granted.bufferFrames + output.granted.periodFrames)
        let deadline = Date().addingTimeInterval(1)
        while output.framesWritten < target && Date() < deadline && output.isRunning { usleep(5_000) }
        output.stop(drain: true)
    }
}

/// The JACK path: a playback session on a ``JACKBackend`` (with its MIDI input, the take's
/// source) plays the backing at the server's rate; the session's control thread services the
/// player. The song starts with the client, so the server, the ports and the connections are
/// checked before the journal exists; input that arrives meanwhile waits in the MIDI input's
/// ring.
final class JACKRecordingAudio: RecordingAudio {
    let session: PlaybackSession
    let backend: JACKBackend
    private let catcher = PlayerCatcher()

    var player: Player { catcher.player! }

    /// Opens the client and starts playing `sequence`'s session, after `transport` set its loop,
    /// end and start; `sources` are the JACK MIDI outputs connected to Tactus's `midi_in`.
    /// Exits 69 with one line when JACK cannot be used.
    init(sequence: MusicSequence, options: AudioDriverOptions, sources: [String], transport: (PlaybackSession) -> Void) throws {
        backend = JACKBackend(options: .init(clientName: "Tactus", server: options.jackServer, connections: options.connections,
                                             midiInput: true, midiInputSources: sources))
        // The built-in instrument needs no file, so creating the session cannot fail.
        session = try! PlaybackSession(sequence: sequence, options: PlaybackSession.Options(instrument: .builtIn, tailSeconds: 0),
                                       observer: catcher)
        transport(session)
        do {
            try session.start(on: backend)
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(ExitStatus.unavailable)
        }
    }

    /// The session already plays (see ``init(sequence:options:sources:transport:)``).
    func start() throws {}

    func service() -> String? {
        if case .failure(let error) = session.outcome { return error.description }
        return nil
    }

    func stop() {
        session.stop(drain: true)
        let deadline = Date().addingTimeInterval(2)
        while session.outcome == nil && Date() < deadline { usleep(5_000) }
    }
}

/// Keeps the player a session creates, for the recording clock and the thru.
private final class PlayerCatcher: PlaybackSessionObserver {
    var player: Player?
    func sessionWillStartBackend(_ session: PlaybackSession, player: Player) { self.player = player }
    func sessionDidStartBackend(_ session: PlaybackSession, player: Player) {}
    func sessionService(_ session: PlaybackSession, player: Player) {}
    func sessionWillStopBackend(_ session: PlaybackSession, player: Player) {}
}
