import ALSA
import ArgumentParser
import Foundation
import MIDI
import MIDIFile
import Playback
import Sequencing
import Synchronization

/// The signal that ended a take (0 while recording); set by the signal handler.
private let recordSignal = Atomic<Int32>(0)

/// Messages from the input threads waiting for the control loop, which stamps them into the
/// take and the journal. A lock is fine here: neither side is the audio thread.
final class InputInbox: Sendable {
    let pending = Mutex<[MIDIInputEvent]>([])
    let count = Atomic<Int>(0)
    let last = Mutex<[UInt8]>([])

    func add(_ event: MIDIInputEvent) {
        pending.withLock { $0.append(event) }
        count.add(1, ordering: .relaxed)
        last.withLock { $0 = event.bytes }
    }

    func take() -> [MIDIInputEvent] { pending.withLock { p in defer { p.removeAll() }; return p } }
}

/// The player's live MIDI path (one producer) shared by several input threads, one at a time.
final class SharedLiveInput: Sendable {
    private let input: LiveMIDIInput
    private let turn = Mutex<Void>(())

    init(_ input: LiveMIDIInput) { self.input = input }

    func send(_ message: MIDIMessage, toNode node: UInt32) {
        turn.withLock { _ in _ = input.send(message, toNode: node) }
    }
}

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
        var countInTicks: Int64
        var durationSeconds: Double?
        /// Take time at which recording stops by itself (duration, end of the backing), if any.
        var endSeconds: Double?
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
        let tempoMap = base.makeTempoMap()
        let startSeconds = tempoMap.seconds(atTick: settings.startTick)
        var endSeconds: Double?
        if let durationSeconds { endSeconds = startSeconds + durationSeconds }
        if backing != nil, settings.loop == nil {
            let end = tempoMap.seconds(atTick: base.length)
            guard end > startSeconds else { throw usage("the backing ends before --from") }
            endSeconds = min(endSeconds ?? end, end)
        }
        return Plan(base: base, settings: settings, countInTicks: base.countInTicks(bars: countIn),
                    durationSeconds: durationSeconds, endSeconds: endSeconds)
    }

    // MARK: Recording

    func record(to output: String) throws {
        let plan = try makePlan()
        let inbox = InputInbox()
        try driverOptions.validate(file: output, deviceGiven: device != nil)
        let jack = driverOptions.driver == .jack
        if jack && driverOptions.jackTransport != .off { throw usage("--jack-transport goes with play") }
        if jack && noAudio { throw usage("--driver jack records from JACK MIDI through a JACK client; it cannot go with --no-audio") }

        // Inputs first: a missing sequencer or device is reported before anything is created.
        var client: SequencerClient?
        var sequencerInput: SequencerInput?
        var reader: MIDIByteStreamReader?
        var stampedReader: RawMIDIInput?
        if let inputDevice {
            // A card's raw MIDI device is read with the kernel's stamps where it can give them;
            // anything else (a FIFO, a serial line, an older kernel) is stamped on reading.
            stampedReader = RawMIDIInput(path: inputDevice)
            do {
                if stampedReader == nil { reader = try MIDIByteStreamReader(path: inputDevice) }
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
                let c = try SequencerClient()
                for source in sources { try c.connectInput(from: source) }
                client = c
            } catch {
                printError("tactus: \(error)")
                throw ExitCode(ExitStatus.unavailable)
            }
        }

        // Audio: the backing, clicks and thru, unless there is no device to play them on.
        var audio: (any RecordingAudio)?
        var jackAudio: JACKRecordingAudio?
        let session = sessionSequence(plan)
        let countInSeconds = session.makeTempoMap().seconds(atTick: plan.countInTicks)
        if jack {
            let opened = try JACKRecordingAudio(sequence: session, options: driverOptions, sources: sources) { playback in
                let (loop, end, start) = transport(session: session, plan: plan)
                if let loop { playback.setLoop(fromTick: loop.lowerBound, toTick: loop.upperBound, count: .forever) }
                if let end { playback.setEnd(tick: end) }
                if start > 0 { playback.locate(toTick: start) }
            }
            jackAudio = opened
            audio = opened
        } else if !noAudio {
            do {
                audio = try openAudio(session: session, plan: plan)
            } catch let failure as AudioUnavailable {
                if device != nil {
                    printError("tactus: audio device '\(failure.device)': \(failure.reason); record with --no-audio to go without sound")
                    throw ExitCode(ExitStatus.unavailable)
                }
                printError("tactus: no audio ('\(failure.device)': \(failure.reason)); recording without sound (choose one with --device, or say --no-audio)")
            }
        }

        let journalPath = Self.journalPath(for: output)
        let journal: RecordingJournalWriter
        do {
            journal = try RecordingJournalWriter(path: journalPath, header: RecordingJournalHeader(sequence: plan.base, settings: plan.settings, backingPath: backing.map(absolutePath)))
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(ExitStatus.cannotCreate)
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

        // The live path takes one producer; a lock keeps it so when a port and a device both
        // play in (input threads only: the audio thread never touches it).
        let live: SharedLiveInput? = noThru ? nil : audio.map { SharedLiveInput($0.player.liveInput) }
        let deliver: @Sendable (Int64, [UInt8]) -> Void = { host, bytes in
            // Thru first, straight into the engine's ring: the player hears it at the next block.
            if let live, bytes.count <= 3, let status = bytes.first, status >= 0x80, status < 0xF0 {
                let message = MIDIMessage(status: status, data1: bytes.count > 1 ? bytes[1] : 0, data2: bytes.count > 2 ? bytes[2] : 0)
                live.send(message, toNode: DefaultGraph.instrumentID)
            }
            inbox.add(MIDIInputEvent(hostNanos: host, bytes: bytes))
        }

        // Start: audio first, so the clock runs when the first input arrives.
        var playerClock: PlayerRecordingClock?
        var freeClock: MonotonicRecordingClock?
        let startSeconds = plan.base.makeTempoMap().seconds(atTick: plan.settings.startTick)
        if let audio {
            try audio.start()
            var clock = PlayerRecordingClock(sampleRate: audio.player.sampleRate, offsetSeconds: countInSeconds)
            // Input is taken once the device's clock runs (within a few periods), so that
            // nothing played at the start is stamped before the clock can place it.
            let deadline = monotonicNanoseconds() + 1_000_000_000
            repeat {
                clock.update(from: audio.player)
                if clock.songSeconds(atHostTime: monotonicNanoseconds()) != nil { break }
                usleep(2_000)
            } while monotonicNanoseconds() < deadline
            playerClock = clock
        } else {
            // Recording starts now; a count-in is silent time before the start.
            freeClock = MonotonicRecordingClock(originHostNanos: monotonicNanoseconds(), originSongSeconds: startSeconds - countInSeconds)
        }
        do {
            if let client {
                sequencerInput = try client.startInput(stamps: stampMode, deliver)
            }
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(ExitStatus.unavailable)
        }
        jackAudio?.backend.midiInput?.start(deliver)
        reader?.start { deliver($0.hostNanos, $0.bytes) }
        if let stampedReader {
            let parser = Mutex(MIDIByteStreamInput())
            stampedReader.start { host, bytes in
                for event in parser.withLock({ $0.receive(bytes, atHostTime: host) }) { deliver(event.hostNanos, event.bytes) }
            }
        }

        var inputs: [String] = []
        if let client { inputs.append("port \(client.inputAddress) (Tactus in)" + (sources.isEmpty ? "" : ", connected from \(sources.joined(separator: ", "))")) }
        if let port = jackAudio?.backend.jackClient?.midiInputPortName {
            inputs.append("JACK port \(port)" + (sources.isEmpty ? "" : ", connected from \(sources.joined(separator: ", "))"))
        }
        if let inputDevice { inputs.append(inputDevice) }
        printError("tactus: recording into \(output) from \(inputs.joined(separator: " and ")); Ctrl-C stops")

        var recorder = MIDIRecorder(sequence: plan.base, settings: plan.settings)
        let terminal = TerminalSession(enabled: !input.quiet && isatty(STDERR_FILENO) != 0 && isatty(STDIN_FILENO) != 0)
        defer { terminal.restore() }
        let meter = plan.base.makeMeterMap()
        let tempoMap = plan.base.makeTempoMap()
        var lastFlush = monotonicNanoseconds()
        var lastDraw: Int64 = 0
        var held: [MIDIInputEvent] = []
        var takeNow = startSeconds - countInSeconds
        var journalError: RecordingJournalError?
        var audioFailure: String?
        func clockSeconds(_ host: Int64) -> Double? {
            playerClock?.songSeconds(atHostTime: host) ?? freeClock?.songSeconds(atHostTime: host)
        }
        func absorb(force: Bool = false) {
            if let audio { playerClock?.update(from: audio.player) }
            held += inbox.take()
            // Until the audio clock runs, input waits; at the stop it goes in regardless.
            guard !held.isEmpty, force || clockSeconds(held[0].hostNanos) != nil else { return }
            for event in held {
                let seconds = clockSeconds(event.hostNanos) ?? takeNow
                journal.append(nanoseconds: Int64((seconds * 1e9).rounded()), bytes: event.bytes)
                recorder.record(event.bytes, atSeconds: seconds)
            }
            held.removeAll()
        }
        while recordSignal.load(ordering: .relaxed) == 0 {
            absorb()
            let now = monotonicNanoseconds()
            if let seconds = clockSeconds(now) { takeNow = seconds }
            if now - lastFlush >= 50_000_000 {
                journal.mark(nanoseconds: Int64((takeNow * 1e9).rounded()))
                do { try journal.flush() } catch { journalError = error; break }
                lastFlush = now
            }
            if let end = plan.endSeconds, takeNow >= end { break }
            if let audio, let failure = audio.service() {
                printError("tactus: \(failure); the take so far is kept")
                audioFailure = failure
                break
            }
            if terminal.enabled && now - lastDraw >= 50_000_000 {
                terminal.draw(statusText(takeNow: takeNow, plan: plan, meter: meter, tempoMap: tempoMap, inbox: inbox))
                lastDraw = now
            }
            if reader?.error != nil { break }
            usleep(5_000)
        }

        // Stop: inputs first, then what they delivered goes into the take.
        sequencerInput?.stop()
        jackAudio?.backend.midiInput?.stop()
        reader?.stop()
        stampedReader?.stop()
        absorb(force: true)
        if let seconds = clockSeconds(monotonicNanoseconds()) { takeNow = seconds }
        if let end = plan.endSeconds { takeNow = min(takeNow, end) }
        recorder.finish(atSeconds: takeNow)
        journal.mark(nanoseconds: Int64((takeNow * 1e9).rounded()))
        if journalError == nil {
            do { try journal.flush() } catch { journalError = error }
        }
        audio?.stop()
        terminal.finish(statusText(takeNow: takeNow, plan: plan, meter: meter, tempoMap: tempoMap, inbox: inbox))
        terminal.restore()
        if let reason = reader?.error {
            printError("tactus: MIDI input device \(inputDevice ?? ""): read failed (\(reason)); the take so far is kept")
        }
        if let journalError { printError("tactus: \(journalError); the take is written without it") }

        let written = try write(recorder, plan: plan, to: output, journal: journalPath)
        unlink(journalPath)
        print("\(output): \(written), \(formatDuration(max(0, takeNow - startSeconds))) recorded")
        // The take is safe; the exit status still says the device or server failed.
        if audioFailure != nil { throw ExitCode(ExitStatus.ioError) }
    }

    /// The sequence the player plays: the base delayed by the count-in, with clicks.
    func sessionSequence(_ plan: Plan) -> MusicSequence {
        var session = plan.base.delayed(byTicks: plan.countInTicks)
        let meter = session.makeMeterMap()
        let tempoMap = session.makeTempoMap()
        let start = plan.settings.startTick
        var clicksEnd = start + plan.countInTicks
        if metronome {
            if let loop = plan.settings.loop {
                clicksEnd = loop.upperBound + plan.countInTicks
            } else if let end = plan.endSeconds {
                clicksEnd = Int64(tempoMap.tick(atSeconds: end + tempoMap.seconds(atTick: plan.countInTicks)).rounded(.up))
            } else {
                // Until Ctrl-C: three hours of clicks is a handful of kilobytes.
                clicksEnd = Int64(tempoMap.tick(atSeconds: tempoMap.seconds(atTick: start + plan.countInTicks) + 3 * 3600).rounded(.up))
            }
        }
        if clicksEnd > start {
            session.tracks.append(Metronome.clickTrack(meter: meter, in: start..<clicksEnd))
        }
        return session
    }

    /// Why no audio device could be used.
    struct AudioUnavailable: Error {
        var device: String
        var reason: String
    }

    /// The backing's transport: the loop (forever) or the end past which the take may run,
    /// and where playback starts, in the session's ticks (after the count-in).
    func transport(session: MusicSequence, plan: Plan) -> (loop: Range<Int64>?, end: Int64?, start: Int64) {
        let shift = plan.countInTicks
        if let loop = plan.settings.loop {
            return (loop.lowerBound + shift..<loop.upperBound + shift, nil, plan.settings.startTick)
        }
        // The transport runs on past the song's end (the take may), until the take stops.
        let tempoMap = session.makeTempoMap()
        let end = plan.endSeconds.map { $0 + tempoMap.seconds(atTick: shift) + 1 } ?? 48 * 3600
        return (nil, Int64(tempoMap.tick(atSeconds: end).rounded(.up)), plan.settings.startTick)
    }

    func openAudio(session: MusicSequence, plan: Plan) throws -> ALSARecordingAudio {
        let name = device ?? "default"
        guard let rate = Int(sampleRate), RenderCommand.sampleRates.contains(rate) else {
            throw usage("unsupported sample rate '\(sampleRate)' (use 44100, 48000 or 96000)")
        }
        guard latency >= 5, latency <= 2000 else { throw usage("latency \(latency) ms is outside 5...2000") }
        do { try ALSALibrary.load() } catch { throw AudioUnavailable(device: name, reason: "\(error)") }
        if !name.hasPrefix("file:") && !ALSASystem.hasSoundDevices { throw AudioUnavailable(device: name, reason: "/dev/snd does not exist") }
        let bufferFrames = max(64, Int((latency * Double(rate) / 1000).rounded()))
        let output: PCMOutput
        do {
            output = try PCMOutput(PCMConfiguration(device: name, sampleRate: rate, periodFrames: max(16, bufferFrames / 4),
                                                    bufferFrames: bufferFrames, format: .s16))
        } catch {
            throw AudioUnavailable(device: name, reason: "cannot be opened (\(error.reason))")
        }
        let player: Player
        do {
            player = try Player.makeDefault(sequence: session, sampleRate: output.granted.sampleRate,
                                            maximumFrameCount: max(output.granted.periodFrames, 64))
        } catch {
            printError("tactus record: cannot build the audio graph: \(error)")
            throw ExitCode(ExitStatus.dataError)
        }
        player.outputLatencyFrames = output.granted.bufferFrames
        let (loop, end, start) = transport(session: session, plan: plan)
        if let loop { player.setLoop(from: loop.lowerBound, to: loop.upperBound, count: .forever) }
        if let end { player.setEnd(tick: end) }
        if start > 0 { player.locate(toTick: start) }
        return ALSARecordingAudio(output: output, player: player, source: PlayerPCMSource(player: player, tailFrames: 0), deviceName: name)
    }

    func statusText(takeNow: Double, plan: Plan, meter: MeterMap, tempoMap: TempoMap, inbox: InputInbox) -> String {
        let startSeconds = tempoMap.seconds(atTick: plan.settings.startTick)
        let position: String
        if takeNow < startSeconds {
            position = String(format: "count-in %.1f s", startSeconds - takeNow)
        } else {
            var seconds = takeNow
            if let loop = plan.settings.loop {
                let a = tempoMap.seconds(atTick: loop.lowerBound), length = tempoMap.seconds(atTick: loop.upperBound) - a
                seconds = a + (takeNow - a).truncatingRemainder(dividingBy: length)
            }
            let bbt = meter.barBeatTick(atTick: Int64(tempoMap.tick(atSeconds: seconds)))
            position = "\(bbt.bar):\(bbt.beat)"
        }
        let last = inbox.last.withLock { $0 }.prefix(3).map { String(format: "%02x", $0) }.joined(separator: " ")
        let count = inbox.count.load(ordering: .relaxed)
        return "REC \(position)  \(formatDuration(max(0, takeNow - startSeconds)))  in: \(count) event\(count == 1 ? "" : "s")" + (last.isEmpty ? "" : "  last \(last)")
    }

    /// Where the journal of a take into `output` goes: beside it (`OUT.mid.journal`), unless
    /// the output is not a regular file (`/dev/null`, a FIFO, a terminal), where nothing may be
    /// created beside it: then in the temporary directory, named by the process.
    static func journalPath(for output: String) -> String {
        var info = stat()
        if stat(output, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            return (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/tactus-record-\(getpid()).mid.journal"
        }
        return output + ".journal"
    }

    /// Writes the take merged into the base sequence as a format-1 file; returns a summary.
    func write(_ recorder: MIDIRecorder, plan: Plan, to output: String, journal: String? = nil) throws -> String {
        let merged = recorder.merged(into: plan.base)
        do {
            try SMFWriter.writeAtomically(SMFWriter.bytes(of: merged, layout: .format1), to: output)
        } catch {
            printError("tactus: \(error); the journal \(journal ?? output + ".journal") keeps the take (tactus record --recover)")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        let takes = recorder.takes
        let notes = takes.reduce(0) { n, take in n + take.track.events.filter { if case .note = $0.event { return true } else { return false } }.count }
        let events = takes.reduce(0) { $0 + $1.track.count }
        return "\(events) event\(events == 1 ? "" : "s") (\(notes) note\(notes == 1 ? "" : "s")) in \(max(takes.count, 1)) track\(takes.count > 1 ? "s" : "")"
    }

    // MARK: Recovery

    func recoverTake(from journalPath: String, to output: String) throws {
        guard FileManager.default.fileExists(atPath: journalPath) else {
            printError("\(journalPath): no such file")
            throw ExitCode(ExitStatus.noInput)
        }
        let contents: RecordingJournal.Contents
        do {
            contents = try RecordingJournal.read(contentsOf: journalPath)
        } catch {
            printError("tactus: \(error)")
            throw ExitCode(error.reason.hasPrefix("cannot") ? ExitStatus.noInput : ExitStatus.dataError)
        }
        let header = contents.header
        var base = header.makeSequence()
        if let backing = header.backingPath {
            if let smf = try? SMFReader.read(contentsOf: backing), smf.timeBase.isUsable {
                base = smf.makeSequence()
            } else {
                printError("tactus: warning: the backing \(backing) cannot be read; the take is written with the journal's tempo map only")
            }
        }
        let recorder = RecordingJournal.recover(contents)
        let plan = Plan(base: base, settings: header.settings, countInTicks: 0, durationSeconds: nil, endSeconds: nil)
        let written = try write(recorder, plan: plan, to: output)
        let torn = contents.discardedByteCount > 0 ? " (a torn last record of \(contents.discardedByteCount) bytes left out)" : ""
        print("\(output): recovered \(written) from \(journalPath)\(torn)")
    }
}

/// `path` made absolute, so a journal names its backing wherever the recovery runs.
private func absolutePath(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}
