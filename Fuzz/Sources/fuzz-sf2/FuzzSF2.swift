import SoundFont

/// Reads any bytes as a SoundFont bank. When the reader accepts them, the bank must keep the
/// promises the sampler relies on, checked here by playing every preset at a few keys and
/// velocities and reading the sample points each matching region would play.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSF2(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var options = SoundFontReadOptions()
    // A 64 KiB input can describe millions of regions; the default limit would spend the
    // fuzzer's time allocating them rather than finding bugs.
    options.maximumRegionCount = 50_000
    options.maximumWarningCount = 50
    guard let file = try? SoundFontReader.read(UnsafeRawBufferPointer(start: data, count: size), options: options) else { return 0 }
    let bank = file.bank
    let words = bank.sampleData.words
    if let low = bank.sampleData.lowBytes, low.count != words.count { fatalError("24-bit low bytes do not match the words") }
    var checksum = 0
    for preset in bank.presets {
        guard bank.preset(bank: preset.bank, program: preset.program) != nil else { fatalError("a listed preset cannot be found") }
        for key in [0, 21, 60, 108, 127] as [UInt8] {
            for velocity in [1, 64, 127] as [UInt8] {
                for region in preset.regions where region.keyRange.contains(key) && region.velocityRange.contains(velocity) {
                    guard region.sampleIndex >= 0, region.sampleIndex < bank.samples.count else { fatalError("region names a missing sample") }
                    let sample = bank.samples[region.sampleIndex]
                    // A SoundFont 3 sample's points are a byte range of Ogg Vorbis (fuzz-sf3).
                    if sample.isCompressed { continue }
                    guard sample.start <= sample.loopStart, sample.loopStart <= sample.loopEnd, sample.loopEnd <= sample.end,
                          sample.start < sample.end, sample.end <= words.count else {
                        fatalError("sample points outside the sample data")
                    }
                    if let link = sample.link, !(0..<bank.samples.count).contains(link) { fatalError("stereo link past the samples") }
                    for point in [sample.start, sample.loopStart, max(sample.start, sample.loopEnd - 1), sample.end - 1] {
                        checksum &+= Int(words[point])
                        if let low = bank.sampleData.lowBytes { checksum &+= Int(low[point]) }
                    }
                    for modulator in region.modulators where Int(modulator.destination) >= SoundFontGenerator.count {
                        fatalError("modulator destination \(modulator.destination) is not a generator")
                    }
                    checksum &+= Int(region.generators[.overridingRootKey])
                }
            }
        }
    }
    checksumSink &+= checksum
    return 0
}

/// Keeps the sample reads above from being optimized away (the fuzzer runs on one thread).
nonisolated(unsafe) var checksumSink = 0
