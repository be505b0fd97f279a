import ALSA
import ArgumentParser
import AudioGraph
import Foundation
import JACK
import MIDI
import Playback
import Sequencing
import Synchronization

/// Transport options `tactus play` and `tactus render` share, so every transport behaviour
/// heard live can be rendered and checked offline.
struct TransportOptions: ParsableArguments {
    @Option(help: "Play rate, 0.05...20 (2 is twice as fast, same pitch of events, half the time).")
    var rate: Double = 1

    @Option(help: "Start position: BAR:BEAT[:TICK] (from 1:1), seconds like 42.5s, or ticks like 1920t.")
    var from: String?

    @Option(help: "End position (not included), in the same forms as --from.")
    var to: String?

    @Option(help: "Loop the span from --from to --to (or the song's end): N plays in all, or 'forever' (a bare --loop).")
    var loop: String?

    @Option(help: "Tracks to mute, as `tactus info` numbers them (like 2 or 1,3 or 2-4).")
    var mute: String?

    @Option(help: "Tracks to solo, as `tactus info` numbers them.")
    var solo: String?

    // Unconditional, so `--transpose -3` reads -3 as the value rather than as an unknown flag.
    @Option(parsing: .unconditional, help: "Transpose notes by N semitones (drums on channel 10 stay).")
    var transpose: Int = 0

    /// The most plays `--loop N` takes: a bound that keeps the song's length in frames far
    /// from overflowing, and more than any render needs.
    static let maximumLoopCount = 10_000

    /// Spelling of a bare `--loop`: Tactus.main rewrites it, since an option with an optional
    /// value is not something the argument parser offers.
    static let foreverSpelling = "forever"
}

/// Transport options checked against a sequence.
struct TransportPlan {
    var rate = 1.0
    var fromTick: Int64 = 0
    var toTick: Int64?
    var loop: LoopCount?

    /// True when playback never ends by itself.
    var isEndless: Bool { loop == .forever }
}

extension TransportOptions {
    /// Checks the options against `sequence`, applies mute, solo and transpose to it, and
    /// returns the plan; a bad option prints one line starting with `file` and exits 64.
    func plan(for sequence: inout MusicSequence, file: String) throws -> TransportPlan {
        func usage(_ message: String) -> ExitCode {
            printError("\(file): \(message)")
            return ExitCode(ExitStatus.usage)
        }
        var plan = TransportPlan()
        guard rate.isFinite, Player.rateRange.contains(rate) else { throw usage("--rate \(rate) is outside 0.05...20") }
        plan.rate = rate
        guard (-127...127).contains(transpose) else { throw usage("--transpose \(transpose) is outside -127...127") }
        func position(_ text: String, _ option: String) throws -> Int64 {
            do { return try MusicPosition(parsing: text).tick(in: sequence) } catch { throw usage("\(option): \(error)") }
        }
        if let from { plan.fromTick = try position(from, "--from") }
        if let to {
            let tick = try position(to, "--to")
            guard tick > plan.fromTick else { throw usage("--to \(to) is not after the start") }
            plan.toTick = tick
        }
        if let loop {
            if loop == TransportOptions.foreverSpelling {
                plan.loop = .forever
            } else if let n = Int(loop), (1...TransportOptions.maximumLoopCount).contains(n) {
                plan.loop = .times(n)
            } else {
                throw usage("--loop takes a count in 1...\(TransportOptions.maximumLoopCount), or nothing to loop forever, not '\(loop)'")
            }
            let loopEnd = plan.toTick ?? sequence.length
            guard loopEnd > plan.fromTick else { throw usage("the loop from --from to the song's end is empty") }
        }
        let conductor = !sequence.tempoTrack.isEmpty
        for (option, list) in [("--mute", mute), ("--solo", solo)] {
            guard let list else { continue }
            let indices: [Int]
            do {
                indices = try EditScript.trackIndices(list, option: option, sequence: sequence, conductor: conductor)
            } catch {
                throw usage("\(error)")
            }
            for i in indices {
                if option == "--mute" { sequence.tracks[i].isMuted = true } else { sequence.tracks[i].isSoloed = true }
            }
        }
        if transpose != 0 { sequence.transpose(by: transpose) }
        return plan
    }
}

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

    @Option(name: .customLong("transport-in"), help: "Follow MIDI Start, Stop, Continue and Song Position Pointer from these ALSA sequencer ports (comma-separated), or 'any' to take them from whatever connects to Tactus's input port; playback waits for Start or Continue.")
    var transportIn: String?

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
        if transportIn != nil && driverOptions.jackTransport != .off {
            printError("\(file): --transport-in and --jack-transport both move playback; choose one")
            throw ExitCode(ExitStatus.usage)
        }
        let followsTransport = driverOptions.jackTransport != .off || transportIn != nil
        // The sequencer port first: without it there is nothing to wait for.
        let transportClient = try transportIn.map { sources -> SequencerClient in
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

        let choice = try instrumentOptions.choose(input: input)
        try choice.prepareSamples(for: sequence)

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
        let backend = driverOptions.makeBackend(device: device)
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
        var transportInput: SequencerInput?
        if let transportClient {
            let follower = MIDITransportFollower(session, ticksPerQuarter: sequence.timeBase.ticksPerQuarterForBeats)
            do {
                transportInput = try transportClient.startInput { _, bytes in follower.receive(bytes) }
            } catch {
                printError("tactus: \(error)")
                throw ExitCode(ExitStatus.unavailable)
            }
            if !input.quiet { printError("\(file): waiting for MIDI Start or Continue on \(transportClient.inputAddress)") }
        }
        defer { transportInput?.stop() }
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
                  + "\(summary.format.latencyFrames) frames of buffer, \(xruns) underrun\(xruns == 1 ? "" : "s")")
        }
        if interrupted { throw ExitCode(signalExitStatus) }
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

/// Feeds the ALSA driver from a player's engine: runs on the driver's audio thread, renders
/// through the engine (no allocation, no lock, no I/O), and after the end plus the tail
/// writes silence and reports that playback is finished.
final class PlayerPCMSource: PCMRenderSource, @unchecked Sendable {
    private let engine: Engine
    private let player: Player
    private let tailFrames: Int64
    private let heardFrames = Atomic<Int64>(0)
    private let finished = Atomic<Bool>(false)
    private let total = Atomic<Int64>(-1)

    init(player: Player, tailFrames: Int64) {
        self.player = player
        self.engine = player.engine
        self.tailFrames = tailFrames
    }

    /// Renders and drops the graph's latency (the limiter's look-ahead) before the driver
    /// starts, exactly as an offline render does, so both produce the same frames.
    func prerollLatency(startPlaying: Bool = true) {
        let block = engine.graph.maximumFrameCount
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block), right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { left.deallocate(); right.deallocate() }
        var remaining = engine.graph.latencyFrames
        if startPlaying { player.start() }
        while remaining > 0 {
            let n = min(remaining, block)
            engine.render(frameCount: n, into: StereoBuffer(left: left, right: right))
            remaining -= n
        }
    }

    /// True once the end plus the tail has been handed to the driver.
    var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Frames of audio before the trailing silence (known once the end is reached).
    var totalFrames: Int64 { total.load(ordering: .acquiring) }

    func renderPCM(frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        var done = 0
        while done < frameCount {
            let n = min(frameCount - done, engine.graph.maximumFrameCount)
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            engine.render(frameCount: n, into: StereoBuffer(left: left + done, right: right + done),
                          hostTimeNanos: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
            done += n
        }
        let heard = heardFrames.load(ordering: .relaxed)
        let end = player.endOutputFrame ?? -1
        if end >= 0 {
            let last = end + tailFrames
            total.store(last, ordering: .releasing)
            let keep = Int(max(0, min(Int64(frameCount), last - heard)))
            if keep < frameCount {
                (left + keep).update(repeating: 0, count: frameCount - keep)
                (right + keep).update(repeating: 0, count: frameCount - keep)
            }
            if heard + Int64(frameCount) >= last { finished.store(true, ordering: .releasing) }
        }
        heardFrames.store(heard + Int64(frameCount), ordering: .relaxed)
    }
}

/// The live status line, with the lyric line being sung when the song has lyrics.
struct StatusLine {
    let session: PlaybackSession
    let tempoMap: TempoMap
    let totalSeconds: Double
    let lyrics: LyricSheet

    init(session: PlaybackSession, endTick: Int64) {
        self.session = session
        tempoMap = session.sequence.makeTempoMap()
        totalSeconds = tempoMap.seconds(atTick: endTick)
        lyrics = LyricSheet(Lyrics.events(in: session.sequence))
    }

    func text() -> String {
        guard let position = session.position else { return "" }
        let bpm = tempoMap.bpm(atTick: position.tick)
        let state = position.isPlaying ? ">" : "||"
        var line = String(format: "%@ %4lld:%-2lld  %6.1f BPM  %@ / %@  rate %.2f  xruns %d",
                          state, position.barBeatTick.bar, position.barBeatTick.beat, bpm,
                          formatDuration(position.seconds), formatDuration(totalSeconds), position.rate, position.underruns)
        if let sung = lyrics.line(atTick: position.tick) { line += "  \u{266A} " + sung.line.text }
        // A line longer than the terminal would wrap, and the next redraw would not replace it.
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 1, line.count >= Int(size.ws_col) {
            line = String(line.prefix(Int(size.ws_col) - 1))
        }
        return line
    }
}

/// A key the player reacts to.
enum PlayerKey: Equatable {
    case space, left, right, plus, minus, quit
}

/// The terminal in a mode that delivers keys without Enter and without echo, restored on
/// every exit path (normal end, q, Ctrl-C, errors).
final class TerminalSession {
    let enabled: Bool
    private var saved = termios()
    private var restored = false
    private var pending: [UInt8] = []

    init(enabled: Bool) {
        self.enabled = enabled
        guard enabled else { return }
        tcgetattr(STDIN_FILENO, &saved)
        var raw = saved
        // Keep ISIG, so Ctrl-C still raises SIGINT and stops with all notes off.
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        FileHandle.standardError.write(Data("\u{1B}[?25l".utf8)) // hide the cursor
    }

    deinit { restore() }

    /// Puts the terminal back as it was (idempotent).
    func restore() {
        guard enabled, !restored else { return }
        restored = true
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        FileHandle.standardError.write(Data("\u{1B}[?25h".utf8))
    }

    /// The next key pressed, if any (never blocks).
    func readKey() -> PlayerKey? {
        var byte: UInt8 = 0
        while read(STDIN_FILENO, &byte, 1) == 1 { pending.append(byte) }
        while !pending.isEmpty {
            let first = pending.removeFirst()
            switch first {
            case 0x20: return .space
            case UInt8(ascii: "+"), UInt8(ascii: "="): return .plus
            case UInt8(ascii: "-"), UInt8(ascii: "_"): return .minus
            case UInt8(ascii: "q"), UInt8(ascii: "Q"): return .quit
            case 0x1B where pending.count >= 2 && pending[0] == UInt8(ascii: "["):
                let code = pending[1]
                pending.removeFirst(2)
                if code == UInt8(ascii: "D") { return .left }
                if code == UInt8(ascii: "C") { return .right }
            default: continue
            }
        }
        return nil
    }

    /// Redraws the status line in place.
    func draw(_ line: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
    }

    /// Leaves the last status on its own line.
    func finish(_ line: String) {
        guard enabled, !restored else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)\n".utf8))
    }
}

extension Tactus {
    /// Rewrites a bare `--loop` (no count after it) to `--loop forever`, since the argument
    /// parser has no options with an optional value.
    static func expandingBareLoop(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var i = 0
        while i < arguments.count {
            result.append(arguments[i])
            if arguments[i] == "--loop" {
                let next = i + 1 < arguments.count ? arguments[i + 1] : nil
                if next == nil || Int(next!) == nil && next != TransportOptions.foreverSpelling {
                    result.append(TransportOptions.foreverSpelling)
                }
            }
            i += 1
        }
        return result
    }
}
