import ALSA
import ArgumentParser
import JACK
import Playback

/// `tactus play --transport-in`: MIDI transport (and, with --follow-clock, the clock's tempo)
/// from ALSA sequencer ports, or with `--driver jack` from JACK MIDI ports, moves the session.
struct TransportInputOptions: ParsableArguments {
    @Option(name: .customLong("transport-in"), help: "Follow MIDI Start, Stop, Continue and Song Position Pointer from these ports (comma-separated): ALSA sequencer ports, or with --driver jack JACK MIDI outputs; 'any' takes them from whatever connects to Tactus's input port. Playback waits for Start or Continue.")
    var transportIn: String?

    @Flag(name: .customLong("follow-clock"), help: "With --transport-in: also follow the MIDI clock's tempo (24 clocks a quarter note). The tempo is a least-squares fit over the last quarter note of clocks; after a change it is within 1 % and the song within one clock of the count two quarter notes later.")
    var followClock = false

    /// The JACK MIDI outputs to connect the JACK client's MIDI input from (empty for 'any'), or
    /// nil without --transport-in.
    var jackSources: [String]? {
        guard let sources = transportIn else { return nil }
        return sources == "any" ? [] : sources.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The sequencer client connected from the ports, or nil without --transport-in or when
    /// JACK brings the MIDI (`overJACK`); a port that cannot be connected is one line and exit 69.
    func connect(file: String, overJACK: Bool) throws -> SequencerClient? {
        if followClock && transportIn == nil {
            printError("\(file): --follow-clock follows the clock that --transport-in receives: give --transport-in too")
            throw ExitCode(ExitStatus.usage)
        }
        guard let sources = transportIn, !overJACK else { return nil }
        do {
            let client = try SequencerClient()
            if sources != "any" {
                for name in sources.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                    try client.connectInput(from: name)
                }
            }
            return client
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(ExitStatus.unavailable)
        }
    }

    /// The follower of `session` these options ask for.
    func follower(of session: PlaybackSession, ticksPerQuarter: Int) -> MIDITransportFollower {
        followClock ? MIDITransportFollower(followingClockOf: session, ticksPerQuarter: ticksPerQuarter)
                    : MIDITransportFollower(session, ticksPerQuarter: ticksPerQuarter)
    }

    /// Starts the JACK client's MIDI input into a follower of `session`. JACK stamps each
    /// message with its frame in the period, so the clock's times are the server's, as exact
    /// as its periods.
    func start(_ input: JACKMIDIInput, session: PlaybackSession, ticksPerQuarter: Int) {
        let follower = follower(of: session, ticksPerQuarter: ticksPerQuarter)
        input.start { nanos, bytes in follower.receive(bytes, atNanos: nanos) }
    }

    /// Starts reading `client`'s input into a follower of `session`. Clocks are stamped with
    /// the queue's real time, which the tempo estimate needs (queue ticks advance by the
    /// timer's whole periods).
    func start(_ client: SequencerClient, session: PlaybackSession, ticksPerQuarter: Int) throws -> SequencerInput {
        let follower = follower(of: session, ticksPerQuarter: ticksPerQuarter)
        do {
            return try client.startInput(stamps: followClock ? .realTime : .queueTicks, timingClock: followClock) { nanos, bytes in
                follower.receive(bytes, atNanos: nanos)
            }
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(ExitStatus.unavailable)
        }
    }
}
