import ALSA
import ArgumentParser
import Foundation
import Playback
import Sequencing

/// Tracks that `tactus play` sends to MIDI ports while the rest plays through the audio
/// device: `--port-tracks TRACKS=PORT` (repeatable), and every track whose destination in the
/// sequence is already a MIDI port. Their messages leave from Tactus's output port on an
/// ALSA queue at the host time their frame is heard (see `MIDIPortScheduler`).
final class PortTrackOutput {
    private let client: SequencerClient
    private let sender: MIDIPortSender
    private let portNames: [String]
    private var scheduler: MIDIPortScheduler?
    private let sequence: MusicSequence

    /// Routes the tracks named by `routes` (`TRACKS=PORT`, track numbers as `tactus info`
    /// prints them) to their ports in `sequence`, then opens the sequencer if any track goes
    /// to a port. Usage errors exit 64, sequencer errors 69.
    static func make(routes: [String], sequence: inout MusicSequence, file: String) throws -> PortTrackOutput? {
        try applyRoutes(routes, to: &sequence, file: file)
        return try make(sequence: sequence)
    }

    /// Sets the destination of the tracks named by `routes` (`TRACKS=PORT`) to their port.
    /// Usage errors exit 64.
    static func applyRoutes(_ routes: [String], to sequence: inout MusicSequence, file: String) throws {
        for route in routes {
            let parts = route.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[1].trimmingCharacters(in: .whitespaces).isEmpty else {
                printError("\(file): --port-tracks '\(route)' is not TRACKS=PORT (like 2,3=20:0)")
                throw ExitCode(ExitStatus.usage)
            }
            let indices: [Int]
            do {
                indices = try EditScript.trackIndices(parts[0], option: "--port-tracks", sequence: sequence, conductor: !sequence.tempoTrack.isEmpty)
            } catch {
                printError("\(file): \(error)")
                throw ExitCode(ExitStatus.usage)
            }
            for i in indices { sequence.tracks[i].destination = .midiPort(parts[1].trimmingCharacters(in: .whitespaces)) }
        }
    }

    /// Opens the sequencer when some track of `sequence` goes to a port; nil when none does.
    /// Sequencer errors exit 69.
    static func make(sequence: MusicSequence) throws -> PortTrackOutput? {
        var names: [String] = []
        for track in sequence.tracks {
            if case .midiPort(let name) = track.destination, !names.contains(name) { names.append(name) }
        }
        guard !names.isEmpty else { return nil }
        do {
            let client = try SequencerClient()
            return PortTrackOutput(client: client, sender: try MIDIPortSender(client: client, ports: names), names: names, sequence: sequence)
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(ExitStatus.unavailable)
        }
    }

    private init(client: SequencerClient, sender: MIDIPortSender, names: [String], sequence: MusicSequence) {
        self.client = client
        self.sender = sender
        portNames = names
        self.sequence = sequence
    }

    /// The ports, as given.
    var ports: [String] { portNames }

    /// Compiles the routed tracks' messages for a player at `sampleRate`, with its transport
    /// loop (song frames), if any.
    func prepare(sampleRate: Int, loopFrames: Range<Int64>?) {
        var messages: [MIDIPortMessage] = []
        let anySolo = sequence.tracks.contains(where: \.isSoloed)
        var conductor = MusicTrack()
        for e in sequence.tempoTrack.events {
            if case .meta = e.event { conductor.add(e.event, at: e.tick) }
        }
        for (destination, name) in portNames.enumerated() {
            var part = MusicSequence(timeBase: sequence.timeBase, tempoTrack: conductor)
            for track in sequence.tracks where track.destination == .midiPort(name) {
                guard !track.isMuted, !anySolo || track.isSoloed else { continue }
                var copy = track
                copy.isSoloed = false
                part.tracks.append(copy)
            }
            let timeline = MIDITimeline(sequence: part)
            for m in timeline.messages {
                let frame = Int64((Double(m.nanoseconds) * Double(sampleRate) / 1e9).rounded())
                messages.append(MIDIPortMessage(songFrame: frame, bytes: m.bytes, destination: destination))
            }
        }
        let scheduler = MIDIPortScheduler(messages: messages, sampleRate: sampleRate)
        scheduler.loopFrames = loopFrames
        self.scheduler = scheduler
    }

    private func perform(_ actions: [MIDIPortAction]) {
        guard !actions.isEmpty else { return }
        for action in actions {
            switch action {
            case .send(let host, let bytes, let destination): sender.send(bytes, to: destination, atHostTime: host)
            case .dropScheduled: sender.dropScheduled()
            case .sendNow(let bytes, let destination): sender.sendNow(bytes, to: destination)
            }
        }
        sender.flush()
    }

    /// Schedules what the player will render next; call from the control loop.
    func service(_ player: Player) {
        guard let scheduler else { return }
        perform(scheduler.service(anchor: player.outputAnchor(), latencyFrames: player.heardLatencyFrames, nowNanos: monotonicNanoseconds()))
    }

    /// Starts `player` once the driver has filled the device's buffer and asks for blocks at
    /// the device's pace (at most a second's wait), then schedules at once: the anchors of
    /// those blocks tell when a frame is heard, so the song's first messages leave on time.
    func startWhenSteady(_ player: Player) {
        for _ in 0..<2000 {
            if let a = player.outputAnchor(), a.hostNanos != 0, a.outputFrame > Int64(player.heardLatencyFrames + player.engine.graph.maximumFrameCount) { break }
            usleep(500)
        }
        player.start()
        for _ in 0..<400 {
            if let a = player.outputAnchor(), a.rateStep != 0 { break }
            usleep(500)
        }
        service(player)
    }

    /// Drops what is still scheduled and silences the ports (end, stop, Ctrl-C).
    func stop() {
        guard let scheduler else { return }
        perform(scheduler.silence(nowNanos: monotonicNanoseconds()))
    }
}

/// Sends the `--port-tracks` tracks to their MIDI ports in step with the session's audio,
/// from the session's control thread.
final class PortTrackObserver: PlaybackSessionObserver {
    let output: PortTrackOutput
    let plan: TransportPlan

    init(output: PortTrackOutput, plan: TransportPlan) {
        self.output = output
        self.plan = plan
    }

    func sessionWillStartBackend(_ session: PlaybackSession, player: Player) {
        let loopFrames = plan.loop == nil ? nil
            : player.songFrame(atTick: plan.fromTick)..<player.songFrame(atTick: plan.toTick ?? player.schedule.endTick)
        output.prepare(sampleRate: player.sampleRate, loopFrames: loopFrames)
    }

    func sessionDidStartBackend(_ session: PlaybackSession, player: Player) { output.startWhenSteady(player) }
    func sessionService(_ session: PlaybackSession, player: Player) { output.service(player) }
    func sessionWillStopBackend(_ session: PlaybackSession, player: Player) { output.stop() }
}
