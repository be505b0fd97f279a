import Sampler
import SFZ
import SoundFont

/// Limits on what building an SFZ instrument's bank may take.
public struct SFZPlaybackOptions: Hashable, Sendable {
    /// The most decoded sample memory, in bytes (1 GiB): every sample file is decoded into
    /// memory at 3 bytes per point (2 for 16-bit-only instruments). Going over is an
    /// ``SFZPlaybackError`` naming the sample that did not fit.
    public var maximumSampleMemory = 1 << 30

    /// The defaults above.
    public init() {}
}

/// An SFZ instrument that cannot be played, naming the file (the instrument or a sample) and
/// what is wrong.
public struct SFZPlaybackError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The instrument file, an included file, or the sample concerned.
    public var path: String
    /// The 1-based line in ``path`` the problem is on, or nil when it concerns the whole file.
    public var line: Int?
    /// What is wrong (for a sample, also the region that names it).
    public var reason: String
    /// True when a file is missing or unreadable (the CLI exits 66), false for content that
    /// was refused (65).
    public var isUnreadableInput: Bool

    /// Creates an error.
    public init(path: String, line: Int? = nil, reason: String, isUnreadableInput: Bool = false) {
        self.path = path
        self.line = line
        self.reason = reason
        self.isUnreadableInput = isUnreadableInput
    }

    /// `path:line: reason`, the line left out when there is none.
    public var description: String { path + (line.map { ":\($0)" } ?? "") + ": " + reason }
}

/// An SFZ instrument made playable by the SoundFont sampler.
public struct SFZPlayableInstrument: Sendable {
    /// The bank: one preset (bank 0, program 0), one SoundFont region per SFZ region and
    /// channel, which the sampler plays on every MIDI channel.
    public var bank: SoundFontBank
    /// One selection rule per region of the bank, in order: trigger, channels, round robin,
    /// random draw, key switch, controller ranges, velocity curve, envelope velocity terms and
    /// release decay, which SoundFont cannot express.
    public var regionRules: [SamplerRegionRule]
    /// Decibels to raise the sampler's output by (its volume parameter, 0...12): SoundFont
    /// attenuation cannot amplify, so when regions ask for gain above 0 dB every region is
    /// attenuated by the loudest region's gain and the whole instrument raised by it.
    public var outputGain: Double
    /// The reader's warnings, then one per opcode that was read but is not played (or is
    /// played approximately), naming the first region that uses it.
    public var warnings: [SFZWarning]
}

/// Builds SoundFont banks from SFZ instruments, so the sampler plays them.
///
/// ```swift
/// let instrument = try SFZBank.load(contentsOf: "Piano/piano.sfz")
/// let sampler = SamplerNode(bank: instrument.bank, regionRules: instrument.regionRules)
/// sampler.setParameter(SamplerNode.Parameter.volume, value: Float(instrument.outputGain))
/// ```
///
/// Every opcode SoundFont generators express plays: key and velocity ranges, `pitch_keycenter`
/// (also `sample`: the file's stored root key), `transpose`/`tune`, `pitch_keytrack`,
/// `volume`/`amplitude`, the amplitude envelope, loops
/// (also those stored in the sample files), `offset`/`end`, the low-pass filter with
/// `fil_keytrack`/`fil_veltrack` and the filter envelope. What SoundFont cannot express becomes
/// ``SFZPlayableInstrument/regionRules`` for the sampler: `trigger` (release, release_key,
/// first, legato), `lochan`/`hichan`, `seq_length`/`seq_position`, `lorand`/`hirand`, the key
/// switches, `loccN`/`hiccN`, `group`/`off_by`/`off_mode`, `polyphony`/`note_polyphony`/`note_selfmask`,
/// `loop_mode=one_shot`, `fil_type` (sfizz's filters, and none without `cutoff`), sfizz's level,
/// `pan`, `width` and `position` and note start (the sampler's `SamplerSFZVoicing`), the velocity
/// curve (`amp_veltrack`, `amp_velcurve_N`), the envelopes' `vel2*` terms, `ampeg_start` and
/// `rt_decay`. What is played neither way is reported as a warning.
public enum SFZBank {
    /// Reads the instrument at `path`, finds its samples and builds its bank.
    public static func load(contentsOf path: String, options: SFZPlaybackOptions = SFZPlaybackOptions(),
                            readOptions: SFZReadOptions = SFZReadOptions()) throws(SFZPlaybackError) -> SFZPlayableInstrument {
        var instrument: SFZInstrument
        do {
            instrument = try SFZInstrument.load(contentsOf: path, options: readOptions)
            try instrument.locateSamples()
        } catch {
            throw SFZPlaybackError(path: error.path, line: error.line, reason: error.reason, isUnreadableInput: error.isUnreadableInput)
        }
        return try build(instrument, options: options)
    }

    /// Builds the bank of an instrument whose samples were located
    /// (`SFZInstrument.locateSamples()`).
    public static func build(_ instrument: SFZInstrument, options: SFZPlaybackOptions = SFZPlaybackOptions()) throws(SFZPlaybackError) -> SFZPlayableInstrument {
        var translator = SFZTranslator(options: options)
        let regions = try translator.translate(instrument.regions)
        let name = String((instrument.path.split(separator: "/").last ?? Substring(instrument.path)).split(separator: ".").first ?? "sfz")
        let bank = translator.storage.makeBank(name: name, presets: [SoundFontPreset(name: name, bank: 0, program: 0, regions: regions)])
        return SFZPlayableInstrument(bank: bank, regionRules: translator.rules, outputGain: translator.outputGain,
                                     warnings: instrument.warnings + translator.notPlayed.warnings)
    }
}
