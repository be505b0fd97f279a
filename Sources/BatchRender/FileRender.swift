import AudioFileOutput
import AudioGraph
import Foundation
import MIDIFile
import Playback
import Sequencing

/// Why a guard stopped a render.
enum RenderGuard {
    case timedOut
    case tooLong
    case stopRequested
}

/// The output as the offline backend sees it: measures the audio (for the manifest's RMS) and
/// stops the render, before the block that would break one, when a guard trips: the deadline,
/// the longest duration allowed, or a stop request. The backend then cancels the output.
/// Written on the render thread, read after the session has ended.
final class GuardedSink: AudioSink {
    private let sink: any AudioSink
    private let output: String
    private let stop: BatchStopRequest
    private let deadline: ContinuousClock.Instant?
    private let maximumFrames: Int64?
    private var written: Int64 = 0
    private(set) var sumOfSquares = 0.0
    private(set) var stoppedBy: RenderGuard?

    init(_ sink: any AudioSink, output: String, stop: BatchStopRequest, deadline: ContinuousClock.Instant?, maximumFrames: Int64?) {
        self.sink = sink
        self.output = output
        self.stop = stop
        self.deadline = deadline
        self.maximumFrames = maximumFrames
    }

    func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(AudioSinkError) {
        if stop.isRequested {
            stoppedBy = .stopRequested
        } else if let deadline, ContinuousClock.now > deadline {
            stoppedBy = .timedOut
        } else if let maximumFrames, written + Int64(count) > maximumFrames {
            stoppedBy = .tooLong
        }
        // The reason stays in `stoppedBy`; the error only ends the render.
        if let stoppedBy { throw .failed(output: output, reason: "\(stoppedBy)") }
        try sink.write(left: left, right: right, count: count)
        var sum: Float = 0
        for i in 0..<count { sum += left[i] * left[i] + right[i] * right[i] }
        sumOfSquares += Double(sum)
        written += Int64(count)
    }

    func finish() throws(AudioSinkError) { try sink.finish() }

    func cancel() { sink.cancel() }
}

/// One input rendered to its output: the work of a batch job.
struct FileRender {
    let entry: BatchPlanEntry
    let settings: BatchRenderSettings
    let instrumentDescription: String
    let makeInstrument: @Sendable () throws -> DefaultInstrument
    let makeEffects: @Sendable () throws -> [any AudioNode]
    let makeChannelInstruments: @Sendable () throws -> [UInt8: any AudioNode]
    let stop: BatchStopRequest
    let deadline: ContinuousClock.Instant?

    struct Outcome {
        var status = BatchStatus.failed
        var inputSHA256: String?
        var outputSHA256: String?
        var errorCode: Int32?
        var message: String?
        var warnings: [String] = []
        var frames: Int64 = 0
        var peakDBFS: Double?
        var rmsDBFS: Double?
    }

    /// Exit codes a single-file render gives for the same failure.
    enum Code {
        static let dataError: Int32 = 65
        static let noInput: Int32 = 66
        static let cannotCreate: Int32 = 73
        static let ioError: Int32 = 74
    }

    /// The reasons an output cannot be written that lie outside the input, as the writers
    /// word them (their errors carry strerror(3)'s text, from libsndfile too, not the number).
    static let environmentReasons = [ENOSPC, EDQUOT, EROFS, EACCES, EPERM].map { String(cString: strerror($0)) }

    func run() -> Outcome {
        var outcome = Outcome()
        func fail(_ code: Int32, _ message: String, status: BatchStatus = .failed) -> Outcome {
            outcome.status = status
            // An output that could not be written because of the disk or the folder is not this
            // input's fault: the next run tries it again.
            if status == .failed, code == Code.cannotCreate || code == Code.ioError,
               Self.environmentReasons.contains(where: { message.contains($0) }) {
                outcome.status = .notWritten
            }
            outcome.errorCode = code
            outcome.message = message
            return outcome
        }
        let path = entry.input.path
        // Asked inside the long steps before audio flows: hashing, reading and scheduling a
        // song of millions of events each take seconds.
        let shouldHalt: @Sendable () -> Bool = { [stop, deadline] in
            stop.isRequested || deadline.map { ContinuousClock.now >= $0 } ?? false
        }
        // Between the phases before audio flows (reading, hashing, parsing, building the
        // instrument), as the render loop does while it flows.
        func halted() -> Outcome? {
            if stop.isRequested {
                return fail(Code.ioError, "\(path): stopped by a signal before the end; nothing written", status: .interrupted)
            }
            if let deadline, ContinuousClock.now >= deadline {
                return fail(Code.ioError, "\(path): still preparing after \(settings.timeoutSeconds ?? 0) s (--timeout)", status: .timedOut)
            }
            return nil
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return fail(Code.noInput, "\(path): no such file")
        }
        if isDirectory.boolValue { return fail(Code.noInput, "\(path): is a directory, not a MIDI file") }
        guard let data = FileManager.default.contents(atPath: path) else {
            return fail(Code.noInput, "\(path): permission denied")
        }
        if let halt = halted() { return halt }
        let bytes = [UInt8](data)
        outcome.inputSHA256 = FileHash.sha256(bytes, shouldCancel: shouldHalt)
        if let halt = halted() { return halt }
        var readOptions = SMFReadOptions()
        readOptions.strict = settings.strict
        readOptions.shouldCancel = shouldHalt
        let smf: StandardMIDIFile
        do {
            smf = try SMFReader.read(bytes, options: readOptions)
        } catch {
            if error.reason == .cancelled, let halt = halted() { return halt }
            return fail(Code.dataError, "\(path): \(error)")
        }
        outcome.warnings = smf.warnings.map { "\($0)" }
        guard smf.timeBase.isUsable else {
            return fail(Code.dataError, "\(path): division is 0, so the file has no timing and cannot be rendered")
        }
        if let halt = halted() { return halt }
        let draw = settings.augmentationDraw(for: entry.input)
        let sequence = draw.map { smf.makeSequence().augmented(by: $0) } ?? smf.makeSequence()
        if let halt = halted() { return halt }
        let instrument: DefaultInstrument, effects: [any AudioNode], channelInstruments: [UInt8: any AudioNode]
        do {
            instrument = try makeInstrument().applyingEffectFactors(of: draw)
            effects = try makeEffects()
            channelInstruments = try makeChannelInstruments()
        } catch {
            return fail(Code.dataError, "\(path): cannot build the audio graph: \(error)")
        }
        // A SoundFont 3 bank plays only what was decoded: the samples this song's notes play.
        if case .sampler(let sampler) = instrument, sampler.hasCompressedSamples {
            do {
                outcome.warnings += try sampler.prepareSamples(forNotes: sequence.samplerPlayedNotes()).map { "\($0)" }
            } catch {
                return fail(Code.dataError, "\(path): \(error)")
            }
        }
        if let halt = halted() { return halt }
        let session: PlaybackSession
        do {
            var options = PlaybackSession.Options(instrument: .custom(instrument),
                                                  gainDecibels: draw?.gain(addedTo: settings.gainDecibels) ?? settings.gainDecibels,
                                                  tail: settings.tail, sampleRate: settings.sampleRate)
            options.effects = effects
            options.channelInstruments = channelInstruments
            options.shouldCancelPreparation = shouldHalt
            session = try PlaybackSession(sequence: sequence, options: options)
        } catch {
            return fail(Code.dataError, "\(path): \(error)")
        }
        // The calls a single-file render makes with no transport options, so the output is the same.
        session.setRate(1)
        session.setEnd(tick: nil)

        // A dataset folder is filled under a temporary name, the mix first, and renamed last.
        let folder = (entry.output as NSString).deletingLastPathComponent
        let parent = settings.dataset == nil ? folder : (folder as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        } catch {
            return fail(Code.cannotCreate, "\(entry.output): cannot create the folder \(parent)")
        }
        var staging: DatasetStaging?
        if settings.dataset != nil {
            do {
                staging = try DatasetStaging(destination: folder)
            } catch {
                return fail(Code.cannotCreate, "\(error)")
            }
        }
        defer { staging?.abandon() }
        let output = staging.map { $0.file((entry.output as NSString).lastPathComponent) } ?? entry.output
        OutputFile.removeStaleTemporaries(of: output)
        let sink: any AudioSink
        do {
            sink = try settings.format.makeWriter(path: output, sampleRate: settings.sampleRate,
                                                  channelCount: settings.mono ? 1 : 2)
        } catch {
            return fail(Code.cannotCreate, "\(error)")
        }
        let maximumFrames = BatchRenderSettings.applicableLimit(settings.maximumDurationSeconds).map { Int64($0 * Double(settings.sampleRate)) }
        let guarded = GuardedSink(sink, output: output, stop: stop, deadline: deadline, maximumFrames: maximumFrames)
        let backend = OfflineBackend(sink: guarded, name: output, blockSize: settings.blockSize)
        let summary: PlaybackSummary
        do {
            try session.start(on: backend)
            summary = try session.waitUntilFinished()
        } catch {
            switch guarded.stoppedBy {
            case .timedOut?:
                return fail(Code.ioError, "\(path): still rendering after \(settings.timeoutSeconds ?? 0) s (--timeout)", status: .timedOut)
            case .tooLong?:
                return fail(Code.dataError, "\(path): longer than \(settings.maximumDurationSeconds ?? 0) s of audio (--max-duration)",
                            status: .tooLong)
            case .stopRequested?:
                return fail(Code.ioError, "\(path): stopped by a signal before the end; nothing written", status: .interrupted)
            case nil where error == .cancelled:
                // Only the stop request or the deadline cancels the preparation.
                if let halt = halted() { return halt }
                return fail(Code.ioError, "\(path): \(error)")
            case nil:
                if case .graph(let reason) = error { return fail(Code.dataError, "\(path): cannot build the audio graph: \(reason)") }
                if case .backend(let failure) = error, failure.kind == .nonFiniteAudio {
                    return fail(Code.dataError, "\(path): the \(instrumentDescription) made \(failure.reason)")
                }
                return fail(Code.ioError, "\(error)")
            }
        }
        // The bank is shared by every song of the batch: without this, the process would
        // keep resident every sample page any earlier song touched.
        if case .sampler(let sampler) = instrument { sampler.bank.releaseReloadableSampleMemory() }
        let statistics = RenderStatistics(frameCount: summary.framesPlayed, peak: backend.peak, sampleRate: settings.sampleRate)
        let sumOfSquares = guarded.sumOfSquares
        outcome.status = .ok
        outcome.frames = statistics.frameCount
        outcome.peakDBFS = statistics.peak > 0 ? Double(statistics.peakDecibels) : nil
        if statistics.frameCount > 0, sumOfSquares > 0 {
            outcome.rmsDBFS = 10 * log10(sumOfSquares / Double(2 * statistics.frameCount))
        }
        if statistics.peak < decibelsToGainDouble(-90) {
            outcome.warnings.append("silent output (peak below -90 dBFS)")
        }
        if let layout = settings.dataset, let staging {
            let schedule = Schedule(sequence: sequence, sampleRate: settings.sampleRate, defaultNode: DefaultGraph.instrumentID)
            let mix = MixShape(frameCount: statistics.frameCount, endFrame: schedule.endFrame,
                               gainDecibels: draw?.gain(addedTo: settings.gainDecibels) ?? settings.gainDecibels, augmentation: draw)
            if let failure = writeDatasetFiles(sequence, layout: layout, staging: staging, mix: mix, schedule: schedule,
                                               augmentation: draw) {
                return fail(failure.code, failure.message, status: failure.status)
            }
            do {
                try staging.commit(replacing: settings.overwrite)
            } catch {
                return fail(Code.cannotCreate, "\(error)")
            }
        }
        outcome.outputSHA256 = FileHash.sha256(path: entry.output)
        return outcome
    }
}

private func decibelsToGainDouble(_ db: Double) -> Float { Float(pow(10, db / 20)) }
