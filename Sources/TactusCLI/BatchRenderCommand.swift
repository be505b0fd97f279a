import ArgumentParser
import AudioFileOutput
import BatchRender
import Foundation
import Playback

/// Shared with the signal handlers of a batch render.
private let batchStop = BatchStopRequest()
/// The signal that stopped the batch (SIGTERM or SIGINT), for the exit code.
nonisolated(unsafe) private var batchStopSignal: Int32 = 0

/// Options of `tactus render` for many files.
struct BatchOptions: ParsableArguments {
    @Option(name: .customLong("input-list"), help: ArgumentHelp("Also render the files listed one per line in FILE (- for standard input).", valueName: "FILE"))
    var inputList: String?

    @Option(help: "Files rendered at once (default: every core).")
    var jobs: Int?

    @Option(help: ArgumentHelp("Render only shard I of N (0-based), chosen by a hash of each input's relative path; 'auto' reads Slurm's array variables, 'auto/N' Kubernetes' JOB_COMPLETION_INDEX.", valueName: "I/N|auto|auto/N"))
    var shard: String?

    @Flag(name: .customLong("dry-run"), help: "Print what each input of the shard would do, render nothing.")
    var dryRun = false

    @Flag(help: "Render again inputs whose output exists.")
    var overwrite = false

    @Flag(name: .customLong("retry-failed"), help: "Render again inputs an earlier run recorded as failed, timed out, too long or crashed.")
    var retryFailed = false

    @Option(help: ArgumentHelp("Give up on a file after this many seconds of wall-clock time.", valueName: "SECONDS"))
    var timeout: Double?

    @Option(name: .customLong("max-duration"), help: ArgumentHelp("Give up on a file whose audio would pass this many seconds.", valueName: "SECONDS"))
    var maxDuration: Double?

    @Option(name: .customLong("max-failures"), help: ArgumentHelp("Start no further file after this many failures.", valueName: "N"))
    var maxFailures: Int?

    @Option(help: ArgumentHelp("The manifest (JSON Lines; default tactus-manifest[-shard-I-of-N].jsonl in the output folder).", valueName: "FILE"))
    var manifest: String?

    /// True when an option only a batch takes is given.
    var isUsed: Bool {
        jobs != nil || shard != nil || dryRun || overwrite || retryFailed || timeout != nil || maxDuration != nil
            || maxFailures != nil || manifest != nil
    }
}

extension RenderCommand {
    /// Renders a batch: gathers the inputs, picks the shard, plans against earlier manifests,
    /// renders with a progress line on a terminal, and exits with the batch's documented code.
    func runBatch(settings: RenderSettings) throws {
        func usage(_ message: String) -> ExitCode {
            printError("\(output): \(message)")
            return ExitCode(ExitStatus.usage)
        }
        if transport.rate != 1 || transport.from != nil || transport.to != nil || transport.loop != nil || transport.mute != nil
            || transport.solo != nil || transport.transpose != 0 {
            throw usage("the transport options (--rate, --from, --to, --loop, --mute, --solo, --transpose) render one file at a time")
        }
        if output == OutputFile.standardOutputPath { throw usage("a batch writes to a folder, not to standard output") }
        if let jobs = batch.jobs, !(1...1024).contains(jobs) { throw usage("--jobs \(jobs) is outside 1...1024") }
        // A day bounds both: the renderer turns them into frames and nanoseconds, where an
        // infinity or a huge count would overflow.
        let day = 86_400.0
        if let timeout = batch.timeout, !(timeout > 0 && timeout <= day) {
            throw usage("--timeout \(timeout) is outside the accepted range: more than 0 and at most \(Int(day)) seconds")
        }
        if let maxDuration = batch.maxDuration, !(maxDuration > 0 && maxDuration <= day) {
            throw usage("--max-duration \(maxDuration) is outside the accepted range: more than 0 and at most \(Int(day)) seconds")
        }
        if let maxFailures = batch.maxFailures, maxFailures < 1 { throw usage("--max-failures must be 1 or more") }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw usage("a batch needs an output folder, and this is a file")
        }
        if files.isEmpty && batch.inputList == nil { throw usage("no input files: name files or folders, or give --input-list") }
        let shard: Shard
        do {
            shard = try batch.shard.map { try Shard.parse($0, environment: ProcessInfo.processInfo.environment) } ?? .whole
        } catch {
            throw usage("\(error)")
        }
        try instrumentOptions.validate(file: output)
        let layout = try dataset.batchLayout(output: output, instrument: instrumentOptions)

        let inputs: [BatchInput]
        var skipped: [SkippedInput] = []
        do {
            let listed = try batch.inputList.map { try BatchInputs.readList($0) } ?? []
            inputs = try BatchInputs.gather(arguments: files, listed: listed, skipped: &skipped)
        } catch {
            printError("\(error)")
            if let error = error as? BatchInputError, case .unreadable = error { throw ExitCode(ExitStatus.noInput) }
            throw ExitCode(ExitStatus.usage)
        }

        var batchSettings = BatchRenderSettings()
        batchSettings.sampleRate = settings.sampleRate
        batchSettings.blockSize = settings.blockSize
        batchSettings.gainDecibels = settings.gainDecibels
        batchSettings.tail = settings.tail
        batchSettings.mono = settings.mono
        batchSettings.format = settings.audioFormat
        batchSettings.strict = input.strict
        batchSettings.timeoutSeconds = batch.timeout
        batchSettings.maximumDurationSeconds = batch.maxDuration
        batchSettings.maximumFailures = batch.maxFailures
        batchSettings.jobs = batch.jobs ?? ProcessInfo.processInfo.activeProcessorCount
        batchSettings.overwrite = batch.overwrite
        batchSettings.retryFailed = batch.retryFailed
        batchSettings.dataset = layout
        batchSettings.augmentation = try dataset.augmentation(output: output, instrument: instrumentOptions)
        batchSettings.augmentationSeed = dataset.seed

        if instrumentOptions.usesLV2Plugins && !batch.dryRun {
            if BatchSupervisor.isWorker {
                BatchSupervisor.becomeWorker()
            } else {
                // Each crash marks the files in flight; a file in flight twice is skipped.
                throw ExitCode(BatchSupervisor.supervise(maximumRestarts: 2 * inputs.count + 1))
            }
        }
        let factory = try instrumentOptions.chooseFactory(input: input)
        let renderer = BatchRenderer(settings: batchSettings, outputFolder: output, shard: shard,
                                     version: Tactus.configuration.version, instrumentDescription: factory.description,
                                     makeInstrument: factory.makeInstrument, makeEffects: factory.makeEffects,
                                     makeChannelInstruments: factory.makeChannelInstruments)
        let manifestPath = batch.manifest ?? renderer.defaultManifestPath
        try refuseInputAsOutput(manifestPath, inputs: inputs.map(\.path) + [instrumentOptions.soundFont, instrumentOptions.instrument] + instrumentOptions.tuningInputs, what: "the manifest")
        let plan = renderer.plan(inputs, history: Manifest.read(manifestPath))

        if batch.dryRun {
            var out = OutputBuffer()
            for entry in plan {
                out.line("\(entry.action.rawValue)\t\(entry.input.path)\t\(entry.output)")
            }
            for passed in skipped { out.line("not taken\t\(passed.path)\t\(passed.reason.rawValue)") }
            let toRender = plan.filter { $0.action == .render }.count
            out.line("shard \(shard): \(plan.count) of \(inputs.count) inputs, \(toRender) to render")
            try out.finish()
            return
        }

        // What the folder searches passed over, named before the run so a log shows it.
        for passed in skipped.prefix(Self.skippedShown) { printError("tactus: warning: \(passed)") }
        if skipped.count > Self.skippedShown {
            printError("tactus: warning: \(skipped.count - Self.skippedShown) more paths skipped (--dry-run lists them all)")
        }
        do {
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        } catch {
            printError("\(output): cannot create the output folder: \(String(cString: strerror(errno)))")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        let manifest: Manifest
        do {
            manifest = try Manifest(path: manifestPath)
        } catch {
            printError("\(error)")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        // A parent may have started us with these blocked (the mask survives exec); a
        // scheduler's SIGTERM must still reach the handler. Threads started later inherit this.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&unblock, signalNumber) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber) { number in
                if batchStopSignal == 0 { batchStopSignal = number }
                batchStop.request()
            }
        }
        let showProgress = !input.quiet && isatty(STDERR_FILENO) != 0
        let summary: BatchSummary
        // Hosted plugins print with printf (MDA Piano when it steals voices): while they
        // render, standard output is standard error, so it carries only Tactus's summary.
        let diversion = instrumentOptions.usesLV2Plugins ? StandardOutputDiversion() : nil
        defer { diversion?.end() }
        do {
            summary = try renderer.run(plan, manifest: manifest, stop: batchStop) { progress in
                if showProgress { FileHandle.standardError.write(Data("\r\(Self.progressLine(progress))\u{1B}[K".utf8)) }
            }
            diversion?.end()
        } catch {
            if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
            printError("\(error)")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        let p = summary.progress
        let before = p.failedBefore > 0 ? " (\(p.failedBefore) failed before)" : ""
        let notTaken = skipped.isEmpty ? "" : ", \(skipped.count) path\(skipped.count == 1 ? "" : "s") not taken"
        let line = "\(output): \(p.done) of \(p.total) rendered (\(p.failed) failed), \(p.skipped) skipped\(before)\(notTaken), "
            + String(format: "%.2f h of audio in %.1f s; manifest %@", p.audioSeconds / 3600, p.elapsedSeconds, manifestPath)
        // A summary that cannot be printed comes after the batch's own outcome: a failed or
        // interrupted batch keeps its status.
        var report = OutputBuffer()
        if !input.quiet { report.line(line) }
        report.flush()
        if let reason = summary.environmentFailure {
            let left = p.total - p.done
            printError("\(output): stopped, an output could not be written: \(reason); \(left) file\(left == 1 ? "" : "s") left, which a rerun renders")
            throw ExitCode(ExitStatus.ioError)
        }
        if summary.wasInterrupted {
            printError("\(output): stopped by a signal; files in flight were abandoned, the manifest is complete, a rerun resumes")
            throw ExitCode(batchStopSignal == SIGINT ? 130 : ExitStatus.terminated)
        }
        if summary.reachedMaximumFailures {
            printError("\(output): stopped after \(p.failed) failures (--max-failures); see \(manifestPath)")
            throw ExitCode(ExitStatus.dataError)
        }
        if p.failed > 0 || p.failedBefore > 0 {
            // A rerun that skips earlier failures still ends without their outputs.
            var parts: [String] = []
            if p.failed > 0 { parts.append("\(p.failed) input\(p.failed == 1 ? "" : "s") failed") }
            if p.failedBefore > 0 {
                parts.append("\(p.failedBefore) failed in an earlier run and \(p.failedBefore == 1 ? "was" : "were") not retried (--retry-failed renders \(p.failedBefore == 1 ? "it" : "them") again)")
            }
            printError("\(output): \(parts.joined(separator: "; ")); see \(manifestPath)")
            throw ExitCode(ExitStatus.dataError)
        }
        try report.finish()
    }

    /// How many skipped paths are named one by one before the rest are counted.
    static let skippedShown = 20

    /// Files done and failed, hours of audio, speed against real time and the time left.
    static func progressLine(_ p: BatchProgress) -> String {
        let speed = p.elapsedSeconds > 0 ? p.audioSeconds / p.elapsedSeconds : 0
        let left = p.done > 0 ? p.elapsedSeconds / Double(p.done) * Double(p.total - p.done) : 0
        return "\(p.done)/\(p.total) files, \(p.failed) failed, " + String(format: "%.2f h audio, %.1fx real time, ", p.audioSeconds / 3600, speed)
            + formatDuration(left) + " left"
    }
}
