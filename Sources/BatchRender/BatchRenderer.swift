import AudioFileOutput
import AudioGraph
import Foundation
import MIDIFile
import Playback
import Sequencing
import Locking
import Synchronization

/// How every file of a batch is rendered; each output is what `tactus render IN -o OUT` with
/// the same options writes, byte for byte.
public struct BatchRenderSettings: Sendable {
    /// Frames per second.
    public var sampleRate = 44_100
    /// Frames per render call (the output does not depend on it).
    public var blockSize = 512
    /// Gain before the limiter.
    public var gainDecibels: Float = 0
    /// What plays after the song's end.
    public var tail = RenderTail.automatic
    /// One channel (the average of both).
    public var mono = false
    /// The output format.
    public var format = AudioFileFormat.wav(.s16)
    /// Any warning about an input makes it fail.
    public var strict = false
    /// Wall-clock seconds one file may take (nil: no limit; so is anything over
    /// ``largestLimitSeconds``, infinity or NaN, which the clock's arithmetic cannot hold).
    public var timeoutSeconds: Double?
    /// Seconds of audio one file may produce (nil: no limit, as for ``timeoutSeconds``): the
    /// guard against a runaway render.
    public var maximumDurationSeconds: Double?
    /// The largest limit the renderer applies: a year. Longer limits, infinity and NaN are
    /// treated as no limit rather than overflowing the durations and frame counts they become.
    public static let largestLimitSeconds = 365.0 * 86_400

    /// `seconds` when it is a limit the renderer can apply, else nil.
    static func applicableLimit(_ seconds: Double?) -> Double? {
        guard let seconds, seconds <= largestLimitSeconds else { return nil }
        return max(0, seconds)
    }
    /// After this many failures no further file is started (nil: no limit).
    public var maximumFailures: Int?
    /// Files rendered at once.
    public var jobs = 1
    /// Render again inputs whose output already exists.
    public var overwrite = false
    /// Render again inputs an earlier run recorded as failed, timed out, too long or crashed.
    public var retryFailed = false
    /// What to vary per file (nil: nothing), drawn from ``augmentationSeed`` and each input's
    /// relative path, so a shard draws what the whole batch would; the draw is in the record.
    public var augmentation: AugmentationSpec?
    /// The seed of ``augmentation``'s draws.
    public var augmentationSeed: UInt64 = 0
    /// Writes each input as a folder of training data (mix, stems, their MIDI, labels,
    /// metadata; see ``DatasetLayout``) instead of one audio file; nil: one audio file.
    public var dataset: DatasetLayout?

    /// The draw for `input` (nil without augmentation).
    func augmentationDraw(for input: BatchInput) -> AugmentationDraw? {
        augmentation.map { $0.draw(seed: augmentationSeed, key: input.relativePath) }
    }

    /// Creates the default settings.
    public init() {}
}

/// What a batch does with one input.
public enum BatchAction: String, Sendable {
    /// Render it.
    case render
    /// Its output exists: an earlier run completed it.
    case complete
    /// An earlier run recorded it as failed, timed out or too long (redo with `--retry-failed`).
    case failedBefore = "failed before"
    /// It was being rendered when the process died, twice: recorded as crashed and skipped.
    case crashed
}

/// One input of the shard with what will happen to it.
public struct BatchPlanEntry: Sendable {
    /// The input.
    public var input: BatchInput
    /// Its output path.
    public var output: String
    /// What the run does with it.
    public var action: BatchAction
    /// True when an earlier process died while rendering it: it is rendered alone, before the
    /// others, so a second death is blamed on it and nothing else.
    public var isSuspect: Bool
    /// True when the manifest already records it as crashed (so it is not recorded again).
    public var isRecordedAsCrashed = false
}

/// Counts reported after each file and at the end.
public struct BatchProgress: Sendable {
    /// Files to render in this run.
    public var total = 0
    /// Finished (any status).
    public var done = 0
    /// Failed, timed out, too long or crashed.
    public var failed = 0
    /// Skipped as complete or failed before.
    public var skipped = 0
    /// Skipped because an earlier run recorded them as failed, timed out or too long (they
    /// still have no output; `--retry-failed` renders them again).
    public var failedBefore = 0
    /// Seconds of audio written.
    public var audioSeconds = 0.0
    /// Wall-clock seconds since the run began.
    public var elapsedSeconds = 0.0
}

/// How a run ended.
public struct BatchSummary: Sendable {
    /// The final counts.
    public var progress: BatchProgress
    /// True when a stop was requested (SIGTERM) before every file was done.
    public var wasInterrupted = false
    /// True when `--max-failures` stopped the run.
    public var reachedMaximumFailures = false
    /// Why the run stopped early when an output could not be written for a reason outside its
    /// input (no space left, a read-only folder): every later file would fail the same way, so
    /// none is started, and the next run renders them all.
    public var environmentFailure: String?
}

/// A stop request shared with a signal handler.
public final class BatchStopRequest: Sendable {
    private let requested = Atomic<Bool>(false)
    /// Creates an unrequested stop.
    public init() {}
    /// Asks the run to stop: files in flight are abandoned (no output, temporaries removed,
    /// recorded as interrupted) and no new file starts. Safe from a signal handler.
    public func request() { requested.store(true, ordering: .relaxed) }
    /// True once requested.
    public var isRequested: Bool { requested.load(ordering: .relaxed) }
}

/// Renders a shard of a corpus on several threads, resumably, writing a manifest.
public final class BatchRenderer: Sendable {
    /// The settings.
    public let settings: BatchRenderSettings
    /// Where outputs go (the layout mirrors the inputs' relative paths).
    public let outputFolder: String
    /// Makes a fresh instrument for each file (a sampler keeps per-voice state).
    public let makeInstrument: @Sendable () throws -> DefaultInstrument
    /// Makes fresh effects for each file, chained after the instrument before the limiter
    /// (nodes with one input bus: hosted LV2 effects); none unless told.
    public let makeEffects: @Sendable () throws -> [any AudioNode]
    /// Makes fresh instruments for each file for the MIDI channels (0-15) that have their own
    /// (``PlaybackSession/Options/channelInstruments``); none unless told.
    public let makeChannelInstruments: @Sendable () throws -> [UInt8: any AudioNode]
    /// Describes the instrument in the manifest.
    public let instrumentDescription: String
    /// The Tactus version for the manifest.
    public let version: String
    /// The shard rendered.
    public let shard: Shard

    /// Creates a renderer.
    public init(settings: BatchRenderSettings, outputFolder: String, shard: Shard = .whole, version: String,
                instrumentDescription: String, makeInstrument: @escaping @Sendable () throws -> DefaultInstrument,
                makeEffects: @escaping @Sendable () throws -> [any AudioNode] = { [] },
                makeChannelInstruments: @escaping @Sendable () throws -> [UInt8: any AudioNode] = { [:] }) {
        self.settings = settings
        self.outputFolder = outputFolder
        self.shard = shard
        self.version = version
        self.instrumentDescription = instrumentDescription
        self.makeInstrument = makeInstrument
        self.makeEffects = makeEffects
        self.makeChannelInstruments = makeChannelInstruments
    }

    /// The manifest file of this shard inside the output folder.
    public var defaultManifestPath: String {
        let name = shard.count > 1 ? "tactus-manifest-shard-\(shard.index)-of-\(shard.count).jsonl" : "tactus-manifest.jsonl"
        return (outputFolder as NSString).appendingPathComponent(name)
    }

    /// Where `input`'s audio goes: its relative path with the format's extension, or with a
    /// dataset layout the mix inside a folder named by that path without its extension.
    public func outputPath(of input: BatchInput) -> String {
        let fileExtension = settings.format.fileExtension
        guard settings.dataset != nil else { return input.outputPath(in: outputFolder, fileExtension: fileExtension) }
        let folder = (input.outputPath(in: outputFolder, fileExtension: fileExtension) as NSString).deletingPathExtension
        return (folder as NSString).appendingPathComponent(DatasetLayout.mixName(fileExtension: fileExtension))
    }

    /// What a run would do with the inputs of this shard, given the records of earlier runs.
    public func plan(_ inputs: [BatchInput], history records: [ManifestRecord]) -> [BatchPlanEntry] {
        let history = Manifest.history(records)
        return inputs.filter { shard.contains($0) }.map { input in
            let output = outputPath(of: input)
            let past = history[input.relativePath]
            var action = BatchAction.render
            if !settings.overwrite, FileManager.default.fileExists(atPath: output) {
                action = .complete
            } else if let past, past.unfinishedStarts >= 2 || past.last == .crashed {
                action = settings.retryFailed ? .render : .crashed
            } else if let last = past?.last, last.isFailure, !settings.retryFailed {
                action = .failedBefore
            }
            return BatchPlanEntry(input: input, output: output, action: action,
                                  isSuspect: (past?.unfinishedStarts ?? 0) >= 1, isRecordedAsCrashed: past?.last == .crashed)
        }
    }

    /// Renders what `plan` says to render, `settings.jobs` at a time (suspects first, one at a
    /// time), recording each input in `manifest`; `progress` is called after each file (from
    /// the worker threads, one call at a time).
    public func run(_ plan: [BatchPlanEntry], manifest: Manifest, stop: BatchStopRequest,
                    progress: @escaping @Sendable (BatchProgress) -> Void = { _ in }) throws(ManifestError) -> BatchSummary {
        let clock = ContinuousClock()
        let began = clock.now
        let state = Locked(BatchProgress())
        let failures = Atomic<Int>(0)
        let manifestFailure = Locked<ManifestError?>(nil)
        let environmentFailure = Locked<String?>(nil)
        let toRender = plan.filter { $0.action == .render }
        let crashedCount = plan.filter { $0.action == .crashed }.count
        state.withLock {
            $0.total = toRender.count
            $0.skipped = plan.count - toRender.count
            // Skipped, but still failing: the run's result says so.
            $0.failed = crashedCount
            $0.failedBefore = plan.filter { $0.action == .failedBefore }.count
        }
        // Temporaries of earlier runs that died (kill -9, a power cut), whatever their
        // input's action in this run, in every folder the plan writes to.
        // A dataset folder's own temporary (a folder) lies beside it, one level up.
        let levels = settings.dataset == nil ? 1 : 2
        for folder in Set(plan.flatMap { entry in
            (1...levels).map { level in (0..<level).reduce(entry.output) { path, _ in (path as NSString).deletingLastPathComponent } }
        }) {
            OutputFile.removeStaleTemporaries(inDirectory: folder)
        }
        // A crashed input is recorded once, so the manifests list it.
        for entry in plan where entry.action == .crashed && !entry.isRecordedAsCrashed {
            var record = baseRecord(entry)
            record.status = .crashed
            record.message = "the process died twice while rendering it; skipped (--retry-failed renders it again)"
            try manifest.append(record)
        }
        let reachedLimit = { @Sendable () -> Bool in
            guard let limit = self.settings.maximumFailures else { return false }
            return failures.load(ordering: .relaxed) >= limit
        }
        let renderEntry = { @Sendable (entry: BatchPlanEntry) -> Void in
            let record = self.render(entry, manifest: manifest, stop: stop)
            do {
                try manifest.append(record)
            } catch let error as ManifestError {
                manifestFailure.withLock { $0 = error }
                stop.request()
            } catch {
                manifestFailure.withLock { $0 = .cannotWrite(manifest.path, "\(error)") }
                stop.request()
            }
            if record.status.isFailure { failures.add(1, ordering: .relaxed) }
            if record.status == .notWritten {
                environmentFailure.withLock { $0 = $0 ?? record.message }
                stop.request()
            }
            let snapshot = state.withLock { counts -> BatchProgress in
                if record.status != .interrupted { counts.done += 1 }
                if record.status.isFailure { counts.failed += 1 }
                counts.audioSeconds += record.seconds ?? 0
                let elapsed = clock.now - began
                counts.elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                return counts
            }
            progress(snapshot)
        }
        let suspects = toRender.filter(\.isSuspect)
        let others = toRender.filter { !$0.isSuspect }
        for entry in suspects {
            if stop.isRequested || reachedLimit() { break }
            renderEntry(entry)
        }
        let next = Atomic<Int>(0)
        let workerCount = max(1, min(settings.jobs, others.count))
        let done = DispatchGroup()
        for _ in 0..<workerCount {
            done.enter()
            let thread = Thread {
                while !stop.isRequested, !reachedLimit() {
                    let i = next.add(1, ordering: .relaxed).oldValue
                    if i >= others.count { break }
                    renderEntry(others[i])
                }
                done.leave()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
        done.wait()
        if let error = manifestFailure.withLock({ $0 }) { throw error }
        var summary = BatchSummary(progress: state.withLock { $0 })
        summary.environmentFailure = environmentFailure.withLock { $0 }
        summary.wasInterrupted = summary.environmentFailure == nil && stop.isRequested
            && summary.progress.done + summary.progress.skipped < plan.count
        summary.reachedMaximumFailures = reachedLimit() && summary.progress.done < summary.progress.total
        return summary
    }

    private func baseRecord(_ entry: BatchPlanEntry) -> ManifestRecord {
        var record = ManifestRecord(input: entry.input.path, relativePath: entry.input.relativePath, status: .started)
        record.output = entry.output
        record.tactusVersion = version
        record.instrument = instrumentDescription
        record.shard = shard.description
        var options = ["sample_rate": "\(settings.sampleRate)", "format": settings.format.description,
                       "gain_db": "\(settings.gainDecibels)", "channels": settings.mono ? "1" : "2"]
        switch settings.tail {
        case .seconds(let s): options["tail"] = "\(s)"
        case .untilSilent(let threshold, let cap): options["tail"] = "auto (\(threshold) dBFS, at most \(cap) s)"
        }
        record.options = options
        record.augmentation = settings.augmentationDraw(for: entry.input)?.description
        return record
    }

    /// Renders one input and returns its final record (after writing its "started" record).
    private func render(_ entry: BatchPlanEntry, manifest: Manifest, stop: BatchStopRequest) -> ManifestRecord {
        var record = baseRecord(entry)
        let clock = ContinuousClock()
        let began = clock.now
        let cpuBegan = threadCPUSeconds()
        var started = record
        started.status = .started
        // Written and flushed before the file is touched: if it kills the process, the next
        // run knows which input did.
        try? manifest.append(started)
        let outcome = FileRender(entry: entry, settings: settings, instrumentDescription: instrumentDescription, makeInstrument: makeInstrument,
                                 makeEffects: makeEffects, makeChannelInstruments: makeChannelInstruments, stop: stop,
                                 deadline: BatchRenderSettings.applicableLimit(settings.timeoutSeconds).map { clock.now + .seconds($0) }).run()
        record.status = outcome.status
        record.inputSHA256 = outcome.inputSHA256
        record.errorCode = outcome.errorCode.map(Int.init)
        record.message = outcome.message
        record.warnings = outcome.warnings.isEmpty ? nil : outcome.warnings
        if outcome.status == .ok {
            record.outputSHA256 = outcome.outputSHA256
            record.frames = outcome.frames
            record.seconds = Double(outcome.frames) / Double(settings.sampleRate)
            record.peakDBFS = outcome.peakDBFS
            record.rmsDBFS = outcome.rmsDBFS
        } else {
            record.output = nil
        }
        let elapsed = clock.now - began
        record.wallSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        record.cpuSeconds = threadCPUSeconds() - cpuBegan
        return record
    }
}

/// CPU seconds used by the calling thread.
func threadCPUSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}
