import Foundation
import SoundFont

/// A region flattened for the audio thread: ranges, sample and where its generator values and
/// modulators sit in the compiled bank's pools.
struct CompiledRegion {
    var keyLow: UInt8, keyHigh: UInt8
    var velocityLow: UInt8, velocityHigh: UInt8
    var sampleIndex: Int32
    /// Offset of the region's 61 generator values in ``CompiledBank/generators``.
    var generatorOffset: Int32
    var modulatorStart: Int32
    var modulatorCount: Int32
}

/// A modulator with its source words decoded once, so evaluating it is a table lookup and
/// two multiplications.
struct CompiledModulator {
    var source: ModulatorSource
    var amountSource: ModulatorSource
    var destination: Int32
    var amount: Float
    var absolute: Bool
}

/// A sample header reduced to what a voice reads.
struct CompiledSample {
    var start: Int
    var end: Int
    var loopStart: Int
    var loopEnd: Int
    var sampleRate: Double
    var originalPitch: Int
    var pitchCorrection: Int
    /// An Ogg Vorbis sample (SoundFont 3): its points and loop come from the decoded sample.
    var compressed: Bool
}

/// A `SoundFontBank` turned into flat, immutable tables, built off the audio thread: a note-on
/// walks a preset's regions through pointers, with no array copies, reference counting or
/// allocation.
final class CompiledBank: @unchecked Sendable {
    let bank: SoundFontBank
    let regions: UnsafeMutablePointer<CompiledRegion>
    let regionCount: Int
    /// Generator values of every region, 61 a region, as floats.
    let generators: UnsafeMutablePointer<Float>
    let modulators: UnsafeMutablePointer<CompiledModulator>
    let modulatorCount: Int
    /// Per preset: first region and count.
    let presetRegions: UnsafeMutablePointer<(start: Int32, count: Int32)>
    let presetCount: Int
    /// Preset index by `bank * 128 + program` for banks 0...128, after fallback; -1 when the
    /// bank has no preset at all.
    let lookup: UnsafeMutablePointer<Int32>
    let samples: UnsafeMutablePointer<CompiledSample>
    let sampleCount: Int
    let words: UnsafePointer<Int16>?
    let wordCount: Int
    let lowBytes: UnsafePointer<UInt8>?
    /// The bank's compressed samples (SoundFont 3), decoded off the audio thread.
    let compressed: SoundFontCompressedSamples?
    /// Per preset: the distinct samples its regions play.
    let presetSamples: [[Int]]

    static let lookupBanks = 129
    /// Velocity (linear, negative) to filter cutoff, switched by velocity: the default
    /// modulator FluidSynth disables.
    static let fluidSynthVelocityToCutoff = SoundFontModulator(source: 0x0102, destination: 8, amount: -2400,
                                                               amountSource: 0x0C02, transform: 0)

    init(_ bank: SoundFontBank) {
        self.bank = bank
        let allRegions = bank.presets.flatMap(\.regions)
        regionCount = allRegions.count
        regions = .allocate(capacity: max(1, regionCount))
        generators = .allocate(capacity: max(1, regionCount * SoundFontGenerator.count))
        let totalMods = allRegions.reduce(0) { $0 + $1.modulators.count }
        modulators = .allocate(capacity: max(1, totalMods))
        var modIndex = 0
        for (r, region) in allRegions.enumerated() {
            for g in 0..<SoundFontGenerator.count {
                generators[r * SoundFontGenerator.count + g] = Float(region.generators.values[g])
            }
            let modStart = modIndex
            for m in region.modulators {
                // Links to other modulators and destinations past the generator list have no
                // meaning without the reader's link resolution; they are left out.
                guard m.destination & 0x8000 == 0, Int(m.destination) < SoundFontGenerator.count else { continue }
                // FluidSynth makes any modulator identical to its default velocity-to-cutoff
                // modulator contribute nothing (its "S. Christian Collins" change: forced
                // velocity filtering made banks dull), so banks voiced against it never hear
                // it; neither does the sampler.
                if m.isIdentical(to: Self.fluidSynthVelocityToCutoff) { continue }
                modulators[modIndex] = CompiledModulator(
                    source: ModulatorSource(m.source), amountSource: ModulatorSource(m.amountSource),
                    destination: Int32(m.destination), amount: Float(m.amount), absolute: m.transform == 2)
                modIndex += 1
            }
            regions[r] = CompiledRegion(
                keyLow: region.keyRange.lowerBound, keyHigh: region.keyRange.upperBound,
                velocityLow: region.velocityRange.lowerBound, velocityHigh: region.velocityRange.upperBound,
                sampleIndex: Int32(region.sampleIndex), generatorOffset: Int32(r * SoundFontGenerator.count),
                modulatorStart: Int32(modStart), modulatorCount: Int32(modIndex - modStart))
        }
        modulatorCount = modIndex
        presetCount = bank.presets.count
        presetRegions = .allocate(capacity: max(1, presetCount))
        var start: Int32 = 0
        for (p, preset) in bank.presets.enumerated() {
            presetRegions[p] = (start, Int32(preset.regions.count))
            start += Int32(preset.regions.count)
        }
        let lookupSize = Self.lookupBanks * 128
        lookup = .allocate(capacity: lookupSize)
        // ``fallbackPreset(_:bank:program:)`` for every bank and program, from one pass over
        // the presets instead of up to three dictionary look-ups an entry (16,512 entries):
        // first the exact presets, keyed as ``SoundFontBank/presetPosition(bank:program:)``
        // keys them (`bank << 7 | program`, the first in file order winning), then the
        // fallbacks from those.
        lookup.initialize(repeating: -1, count: lookupSize)
        var bankHasPresets = [Bool](repeating: false, count: Self.lookupBanks)
        for (i, preset) in bank.presets.enumerated() {
            let key = preset.bank << 7 | preset.program
            if key >= 0 && key < lookupSize && lookup[key] < 0 {
                lookup[key] = Int32(i)
                bankHasPresets[key >> 7] = true
            }
        }
        let last = bank.presets.isEmpty ? Int32(-1) : 0
        let standardKit = lookup[128 << 7] >= 0 ? lookup[128 << 7] : last
        // What a melodic bank without the program plays: bank 0's program, else the first.
        var melodic = [Int32](repeating: last, count: 128)
        for program in 0..<128 where lookup[program] >= 0 { melodic[program] = lookup[program] }
        for b in 0..<Self.lookupBanks {
            let row = lookup + b * 128
            if !bankHasPresets[b] {
                // No exact preset in the bank: the whole row is the fallback.
                if b == 128 { row.update(repeating: standardKit, count: 128) } else { row.update(from: melodic, count: 128) }
                continue
            }
            for program in 0..<128 where row[program] < 0 { row[program] = b == 128 ? standardKit : melodic[program] }
        }
        sampleCount = bank.samples.count
        samples = .allocate(capacity: max(1, sampleCount))
        for (i, s) in bank.samples.enumerated() {
            samples[i] = CompiledSample(
                start: s.start, end: s.end, loopStart: s.loopStart, loopEnd: s.loopEnd,
                sampleRate: Double(max(1, s.sampleRate)),
                // 255 marks an unpitched sample; the specification says to treat it as 60.
                originalPitch: s.originalPitch > 127 ? 60 : Int(s.originalPitch),
                pitchCorrection: Int(s.pitchCorrection), compressed: s.isCompressed)
        }
        compressed = bank.compressedSamples
        presetSamples = bank.presets.map { preset in
            var seen = Set<Int>()
            return preset.regions.map(\.sampleIndex).filter { seen.insert($0).inserted }
        }
        words = bank.sampleData.words.baseAddress.map { UnsafePointer($0) }
        wordCount = bank.sampleData.words.count
        lowBytes = bank.sampleData.lowBytes?.baseAddress.map { UnsafePointer($0) }
    }

    deinit {
        regions.deallocate()
        generators.deallocate()
        modulators.deallocate()
        presetRegions.deallocate()
        lookup.deallocate()
        samples.deallocate()
    }

    /// The preset a channel plays for `bank` and `program`: the exact one, else (percussion)
    /// the standard kit 128:0 or (melodic) the same program in bank 0, else the first preset,
    /// so a bank with a single preset (an audio-file patch) plays on every channel.
    static func fallbackPreset(_ soundFont: SoundFontBank, bank: Int, program: Int) -> Int? {
        if let p = soundFont.presetPosition(bank: bank, program: program) { return p }
        if bank == 128 {
            if let p = soundFont.presetPosition(bank: 128, program: 0) { return p }
        } else if let p = soundFont.presetPosition(bank: 0, program: program) {
            return p
        }
        return soundFont.presets.isEmpty ? nil : 0
    }

    /// Index of the preset for a channel's bank and program (-1: the bank is empty).
    @inline(__always)
    func preset(bank: Int, program: Int) -> Int {
        let b = min(max(bank, 0), Self.lookupBanks - 1)
        return Int(lookup[b * 128 + (program & 0x7F)])
    }
}
