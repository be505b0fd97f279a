import ArgumentParser
import AudioGraph
import Foundation
import Instruments
import LV2
import MIDI
import Playback
import Sampler
import Sequencing
import SFZ
import SFZPlayback
import SoundFont

/// Options `tactus render` and `tactus play` share to choose what plays the tracks.
struct InstrumentOptions: ParsableArguments {
    @Option(name: .customLong("soundfont"),
            help: ArgumentHelp("Play with this SoundFont 2 or 3 or DLS bank (else the DLS bank an RMI song carries, else $TACTUS_SOUNDFONT, else a bank at a standard path, else the built-in synthesizer).",
                               valueName: "FILE"))
    var soundFont: String?

    @Option(help: ArgumentHelp("'builtin' for the built-in synthesizer whatever banks are installed, or a JSON audio-file patch, an SFZ instrument or an installed LV2 instrument (lv2:URI, see tactus info --plugins; control settings follow as ,SYMBOL=VALUE, files it reads as ,NAME=PATH) to play on every channel.",
                               valueName: "builtin|PATCH.json|FILE.sfz|lv2:URI[,SETTING=VALUE...]"))
    var instrument: String?

    @Option(name: .customLong("effect"),
            help: ArgumentHelp("An installed LV2 effect the instrument plays through, before the limiter (lv2:URI, see tactus info --plugins; control settings follow as ,SYMBOL=VALUE). Repeat for a chain, in order.",
                               valueName: "lv2:URI[,SYMBOL=VALUE...]"))
    var effects: [String] = []

    @Option(name: .customLong("channel-instrument"),
            help: ArgumentHelp("An installed LV2 instrument for one MIDI channel, counted 1-16 (10 is General MIDI's drums): CH=lv2:URI, with settings as for --instrument. That channel's notes play through it instead of the instrument, into the same --effect chain. Repeat for other channels.",
                               valueName: "CH=lv2:URI[,SETTING=VALUE...]"))
    var channelInstruments: [String] = []

    @Option(name: .customLong("save-state"),
            help: ArgumentHelp("Save the LV2 instrument's state, as its settings leave it, in this folder before playing (restore it with lv2:URI,state=FOLDER).",
                               valueName: "FOLDER"))
    var saveState: String?

    @Option(name: .customLong("sample-memory"),
            help: ArgumentHelp("Most MiB of decoded samples an SFZ instrument may take (1...65536; default 1024).", valueName: "MIB"))
    var sampleMemory: Int?

    @Flag(name: .customLong("no-reverb"), help: "Switch the sampler's reverb off (as fluidsynth -o synth.reverb.active=0).")
    var noReverb = false

    @Flag(name: .customLong("no-chorus"), help: "Switch the sampler's chorus off (as fluidsynth -o synth.chorus.active=0).")
    var noChorus = false

    @Option(help: ArgumentHelp("Most sampler voices at once, 1...4096 (FluidSynth's synth.polyphony; default 256).", valueName: "N"))
    var polyphony: Int?

    @Option(help: ArgumentHelp("Play in the tuning of a Scala scale, laid out by a Scala keyboard mapping when one is given (else the scale's unison is middle C at its usual pitch); drum channels stay as they are. MIDI Tuning Standard messages in the file still apply.",
                               valueName: "FILE.scl[,FILE.kbm]"))
    var tuning: String?

    /// Spelling of `--instrument` that forces the built-in synthesizer.
    static let builtInSpelling = "builtin"
    /// Prefix of `--instrument` naming an LV2 plugin by URI.
    static let lv2Prefix = "lv2:"

    /// The scale and keyboard mapping files of `--tuning`: the text after the last comma is the
    /// mapping when it ends in `.kbm`, so a scale's own path may hold commas.
    var tuningFiles: (scale: String, mapping: String?)? {
        guard let tuning else { return nil }
        if let comma = tuning.lastIndex(of: ","), tuning[tuning.index(after: comma)...].lowercased().hasSuffix(".kbm") {
            return (String(tuning[..<comma]), String(tuning[tuning.index(after: comma)...]))
        }
        return (tuning, nil)
    }

    /// The files `--tuning` names, for the checks that an output does not overwrite an input.
    var tuningInputs: [String?] {
        guard let files = tuningFiles else { return [] }
        return [files.scale, files.mapping]
    }

    /// The plugin URI of `--instrument lv2:URI`, if that is what was given.
    var lv2PluginURI: String? {
        guard let instrument, instrument.hasPrefix(Self.lv2Prefix) else { return nil }
        return (try? LV2PluginSpec.parse(instrument, option: "--instrument"))??.uri ?? ""
    }

    /// Whether an LV2 plugin plays or processes the song (`--instrument lv2:`,
    /// `--channel-instrument` or `--effect`).
    var usesLV2Plugins: Bool { lv2PluginURI != nil || !effects.isEmpty || !channelInstruments.isEmpty }
}

/// What plays the tracks, and a few words saying so.
struct InstrumentChoice {
    var instrument: DefaultInstrument
    var description: String
    /// The SoundFont bank's path, for messages about its samples.
    var bankPath: String?
    /// Warnings about the bank are not printed (`--quiet`, or a bank found at a standard path).
    var quietBank = false
    /// An SFZ instrument's region selection rules, for fresh samplers over the same bank.
    var regionRules: [SamplerRegionRule] = []
    /// The sampler volume (dB) an SFZ instrument asked for to play gains above 0 dB.
    var outputGain = 0.0
    /// The LV2 instrument, when `instrument` is one (its log is flushed after rendering).
    var plugin: LV2PluginNode?
    /// The `--effect` chain, in order, between the instrument and the limiter.
    var effects: [LV2PluginNode] = []
    /// The `--channel-instrument` plugins, by MIDI channel (0-15).
    var channelPlugins: [UInt8: LV2PluginNode] = [:]
    /// The `--tuning` the instrument plays in, for fresh instruments of the same choice.
    var tuning: KeyboardTuning?

    /// A session playing `sequence` through this instrument and the effects: the default
    /// graph (instrument, effects, limiter with the options' gain, output).
    func makeSession(sequence: MusicSequence, options: PlaybackSession.Options,
                     observer: (any PlaybackSessionObserver)?) throws(PlaybackSessionError) -> PlaybackSession {
        try PlaybackSession(sequence: sequence, options: playing(options), observer: observer)
    }

    /// `options` with this instrument, its effects and its channels' instruments: what every
    /// session of the choice plays through (a render, `play`, `record`'s backing and thru).
    func playing(_ options: PlaybackSession.Options) -> PlaybackSession.Options {
        var options = options
        options.instrument = .custom(instrument)
        options.effects = effects
        options.channelInstruments = channelPlugins
        return options
    }

    /// Flushes the log lines the plugins wrote while rendering to their handlers.
    func flushPluginLogs() {
        plugin?.flushLog()
        for effect in effects { effect.flushLog() }
        for node in channelPlugins.values { node.flushLog() }
    }

    /// Every hosted plugin, for what applies to all of them (live playback's worker thread).
    var allPlugins: [LV2PluginNode] { [plugin].compactMap { $0 } + effects + channelPlugins.values.sorted { $0.name < $1.name } }
}

extension InstrumentChoice {
    /// Decodes the compressed samples (SoundFont 3) of every preset `sequence` selects, before
    /// it plays. A sample that does not decode is a warning (it is silent); libvorbisfile
    /// missing is one line starting with the bank's path and exit 69.
    func prepareSamples(for sequence: MusicSequence) throws {
        guard case .sampler(let sampler) = instrument, sampler.hasCompressedSamples else { return }
        do {
            let warnings = try sampler.prepareSamples(forNotes: sequence.samplerPlayedNotes())
            printBankWarnings(warnings)
        } catch {
            throw reportSampleError(error)
        }
    }

    private func printBankWarnings(_ warnings: [SoundFontWarning]) {
        guard !quietBank else { return }
        for warning in warnings { printError("\(bankPath ?? "SoundFont"): warning: \(warning)") }
    }

    private func reportSampleError(_ error: SoundFontError) -> ExitCode {
        var error = error
        error.path = bankPath
        printError(error.description)
        return ExitCode(error.isUnavailableLibrary ? ExitStatus.unavailable : ExitStatus.dataError)
    }
}

extension InstrumentOptions {
    /// Checks the options that need no file; a bad one prints one line starting with `file`
    /// and exits 64. Called before anything is read or created.
    func validate(file: String) throws {
        func usage(_ message: String) -> ExitCode {
            printError("\(file): \(message)")
            return ExitCode(ExitStatus.usage)
        }
        if let instrument, instrument != Self.builtInSpelling, soundFont != nil {
            throw usage("give either --soundfont or --instrument \(instrument), not both")
        }
        if instrument == Self.builtInSpelling, soundFont != nil {
            throw usage("--instrument builtin plays without a SoundFont: leave out --soundfont")
        }
        if let instrument, instrument != Self.builtInSpelling, !instrument.lowercased().hasSuffix(".json"),
           !instrument.lowercased().hasSuffix(".sfz"), lv2PluginURI == nil {
            throw usage("--instrument takes 'builtin', a JSON patch file, an SFZ file or lv2:URI, not '\(instrument)'")
        }
        do {
            if let instrument { _ = try LV2PluginSpec.parse(instrument, option: "--instrument") }
            for effect in effects {
                guard try LV2PluginSpec.parse(effect, option: "--effect") != nil else {
                    throw usage("--effect takes an installed LV2 effect as lv2:URI (see tactus info --plugins), not '\(effect)'")
                }
            }
        } catch let error as LV2PluginSpec.SpecError {
            throw usage(error.message)
        }
        _ = try channelInstrumentSpecs(file: file)
        if lv2PluginURI != nil, noReverb || noChorus || polyphony != nil {
            throw usage("--no-reverb, --no-chorus and --polyphony set the sampler; an LV2 instrument has its own controls")
        }
        if let sampleMemory, !(1...65_536).contains(sampleMemory) {
            throw usage("--sample-memory \(sampleMemory) is outside 1...65536 (MiB)")
        }
        if sampleMemory != nil, !(instrument?.lowercased().hasSuffix(".sfz") ?? false) {
            throw usage("--sample-memory applies to an SFZ instrument (--instrument FILE.sfz)")
        }
        if saveState != nil, lv2PluginURI == nil {
            throw usage("--save-state saves an LV2 instrument's state: give --instrument lv2:URI")
        }
        if lv2PluginURI != nil, tuning != nil {
            throw usage("--tuning retunes the sampler and the built-in synthesizer; an LV2 instrument has its own tuning")
        }
        if let files = tuningFiles, files.scale.isEmpty {
            throw usage("--tuning needs a Scala scale file (FILE.scl, or FILE.scl,FILE.kbm)")
        }
        if let polyphony, !(1...SamplerNode.maximumVoiceLimit).contains(polyphony) {
            throw usage("--polyphony \(polyphony) is outside 1...\(SamplerNode.maximumVoiceLimit)")
        }
    }

    /// The instrument, in this order: `--instrument` (built-in or a patch), `--soundfont`,
    /// `TACTUS_SOUNDFONT`, the standard bank paths, else the built-in synthesizer, retuned by
    /// `--tuning`. A bank asked for by name that is missing prints one line naming the paths
    /// tried and exits 66; an unreadable or invalid bank, patch or tuning file exits 66 or 65
    /// as `tactus info` does.
    func choose(input: InputOptions, song: String? = nil) throws -> InstrumentChoice {
        var catalogue: LV2Catalogue?
        return try choose(input: input, song: song, catalogue: &catalogue)
    }

    /// As ``choose(input:song:)``, keeping the LV2 catalogue it loaded (if any) in `catalogue`.
    func choose(input: InputOptions, song: String? = nil, catalogue: inout LV2Catalogue?) throws -> InstrumentChoice {
        let tuning = try loadTuning()
        var choice = try chooseUntuned(input: input, song: song, catalogue: &catalogue)
        for effect in effects {
            // validate(file:) has parsed each one.
            let spec = try! LV2PluginSpec.parse(effect, option: "--effect")!
            let node = try loadPlugin(spec, kind: .effect, input: input, file: song, catalogue: &catalogue)
            choice.effects.append(node)
            choice.description += ", through LV2 effect \(node.name)"
        }
        choice.channelPlugins = try freshPluginChannelInstruments(input: input, file: song, catalogue: &catalogue, warnings: true)
        for (channel, node) in choice.channelPlugins.sorted(by: { $0.key < $1.key }) {
            choice.description += ", channel \(channel + 1) through LV2 instrument \(node.name)"
        }
        guard let tuning, let files = tuningFiles, choice.plugin == nil else { return choice }
        choice.tuning = tuning
        switch choice.instrument {
        case .builtIn: choice.instrument = makeSynthesizer(tuning: tuning)
        case .synthesizer(let synth): synth.setTuning(tuning)
        case .sampler(let sampler): sampler.setTuning(tuning)
        case .node: break  // refused by validate(file:): an LV2 instrument has its own tuning
        }
        choice.description += " tuned to \(files.scale)" + (files.mapping.map { " (\($0))" } ?? "")
        return choice
    }

    /// The `--tuning` scale laid out by its mapping, or nil without the option. A file that is
    /// missing prints one line and exits 66; one that is not a usable scale or mapping, 65.
    func loadTuning() throws -> KeyboardTuning? {
        guard let files = tuningFiles else { return nil }
        do {
            return try KeyboardTuning.load(scale: files.scale, mapping: files.mapping)
        } catch {
            printError(error.description)
            throw ExitCode(error.isUnreadableInput ? ExitStatus.noInput : ExitStatus.dataError)
        }
    }

    /// The built-in synthesizer in `tuning` (the default one when nil).
    func makeSynthesizer(tuning: KeyboardTuning?) -> DefaultInstrument {
        guard let tuning else { return .builtIn }
        let synth = GMSynthesizer()
        synth.setTuning(tuning)
        return .synthesizer(synth)
    }

    private func chooseUntuned(input: InputOptions, song: String?, catalogue: inout LV2Catalogue?) throws -> InstrumentChoice {
        if instrument == Self.builtInSpelling {
            return InstrumentChoice(instrument: .builtIn, description: "built-in synthesizer")
        }
        if let instrument, let spec = try? LV2PluginSpec.parse(instrument, option: "--instrument") {
            let node = try loadPlugin(spec, kind: .instrument, input: input, file: song, catalogue: &catalogue)
            if let saveState {
                do {
                    try node.saveState(to: saveState)
                } catch {
                    printError("--save-state \(error)")
                    throw ExitCode(ExitStatus.cannotCreate)
                }
            }
            return InstrumentChoice(instrument: .node(node), description: "LV2 instrument \(node.info.name) (\(spec.uri))", plugin: node)
        }
        if let path = instrument, path.lowercased().hasSuffix(".sfz") {
            return try loadSFZ(path, input: input)
        }
        if let patch = instrument {
            do {
                let bank = try AudioFilePatch.load(contentsOf: patch)
                return InstrumentChoice(instrument: .sampler(makeSampler(bank)), description: "patch \(patch)")
            } catch {
                printError(error.description)
                throw ExitCode(error.isUnreadableInput ? ExitStatus.noInput : ExitStatus.dataError)
            }
        }
        if soundFont == nil, let song, DLSReader.hasEmbeddedBank(contentsOf: song) {
            // The bank an RMI song carries is the one it was voiced for, as Windows plays it.
            let file = try loadSoundFont(song, options: input)
            return InstrumentChoice(instrument: .sampler(makeSampler(file.bank)),
                                    description: "\(file.formatDescription) bank embedded in \(song) (RMI)",
                                    bankPath: song, quietBank: input.quiet)
        }
        let choice: SoundFontDiscovery.Choice?
        do {
            choice = try SoundFontDiscovery.resolve(explicitPath: soundFont)
        } catch {
            printError(error.description)
            throw ExitCode(ExitStatus.noInput)
        }
        guard let choice else {
            return InstrumentChoice(instrument: .builtIn, description: "built-in synthesizer (no SoundFont found)")
        }
        // --strict and the warnings are about the files the user named: a bank found at a
        // standard path (FluidR3's packaged file warns about its stereo links) stays quiet.
        var bankOptions = input
        if choice.origin == .standardLocation {
            bankOptions.quiet = true
            bankOptions.strict = false
        }
        let file = try loadSoundFont(choice.path, options: bankOptions)
        return InstrumentChoice(instrument: .sampler(makeSampler(file.bank)),
                                description: "\(file.format == .dls ? file.formatDescription + " bank" : "SoundFont") \(choice.path) (\(choice.origin))",
                                bankPath: choice.path, quietBank: bankOptions.quiet)
    }

    /// As ``choose(input:)``, but makers of fresh instruments and effects for a batch, where
    /// every file needs its own (voices, effects and plugins keep state): samplers over the one
    /// loaded bank, plugins from the one catalogue.
    func chooseFactory(input: InputOptions) throws -> BatchInstrumentFactory {
        // Made once here, so every usage error is found before the batch starts; its catalogue
        // and plugin instances (not played yet) serve the batch's first file.
        var catalogue: LV2Catalogue?
        let choice = try choose(input: input, catalogue: &catalogue)
        let options = self
        let tuning = choice.tuning
        var factory: BatchInstrumentFactory
        if case .sampler(let first) = choice.instrument {
            let bank = first.bank
            let gain = choice.outputGain
            let rules = choice.regionRules
            factory = BatchInstrumentFactory(description: choice.description, makeInstrument: {
                .sampler(options.makeSampler(bank, regionRules: rules, outputGain: gain, tuning: tuning))
            })
        } else {
            factory = BatchInstrumentFactory(description: choice.description, makeInstrument: { options.makeSynthesizer(tuning: tuning) })
        }
        guard usesLV2Plugins else { return factory }
        let maker = PluginMaker(catalogue: catalogue, choice: choice)
        if lv2PluginURI != nil {
            factory.makeInstrument = {
                .node(try maker.make(\.spareInstrument) { catalogue in try options.freshPluginInstrument(input: input, catalogue: &catalogue)! })
            }
        }
        factory.makeEffects = {
            try maker.make(\.spareEffects) { catalogue in try options.freshPluginEffects(input: input, catalogue: &catalogue) }
        }
        factory.makeChannelInstruments = {
            try maker.make(\.spareChannelInstruments) { catalogue in
                try options.freshPluginChannelInstruments(input: input, catalogue: &catalogue)
            }
        }
        return factory
    }

    /// A new instance of the LV2 instrument the options name (nil when the instrument is not a
    /// plugin), set up as ``choose(input:song:)`` sets it up, with warnings left out (they were
    /// shown once): what a stem or a batch's file plays through, since plugins keep state. The
    /// options were checked when they were first chosen.
    func freshPluginInstrument(input: InputOptions, catalogue: inout LV2Catalogue?) throws -> LV2PluginNode? {
        guard let instrument, let spec = try? LV2PluginSpec.parse(instrument, option: "--instrument") else { return nil }
        return try loadPlugin(spec, kind: .instrument, input: input, file: nil, catalogue: &catalogue, warnings: false)
    }

    /// New instances of the LV2 effects the options name, as ``freshPluginInstrument(input:catalogue:)``.
    func freshPluginEffects(input: InputOptions, catalogue: inout LV2Catalogue?) throws -> [LV2PluginNode] {
        // validate(file:) has parsed each one.
        try effects.map { effect in
            try loadPlugin(try! LV2PluginSpec.parse(effect, option: "--effect")!, kind: .effect, input: input, file: nil,
                           catalogue: &catalogue, warnings: false)
        }
    }

    /// An installed LV2 instrument or effect with its control settings: without lilv, a plugin
    /// that is not installed (with close matches), one that needs features Tactus lacks or that
    /// is not of `kind`, one line and exit 69 (66 for an unknown URI); an unknown control or a
    /// value out of its range, one line and exit 64. The plugin's warnings and errors go to
    /// standard error, one line each (unless --quiet), never to standard output.
    /// `catalogue` is made on first use and shared by the instrument and the effects.
    func loadPlugin(_ spec: LV2PluginSpec, kind: LV2PluginInfo.Kind, input: InputOptions, file: String?,
                    catalogue: inout LV2Catalogue?, warnings: Bool = true, option: String? = nil) throws -> LV2PluginNode {
        let quiet = input.quiet
        let lowest = warnings ? LV2LogLevel.warning : LV2LogLevel.error
        let option = option ?? (kind == .instrument ? "--instrument" : "--effect")
        func failure(_ error: LV2Error) -> ExitCode {
            printError(error.description)
            return ExitCode(error.isUnavailable ? ExitStatus.unavailable : ExitStatus.noInput)
        }
        let plugins: LV2Catalogue, info: LV2PluginInfo
        do {
            if let catalogue {
                plugins = catalogue
            } else {
                plugins = try LV2Catalogue()
                catalogue = plugins
            }
            info = try plugins.plugin(spec.uri)
        } catch {
            throw failure(error)
        }
        guard info.kind == kind else {
            printError("\(info.name) (\(spec.uri)) is an LV2 \(info.kind.rawValue), not an \(kind.rawValue) (\(option))")
            throw ExitCode(ExitStatus.unavailable)
        }
        // What a plugin prints while it starts (ZynAddSubFX announces its OSC port) or loads a
        // file goes to standard error, as while it renders.
        let diversion = StandardOutputDiversion()
        defer { diversion.end() }
        let node: LV2PluginNode
        do {
            node = try LV2PluginNode(uri: spec.uri, catalogue: plugins) { plugin, level, message in
                guard !quiet, level.rawValue >= lowest.rawValue else { return }
                printError("\(plugin): \(level == .error ? "error" : "warning"): \(message)")
            }
        } catch {
            throw failure(error)
        }
        do {
            try spec.apply(to: node, option: option)
        } catch {
            printError((file.map { "\($0): " } ?? "") + error.message)
            throw ExitCode(error.status)
        }
        return node
    }

    /// An SFZ instrument: its bank, its warnings printed one line each (unless --quiet; with
    /// --strict the first warning is the error, exit 65), a missing file exits 66, an instrument
    /// that cannot be played 65.
    private func loadSFZ(_ path: String, input: InputOptions) throws -> InstrumentChoice {
        var options = SFZPlaybackOptions()
        if let sampleMemory { options.maximumSampleMemory = sampleMemory << 20 }
        let loaded: SFZPlayableInstrument
        do {
            loaded = try SFZBank.load(contentsOf: path, options: options)
        } catch {
            printError(error.description)
            throw ExitCode(error.isUnreadableInput ? ExitStatus.noInput : ExitStatus.dataError)
        }
        if input.strict, let first = loaded.warnings.first {
            printError("\(first.path):\(first.line): \(first.message) (--strict)")
            throw ExitCode(ExitStatus.dataError)
        }
        if !input.quiet {
            for warning in loaded.warnings { printError("\(warning.path):\(warning.line): warning: \(warning.message)") }
        }
        let gain = loaded.outputGain
        let description = "SFZ instrument \(path)" + (gain > 0 ? String(format: " (+%.1f dB)", gain) : "")
        return InstrumentChoice(instrument: .sampler(makeSampler(loaded.bank, regionRules: loaded.regionRules, outputGain: gain)),
                                description: description, regionRules: loaded.regionRules, outputGain: gain)
    }

    func makeSampler(_ bank: SoundFontBank, regionRules: [SamplerRegionRule] = [], outputGain: Double = 0,
                     tuning: KeyboardTuning? = nil) -> SamplerNode {
        let sampler = SamplerNode(bank: bank, regionRules: regionRules)
        if let tuning { sampler.setTuning(tuning) }
        if outputGain != 0 { sampler.setParameter(SamplerNode.Parameter.volume, value: Float(outputGain)) }
        if noReverb { sampler.setParameter(SamplerNode.Parameter.reverbLevel, value: 0) }
        if noChorus { sampler.setParameter(SamplerNode.Parameter.chorusLevel, value: 0) }
        if let polyphony { sampler.setParameter(SamplerNode.Parameter.voiceLimit, value: Float(polyphony)) }
        return sampler
    }
}

/// What a batch plays each file through: fresh instruments and effects, made on the batch's
/// worker threads.
struct BatchInstrumentFactory {
    /// The instrument as the manifest and the summary describe it.
    var description: String
    var makeInstrument: @Sendable () throws -> DefaultInstrument
    var makeEffects: @Sendable () throws -> [any AudioNode] = { [] }
    var makeChannelInstruments: @Sendable () throws -> [UInt8: any AudioNode] = { [:] }
}

/// Makes plugin nodes for a batch's worker threads, one at a time: lilv's world is not safe to
/// use from several threads at once, and instantiating is quick next to rendering. The
/// instances made while checking the options are handed out first, for one file.
private final class PluginMaker: @unchecked Sendable {
    private let lock = NSLock()
    private var catalogue: LV2Catalogue?
    fileprivate var spareInstrument: LV2PluginNode?
    fileprivate var spareEffects: [LV2PluginNode]?
    fileprivate var spareChannelInstruments: [UInt8: LV2PluginNode]?

    init(catalogue: LV2Catalogue?, choice: InstrumentChoice) {
        self.catalogue = catalogue
        spareInstrument = choice.plugin
        spareEffects = choice.effects
        spareChannelInstruments = choice.channelPlugins
    }

    /// What `spare` holds the first time, then what `body` makes.
    func make<Made>(_ spare: ReferenceWritableKeyPath<PluginMaker, Made?>, _ body: (inout LV2Catalogue?) throws -> Made) throws -> Made {
        lock.lock()
        defer { lock.unlock() }
        if let made = self[keyPath: spare] {
            self[keyPath: spare] = nil
            return made
        }
        return try body(&catalogue)
    }
}
