import AudioFileOutput
import AudioGraph
import Foundation
import MIDI
import MIDIFile
import Playback
import Sequencing

/// Training data for every input of a batch, one folder per input laid out as Slakh2100 lays
/// out its tracks: `mix.EXT`, `stems/NAME.EXT` (each stem as long as the mix), `MIDI/NAME.mid`
/// (the notes each stem plays), `all_src.mid` (the song as rendered, augmentation included),
/// `labels.json` and `labels.npz` (every note, as `tactus render --labels` writes them) and `metadata.yaml`
/// (the stems with their tracks, program and class).
///
/// A folder is written whole or not at all: everything goes into a temporary folder beside it
/// that is renamed into place last, so an interrupted run leaves no half folder and a rerun
/// finds every input either complete (its `mix.EXT` exists) or still to render.
public struct DatasetLayout: Sendable, Hashable {
    /// How each song is split into stems.
    public var grouping: StemGrouping

    /// Stems by `grouping`.
    public init(grouping: StemGrouping = .track) {
        self.grouping = grouping
    }

    /// The file name of the mix inside an input's folder.
    public static func mixName(fileExtension: String) -> String { "mix." + fileExtension }

    /// The folder an input's mix path lies in.
    static func folder(ofMix mix: String) -> String { (mix as NSString).deletingLastPathComponent }
}

/// A folder being filled before it is renamed into place (see ``DatasetLayout``).
struct DatasetStaging {
    /// The temporary folder: `.NAME.partial-PID-RANDOM` beside the final one.
    let path: String
    /// Where it goes when complete.
    let destination: String

    /// Creates the temporary folder beside `destination` (whose parent must exist).
    init(destination: String) throws(OutputFileError) {
        let url = URL(fileURLWithPath: destination)
        let template = url.deletingLastPathComponent().path + "/." + url.lastPathComponent + OutputFile.temporaryInfix + "\(getpid())-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw .cannotCreate(destination, String(cString: strerror(errno)))
        }
        path = String(cString: made)
        self.destination = destination
    }

    /// `name` inside the temporary folder.
    func file(_ name: String) -> String { path + "/" + name }

    /// Renames the folder into place. A folder already there is replaced when `replacing`
    /// (an earlier complete render, rendered again with `--overwrite`), else refused.
    func commit(replacing: Bool) throws(OutputFileError) {
        if rename(path, destination) == 0 { return }
        let reason = errno
        guard reason == ENOTEMPTY || reason == EEXIST else { throw .cannotCreate(destination, String(cString: strerror(reason))) }
        guard replacing else {
            throw .cannotCreate(destination, "a folder is already there without a complete render; remove it or pass --overwrite")
        }
        // Moved aside under a temporary name first, so a failure leaves one whole folder in place.
        let aside = path + "-replaced"
        guard rename(destination, aside) == 0 else { throw .cannotCreate(destination, String(cString: strerror(errno))) }
        guard rename(path, destination) == 0 else {
            let failure = String(cString: strerror(errno))
            _ = rename(aside, destination)
            throw .cannotCreate(destination, failure)
        }
        try? FileManager.default.removeItem(atPath: aside)
    }

    /// Removes the temporary folder and what it holds.
    func abandon() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

extension FileRender {
    /// What a stem render needs from the mix: its length, where the song ends in it, the
    /// mix's gain and the draw whose effect factors the instrument takes.
    struct MixShape {
        var frameCount: Int64
        var endFrame: Int64
        var gainDecibels: Float
        var augmentation: AugmentationDraw?
    }

    /// Fills the staging folder around an already rendered mix: stems, their MIDI, the song,
    /// labels and metadata. Returns a failure message (with its exit code) or nil.
    func writeDatasetFiles(_ sequence: MusicSequence, layout: DatasetLayout, staging: DatasetStaging, mix: MixShape,
                           schedule: Schedule, augmentation: AugmentationDraw?) -> (code: Int32, message: String, status: BatchStatus)? {
        let stems = sequence.stems(by: layout.grouping)
        let fileExtension = settings.format.fileExtension
        for folder in ["stems", "MIDI"] where mkdir(staging.file(folder), 0o777) != 0 {
            return (Code.cannotCreate, "\(staging.destination)/\(folder): cannot create (\(String(cString: strerror(errno))))", .failed)
        }
        for stem in stems {
            if let failure = renderStem(stem, path: staging.file("stems/\(stem.name).\(fileExtension)"), mix: mix) { return failure }
        }
        let labels = schedule.noteLabels(stems: stems)
        var files: [(String, [UInt8])] = [
            ("labels.json", NoteLabel.json(labels, sampleRate: settings.sampleRate, augmentation: augmentation?.description)),
            ("labels.npz", NoteLabel.npz(labels, sampleRate: settings.sampleRate, stemNames: stems.map(\.name),
                                         augmentation: augmentation?.description)),
            ("metadata.yaml", Array(Self.metadata(stems, labels: labels, source: entry.input.relativePath, settings: settings,
                                                  augmentation: augmentation).utf8)),
        ]
        do {
            files.append(("all_src.mid", try SMFWriter.checkedBytes(of: sequence)))
            for stem in stems { files.append(("MIDI/\(stem.name).mid", try SMFWriter.checkedBytes(of: stem.sequence))) }
        } catch {
            return (Code.dataError, "\(entry.input.path): \(error)", .failed)
        }
        for (name, bytes) in files {
            do {
                let file = try OutputFile(path: staging.file(name))
                try bytes.withUnsafeBytes { try file.write($0) }
                try file.commit()
            } catch {
                return (Code.cannotCreate, "\(staging.destination)/\(name): \(error)", .failed)
            }
        }
        return nil
    }

    /// Renders one stem through a fresh instrument and fresh effects (the chain the mix went
    /// through), exactly as long as the mix, under the same guards (stop request, deadline).
    private func renderStem(_ stem: Stem, path: String, mix: MixShape) -> (code: Int32, message: String, status: BatchStatus)? {
        let input = entry.input.path
        let instrument: DefaultInstrument, effects: [any AudioNode], channelInstruments: [UInt8: any AudioNode]
        do {
            instrument = try makeInstrument().applyingEffectFactors(of: mix.augmentation)
            effects = try makeEffects()
            channelInstruments = try makeChannelInstruments()
            if case .sampler(let sampler) = instrument, sampler.hasCompressedSamples {
                _ = try sampler.prepareSamples(forNotes: stem.sequence.samplerPlayedNotes())
            }
        } catch {
            return (Code.dataError, "\(input): stem \(stem.name): \(error)", .failed)
        }
        // A tail reaching at least the mix's last frame: the fixed-length sink cuts the rest.
        let tailSeconds = Double(max(0, mix.frameCount - mix.endFrame) + 1) / Double(settings.sampleRate)
        let session: PlaybackSession
        do {
            var options = PlaybackSession.Options(instrument: .custom(instrument), gainDecibels: mix.gainDecibels,
                                                  tail: .seconds(tailSeconds), sampleRate: settings.sampleRate)
            options.effects = effects
            options.channelInstruments = channelInstruments
            session = try PlaybackSession(sequence: stem.sequence, options: options)
        } catch {
            return (Code.dataError, "\(input): stem \(stem.name): \(error)", .failed)
        }
        session.setRate(1)
        session.setEnd(tick: nil)
        let writer: any AudioSink
        do {
            writer = try settings.format.makeWriter(path: path, sampleRate: settings.sampleRate, channelCount: settings.mono ? 1 : 2)
        } catch {
            return (Code.cannotCreate, "\(error)", .failed)
        }
        let guarded = GuardedSink(FixedLengthSink(writer, frameCount: mix.frameCount), output: path, stop: stop, deadline: deadline,
                                  maximumFrames: nil)
        let backend = OfflineBackend(sink: guarded, name: path, blockSize: settings.blockSize)
        do {
            try session.start(on: backend)
            _ = try session.waitUntilFinished()
        } catch {
            switch guarded.stoppedBy {
            case .timedOut?:
                return (Code.ioError, "\(input): still rendering stems after \(settings.timeoutSeconds ?? 0) s (--timeout)", .timedOut)
            case .stopRequested?:
                return (Code.ioError, "\(input): stopped by a signal before the end; nothing written", .interrupted)
            default:
                return (Code.ioError, "\(input): stem \(stem.name): \(error)", .failed)
            }
        }
        return nil
    }

    /// `metadata.yaml`: Slakh's keys where they apply (`audio_dir`, `midi_dir`, and per stem
    /// `inst_class`, `is_drum`, `program_num`, `audio_rendered`, `midi_saved`), plus the source,
    /// sample rate, draw and each stem's tracks. Strings are double-quoted (JSON escapes are
    /// valid YAML), so any track name reads back as written.
    static func metadata(_ stems: [Stem], labels: [NoteLabel], source: String, settings: BatchRenderSettings,
                         augmentation: AugmentationDraw?) -> String {
        var text = "source: \(NoteLabel.jsonString(source))\nsample_rate: \(settings.sampleRate)\n"
        if let augmentation { text += "augmentation: \(NoteLabel.jsonString(augmentation.description))\n" }
        text += "audio_dir: \"stems\"\nmidi_dir: \"MIDI\"\nstems:\(stems.isEmpty ? " {}" : "")\n"
        for stem in stems {
            let first = labels.first { $0.stem == stem.name }
            let isDrum = first?.channel == 9
            let program = Int(first?.program ?? 0)
            text += "  \(NoteLabel.jsonString(stem.name)):\n"
            text += "    tracks: [\(stem.tracks.map { "\($0 + 1)" }.joined(separator: ", "))]\n"
            text += "    inst_class: \(NoteLabel.jsonString(isDrum ? "drums" : MusicSequence.programFamilies[program / 8]))\n"
            text += "    is_drum: \(isDrum)\n    program_num: \(program)\n"
            text += "    audio_rendered: true\n    midi_saved: true\n"
        }
        return text
    }
}
