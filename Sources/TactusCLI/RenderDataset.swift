import ArgumentParser
import AudioFileOutput
import BatchRender
import Foundation
import LV2
import MIDIFile
import Playback
import Sequencing

/// `tactus render`'s training-data outputs: stems beside the mix and note labels.
struct DatasetOptions: ParsableArguments {
    @Option(name: .customLong("stems"),
            help: ArgumentHelp("Also write one audio file per track (see --stems-by) into this folder (created if missing), in the mix's format and exactly as long.",
                               valueName: "DIR"))
    var stemsDirectory: String?

    @Option(name: .customLong("stems-by"), help: ArgumentHelp("Stems per 'track' (default) or per General MIDI 'class' (program family; drums).", valueName: "track|class"))
    var stemsBy: String = "track"

    @Option(name: .customLong("labels"),
            help: ArgumentHelp("Write every note (track, channel, key, velocity, program, stem, onset and offset in seconds and frames) to this file: JSON, or NumPy columns when it ends in .npz.",
                               valueName: "FILE.json|FILE.npz"))
    var labelsPath: String?

    @Option(help: ArgumentHelp("Vary each file, reproducibly: comma-separated knob=VALUE or knob=LOW..HIGH; knobs transpose (semitones, not the drums), tempo (factor), velocity (curve exponent: 127*(v/127)^x), gain (dB, added to --gain), reverb and chorus (factors 0-1 on the instrument's levels), programs (chance 0-1 of swapping each program for another of its GM family). Drawn from --seed and the file's name (in a batch its path in the folder, so shards agree); the draw is printed (a batch: in the manifest) and, given back as the spec, renders the same.",
                               valueName: "SPEC"))
    var augment: String?

    @Option(name: .customLong("seed"), help: ArgumentHelp("The seed of --augment's draws (default 0).", valueName: "N"))
    var givenSeed: UInt64?

    /// The seed of the draws: --seed, or 0.
    var seed: UInt64 { givenSeed ?? 0 }

    @Option(help: ArgumentHelp("A batch's output as training data: 'slakh' writes a folder per input (mix, stems/, MIDI/, all_src.mid, labels.json and .npz, metadata.yaml), stems per --stems-by.",
                               valueName: "slakh"))
    var layout: String?

    var isUsed: Bool { stemsDirectory != nil || labelsPath != nil }

    /// The parsed --augment (nil without it); a malformed spec is one line and exit 64.
    func augmentation(output: String, instrument: InstrumentOptions) throws -> AugmentationSpec? {
        guard let augment else {
            // A seed alone would render the file unvaried while the user believes it varied.
            if let givenSeed {
                printError("\(output): --seed \(givenSeed) needs --augment SPEC (the seed only chooses augmentation draws)")
                throw ExitCode(ExitStatus.usage)
            }
            return nil
        }
        let spec: AugmentationSpec
        do {
            spec = try AugmentationSpec(parsing: augment)
        } catch {
            printError("\(output): \(error)")
            throw ExitCode(ExitStatus.usage)
        }
        if instrument.lv2PluginURI != nil, spec.ranges[.reverb] != nil || spec.ranges[.chorus] != nil {
            printError("\(output): the reverb and chorus knobs scale the sampler's and the built-in synthesizer's effects; an LV2 instrument has its own controls")
            throw ExitCode(ExitStatus.usage)
        }
        return spec
    }

    /// The grouping `--stems-by` names.
    var grouping: StemGrouping? { StemGrouping(rawValue: stemsBy) }

    /// A batch's dataset layout (nil without --layout), checked before anything is read: a
    /// batch writes stems and labels only as `--layout slakh` places them, per input.
    func batchLayout(output: String, instrument: InstrumentOptions) throws -> DatasetLayout? {
        func usage(_ message: String) -> ExitCode {
            printError("\(output): \(message)")
            return ExitCode(ExitStatus.usage)
        }
        guard let layout else {
            guard isUsed || stemsBy != "track" else { return nil }
            throw usage("a batch writes stems and labels with --layout slakh (a folder per input); --stems, --stems-by and --labels alone are for one file")
        }
        guard layout == "slakh" else { throw usage("--layout '\(layout)' is not 'slakh'") }
        guard let grouping else { throw usage("--stems-by '\(stemsBy)' is not 'track' or 'class'") }
        if isUsed { throw usage("--layout slakh places stems and labels in each input's folder; leave out --stems and --labels") }
        return DatasetLayout(grouping: grouping)
    }

    /// Checks the options against the rest of the command line before anything is rendered:
    /// usage errors exit 64, a stems folder that is a file or cannot be made exits 73, each as
    /// one line starting with the path at fault.
    func check(output: String, inputs: [String?], transport plan: TransportPlan, instrument: InstrumentOptions) throws {
        guard grouping != nil else {
            printError("\(output): --stems-by '\(stemsBy)' is not 'track' or 'class'")
            throw ExitCode(ExitStatus.usage)
        }
        if stemsBy != "track" && stemsDirectory == nil {
            printError("\(output): --stems-by needs --stems DIR")
            throw ExitCode(ExitStatus.usage)
        }
        if layout != nil {
            printError("\(output): --layout writes a batch (a folder of inputs, or -o ending in /); for one file use --stems DIR and --labels FILE")
            throw ExitCode(ExitStatus.usage)
        }
        guard isUsed else { return }
        if OutputDestination.isStandardOutput(output) {
            printError("\(output): --stems and --labels need the mix in a file, not standard output")
            throw ExitCode(ExitStatus.usage)
        }
        // Labels count output frames from the song's start at rate 1; a transport that moves
        // or repeats the song would need labels per pass.
        if labelsPath != nil && (plan.rate != 1 || plan.fromTick != 0 || plan.toTick != nil || plan.loop != nil) {
            printError("\(output): --labels needs the whole song at rate 1 (no --rate, --from, --to or --loop)")
            throw ExitCode(ExitStatus.usage)
        }
        if let labelsPath {
            try refuseInputAsOutput(labelsPath, inputs: inputs, what: "the labels file")
            if labelsPath == output {
                printError("\(labelsPath): the labels file is the audio output")
                throw ExitCode(ExitStatus.usage)
            }
        }
        if let stemsDirectory {
            var info = stat()
            if stat(stemsDirectory, &info) == 0 {
                guard info.st_mode & S_IFMT == S_IFDIR else {
                    printError("\(stemsDirectory): the stems folder is not a directory")
                    throw ExitCode(ExitStatus.cannotCreate)
                }
                guard access(stemsDirectory, W_OK | X_OK) == 0 else {
                    printError("\(stemsDirectory): cannot write the stems folder (\(String(cString: strerror(errno))))")
                    throw ExitCode(ExitStatus.cannotCreate)
                }
            }
        }
    }
}

/// Renders the mix, then each stem through a fresh instrument with the same options and
/// transport, each exactly as long as the mix, then the labels. Each file is written through a
/// temporary file and a rename; if any fails, the files this run already completed are
/// removed too, so a rerun starts from a clean state and never mixes two runs' outputs.
func renderDataset(_ sequence: MusicSequence, source: String, output: String, settings: RenderSettings,
                   transport plan: TransportPlan, options: DatasetOptions, instrumentOptions: InstrumentOptions,
                   input: InputOptions, augmentation: AugmentationDraw?) throws {
    let stems = options.stemsDirectory == nil ? [] : sequence.stems(by: options.grouping ?? .track)
    let stemPaths = try options.stemsDirectory.map { try prepareStemPaths(stems, directory: $0, output: output, settings: settings) } ?? []
    for path in stemPaths {
        try refuseInputAsOutput(path, inputs: [source, instrumentOptions.soundFont, instrumentOptions.instrument] + instrumentOptions.tuningInputs, what: "a stem")
    }
    var written: [String] = []
    var catalogue: LV2Catalogue?
    // Printed once every file is written: a full standard output must not undo them.
    var report = OutputBuffer()
    if let augmentation { report.line("\(output): augmented with \(augmentation)") }
    do {
        let mix = try renderToFile(sequence, source: source, output: output, settings: settings, transport: plan, report: &report)
        written.append(output)
        report.flush()
        for (stem, path) in zip(stems, stemPaths) {
            try renderStem(stem, path: path, source: source, frameCount: mix.frameCount, endFrame: mix.endFrame,
                           settings: settings, transport: plan, instrumentOptions: instrumentOptions, input: input,
                           catalogue: &catalogue, augmentation: augmentation)
            written.append(path)
        }
        if let directory = options.stemsDirectory, !settings.quiet {
            report.line("\(directory): \(stems.count) stem\(stems.count == 1 ? "" : "s") by \(options.grouping?.rawValue ?? "track"), \(mix.frameCount) frames each")
        }
        if let labelsPath = options.labelsPath {
            let schedule = Schedule(sequence: sequence, sampleRate: settings.sampleRate, defaultNode: DefaultGraph.instrumentID)
            let labels = schedule.noteLabels(stems: stems)
            do {
                let bytes = labelsPath.lowercased().hasSuffix(".npz")
                    ? NoteLabel.npz(labels, sampleRate: settings.sampleRate, stemNames: stems.map(\.name), augmentation: augmentation?.description)
                    : NoteLabel.json(labels, sampleRate: settings.sampleRate, augmentation: augmentation?.description)
                try SMFWriter.writeAtomically(bytes, to: labelsPath)
            } catch {
                printError("\(error)")
                throw ExitCode(ExitStatus.cannotCreate)
            }
            written.append(labelsPath)
            if !settings.quiet { report.line("\(labelsPath): \(labels.count) note label\(labels.count == 1 ? "" : "s")") }
        }
    } catch {
        for path in written where !OutputDestination.isStandardOutput(path) {
            if case .replace(let target)? = try? OutputDestination.resolve(path) { unlink(target) }
        }
        throw error
    }
    try report.finish()
}

/// The stem files' paths (the stem's name and the mix's extension), creating the folder if it
/// is missing. A stem that would overwrite the mix is refused.
private func prepareStemPaths(_ stems: [Stem], directory: String, output: String, settings: RenderSettings) throws -> [String] {
    var info = stat()
    if stat(directory, &info) != 0 {
        guard mkdir(directory, 0o777) == 0 else {
            printError("\(directory): cannot create the stems folder (\(String(cString: strerror(errno))))")
            throw ExitCode(ExitStatus.cannotCreate)
        }
    }
    var suffix = URL(fileURLWithPath: output).pathExtension
    if suffix.isEmpty { suffix = settings.audioFormat.fileExtension }
    let paths = stems.map { URL(fileURLWithPath: directory).appendingPathComponent($0.name + "." + suffix).path }
    let mixPath = URL(fileURLWithPath: output).standardizedFileURL.path
    if let clash = paths.first(where: { $0 == mixPath }) {
        printError("\(clash): a stem would overwrite the mix")
        throw ExitCode(ExitStatus.usage)
    }
    return paths
}

/// Renders one stem as the mix was rendered, but through a fresh instrument and fresh plugin
/// effects (voices and effects keep state) and padded or cut to exactly `frameCount` frames.
private func renderStem(_ stem: Stem, path: String, source: String, frameCount: Int64, endFrame: Int64,
                        settings: RenderSettings, transport plan: TransportPlan, instrumentOptions: InstrumentOptions,
                        input: InputOptions, catalogue: inout LV2Catalogue?, augmentation: AugmentationDraw?) throws {
    var instrument = settings.instrument
    if let plugin = try instrumentOptions.freshPluginInstrument(input: input, catalogue: &catalogue) {
        instrument.instrument = .node(plugin)
        instrument.plugin = plugin
    }
    instrument.effects = try instrumentOptions.freshPluginEffects(input: input, catalogue: &catalogue)
    instrument.channelPlugins = try instrumentOptions.freshPluginChannelInstruments(input: input, catalogue: &catalogue)
    if case .sampler(let sampler) = instrument.instrument {
        instrument.instrument = .sampler(instrumentOptions.makeSampler(sampler.bank, regionRules: instrument.regionRules,
                                                                       outputGain: instrument.outputGain, tuning: instrument.tuning))
        // A SoundFont 3 bank's decoded samples may belong to the sampler that asked for them.
        try instrument.prepareSamples(for: stem.sequence)
    } else if case .synthesizer = instrument.instrument {
        instrument.instrument = instrumentOptions.makeSynthesizer(tuning: instrument.tuning)
    }
    // The fresh instrument takes the draw's effect factors, as the mix's did.
    instrument.instrument = instrument.instrument.applyingEffectFactors(of: augmentation)
    let writer: any AudioSink
    do {
        writer = try settings.audioFormat.makeWriter(path: path, sampleRate: settings.sampleRate, channelCount: settings.mono ? 1 : 2)
    } catch {
        printError("\(error)")
        throw ExitCode(ExitStatus.cannotCreate)
    }
    // A tail reaching at least the mix's last frame: the sink cuts what lies beyond it.
    let tailSeconds = Double(max(0, frameCount - endFrame) + 1) / Double(settings.sampleRate)
    let session: PlaybackSession
    do {
        let options = PlaybackSession.Options(gainDecibels: settings.gainDecibels, tail: .seconds(tailSeconds), sampleRate: settings.sampleRate)
        session = try instrument.makeSession(sequence: stem.sequence, options: options, observer: nil)
    } catch {
        writer.cancel()
        printError("\(source): \(error)")
        throw ExitCode(ExitStatus.dataError)
    }
    plan.apply(to: session)
    // As for the mix: what plugins print goes to standard error, not among Tactus's lines.
    let diversion = instrument.allPlugins.isEmpty ? nil : StandardOutputDiversion()
    defer { diversion?.end() }
    let sink = ProgressSink(FixedLengthSink(writer, frameCount: frameCount), progress: nil)
    let backend = OfflineBackend(sink: sink, name: path, blockSize: settings.blockSize)
    do {
        try session.start(on: backend)
        _ = try session.waitUntilFinished()
    } catch {
        if sink.wasInterrupted {
            printError("\(path): interrupted; nothing written")
            throw ExitCode(130)
        }
        printError("\(error)")
        throw ExitCode(ExitStatus.ioError)
    }
}
