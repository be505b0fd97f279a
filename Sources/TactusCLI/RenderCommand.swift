import ArgumentParser
import AudioGraph
import Foundation
import MIDIFile
import Playback
import Sequencing
import Synchronization

/// Set by the signal handler when the user interrupts a render; the render loop polls it.
private let renderInterrupted = Atomic<Bool>(false)

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a MIDI file to a WAV file, as fast as the CPU allows.",
        discussion: """
        The tracks play through a SoundFont sampler when a bank is found (--soundfont, then \
        $TACTUS_SOUNDFONT, then the standard paths), else through the built-in synthesizer; \
        --instrument builtin forces the built-in one.
        """
    )

    static let sampleRates = [44_100, 48_000, 96_000]

    @Argument(help: "The MIDI file.")
    var file: String

    @Option(name: [.short, .customLong("output")], help: "The WAV file to write.")
    var output: String

    @Option(name: .customLong("sample-rate"), help: "Frames per second: 44100, 48000 or 96000.")
    var sampleRate: String = "44100"

    @Option(help: "Sample format: s16, s24 or f32.")
    var format: String = "s16"

    @Option(name: .customLong("block-size"), help: "Frames per render call (1...65536); the output does not depend on it.")
    var blockSize: Int = 512

    @Option(help: "Gain in dB before the limiter (-24...24).")
    var gain: Float = 0

    @Option(help: "Seconds rendered after the last event, for releases and reverb.")
    var tail: Double = 2

    @Flag(help: "Write one channel (the average of left and right).")
    var mono = false

    @OptionGroup var instrumentOptions: InstrumentOptions

    @OptionGroup var transport: TransportOptions

    @OptionGroup var input: InputOptions

    func run() throws {
        // Check every option before reading or creating anything, so a usage error never
        // leaves a file behind.
        guard let rate = Int(sampleRate), Self.sampleRates.contains(rate) else {
            printError("\(output): unsupported sample rate '\(sampleRate)' (use 44100, 48000 or 96000)")
            throw ExitCode(ExitStatus.usage)
        }
        guard let sampleFormat = WAVSampleFormat(rawValue: format) else {
            printError("\(output): unknown sample format '\(format)' (use s16, s24 or f32)")
            throw ExitCode(ExitStatus.usage)
        }
        guard (1...65_536).contains(blockSize) else {
            printError("\(output): block size \(blockSize) is outside 1...65536")
            throw ExitCode(ExitStatus.usage)
        }
        guard (-24...24).contains(gain) else {
            printError("\(output): gain \(gain) dB is outside -24...24")
            throw ExitCode(ExitStatus.usage)
        }
        guard tail >= 0, tail <= 600 else {
            printError("\(output): tail \(tail) s is outside 0...600")
            throw ExitCode(ExitStatus.usage)
        }
        try instrumentOptions.validate(file: file)
        let smf = try loadTimedMIDIFile(file, options: input, purpose: "rendered")
        var sequence = smf.makeSequence()
        let plan = try transport.plan(for: &sequence, file: file)
        if plan.isEndless {
            printError("\(file): a render needs an end; give --loop a count")
            throw ExitCode(ExitStatus.usage)
        }
        let choice = try instrumentOptions.choose(input: input)
        let settings = RenderSettings(sampleRate: rate, format: sampleFormat, blockSize: blockSize, gainDecibels: gain,
                                      tailSeconds: tail, mono: mono, quiet: input.quiet, instrument: choice)
        try renderToWAV(sequence, source: file, output: output, settings: settings, transport: plan)
    }
}

/// How to render: what `tactus render` and WAV export share.
struct RenderSettings {
    var sampleRate = 44_100
    var format = WAVSampleFormat.s16
    var blockSize = 512
    var gainDecibels: Float = 0
    var tailSeconds = 2.0
    var mono = false
    var quiet = false
    var instrument = InstrumentChoice(instrument: .builtIn, description: "built-in synthesizer")
}

/// Renders `sequence` with the default graph to a WAV file at `output` through a playback
/// session on an offline backend: written to a temporary file and renamed at the end, so an
/// interrupted or failed render leaves nothing. Prints the duration, peak level and speed.
/// The transport `plan` (rate, from, to, loop) applies as in `tactus play`: the same session,
/// the same engine path.
func renderToWAV(_ sequence: MusicSequence, source: String, output: String, settings: RenderSettings,
                 transport plan: TransportPlan = TransportPlan()) throws {
    try settings.instrument.prepareSamples(for: sequence)

    let options = PlaybackSession.Options(instrument: .custom(settings.instrument.instrument), gainDecibels: settings.gainDecibels,
                                          tailSeconds: settings.tailSeconds, sampleRate: settings.sampleRate)
    // A custom instrument needs no file, so creating the session cannot fail.
    let session = try! PlaybackSession(sequence: sequence, options: options)
    plan.apply(to: session)
    let backend = OfflineBackend(destination: .wavFile(path: output, format: settings.format, channelCount: settings.mono ? 1 : 2),
                                 blockSize: settings.blockSize)

    for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
        signal(signalNumber) { _ in renderInterrupted.store(true, ordering: .relaxed) }
    }
    let clock = ContinuousClock()
    let started = clock.now
    do {
        try session.start(on: backend)
    } catch {
        switch error {
        case .graph(let reason):
            printError("\(source): cannot build the audio graph: \(reason)")
            throw ExitCode(ExitStatus.dataError)
        case .backend(let failure) where failure.kind == .cannotCreateOutput:
            printError(failure.description)
            throw ExitCode(ExitStatus.cannotCreate)
        default:
            printError(error.description)
            throw ExitCode(ExitStatus.ioError)
        }
    }
    let showProgress = !settings.quiet && isatty(STDERR_FILENO) != 0
    var lastDrawn = -1
    var interrupted = false
    while session.outcome == nil {
        if renderInterrupted.load(ordering: .relaxed) && !interrupted {
            interrupted = true
            session.stop(drain: false)
        }
        if showProgress, let total = plan.expectedFrames(of: session, settings: settings) {
            let percent = Int(min(100, backend.framesConsumed * 100 / max(1, total)))
            if percent != lastDrawn {
                lastDrawn = percent
                let filled = percent * 30 / 100
                let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
                FileHandle.standardError.write(Data("\r[\(bar)] \(percent)%".utf8))
            }
        }
        usleep(10_000)
    }
    if showProgress { FileHandle.standardError.write(Data(lastDrawn >= 0 && !interrupted ? "\r\u{1B}[K".utf8 : "\n".utf8)) }
    let summary: PlaybackSummary
    switch session.outcome! {
    case .failure(let error):
        printError(error.description)
        throw ExitCode(ExitStatus.ioError)
    case .success(let result):
        if interrupted || result.ending == .stopped {
            printError("\(output): interrupted; nothing written")
            throw ExitCode(130)
        }
        summary = result
    }
    let elapsed = clock.now - started
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    let peak = backend.peak > 0 ? String(format: "%.2f dBFS", gainToDecibels(backend.peak)) : "silence"
    let speed = seconds > 0 ? String(format: "%.1fx real time", summary.seconds / seconds) : "instant"
    print("\(output): \(formatDuration(summary.seconds)) (\(String(format: "%.3f", summary.seconds)) s) at \(settings.sampleRate) Hz \(settings.format.rawValue) \(settings.mono ? "mono" : "stereo"), peak \(peak), rendered in \(String(format: "%.2f", seconds)) s (\(speed)) with the \(settings.instrument.description)")
}

extension TransportPlan {
    /// Sets up `session` for this plan: rate, end, loop and start position.
    func apply(to session: PlaybackSession) {
        session.setRate(rate)
        session.setEnd(tick: toTick)
        if let loop { session.setLoop(fromTick: fromTick, toTick: toTick, count: loop) }
        // A fresh session starts at tick 0 with instruments in their initial state.
        if fromTick > 0 { session.locate(toTick: fromTick) }
    }

    /// Frames a render of this plan writes, for the progress bar (nil for an endless loop).
    func expectedFrames(of session: PlaybackSession, settings: RenderSettings) -> Int64? {
        guard !isEndless else { return nil }
        let tempo = session.sequence.makeTempoMap()
        let from = tempo.frame(atTick: fromTick, sampleRate: settings.sampleRate)
        let to = tempo.frame(atTick: toTick ?? session.sequence.length, sampleRate: settings.sampleRate)
        var passes = 1.0
        if case .times(let n) = loop { passes = Double(n) }
        return Int64(Double(to - from) * passes / rate) + Int64((settings.tailSeconds * Double(settings.sampleRate)).rounded())
    }
}
