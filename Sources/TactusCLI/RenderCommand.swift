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

/// Renders `sequence` with the default graph to a WAV file at `output`: written to a
/// temporary file and renamed at the end, so an interrupted or failed render leaves nothing.
/// Prints the duration, peak level and speed.
/// Playback goes through a ``Player`` with the transport `plan` (rate, from, to, loop), the
/// same engine path as `tactus play`.
func renderToWAV(_ sequence: MusicSequence, source: String, output: String, settings: RenderSettings,
                 transport plan: TransportPlan = TransportPlan()) throws {
    try settings.instrument.prepareSamples(for: sequence)

    let writer: WAVWriter
    do {
        writer = try WAVWriter(path: output, sampleRate: settings.sampleRate, channelCount: settings.mono ? 1 : 2, format: settings.format)
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
    let total = max(1, player.outputFrames(fromSongFrame: fromFrame, toSongFrame: endFrame)
                    + Int64((settings.tailSeconds * Double(settings.sampleRate)).rounded()))
    var written: Int64 = 0
    var lastDrawn = -1
    let clock = ContinuousClock()
    let started = clock.now
    let statistics: RenderStatistics
    do {
        statistics = try player.renderToEnd(blockSize: settings.blockSize, tailSeconds: settings.tailSeconds,
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
    print("\(output): \(formatDuration(statistics.seconds)) (\(String(format: "%.3f", statistics.seconds)) s) at \(settings.sampleRate) Hz \(settings.format.rawValue) \(settings.mono ? "mono" : "stereo"), peak \(peak), rendered in \(String(format: "%.2f", seconds)) s (\(speed)) with the \(settings.instrument.description)")
}
