/// Turns a ``DLSCollection`` into the sampler's SoundFont model: each region becomes one
/// ``SoundFontRegion`` whose generators carry the region's `wsmp` and articulation.
///
/// Unit conversions (DLS values are 16.16 fixed point): absolute and relative time cents and
/// pitch cents are SoundFont timecents and cents after dividing by 65,536 (the DLS "zero time"
/// 0x80000000 becomes the SoundFont minimum, -12,000); DLS gain in centibels is the negated
/// SoundFont attenuation; DLS sustain levels in 0.1 % become SoundFont attenuation (volume
/// envelope, in centibels over 100 dB) or 0.1 % below full (modulation envelope); DLS key
/// scaling, normalised over 128 keys from key 0, becomes SoundFont per-key scaling from key 60.
enum DLSConverter {
    static func convert(_ dls: DLSCollection, bytes: UnsafeRawBufferPointer, defaultName: String,
                        options: SoundFontReadOptions) throws(SoundFontError) -> SoundFontFile {
        var warnings = dls.warnings
        var builder = SoundFontBankBuilder()
        var waveSample: [Int: Int] = [:]
        var headers: [SampleKey: Int] = [:]
        var unmapped = Set<DLSConnectionKey>()
        var presets: [SoundFontPreset] = []
        var sampleBytes = 0
        func warn(_ message: String) throws(SoundFontError) {
            let warning = SoundFontWarning(location: SoundFontLocation(chunk: "lins", offset: 0), message: message)
            if options.strict { throw SoundFontError(location: warning.location, reason: .strict(warning)) }
            if warnings.count < options.maximumWarningCount { warnings.append(warning) }
        }
        for instrument in dls.instruments {
            var regions: [SoundFontRegion] = []
            for (r, region) in instrument.regions.enumerated() {
                let cue = Int(region.waveIndex)
                guard cue < dls.poolTable.count, let w = dls.poolTable[cue], dls.waves[w].channels > 0 else {
                    try warn("instrument '\(instrument.name)' region \(r) plays pool entry \(cue), which names no usable wave; region ignored")
                    continue
                }
                let wave = dls.waves[w]
                guard wave.frameCount > 0 else {
                    try warn("instrument '\(instrument.name)' region \(r) plays an empty wave; region ignored")
                    continue
                }
                let base: Int
                if let known = waveSample[w] {
                    base = known
                } else {
                    guard let appended = builder.append(pcm(wave, bytes), name: wave.name.isEmpty ? "wave \(w)" : wave.name) else {
                        throw SoundFontError(location: SoundFontLocation(chunk: "wvpl", offset: wave.dataOffset), reason: .limitExceeded("more sample points than a bank can address"))
                    }
                    if wave.channels > 1 {
                        try warn("wave '\(wave.name)' has \(wave.channels) channels; its first is played")
                    }
                    sampleBytes += wave.frameCount * wave.channels * wave.bitsPerSample / 8
                    base = appended
                    waveSample[w] = appended
                }
                let info = region.sampleInfo ?? wave.sampleInfo ?? DLSSampleInfo()
                let loop = info.loops.first.flatMap { loop -> (Int, Int)? in
                    let start = Int(loop.start), end = Int(loop.start) + Int(loop.length)
                    return loop.length > 0 && end <= wave.frameCount ? (start, end) : nil
                }
                if let first = info.loops.first, loop == nil {
                    try warn("wave '\(wave.name)': loop \(first.start)+\(first.length) is outside its \(wave.frameCount) frames; played without the loop")
                }
                let unity = UInt8(min(Int(info.unityNote), 127))
                let key = SampleKey(wave: w, loopStart: loop?.0 ?? 0, loopEnd: loop?.1 ?? wave.frameCount, unity: unity)
                let sampleIndex: Int
                if let known = headers[key] {
                    sampleIndex = known
                } else {
                    var header = builder.samples[base]
                    header.link = nil
                    header.kind = .mono
                    header.loopStart = header.start + key.loopStart
                    header.loopEnd = header.start + key.loopEnd
                    header.originalPitch = unity
                    sampleIndex = builder.samples.count
                    builder.samples.append(header)
                    headers[key] = sampleIndex
                }
                var generators = SoundFontGenerators.defaults
                generators[.fineTune] = Int32(info.fineTune)
                generators[.initialAttenuation] = Int32(-(info.gain / 65_536))
                generators[.sampleModes] = loop == nil ? 0 : (info.loops[0].type == 1 ? 3 : 1)
                generators[.exclusiveClass] = Int32(region.keyGroup)
                var modulators = SoundFontModulator.defaults
                let connections = region.connections.isEmpty ? instrument.connections : region.connections
                apply(connections, to: &generators, modulators: &modulators, unmapped: &unmapped)
                let keyLow = UInt8(min(Int(region.keyLow), 127)), keyHigh = UInt8(min(Int(region.keyHigh), 127))
                var velocityLow = UInt8(min(Int(region.velocityLow), 127)), velocityHigh = UInt8(min(Int(region.velocityHigh), 127))
                if velocityHigh == 0 {
                    // DLS Level 1 ignores the velocity range, and its writers often leave it 0.
                    velocityLow = 0
                    velocityHigh = 127
                }
                guard keyLow <= keyHigh, velocityLow <= velocityHigh else {
                    try warn("instrument '\(instrument.name)' region \(r) has an empty key or velocity range; region ignored")
                    continue
                }
                regions.append(SoundFontRegion(keyRange: keyLow...keyHigh, velocityRange: velocityLow...velocityHigh,
                                               sampleIndex: sampleIndex, generators: generators, modulators: modulators))
            }
            let bank = instrument.isDrumKit ? 128 : Int((instrument.bank >> 8) & 0x7F)
            presets.append(SoundFontPreset(name: instrument.name, bank: bank, program: Int(instrument.program & 0x7F), regions: regions))
        }
        for key in unmapped.sorted(by: { ($0.source, $0.control, $0.destination) < ($1.source, $1.control, $1.destination) }) {
            try warn("articulation connection source \(hex(key.source)) control \(hex(key.control)) destination \(hex(key.destination)) is not mapped; ignored")
        }
        var info = SoundFontInfo()
        info.name = dls.name
        info.copyright = dls.copyright
        info.software = dls.software
        info.comments = dls.comments
        info.version = SoundFontVersion(major: dls.isLevel2 ? 2 : 1, minor: 0)
        let name = (dls.name?.isEmpty == false ? dls.name : nil) ?? defaultName
        let bank = builder.makeBank(name: name, presets: presets)
        return SoundFontFile(bank: bank, info: info, warnings: warnings, sampleDataByteCount: sampleBytes, format: .dls)
    }

    static func hex(_ v: UInt16) -> String {
        let digits = String(v, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    struct SampleKey: Hashable {
        var wave: Int, loopStart: Int, loopEnd: Int, unity: UInt8
    }

    struct DLSConnectionKey: Hashable {
        var source: UInt16, control: UInt16, destination: UInt16
    }

    /// The wave's first channel as 24-bit points.
    static func pcm(_ wave: DLSWave, _ bytes: UnsafeRawBufferPointer) -> PCMAudio {
        var points = [Int32]()
        points.reserveCapacity(wave.frameCount)
        let stride = wave.channels * wave.bitsPerSample / 8
        for frame in 0..<wave.frameCount {
            let at = wave.dataOffset + frame * stride
            if wave.bitsPerSample == 8 {
                points.append((Int32(bytes[at]) - 128) << 16)
            } else {
                points.append(Int32(bytes.i16le(at)) << 8)
            }
        }
        return PCMAudio(sampleRate: wave.sampleRate, channels: [points], hasLowBytes: false)
    }

    // DLS connection sources and destinations (DLS Level 2 specification, section 2.10).
    static let srcNone: UInt16 = 0, srcLFO: UInt16 = 1, srcVelocity: UInt16 = 2, srcKey: UInt16 = 3
    static let srcEG2: UInt16 = 5, srcChannelPressure: UInt16 = 8, srcVibrato: UInt16 = 9, srcCC1: UInt16 = 0x81
    static let dstGain: UInt16 = 1, dstPitch: UInt16 = 3, dstPan: UInt16 = 4, dstChorus: UInt16 = 0x80, dstReverb: UInt16 = 0x81
    static let dstFilterCutoff: UInt16 = 0x500, dstFilterQ: UInt16 = 0x501

    /// Sources the SoundFont default modulators already connect the way DLS defines them
    /// (pitch wheel by RPN 0, CC7, CC10, CC11, CC91, CC93, RPN 1 and 2): nothing to add.
    static let coveredByDefaults: Set<UInt16> = [6, 0x87, 0x8A, 0x8B, 0xDB, 0xDD, 0x100, 0x101, 0x102]

    static func apply(_ connections: [DLSConnection], to g: inout SoundFontGenerators, modulators: inout [SoundFontModulator],
                      unmapped: inout Set<DLSConnectionKey>) {
        var keyToVolDecay: Int32 = 0, keyToVolHold: Int32 = 0, keyToModDecay: Int32 = 0, keyToModHold: Int32 = 0
        for c in connections {
            let units = Int32(clamping: (Int64(c.scale) + (c.scale >= 0 ? 32_768 : -32_768)) / 65_536)
            let time = c.scale == Int32.min ? -12_000 : max(-12_000, min(units, 8_000))
            let level = Int32(max(0, min(1000, units)))
            switch (c.source, c.control, c.destination) {
            case (srcNone, 0, 0x20B): g[.delayVolEnv] = time
            case (srcNone, 0, 0x206): g[.attackVolEnv] = time
            case (srcNone, 0, 0x20C): g[.holdVolEnv] = time
            case (srcNone, 0, 0x207): g[.decayVolEnv] = time
            case (srcNone, 0, 0x20A): g[.sustainVolEnv] = 1000 - level
            case (srcNone, 0, 0x209): g[.releaseVolEnv] = time
            case (srcNone, 0, 0x30F): g[.delayModEnv] = time
            case (srcNone, 0, 0x30A): g[.attackModEnv] = time
            case (srcNone, 0, 0x310): g[.holdModEnv] = time
            case (srcNone, 0, 0x30B): g[.decayModEnv] = time
            case (srcNone, 0, 0x30E): g[.sustainModEnv] = 1000 - level
            case (srcNone, 0, 0x30D): g[.releaseModEnv] = time
            case (srcKey, 0, 0x207): keyToVolDecay = units
            case (srcKey, 0, 0x20C): keyToVolHold = units
            case (srcKey, 0, 0x30B): keyToModDecay = units
            case (srcKey, 0, 0x310): keyToModHold = units
            case (srcNone, 0, 0x104): g[.freqModLFO] = units
            case (srcNone, 0, 0x105): g[.delayModLFO] = time
            case (srcNone, 0, 0x114): g[.freqVibLFO] = units
            case (srcNone, 0, 0x115): g[.delayVibLFO] = time
            case (srcLFO, 0, dstPitch): g[.modLFOToPitch] = units
            case (srcLFO, 0, dstGain): g[.modLFOToVolume] = units
            case (srcLFO, 0, dstFilterCutoff): g[.modLFOToFilterCutoff] = units
            case (srcVibrato, 0, dstPitch): g[.vibLFOToPitch] = units
            case (srcEG2, 0, dstPitch): g[.modEnvToPitch] = units
            case (srcEG2, 0, dstFilterCutoff): g[.modEnvToFilterCutoff] = units
            case (srcNone, 0, dstFilterCutoff):
                // DLS marks "no filter" with a cutoff at the top of the range.
                g[.initialFilterCutoff] = units >= 13_500 || c.scale == Int32.max ? 13_500 : units
            case (srcNone, 0, dstFilterQ): g[.initialFilterQ] = units
            case (srcNone, 0, dstPan): g[.pan] = units
            case (srcNone, 0, dstChorus): g[.chorusEffectsSend] = units
            case (srcNone, 0, dstReverb): g[.reverbEffectsSend] = units
            case (srcNone, 0, dstPitch): g[.fineTune] += units
            case (srcNone, 0, dstGain): g[.initialAttenuation] -= units
            case (srcKey, 0, dstPitch): g[.scaleTuning] = units / 128
            case (srcVelocity, 0, dstGain):
                // The default velocity curve (concave, 96 dB) is the SoundFont default's too.
                setModulator(&modulators, source: 0x0502, destination: 48, amount: -units)
            case (srcLFO, srcCC1, dstPitch): setModulator(&modulators, source: 0x0081, destination: 5, amount: units)
            case (srcVibrato, srcCC1, dstPitch): setModulator(&modulators, source: 0x0081, destination: 6, amount: units)
            case (srcLFO, srcChannelPressure, dstPitch): setModulator(&modulators, source: 0x000D, destination: 5, amount: units)
            case (srcVibrato, srcChannelPressure, dstPitch): setModulator(&modulators, source: 0x000D, destination: 6, amount: units)
            case (srcLFO, srcCC1, dstGain): setModulator(&modulators, source: 0x0081, destination: 13, amount: units)
            case (srcLFO, srcCC1, dstFilterCutoff): setModulator(&modulators, source: 0x0081, destination: 10, amount: units)
            default:
                if coveredByDefaults.contains(c.source) || c.destination == 0 || c.destination == 0x20D { continue }
                unmapped.insert(DLSConnectionKey(source: c.source, control: c.control, destination: c.destination))
            }
        }
        // DLS scales by key / 128 from key 0; SoundFont by (60 - key) from key 60.
        func keyScaling(_ units: Int32, _ base: SoundFontGenerator, _ perKey: SoundFontGenerator) {
            guard units != 0 else { return }
            g[perKey] = -units / 128
            g[base] += units * 60 / 128
        }
        keyScaling(keyToVolDecay, .decayVolEnv, .keyNumberToVolEnvDecay)
        keyScaling(keyToVolHold, .holdVolEnv, .keyNumberToVolEnvHold)
        keyScaling(keyToModDecay, .decayModEnv, .keyNumberToModEnvDecay)
        keyScaling(keyToModHold, .holdModEnv, .keyNumberToModEnvHold)
    }

    /// Sets the amount of the modulator from `source` to `destination`, replacing a default
    /// one, or adds it.
    static func setModulator(_ list: inout [SoundFontModulator], source: UInt16, destination: UInt16, amount: Int32) {
        let value = Int16(clamping: amount)
        if let i = list.firstIndex(where: { $0.source == source && $0.destination == destination && $0.amountSource == 0 }) {
            list[i].amount = value
        } else {
            list.append(SoundFontModulator(source: source, destination: destination, amount: value, amountSource: 0, transform: 0))
        }
    }
}
