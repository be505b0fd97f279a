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
        or FIFO (--input-device). What is played is heard through the built-in synthesizer \
        (unless --no-thru or --no-audio). Recording ends on Ctrl-C or SIGTERM, after --duration, \
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

    private func usage(_ message: String) -> ExitCode {
        printError("tactus record: \(message)")
        return ExitCode(ExitStatus.usage)
    }

    // MARK: Planning

    /// The checked options: the sequence recorded into and the take's settings.
    struct Plan {
        var base: MusicSequence
        var settings: RecordingSettings
        var durationSeconds: Double?
    }

    var stampMode: SequencerInputStamps { SequencerInputStamps(rawValue: stamps) ?? .queueTicks }

    func makePlan() throws -> Plan {
        guard SequencerInputStamps(rawValue: stamps) != nil else { throw usage("--stamps '\(stamps)' is not 'tick' or 'real'") }
        if overdub && replace { throw usage("--overdub and --replace exclude each other") }
        guard (0...16).contains(countIn) else { throw usage("--count-in \(countIn) is outside 0...16 bars") }
        var base: MusicSequence
        if let backing {
            if tempo != nil || timesig != nil { throw usage("--tempo and --timesig set up a recording without --backing; the backing has its own") }
            base = try loadTimedMIDIFile(backing, options: input, purpose: "played").makeSequence()
        } else {
            base = MusicSequence(timeBase: .ticksPerQuarter(960))
            let bpm = tempo ?? 120
            guard bpm.isFinite, (10...400).contains(bpm) else { throw usage("--tempo \(bpm) is outside 10...400 BPM") }
            base.tempoTrack.add(.meta(.tempo(bpm: bpm)), at: 0)
            var signature = TimeSignature.common
            if let timesig {
                let parts = timesig.split(separator: "/")
                guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), (1...32).contains(n),
                      [1, 2, 4, 8, 16, 32].contains(d) else { throw usage("--timesig '\(timesig)' is not like 4/4 or 6/8") }
                signature = TimeSignature(n, d)
            }
            base.tempoTrack.add(.meta(.timeSignature(signature)), at: 0)
        }
        func position(_ text: String, _ option: String) throws -> Int64 {
            do { return try MusicPosition(parsing: text).tick(in: base) } catch { throw usage("\(option): \(error)") }
        }
        var settings = RecordingSettings(mode: replace ? .replace : .overdub)
        if let from { settings.startTick = try position(from, "--from") }
        if let punchIn { settings.punchIn = try position(punchIn, "--punch-in") }
        if let punchOut { settings.punchOut = try position(punchOut, "--punch-out") }
        if let a = settings.punchIn, let b = settings.punchOut, b <= a { throw usage("--punch-out is not after --punch-in") }
        if let loop {
            let range: Range<Int64>?
            do { range = try MusicRange(parsing: loop).ticks(in: base) } catch { throw usage("--loop-record: \(error)") }
            guard let range else { throw usage("--loop-record \(loop) is empty") }
            if from != nil { throw usage("--loop-record starts at its own start; leave out --from") }
            settings.loop = range
            settings.startTick = range.lowerBound
        }
        if let quantize {
            guard let grid = QuantizeGrid(parsing: quantize) else { throw usage("--quantize '\(quantize)' is not a grid like 1/16, 1/8t or 1/4.") }
            settings.quantize = grid
        }
        if let track {
            let indices: [Int]
            do {
                indices = try EditScript.trackIndices(track, option: "--track", sequence: base, conductor: !base.tempoTrack.isEmpty)
            } catch {
                throw usage("\(error)")
            }
            guard indices.count == 1 else { throw usage("--track takes one track") }
            if settings.loop != nil { throw usage("loop takes go to tracks of their own; leave out --track") }
            settings.targetTrack = indices[0]
        } else if replace {
            throw usage("--replace needs --track (the track whose events the take replaces)")
        }
        var durationSeconds: Double?
        if let duration {
            let text = duration.hasSuffix("s") ? String(duration.dropLast()) : duration
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
                throw usage("--duration '\(duration)' is not a number of seconds (like 30 or 30s)")
            }
            durationSeconds = seconds
        }
        return Plan(base: base, settings: settings, durationSeconds: durationSeconds)
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
        if let inputDevice { described.append(inputDevice) }

        let options = RecordingSession.Options(
            settings: plan.settings, countInBars: countIn, metronome: metronome, thru: !noThru,
            durationSeconds: plan.durationSeconds, endsWithBacking: backing != nil,
            journalPath: Self.journalPath(for: output), backingPath: backing.map(absolutePath),
            playback: PlaybackSession.Options(instrument: .builtIn, tailSeconds: 0, sampleRate: rate, latencySeconds: latency / 1000))
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
        printError("tactus: recording into \(output) from \(described.joined(separator: " and ")); Ctrl-C stops")

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

    func statusText(_ session: RecordingSession, meter: MeterMap) -> String {
        guard let position = session.position else { return "REC" }
        let place: String
        if position.countInRemaining > 0 {
            place = String(format: "count-in %.1f s", position.countInRemaining)
        } else if let tick = position.tick {
            let bbt = meter.barBeatTick(atTick: tick)
            place = "\(bbt.bar):\(bbt.beat)"
        } else {
            place = "-"
        }
        let last = session.lastMessage.prefix(3).map { String(format: "%02x", $0) }.joined(separator: " ")
        let count = position.receivedCount
        return "REC \(place)  \(formatDuration(max(0, position.seconds - session.startSeconds)))  in: \(count) event\(count == 1 ? "" : "s")"
            + (last.isEmpty ? "" : "  last \(last)")
    }

    /// Where the journal of a take into `output` goes: beside it (`OUT.mid.journal`), unless
    /// the output is not a regular file (`/dev/null`, a FIFO, a terminal, `-`), where nothing
    /// may be created beside it: then in the temporary directory, under a name no other
    /// process can guess (the journal is created exclusively, so a planted file fails it).
    static func journalPath(for output: String) -> String {
        var info = stat()
        if output == "-" || (stat(output, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG) {
            let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789")
            let random = String((0..<12).map { _ in letters.randomElement()! })
            return (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/tactus-record-\(getpid())-\(random).mid.journal"
        }
        return output + ".journal"
    }

    /// Writes the take merged into its base as a format-1 file; returns a summary.
    func write(_ take: RecordingTake, to output: String) throws -> String {
        do {
            try take.write(to: output)
        } catch {
            let journal = error.journalPath.map { "; the journal \($0) keeps the take (tactus record --recover)" } ?? ""
            printError("tactus: \(error)\(journal)")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        let notes = take.noteCount, events = take.eventCount, tracks = max(take.tracks.count, 1)
        return "\(events) event\(events == 1 ? "" : "s") (\(notes) note\(notes == 1 ? "" : "s")) in \(tracks) track\(tracks > 1 ? "s" : "")"
    }

    // MARK: Recovery

    /// Prints the closing line, to standard error when the take itself went to standard output.
    func report(_ line: String, output: String) throws {
        if OutputDestination.isStandardOutput(output) { printError(line) } else { try printLine(line) }
    }

    /// Says how many messages the take left out because a MIDI file cannot hold them.
    func warnAboutMalformed(_ take: RecordingTake) {
        let count = take.recorder.malformedCount
        guard count > 0 else { return }
        printError("tactus: warning: \(count) message\(count == 1 ? "" : "s") a MIDI file cannot hold (status-less, truncated, undefined or system real-time) left out of the take")
    }

    func recoverTake(from journalPath: String, to output: String) throws {
        guard FileManager.default.fileExists(atPath: journalPath) else {
            printError("\(journalPath): no such file")
            throw ExitCode(ExitStatus.noInput)
        }
        let recovered: (take: RecordingTake, warning: String?, discardedBytes: Int)
        do {
            recovered = try RecordingSession.recover(journal: journalPath)
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(error.reason.hasPrefix("cannot") ? ExitStatus.noInput : ExitStatus.dataError)
        }
        if let warning = recovered.warning { printError("tactus: warning: \(warning)") }
        warnAboutMalformed(recovered.take)
        let written = try write(recovered.take, to: output)
        let torn = recovered.discardedBytes > 0 ? " (a torn last record of \(recovered.discardedBytes) bytes left out)" : ""
        try report("\(output): recovered \(written) from \(journalPath)\(torn)", output: output)
    }
}

/// `path` made absolute, so a journal names its backing wherever the recovery runs.
private func absolutePath(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}
