import ALSA
import ArgumentParser
import JACK
import Playback

/// Which audio system plays: ALSA (a PCM device, through PipeWire or PulseAudio when a desktop
/// runs them) or JACK (a client of the JACK server, or of PipeWire under `pw-jack`).
enum AudioDriver: String, ExpressibleByArgument, CaseIterable {
    case alsa
    case jack
}

/// How Tactus takes part in the JACK transport.
enum JACKTransportMode: String, ExpressibleByArgument, CaseIterable {
    /// Tactus plays on its own; the transport is not read.
    case off
    /// Other clients start, stop and move Tactus; Tactus's keys move the transport.
    case follow
    /// As `follow`, and Tactus publishes the song's bar, beat and tempo (timebase master),
    /// starting the transport when it starts.
    case master
}

/// The driver options `play` (and `record`) share.
struct AudioDriverOptions: ParsableArguments {
    @Option(help: "Audio system: alsa (the --device PCM) or jack (a JACK client; under PipeWire run tactus with pw-jack).")
    var driver: AudioDriver = .alsa

    @Option(name: .customLong("jack-server"), help: "With --driver jack: the JACK server's name (default: $JACK_DEFAULT_SERVER, else the default server).")
    var jackServer: String?

    @Option(name: .customLong("connect"), help: "With --driver jack: the ports the outputs go to, left then right (comma-separated), or 'none'; default: the first two system playback ports.")
    var connect: String?

    @Option(name: .customLong("jack-transport"), help: "With --driver jack: off, follow (other clients start, stop and move playback) or master (follow, and publish the song's bar:beat and tempo).")
    var jackTransport: JACKTransportMode = .off

    /// Checks the options against each other; `deviceGiven` is true when --device was named.
    func validate(file: String, deviceGiven: Bool) throws {
        if driver == .alsa && (jackServer != nil || connect != nil || jackTransport != .off) {
            printError("\(file): --jack-server, --connect and --jack-transport go with --driver jack")
            throw ExitCode(ExitStatus.usage)
        }
        if driver == .jack && deviceGiven {
            printError("\(file): --device names an ALSA PCM; with --driver jack, use --jack-server and --connect")
            throw ExitCode(ExitStatus.usage)
        }
        if let jackServer, let problem = JACKError.serverNameProblem(jackServer) {
            printError("\(file): --jack-server: \(JACKError.invalidServerName(jackServer, reason: problem))")
            throw ExitCode(ExitStatus.usage)
        }
        if let connect, connect.split(separator: ",").isEmpty {
            printError("\(file): --connect needs port names, or 'none'")
            throw ExitCode(ExitStatus.usage)
        }
    }

    var connections: JACKConnections {
        guard let connect else { return .systemPlayback }
        if connect == "none" { return .none }
        return .ports(connect.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// The backend for these options.
    /// `midiInput` gives a JACK client a MIDI input connected from those JACK MIDI outputs
    /// (an empty list: whatever connects to it); ALSA takes its MIDI elsewhere.
    func makeBackend(device: String, midiInput: [String]? = nil) -> any AudioBackend {
        switch driver {
        case .alsa: return ALSAPCMBackend(device: device)
        case .jack:
            return JACKBackend(options: .init(clientName: "Tactus", server: jackServer, connections: connections,
                                              midiInput: midiInput != nil, midiInputSources: midiInput ?? []))
        }
    }

    /// Where the audio went, for the summary line.
    func describe(_ backend: any AudioBackend, device: String) -> String {
        if let jack = backend as? JACKBackend, let client = jack.jackClient {
            return "JACK as '\(client.name)'"
        }
        return "'\(device)'"
    }
}

/// Ties a playing session to the JACK transport as `--jack-transport` asks.
final class JACKTransportLink {
    let client: JACKClient
    let follower: JACKTransportFollower
    let sampleRate: Int
    let tempo: TempoMapping

    struct TempoMapping {
        let frameAtTick: (Int64) -> UInt32
    }

    /// Links `session` (started paused) to the transport of `backend`'s client; as master it
    /// also publishes the song's timebase and starts the transport at `fromTick`.
    init?(mode: JACKTransportMode, backend: any AudioBackend, session: PlaybackSession, fromTick: Int64) {
        guard mode != .off, let jack = backend as? JACKBackend, let client = jack.jackClient else { return nil }
        self.client = client
        sampleRate = client.sampleRate
        follower = JACKTransportFollower(client: client, session: session)
        let map = session.sequence.makeTempoMap()
        let rate = client.sampleRate
        tempo = TempoMapping { tick in UInt32(clamping: map.frame(atTick: tick, sampleRate: rate)) }
        if mode == .master {
            _ = client.becomeTimebaseMaster(SequenceTimebase(sequence: session.sequence))
            client.locateTransport(frame: tempo.frameAtTick(fromTick))
            client.startTransport()
        }
    }

    /// Follows the transport; call every loop of the control thread.
    func update() { follower.update() }

    /// Space: start or stop the transport (every client follows).
    func toggle() {
        if client.transport().isRolling { client.stopTransport() } else { client.startTransport() }
    }

    /// Arrows: move the transport to the start of `bar`.
    func locate(tick: Int64) { client.locateTransport(frame: tempo.frameAtTick(tick)) }
}
