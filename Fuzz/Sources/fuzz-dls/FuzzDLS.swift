import SoundFont

/// Reads any bytes as a DLS bank (or an RMI file carrying one). When the reader accepts them,
/// the converted bank must keep the promises the sampler relies on, checked here as fuzz-sf2
/// checks SoundFont banks: every matching region's sample points inside the sample data.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDLS(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var options = SoundFontReadOptions()
    options.maximumRegionCount = 50_000
    options.maximumWarningCount = 50
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    // The raw reading alone: it must not trap either, whatever conversion makes of it.
    _ = try? DLSReader.collection(raw, options: options)
    guard let file = try? DLSReader.read(raw, options: options) else { return 0 }
    let bank = file.bank
    let words = bank.sampleData.words
    var checksum = 0
    for preset in bank.presets {
        guard (0...128).contains(preset.bank), (0...127).contains(preset.program) else { fatalError("preset number out of range") }
        for region in preset.regions {
            guard region.sampleIndex >= 0, region.sampleIndex < bank.samples.count else { fatalError("region names a missing sample") }
            let sample = bank.samples[region.sampleIndex]
            guard sample.start <= sample.loopStart, sample.loopStart <= sample.loopEnd, sample.loopEnd <= sample.end,
                  sample.start < sample.end, sample.end <= words.count else {
                fatalError("sample points outside the sample data")
            }
            for point in [sample.start, sample.loopStart, max(sample.start, sample.loopEnd - 1), sample.end - 1] {
                checksum &+= Int(words[point])
            }
            guard region.keyRange.upperBound <= 127, region.velocityRange.upperBound <= 127 else { fatalError("range past 127") }
            for modulator in region.modulators where Int(modulator.destination) >= SoundFontGenerator.count {
                fatalError("modulator destination \(modulator.destination) is not a generator")
            }
        }
    }
    checksumSink &+= checksum
    return 0
}

/// Keeps the sample reads above from being optimized away (the fuzzer runs on one thread).
nonisolated(unsafe) var checksumSink = 0
