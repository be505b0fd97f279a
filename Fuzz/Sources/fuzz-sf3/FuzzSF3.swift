import SoundFont

/// Reads any bytes as a SoundFont bank and decodes every compressed (SoundFont 3) sample a
/// region plays. When the reader accepts the bank, decoding must either give a sample the
/// sampler can play (points, loop inside them) or a warning, never a crash or a read outside
/// the stream's bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSF3(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var options = SoundFontReadOptions()
    options.maximumRegionCount = 50_000
    options.maximumWarningCount = 50
    // A few kilobytes of Vorbis packets can describe minutes of audio: a lower cap keeps each
    // run short without skipping any code path.
    options.maximumDecodedFramesPerSample = 1 << 18
    // Decoding on the fuzzer's thread: what a worker thread allocates is outside libFuzzer's
    // per-input leak check.
    options.decodingThreadCount = 1
    guard let file = try? SoundFontReader.read(UnsafeRawBufferPointer(start: data, count: size), options: options) else { return 0 }
    let bank = file.bank
    guard let store = bank.compressedSamples else { return 0 }
    var wanted: [Int] = []
    for preset in bank.presets {
        for region in preset.regions {
            guard region.sampleIndex >= 0, region.sampleIndex < bank.samples.count else { fatalError("region names a missing sample") }
            let sample = bank.samples[region.sampleIndex]
            if sample.isCompressed {
                guard sample.start < sample.end, store.isCompressed(region.sampleIndex) else {
                    fatalError("a playable compressed sample has no stream")
                }
                if wanted.count < 32 { wanted.append(region.sampleIndex) }
            }
        }
    }
    guard (try? store.decode(wanted)) != nil else { return 0 }
    var checksum = 0
    for index in wanted {
        guard let decoded = store.decoded(index) else { continue }
        guard decoded.count > 0, decoded.count <= options.maximumDecodedFramesPerSample,
              0 <= decoded.loopStart, decoded.loopStart <= decoded.loopEnd, decoded.loopEnd <= decoded.count else {
            fatalError("decoded sample \(index): \(decoded.count) points, loop \(decoded.loopStart)..<\(decoded.loopEnd)")
        }
        for point in [0, decoded.loopStart, max(0, decoded.loopEnd - 1), decoded.count - 1] where point < decoded.count {
            checksum &+= Int(decoded.points[point])
        }
    }
    checksumSink &+= checksum
    return 0
}

/// Keeps the sample reads above from being optimized away (the fuzzer runs on one thread).
nonisolated(unsafe) var checksumSink = 0
