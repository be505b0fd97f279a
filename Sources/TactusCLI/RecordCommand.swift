import ALSA
import ArgumentParser
import Foundation
import JACK
import MIDI
import MIDIFile
import Playback
import Recording
import Sequencing
import Synchronization

/// The signal that ended a take (0 while recording); set by the signal handler.
private let recordSignal = Atomic<Int32>(0)

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record live MIDI into a MIDI file, alone or along with a backing file.",
        discussion: """
        Input comes from Tactus's own ALSA sequencer input port (other programs connect to it: \
        aplaymidi -p Tactus FILE), from --port sources it connects to, and from a raw MIDI device \
        or FIFO (--input-device). What is played and the backing are heard through the instrument, \
        chosen as for play (--instrument, --soundfont, --effect: an LV2 plugin too), unless \
        --no-thru or --no-audio. Recording ends on Ctrl-C or SIGTERM, after --duration, \
        or at the end of the backing; the file is then written (format 1: the backing's tracks \
        and the recorded ones), the exit status is 0, and the journal OUT.mid.journal is removed. Until then every event is in \
        the journal, on disk within 100 ms: after a crash, `tactus record --recover \
        OUT.mid.journal -o OUT.mid` rebuilds the take.
        """
    )

    @Option(name: [.short, .customLong("output")], help: "The MIDI file to write.")
    var output: String?

    @Option(help: "ALSA sequencer ports to record from (CLIENT:PORT or a client name prefix, comma-separated).")
    var port: String?

    @Option(name: .customLong("input-device"), help: "A raw MIDI device (/dev/snd/midiC1D0) or FIFO to record from.")
    var inputDevice: String?

    @Option(help: "A MIDI file to play along with; its tracks, tempo and meter go into the output.")
    var backing: String?

    @Option(help: "Tempo without a backing file, in BPM (default 120).")
    var tempo: Double?

    @Option(help: "Time signature without a backing file, like 4/4 or 6/8.")
    var timesig: String?

    @Option(name: .customLong("count-in"), help: "Bars of clicks before recording starts.")
    var countIn: Int = 0

    @Flag(help: "Click on every beat, accented on bar starts.")
    var metronome = false

    @Option(help: "Where playback and the take start (BAR:BEAT[:TICK], 42.5s or 1920t); default 1:1.")
    var from: String?

    @Option(name: .customLong("punch-in"), help: "Keep only what is played from this position on.")
    var punchIn: String?

    @Option(name: .customLong("punch-out"), help: "Keep only what is played before this position.")
    var punchOut: String?

    @Option(name: .customLong("loop-record"), help: "Loop recording: repeat START-END (like 1:1-5:1); every pass becomes a take (a track of its own).")
    var loop: String?

    @Option(help: "The backing track to record into, numbered as tactus info prints them (default: a new track).")
    var track: String?

    @Flag(help: "Add the take to the track's events (the default).")
    var overdub = false

    @Flag(help: "Remove the track's events in the recorded span first.")
    var replace = false

    @Option(help: "Move note starts to a grid: 1/4, 1/8, 1/16, 1/8t, 1/4. ...")
    var quantize: String?

    @Option(help: "Stop after this many seconds of recording (like 30 or 30s), counted after the count-in.")
    var duration: String?

    @Flag(name: .customLong("no-thru"), help: "Do not play the input through the synthesizer.")
    var noThru = false

    @Flag(name: .customLong("no-audio"), help: "Use no audio device: no backing sound, clicks or thru; the monotonic clock times the take.")
    var noAudio = false

    @Option(help: "ALSA PCM device for the backing, clicks and thru.")
    var device: String?

    @Option(name: .customLong("sample-rate"), help: "Frames per second: 44100, 48000 or 96000.")
    var sampleRate: String = "48000"

    @Option(help: "Output buffer in milliseconds (the latency of thru and clicks), 5...2000.")
    var latency: Double = 20

    @Option(help: "How the sequencer stamps input: 'tick' (the queue's timer ticks, as arecordmidi) or 'real' (the exact arrival).")
    var stamps: String = "tick"

    @OptionGroup var driverOptions: AudioDriverOptions

    @Option(help: "Rebuild the take from this journal (after a crash) into -o, instead of recording.")
    var recover: String?

    @OptionGroup var instrumentOptions: InstrumentOptions

    @OptionGroup var input: InputOptions

    func run() throws {
        guard let output else {
            printError("tactus record: -o OUT.mid is required")
            throw ExitCode(ExitStatus.usage)
        }
        try refuseInputAsOutput(output, inputs: [recover, backing])
        try refuseAudioExtension(output)
        if let recover {
            try recoverTake(from: recover, to: output)
            return
        }
        try record(to: output)
    }

    func usage(_ message: String) -> ExitCode {
        printError("tactus record: \(message)")
        return ExitCode(ExitStatus.usage)
    }

    // MARK: Recording

    func record(to output: String) throws {
        let plan = try makePlan()
        try driverOptions.validate(file: output, deviceGiven: device != nil)
        let jack = driverOptions.driver == .jack
        if jack && driverOptions.jackTransport != .off { throw usage("--jack-transport goes with play") }
        if jack && noAudio { throw usage("--driver jack records from JACK MIDI through a JACK client; it cannot go with --no-audio") }
        guard let rate = Int(sampleRate), RenderCommand.sampleRates.contains(rate) else {
            throw usage("unsupported sample rate '\(sampleRate)' (use 44100, 48000 or 96000)")
        }
        guard latency >= 5, latency <= 2000 else { throw usage("latency \(latency) ms is outside 5...2000") }
        try instrumentOptions.validate(file: output)

        // Inputs first: a missing sequencer or device is reported before anything is created.
        var inputs: [any RecordingInput] = []
        var described: [String] = []
        if let inputDevice {
            do {
                inputs.append(try RawMIDIInput.recordingInput(path: inputDevice))
            } catch {
                printError("tactus: \(error)")
                throw ExitCode(ExitStatus.unavailable)
            }
        }
        let sources = (port ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if port != nil && sources.isEmpty { throw usage("--port needs at least one port") }
        // Through JACK, --port names JACK MIDI outputs, connected to Tactus's midi_in.
        if !jack && (inputDevice == nil || !sources.isEmpty) {
            do {
                let client = try SequencerClient()
                for source in sources { try client.connectInput(from: source) }
                inputs.insert(SequencerRecordingInput(client: client, stamps: stampMode), at: 0)
                described.append("port \(client.inputAddress) (Tactus in)" + (sources.isEmpty ? "" : ", connected from \(sources.joined(separator: ", "))"))
            } catch {
                printError("tactus: \(error)")
                throw ExitCode(ExitStatus.unavailable)
            }
        }
        if let inputDevice, let device = inputs.last(where: { !($0 is SequencerRecordingInput) }) {
            // Which clock stamps the bytes matters to whoever times a performance: say it.
            described.append(device is RawMIDIInput ? "\(inputDevice) (\(device.inputDescription), stamped by the driver)"
                                                    : "\(inputDevice) (stamped as read)")
        }

        var playback = PlaybackSession.Options(instrument: .builtIn, tailSeconds: 0, sampleRate: rate, latencySeconds: latency / 1000)
        var heardThrough = ""
        // The instrument is loaded only when something will play through it.
        if !noAudio && (!noThru || backing != nil || metronome || countIn > 0) {
            let choice = try instrumentOptions.choose(input: input, song: backing)
            try choice.prepareSamples(for: plan.base)
            // Live, a plugin's work (loading a file) must not hold up the audio thread.
            for plugin in choice.allPlugins { plugin.worksInBackground = true }
            playback = choice.playing(playback)
            heardThrough = ", playing through \(choice.description)"
        }
        let options = RecordingSession.Options(
            settings: plan.settings, countInBars: countIn, metronome: metronome, thru: !noThru,
            durationSeconds: plan.durationSeconds, endsWithBacking: backing != nil,
            journalPath: Self.journalPath(for: output), backingPath: backing.map(absolutePath), playback: playback)
        let session: RecordingSession
        do {
            session = try RecordingSession(sequence: plan.base, options: options)
        } catch {
            throw usage("\(error)")
        }

        // Whoever started us may have left these blocked (a test runner's thread does); a take
        // must end, with its file written, when they come.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber) { number in recordSignal.store(number, ordering: .relaxed) }
            sigaddset(&stopSignals, signalNumber)
        }
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)

        // Audio: the backing, clicks and thru, unless there is no device to play them on.
        if jack {
            let backend = JACKBackend(options: .init(clientName: "Tactus", server: driverOptions.jackServer,
                                                     connections: driverOptions.connections, midiInput: true, midiInputSources: sources))
            if let midiInput = backend.midiInput { inputs.append(midiInput) }
            try start(session, inputs: inputs, on: backend, fallBackToSilence: false)
            if let name = backend.jackClient?.midiInputPortName {
                described.append("JACK port \(name)" + (sources.isEmpty ? "" : ", connected from \(sources.joined(separator: ", "))"))
            }
        } else if noAudio {
            try start(session, inputs: inputs, on: nil, fallBackToSilence: false)
        } else {
            try start(session, inputs: inputs, on: ALSAPCMBackend(device: device ?? "default"), fallBackToSilence: device == nil)
        }
        printError("tactus: recording into \(output) from \(described.joined(separator: " and "))\(heardThrough); Ctrl-C stops")

        let terminal = TerminalSession(enabled: !input.quiet && isatty(STDERR_FILENO) != 0 && isatty(STDIN_FILENO) != 0)
        defer { terminal.restore() }
        let meter = plan.base.makeMeterMap()
        while recordSignal.load(ordering: .relaxed) == 0 && session.take == nil {
            if terminal.enabled { terminal.draw(statusText(session, meter: meter)) }
            usleep(20_000)
        }
        session.stop()
        let take = session.waitUntilFinished()
        terminal.finish(statusText(session, meter: meter))
        terminal.restore()
        switch take.ending {
        case .stopped, .reachedEnd: break
        case .audioFailed(let error): printError("tactus: \(error); the take so far is kept")
        case .inputFailed(let input, let reason): printError("tactus: MIDI input \(input): \(reason); the take so far is kept")
        case .journalFailed(let error): printError("tactus: \(error); the take is written without it")
        }
        warnAboutMalformed(take)
        let written = try write(take, to: output)
        try report("\(output): \(written), \(formatDuration(take.recordedSeconds)) recorded", output: output)
        // The take is safe; the exit status still says the device or server failed.
        if case .audioFailed = take.ending { throw ExitCode(ExitStatus.ioError) }
    }

    /// Starts `session`; when the audio device cannot be used and none was asked for by name,
    /// records without sound after saying so.
    private func start(_ session: RecordingSession, inputs: [any RecordingInput], on backend: (any AudioBackend)?,
                       fallBackToSilence: Bool) throws {
        do {
            try session.start(inputs: inputs, on: backend)
        } catch {
            switch error {
            case .audio(.backend(let failure)) where fallBackToSilence:
                printError("tactus: no audio (\(failure)); recording without sound (choose one with --device, or say --no-audio)")
                try start(session, inputs: inputs, on: nil, fallBackToSilence: false)
            case .audio(.backend(let failure)) where backend is ALSAPCMBackend:
                printError("tactus: \(failure); record with --no-audio to go without sound")
                throw ExitCode(ExitStatus.unavailable)
            case .audio(.backend(let failure)):
                printError("tactus: \(failure)")
                throw ExitCode(ExitStatus.unavailable)
            case .audio(let failure):
                printError("tactus record: cannot build the audio graph: \(failure)")
                throw ExitCode(ExitStatus.dataError)
            case .journal(let failure):
                printError("tactus: \(failure)")
                throw ExitCode(ExitStatus.cannotCreate)
            case .input(let failure):
                printError("tactus: \(failure)")
                throw ExitCode(ExitStatus.unavailable)
            case .invalidOptions(let reason):
                throw usage(reason)
            case .alreadyStarted:
                throw usage("\(error)")
            }
        }
    }
}

/// `path` made absolute, so a journal names its backing wherever the recovery runs.
private func absolutePath(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}
