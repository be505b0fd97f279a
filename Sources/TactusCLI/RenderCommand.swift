import ArgumentParser
import AudioFileOutput
import AudioGraph
import Foundation
import MIDIFile
import Playback
import Sequencing
import Synchronization

/// The signal that interrupted a render (0 while none did), set by the signal handler; the
/// session's preparation and the render loop poll it.
let renderSignal = Atomic<Int32>(0)

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render MIDI files to WAV, FLAC or Ogg, one file or whole folders, as fast as the CPU allows.",
        discussion: """
        The tracks play through a SoundFont sampler when a bank is found (--soundfont, then \
        $TACTUS_SOUNDFONT, then the standard paths), else through the built-in synthesizer; \
        --instrument builtin forces the built-in one.

        One file: tactus render IN.mid -o OUT.wav (or .flac, .ogg, .opus; - for standard output). \
        Several files, folders (searched recursively) or --input-list: -o names a folder whose \
        layout mirrors the inputs, rendered --jobs at a time, resumably, with a manifest. \
        Batch exit codes: 0 all done, 65 some inputs failed (see the manifest), 64 usage, \
        66 an input named on the command line is missing, 69 a library or bank is missing, \
        73 the output folder or manifest cannot be written, 143 stopped by SIGTERM and 130 by \
        Ctrl-C (the manifest flushed, no partial output; a rerun resumes).

        Training data (one file): --stems DIR writes one file per track (--stems-by class: \
        per General MIDI program family, and drums) beside the mix, in its format and exactly \
        as long; through a SoundFont the stems add up to the mix (float rounding in f32, \
        with or without --no-reverb --no-chorus; each file rounded in s16/s24; not with the \
        built-in synthesizer, nor past the voice limit or when the limiter acts). --labels FILE.json lists every note with its \
        onset and offset frame (the frame the engine starts and releases it on) and seconds. \
        A stems folder that is a file or cannot be written exits 73; if any output fails, the \
        ones this run wrote are removed. --augment SPEC --seed N varies each file (one or a \
        batch) reproducibly: transposition, tempo, velocity curve, gain; the draw is printed, \
        recorded in the labels and the manifest, and renders the same when given back as SPEC.
        """
    )

    static let sampleRates = [44_100, 48_000, 96_000]

    @Argument(help: "MIDI files or folders (several, a folder or --input-list render a batch).")
    var files: [String] = []

    @Option(name: [.short, .customLong("output")],
            help: "The output file (- for standard output), or the output folder of a batch.")
    var output: String

    @Option(name: .customLong("sample-rate"), help: "Frames per second: 44100, 48000 or 96000.")
    var sampleRate: String = "44100"

    @Option(help: "Output format, comma-separated: wav, flac, ogg or opus (else from the extension) and s16, s24 or f32.")
    var format: String?

    @Option(name: .customLong("block-size"), help: "Frames per render call (1...65536); the output does not depend on it.")
    var blockSize: Int = 512

    // Unconditional, so `--gain -6` reads -6 as the value rather than as an unknown flag.
    @Option(parsing: .unconditional, help: "Gain in dB before the limiter (-24...24).")
    var gain: Float = 0

    @Option(help: "After the last event: 'auto' (until the sound is below -90 dBFS, at most 30 s) or seconds.")
    var tail: String = "auto"

    @Flag(help: "Write one channel (the average of left and right).")
    var mono = false

    @OptionGroup var dataset: DatasetOptions

    @OptionGroup var batch: BatchOptions

    @OptionGroup var instrumentOptions: InstrumentOptions

    @OptionGroup var transport: TransportOptions

    @OptionGroup var input: InputOptions

    /// True when the arguments ask for a batch rather than one file.
    var isBatch: Bool {
        if files.count != 1 || batch.inputList != nil || output.hasSuffix("/") { return true }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: files[0], isDirectory: &isDirectory), isDirectory.boolValue { return true }
        return batch.isUsed
    }

    func run() throws {
        // Check every option before reading or creating anything, so a usage error never
        // leaves a file behind.
        if !isBatch { try refuseInputAsOutput(output, inputs: [files[0], instrumentOptions.soundFont, instrumentOptions.instrument] + instrumentOptions.tuningInputs) }
        guard let rate = Int(sampleRate), Self.sampleRates.contains(rate) else {
            printError("\(output): unsupported sample rate '\(sampleRate)' (use 44100, 48000 or 96000)")
            throw ExitCode(ExitStatus.usage)
        }
        let audioFormat: AudioFileFormat
        do {
            audioFormat = try AudioFileFormat.resolve(spec: format, outputPath: isBatch ? nil : output)
        } catch {
            printError("\(output): \(error)")
            throw ExitCode(ExitStatus.usage)
        }
        guard OfflineBackend.blockSizes.contains(blockSize) else {
            printError("\(output): block size \(blockSize) is outside 1...65536")
            throw ExitCode(ExitStatus.usage)
        }
        guard (-24...24).contains(gain) else {
            printError("\(output): gain \(gain) dB is outside -24...24")
            throw ExitCode(ExitStatus.usage)
        }
        let renderTail: RenderTail
        if tail == "auto" {
            renderTail = .automatic
        } else if let seconds = Double(tail), seconds >= 0, seconds <= 600 {
            renderTail = .seconds(seconds)
        } else {
            printError("\(output): tail '\(tail)' is not 'auto' or seconds in 0...600")
            throw ExitCode(ExitStatus.usage)
        }
        if audioFormat.needsSndFile {
            do {
                try SndFileLibrary.load()
            } catch {
                printError("\(output): \(error)")
                throw ExitCode(ExitStatus.unavailable)
            }
        }
        var settings = RenderSettings(sampleRate: rate, audioFormat: audioFormat, blockSize: blockSize, gainDecibels: gain,
                                      tail: renderTail, mono: mono, quiet: input.quiet)
        if isBatch {
            try runBatch(settings: settings)
            return
        }
        let file = files[0]
        let augmentation = try dataset.augmentation(output: output, instrument: instrumentOptions)
        try instrumentOptions.validate(file: file)
        let smf = try loadTimedMIDIFile(file, options: input, purpose: "rendered")
        var sequence = smf.makeSequence()
        let plan = try transport.plan(for: &sequence, file: file)
        if plan.isEndless {
            printError("\(file): a render needs an end; give --loop a count")
            throw ExitCode(ExitStatus.usage)
        }
        try dataset.check(output: output, inputs: [file, instrumentOptions.soundFont, instrumentOptions.instrument] + instrumentOptions.tuningInputs,
                          transport: plan, instrument: instrumentOptions)
        // Keyed by the file's name: a batch of its folder draws the same for it.
        let draw = augmentation?.draw(seed: dataset.seed, key: URL(fileURLWithPath: file).lastPathComponent)
        if let draw {
            sequence = sequence.augmented(by: draw)
            settings.gainDecibels = draw.gain(addedTo: settings.gainDecibels)
        }
        settings.instrument = try instrumentOptions.choose(input: input, song: file)
        settings.instrument.instrument = settings.instrument.instrument.applyingEffectFactors(of: draw)
        guard dataset.isUsed else {
            var report = OutputBuffer()
            // What was drawn, even with --quiet: it is what re-renders this output.
            if let draw {
                let line = "\(output): augmented with \(draw)"
                if OutputDestination.isStandardOutput(output) { printError(line) } else { report.line(line) }
            }
            try renderToFile(sequence, source: file, output: output, settings: settings, transport: plan, report: &report)
            try report.finish()
            return
        }
        try renderDataset(sequence, source: file, output: output, settings: settings, transport: plan,
                          options: dataset, instrumentOptions: instrumentOptions, input: input, augmentation: draw)
    }
}

/// How to render: what `tactus render` and WAV export share.
struct RenderSettings {
    var sampleRate = 44_100
    var audioFormat = AudioFileFormat.wav(.s16)
    var blockSize = 512
    var gainDecibels: Float = 0
    /// `tactus render` defaults to ``RenderTail/automatic``; WAV export from `edit` keeps 2 s.
    var tail = RenderTail.seconds(2)
    var mono = false
    var quiet = false
    var instrument = InstrumentChoice(instrument: .builtIn, description: "built-in synthesizer")
}

/// Renders `sequence` with the default graph to an audio file at `output`: written to a
/// temporary file and renamed at the end, so an interrupted or failed render leaves nothing
/// (a device or FIFO is written in place, `-` is standard output). Adds the duration, peak
/// level and speed to `report` (or prints them to standard error when the audio goes to
/// standard output): the caller finishes the report once every file is written, so a summary
/// that cannot be printed never stops the files after it.
/// Playback goes through a ``PlaybackSession`` on an ``OfflineBackend`` with the transport
/// `plan` (rate, from, to, loop): the same session and engine path as `tactus play`.
@discardableResult
func renderToFile(_ sequence: MusicSequence, source: String, output: String, settings: RenderSettings,
                  transport plan: TransportPlan = TransportPlan(), report: inout OutputBuffer) throws -> RenderedAudio {
    try settings.instrument.prepareSamples(for: sequence)

    // From the temporary file's creation on, a signal must remove it: it is noted, and the
    // preparation and the render loop stop on it (before, the default action ends the process
    // with nothing to clean up). Noted from just before the file exists, so no signal falls
    // between the two.
    for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
        signal(signalNumber) { number in renderSignal.store(number, ordering: .relaxed) }
    }
    let writer: any AudioSink
    do {
        writer = try settings.audioFormat.makeWriter(path: output, sampleRate: settings.sampleRate,
                                                     channelCount: settings.mono ? 1 : 2)
    } catch {
        printError("\(error)")
        throw ExitCode(ExitStatus.cannotCreate)
    }
    let early = renderSignal.load(ordering: .relaxed)
    if early != 0 {
        writer.cancel()
        printError("\(output): interrupted; nothing written")
        throw ExitCode(128 + early)
    }
    let progress = RenderProgress(plan: plan, tail: settings.tail, sampleRate: settings.sampleRate)
    let session: PlaybackSession
    do {
        var options = PlaybackSession.Options(gainDecibels: settings.gainDecibels, tail: settings.tail, sampleRate: settings.sampleRate)
        options.shouldCancelPreparation = { renderSignal.load(ordering: .relaxed) != 0 }
        session = try settings.instrument.makeSession(sequence: sequence, options: options, observer: progress)
    } catch {
        writer.cancel()
        printError("\(source): \(error)")
        throw ExitCode(ExitStatus.dataError)
    }
    plan.apply(to: session)

    let showProgress = !settings.quiet && isatty(STDERR_FILENO) != 0
    let sink = ProgressSink(writer, progress: showProgress ? progress : nil)
    let backend = OfflineBackend(sink: sink, name: output, blockSize: settings.blockSize)
    let clock = ContinuousClock()
    let started = clock.now
    let summary: PlaybackSummary
    // Hosted plugins print debugging text with printf (MDA Piano does when it steals
    // voices): while one renders, standard output is standard error, so nothing but what
    // Tactus writes reaches it (the writer holds its own duplicate of the real one for -o -).
    let diversion = settings.instrument.allPlugins.isEmpty ? nil : StandardOutputDiversion()
    defer { diversion?.end() }
    do {
        try session.start(on: backend)
        summary = try session.waitUntilFinished()
        diversion?.end()
    } catch {
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        let interruption = renderSignal.load(ordering: .relaxed)
        if sink.wasInterrupted || (interruption != 0 && error == .cancelled) {
            printError("\(output): interrupted; nothing written")
            throw ExitCode(128 + interruption)
        }
        switch error {
        case .graph(let reason):
            printError("\(source): cannot build the audio graph: \(reason)")
            throw ExitCode(ExitStatus.dataError)
        case .missingNode:
            printError("\(source): \(error)")
            throw ExitCode(ExitStatus.dataError)
        case .backend(let failure) where failure.kind == .nonFiniteAudio:
            printError("\(output): the \(settings.instrument.description) made \(failure.reason)")
            throw ExitCode(ExitStatus.dataError)
        case .backend(let failure) where failure.kind == .cannotCreateOutput:
            printError("\(error)")
            throw ExitCode(ExitStatus.cannotCreate)
        default:
            printError("\(error)")
            throw ExitCode(ExitStatus.ioError)
        }
    }
    if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    // Lines a hosted plugin logged while rendering were held back from the render thread.
    settings.instrument.flushPluginLogs()
    let elapsed = clock.now - started
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    let statistics = RenderStatistics(frameCount: summary.framesPlayed, peak: backend.peak, sampleRate: settings.sampleRate)
    let peak = statistics.peak >= silenceCeiling(of: settings.audioFormat) && statistics.peak > 0 ? String(format: "%.2f dBFS", statistics.peakDecibels) : "silence"
    var speed = seconds > 0 ? String(format: "%.1fx real time", statistics.seconds / seconds) : "instant"
#if DEBUG
    // `swift run` builds for debugging, which renders the same samples many times slower.
    speed += ", a debug build; `swift build -c release` is the fast one"
#endif
    let encoding: String
    if case .wav(let sample) = settings.audioFormat { encoding = sample.rawValue } else { encoding = settings.audioFormat.description }
    let summaryLine = "\(output): \(formatDuration(statistics.seconds)) (\(String(format: "%.3f", statistics.seconds)) s) at \(settings.sampleRate) Hz \(encoding) \(settings.mono ? "mono" : "stereo"), peak \(peak), rendered in \(String(format: "%.2f", seconds)) s (\(speed)) with the \(settings.instrument.description)"
    // With the audio on standard output, the summary must not mix into it.
    if OutputDestination.isStandardOutput(output) { printError(summaryLine) } else { report.line(summaryLine) }
    return RenderedAudio(frameCount: summary.framesPlayed, endFrame: progress.player?.endOutputFrame ?? summary.framesPlayed)
}

/// What a render wrote: its length, and the output frame at which the music (before the tail)
/// ended, which stems need to be as long.
struct RenderedAudio {
    var frameCount: Int64
    var endFrame: Int64
}

/// The progress bar's total, learned from the session's player before the render starts.
final class RenderProgress: PlaybackSessionObserver, @unchecked Sendable {
    let plan: TransportPlan
    let tailFrames: Int64
    // Written before the backend starts, read by its render thread after: the thread's
    // creation orders the two.
    var totalFrames: Int64 = 1
    /// The session's player, for the end frame once the render is over.
    var player: Player?

    init(plan: TransportPlan, tail: RenderTail, sampleRate: Int) {
        self.plan = plan
        // A tail until silence has no known length; the bar counts the music alone.
        if case .seconds(let seconds) = tail {
            tailFrames = Int64((seconds * Double(sampleRate)).rounded())
        } else {
            tailFrames = 0
        }
    }

    func sessionWillStartBackend(_ session: PlaybackSession, player: Player) {
        self.player = player
        let fromFrame = player.songFrame(atTick: plan.fromTick)
        let endFrame = plan.toTick.map { player.songFrame(atTick: $0) } ?? player.schedule.endFrame
        totalFrames = max(1, player.outputFrames(fromSongFrame: fromFrame, toSongFrame: endFrame) + tailFrames)
    }
}

/// The output file as the offline backend sees it: stops the render when the user interrupts
/// it (the backend then cancels the file) and draws the progress bar. Runs on the render thread.
final class ProgressSink: AudioSink {
    private let writer: any AudioSink
    private let progress: RenderProgress?
    private var written: Int64 = 0
    private var lastDrawn = -1
    private(set) var wasInterrupted = false

    init(_ writer: any AudioSink, progress: RenderProgress?) {
        self.writer = writer
        self.progress = progress
    }

    func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(AudioSinkError) {
        if renderSignal.load(ordering: .relaxed) != 0 {
            wasInterrupted = true
            // What ended the render is `wasInterrupted`; the error only stops it.
            throw .failed(output: "the render", reason: "interrupted")
        }
        try writer.write(left: left, right: right, count: count)
        written += Int64(count)
        guard let progress else { return }
        let percent = Int(min(100, written * 100 / progress.totalFrames))
        if percent != lastDrawn {
            lastDrawn = percent
            let filled = percent * 30 / 100
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
            FileHandle.standardError.write(Data("\r[\(bar)] \(percent)%".utf8))
        }
    }

    func finish() throws(AudioSinkError) { try writer.finish() }

    func cancel() { writer.cancel() }
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
}

/// The largest peak an output format writes as all zeros: below half an integer encoding's
/// step, every sample rounds to 0. The built-in synthesizer's reverb keeps a 1e-20 offset
/// against denormals, so a song that plays nothing would otherwise report "-376 dBFS" for a
/// file of zeros. Float and lossy encodings keep what they are given, so any non-zero peak
/// counts there.
func silenceCeiling(of format: AudioFileFormat) -> Float {
    let fullScale: Float
    switch format {
    case .wav(.s16), .flac(bitsPerSample: 16): fullScale = 32_767
    case .wav(.s24), .flac(bitsPerSample: 24): fullScale = 8_388_607
    default: return 0
    }
    // Samples are rounded half away from zero after scaling by the full-scale value.
    return 0.5 / fullScale
}

/// Points the process's standard output at standard error until ``end()``.
final class StandardOutputDiversion {
    private var saved: Int32

    init() {
        fflush(nil)
        saved = dup(STDOUT_FILENO)
        if saved >= 0 { dup2(STDERR_FILENO, STDOUT_FILENO) }
    }

    /// Flushes what was printed meanwhile (to standard error) and restores standard output;
    /// later calls do nothing.
    func end() {
        guard saved >= 0 else { return }
        // fflush(nil) flushes every stream, standard output's included (naming `stdout`
        // is a reference to a mutable C global, which strict concurrency refuses).
        fflush(nil)
        dup2(saved, STDOUT_FILENO)
        close(saved)
        saved = -1
    }
}
