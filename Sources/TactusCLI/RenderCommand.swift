import ArgumentParser
import AudioFileOutput
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

    @Option(help: "Gain in dB before the limiter (-24...24).")
    var gain: Float = 0

    @Option(help: "After the last event: 'auto' (until the sound is below -90 dBFS, at most 30 s) or seconds.")
    var tail: String = "auto"

    @Flag(help: "Write one channel (the average of left and right).")
    var mono = false

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
        guard (1...65_536).contains(blockSize) else {
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
        try instrumentOptions.validate(file: file)
        let smf = try loadTimedMIDIFile(file, options: input, purpose: "rendered")
        var sequence = smf.makeSequence()
        let plan = try transport.plan(for: &sequence, file: file)
        if plan.isEndless {
            printError("\(file): a render needs an end; give --loop a count")
            throw ExitCode(ExitStatus.usage)
        }
        settings.instrument = try instrumentOptions.choose(input: input)
        try renderToFile(sequence, source: file, output: output, settings: settings, transport: plan)
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
/// (a device or FIFO is written in place, `-` is standard output). Prints the duration, peak
/// level and speed (to standard error when the audio goes to standard output).
/// Playback goes through a ``Player`` with the transport `plan` (rate, from, to, loop), the
/// same engine path as `tactus play`.
func renderToFile(_ sequence: MusicSequence, source: String, output: String, settings: RenderSettings,
                  transport plan: TransportPlan = TransportPlan()) throws {
    try settings.instrument.prepareSamples(for: sequence)

    let writer: any AudioSink
    do {
        writer = try settings.audioFormat.makeWriter(path: output, sampleRate: settings.sampleRate,
                                                     channelCount: settings.mono ? 1 : 2)
    } catch {
        printError("\(error)")
        throw ExitCode(ExitStatus.cannotCreate)
    }
    let player: Player
    do {
        player = try Player.makeDefault(sequence: sequence, sampleRate: settings.sampleRate,
                                        maximumFrameCount: min(settings.blockSize, 4096), gainDecibels: settings.gainDecibels,
                                        instrument: settings.instrument.instrument)
    } catch {
        writer.cancel()
        printError("\(source): cannot build the audio graph: \(error)")
        throw ExitCode(ExitStatus.dataError)
    }
    plan.apply(to: player)

    for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
        signal(signalNumber) { _ in renderInterrupted.store(true, ordering: .relaxed) }
    }
    let showProgress = !settings.quiet && isatty(STDERR_FILENO) != 0
    let fromFrame = player.songFrame(atTick: plan.fromTick)
    let endFrame = plan.toTick.map { player.songFrame(atTick: $0) } ?? player.schedule.endFrame
    var tailSeconds = 0.0
    if case .seconds(let seconds) = settings.tail { tailSeconds = seconds }
    let total = max(1, player.outputFrames(fromSongFrame: fromFrame, toSongFrame: endFrame)
                    + Int64((tailSeconds * Double(settings.sampleRate)).rounded()))
    var written: Int64 = 0
    var lastDrawn = -1
    let clock = ContinuousClock()
    let started = clock.now
    let statistics: RenderStatistics
    do {
        statistics = try player.renderToEnd(blockSize: settings.blockSize, tail: settings.tail,
                                            shouldContinue: { !renderInterrupted.load(ordering: .relaxed) }) { left, right, count in
            try writer.write(left: left, right: right, count: count)
            written += Int64(count)
            if showProgress {
                let percent = Int(min(100, written * 100 / total))
                if percent != lastDrawn {
                    lastDrawn = percent
                    let filled = percent * 30 / 100
                    let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
                    FileHandle.standardError.write(Data("\r[\(bar)] \(percent)%".utf8))
                }
            }
        }
        try writer.finish()
    } catch is RenderCancelled {
        writer.cancel()
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        printError("\(output): interrupted; nothing written")
        throw ExitCode(130)
    } catch {
        writer.cancel()
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        printError("\(error)")
        throw ExitCode(ExitStatus.ioError)
    }
    if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    let elapsed = clock.now - started
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    let peak = statistics.peak > 0 ? String(format: "%.2f dBFS", statistics.peakDecibels) : "silence"
    let speed = seconds > 0 ? String(format: "%.1fx real time", statistics.seconds / seconds) : "instant"
    let encoding: String
    if case .wav(let sample) = settings.audioFormat { encoding = sample.rawValue } else { encoding = settings.audioFormat.description }
    let summary = "\(output): \(formatDuration(statistics.seconds)) (\(String(format: "%.3f", statistics.seconds)) s) at \(settings.sampleRate) Hz \(encoding) \(settings.mono ? "mono" : "stereo"), peak \(peak), rendered in \(String(format: "%.2f", seconds)) s (\(speed)) with the \(settings.instrument.description)"
    // With the audio on standard output, the summary must not mix into it.
    if output == OutputFile.standardOutputPath { printError(summary) } else { print(summary) }
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

    /// Sets up `player` for this plan (offline renders drive a player directly): rate, end,
    /// loop and start position.
    func apply(to player: Player) {
        player.playRate = rate
        player.setEnd(tick: toTick)
        if let loop {
            player.setLoop(from: fromTick, to: toTick ?? player.schedule.endTick, count: loop)
        }
        // A fresh player is already at tick 0 with instruments in their initial state.
        if fromTick > 0 { player.locate(toTick: fromTick) }
    }
}
