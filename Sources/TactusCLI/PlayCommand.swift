import ALSA
import ArgumentParser
import AudioGraph
import Foundation
import JACK
import MIDI
import Playback
import Sequencing
import Synchronization

/// The signal that interrupted playback (0 while none did), set by the signal handler; the
/// control loop polls it.
private let playSignal = Atomic<Int32>(0)
private var playInterrupted: Bool { playSignal.load(ordering: .relaxed) != 0 }
/// 128 + the signal, as a shell reports a process a signal ended (130 when none is known).
private var signalExitStatus: Int32 {
    let number = playSignal.load(ordering: .relaxed)
    return number == 0 ? 130 : 128 + number
}

/// How long playback may take to stop after a signal before Tactus leaves without the
/// device or server: a JACK server that is frozen (SIGSTOP, a hung driver) never answers the
/// client's deactivation, and the user's SIGTERM must still end the process.
private let stopGraceSeconds = 2.0

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play a MIDI file through an ALSA audio device with a SoundFont sampler or the built-in synthesizer.",
        discussion: """
        On a terminal a status line shows bar:beat, tempo, time, rate, underruns and the lyric line being sung \
        (see dump --lyrics for which events are lyrics), and keys \
        control playback: space pauses and resumes, left/right move one bar, +/- change the \
        rate, q quits. Ctrl-C stops with all notes off. The tracks play through a SoundFont \
        sampler when a bank is found (--soundfont, then $TACTUS_SOUNDFONT, then the standard \
        paths), else through the built-in synthesizer; --instrument builtin forces it.
        """
    )

    @Argument(help: "The MIDI file.")
    var file: String

    @Option(help: "ALSA PCM device: default, hw:0,0, plughw:1, or file:'/path.raw',raw.")
    var device: String?

    @OptionGroup var driverOptions: AudioDriverOptions

    @Option(name: .customLong("sample-rate"), help: "Frames per second: 44100, 48000 or 96000.")
    var sampleRate: String = "44100"

    @Option(help: "Output buffer in milliseconds (the latency), 5...2000.")
    var latency: Double = 50

    // Unconditional, so `--gain -6` reads -6 as the value rather than as an unknown flag.
    @Option(parsing: .unconditional, help: "Gain in dB before the limiter (-24...24).")
    var gain: Float = 0

    @Option(help: "Seconds played after the end, for releases and reverb.")
    var tail: Double = 2

    @Option(help: "Play MIDI only, to these ALSA sequencer ports (CLIENT:PORT or a client name prefix, comma-separated); no audio device is used.")
    var port: String?

    @Flag(name: .customLong("midi-clock"), help: "With --port or --driver jack: also send MIDI clock (24 per quarter note through tempo changes and --rate), Start or Song Position Pointer and Continue, and Stop, so drum machines and other sequencers follow. Through JACK it leaves from Tactus:midi_clock, connected to --clock-to.")
    var midiClock = false

    @Option(name: .customLong("clock-to"), help: "With --driver jack --midi-clock: JACK MIDI input ports the clock output connects to (comma-separated).")
    var clockTo: String?

    @OptionGroup var transportInput: TransportInputOptions

    @Option(name: .customLong("port-tracks"), help: "Send these tracks to a MIDI port in step with the audio: TRACKS=PORT, like 2,3=20:0 (an ALSA sequencer port), or with --driver jack a JACK MIDI input port like 2=fluidsynth:midi_00 (repeatable).")
    var portTracks: [String] = []

    @OptionGroup var instrumentOptions: InstrumentOptions

    @OptionGroup var transport: TransportOptions

    @OptionGroup var input: InputOptions

    func run() throws {
        if let port {
            if !portTracks.isEmpty {
                printError("\(file): --port-tracks goes with audio playback; --port already sends every track to ports")
                throw ExitCode(ExitStatus.usage)
            }
            try playMIDI(to: port)
            return
        }
        if midiClock && driverOptions.driver != .jack {
            printError("\(file): --midi-clock goes with --port (MIDI-only playback to sequencer ports) or --driver jack")
            throw ExitCode(ExitStatus.usage)
        }
        if clockTo != nil && !(midiClock && driverOptions.driver == .jack) {
            printError("\(file): --clock-to goes with --driver jack --midi-clock")
            throw ExitCode(ExitStatus.usage)
        }
        guard let rate = Int(sampleRate), RenderCommand.sampleRates.contains(rate) else {
            printError("\(file): unsupported sample rate '\(sampleRate)' (use 44100, 48000 or 96000)")
            throw ExitCode(ExitStatus.usage)
        }
        guard latency >= 5, latency <= 2000 else {
            printError("\(file): latency \(latency) ms is outside 5...2000")
            throw ExitCode(ExitStatus.usage)
        }
        guard (-24...24).contains(gain), tail >= 0, tail <= 600 else {
            printError("\(file): gain must be within -24...24 dB and tail within 0...600 s")
            throw ExitCode(ExitStatus.usage)
        }
        try instrumentOptions.validate(file: file)
        try driverOptions.validate(file: file, deviceGiven: device != nil)
        let device = self.device ?? "default"
        let smf = try loadTimedMIDIFile(file, options: input, purpose: "played")
        var sequence = smf.makeSequence()
        let plan = try transport.plan(for: &sequence, file: file)
        try PortTrackOutput.applyRoutes(portTracks, to: &sequence, file: file)
        // Through JACK the session sends port tracks as JACK MIDI inside its periods.
        let midiOut = driverOptions.driver == .jack ? nil : try PortTrackOutput.make(sequence: sequence)
        if transportInput.transportIn != nil && driverOptions.jackTransport != .off {
            printError("\(file): --transport-in and --jack-transport both move playback; choose one")
            throw ExitCode(ExitStatus.usage)
        }
        let followsTransport = driverOptions.jackTransport != .off || transportInput.transportIn != nil
        // The sequencer port first: without it there is nothing to wait for.
        let transportOverJACK = driverOptions.driver == .jack
        let transportClient = try transportInput.connect(file: file, overJACK: transportOverJACK)

        let choice = try instrumentOptions.choose(input: input, song: file)
        try choice.prepareSamples(for: sequence)
        // Live, a plugin's work (loading a file) must not hold up the audio thread.
        for plugin in choice.allPlugins { plugin.worksInBackground = true }

        let options = PlaybackSession.Options(gainDecibels: gain, tailSeconds: tail,
                                              sampleRate: rate, latencySeconds: latency / 1000,
                                              // With tracks on MIDI ports the song starts once the device runs
                                              // steadily (see PortTrackOutput.startWhenSteady), so their first
                                              // messages can be scheduled ahead.
                                              startsPlaying: midiOut == nil && !followsTransport)
        // A custom instrument needs no file, so creating the session cannot fail.
        let session = try! choice.makeSession(sequence: sequence, options: options,
                                              observer: midiOut.map { PortTrackObserver(output: $0, plan: plan) })
        plan.apply(to: session)

        // The device: one line naming it and pointing at render when there is none.
        func unavailable(_ message: String) -> ExitCode {
            printError("\(message); to hear the file without one, render it: tactus render \(file) -o OUT.wav")
            return ExitCode(ExitStatus.unavailable)
        }
        let backend = driverOptions.makeBackend(device: device, midiInput: transportOverJACK ? transportInput.jackSources : nil)
        if midiClock, let jack = backend as? JACKBackend {
            let ports = (clockTo ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            jack.sendMIDIClock(for: sequence, to: ports)
        }
        do {
            try session.start(on: backend)
        } catch {
            switch error {
            case .graph(let reason):
                printError("\(file): cannot build the audio graph: \(reason)")
                throw ExitCode(ExitStatus.dataError)
            case .backend(let failure): throw unavailable(failure.description)
            default: throw unavailable(error.description)
            }
        }

        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber) { number in playSignal.store(number, ordering: .relaxed) }
        }
        let terminal = TerminalSession(enabled: !input.quiet && isatty(STDIN_FILENO) != 0 && isatty(STDERR_FILENO) != 0)
        defer { terminal.restore() }
        let jackTransport = JACKTransportLink(mode: driverOptions.jackTransport, backend: backend, session: session, fromTick: plan.fromTick)
        var transportReader: SequencerInput?
        if let transportClient {
            transportReader = try transportInput.start(transportClient, session: session, ticksPerQuarter: sequence.timeBase.ticksPerQuarterForBeats)
            if !input.quiet { printError("\(file): waiting for MIDI Start or Continue on \(transportClient.inputAddress)") }
        }
        defer { transportReader?.stop() }
        if transportOverJACK, transportInput.transportIn != nil, let jack = backend as? JACKBackend, let midiInput = jack.midiInput {
            transportInput.start(midiInput, session: session, ticksPerQuarter: sequence.timeBase.ticksPerQuarterForBeats)
            if !input.quiet { printError("\(file): waiting for MIDI Start or Continue on JACK port \(jack.jackClient?.midiInputPortName ?? "midi_in")") }
        }
        defer { (backend as? JACKBackend)?.midiInput?.stop() }
        let status = StatusLine(session: session, endTick: plan.toTick ?? sequence.length)
        var interrupted = false
        var stopping = false
        var interruptedAt: ContinuousClock.Instant?
        while session.outcome == nil {
            if playInterrupted && !interrupted {
                // Stop with every note released, and let the releases reach the device.
                interrupted = true
                stopping = true
                interruptedAt = .now
                session.stop(drain: true)
            }
            if let interruptedAt, ContinuousClock.now - interruptedAt > .seconds(stopGraceSeconds) {
                terminal.restore()
                let where_ = driverOptions.describe(backend, device: device)
                printError("tactus: \(where_) did not stop within \(Int(stopGraceSeconds)) s of the signal; leaving without it")
                // Not a throw: unwinding would release the session, whose backend waits on the
                // device or server that does not answer.
                _exit(signalExitStatus)
            }
            if !stopping { jackTransport?.update() }
            if terminal.enabled && !stopping, let position = session.position {
                while let key = terminal.readKey() {
                    switch key {
                    case .space:
                        if let jackTransport { jackTransport.toggle() } else if position.isPlaying { session.pause() } else { session.resume() }
                    case .left, .right:
                        let bar = BarBeatTick(bar: max(1, position.barBeatTick.bar + (key == .left ? -1 : 1)), beat: 1, tick: 0)
                        if let jackTransport {
                            jackTransport.locate(tick: MusicPosition.barBeatTick(bar).tick(in: sequence))
                        } else {
                            session.locate(to: .barBeatTick(bar))
                        }
                    case .plus: session.setRate(min(Player.rateRange.upperBound, (position.rate * 100 + 10).rounded() / 100))
                    case .minus: session.setRate(max(Player.rateRange.lowerBound, (position.rate * 100 - 10).rounded() / 100))
                    case .quit:
                        stopping = true
                        session.stop(drain: true)
                    }
                }
                terminal.draw(status.text())
            }
            usleep(20_000)
        }
        terminal.finish(status.text())
        terminal.restore()
        switch session.outcome! {
        case .failure(let error):
            printError(error.description)
            throw ExitCode(ExitStatus.ioError)
        case .success(let summary):
            // One summary line, like render's: what was played, where, and how many underruns.
            let played = Double(summary.performanceFrames) / Double(summary.sampleRate)
            let xruns = summary.underruns
            try printLine("\(file): \(summary.ending == .stopped ? "stopped" : "played \(formatDuration(played))") on \(driverOptions.describe(backend, device: device)) at \(summary.sampleRate) Hz, "
                  + "\(summary.format.latencyFrames) frames of buffer and \(summary.graphLatencyFrames) in the graph, \(xruns) underrun\(xruns == 1 ? "" : "s")")
        }
        if interrupted { throw ExitCode(signalExitStatus) }
    }
}


extension PlayCommand {
    /// `tactus play FILE --port P[,P...]`: the file's MIDI, scheduled on an ALSA queue from
    /// the tempo map, to sequencer ports; from, to, rate, mute, solo and transpose apply.
    func playMIDI(to portList: String) throws {
        let smf = try loadTimedMIDIFile(file, options: input, purpose: "played")
        var sequence = smf.makeSequence()
        let plan = try transport.plan(for: &sequence, file: file)
        if plan.loop != nil {
            printError("\(file): --loop is not available with --port")
            throw ExitCode(ExitStatus.usage)
        }
        let names = portList.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !names.isEmpty else {
            printError("\(file): --port needs at least one port")
            throw ExitCode(ExitStatus.usage)
        }
        let client: SequencerClient
        do {
            client = try SequencerClient()
            for name in names { try client.connectOutput(to: name) }
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(ExitStatus.unavailable)
        }
        let timeline = MIDITimeline(sequence: sequence, fromTick: plan.fromTick, toTick: plan.toTick, rate: plan.rate, clock: midiClock)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber) { number in playSignal.store(number, ordering: .relaxed) }
        }
        let end: MIDIPlaybackEnd
        do {
            end = try client.play(timeline) { playInterrupted }
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(ExitStatus.ioError)
        }
        let seconds = Double(timeline.endNanoseconds) / 1e9
        try printLine("\(file): \(end == .stopped ? "stopped" : "played \(formatDuration(seconds))") to \(names.joined(separator: ", ")), "
              + "\(timeline.messages.count) MIDI message\(timeline.messages.count == 1 ? "" : "s")")
        if end == .stopped { throw ExitCode(signalExitStatus) }
    }
}
