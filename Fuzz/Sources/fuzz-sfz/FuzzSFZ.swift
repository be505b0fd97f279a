import SFZ

/// Reads any bytes as an SFZ instrument. The input is split at NUL bytes into up to four files:
/// the instrument `main.sfz`, then `a.sfz`, `b.sfz` and `c.sfz` beside it, so `#include`s of those
/// names resolve in memory (and may nest or loop); any other include is refused as missing. The
/// reader must give regions whose keys and velocities lie in 0-127, or an error, never a crash
/// or a hang.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSFZ(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let names = ["/fuzz/main.sfz", "/fuzz/a.sfz", "/fuzz/b.sfz", "/fuzz/c.sfz"]
    var files: [String: [UInt8]] = [:]
    var start = 0
    for (index, name) in names.enumerated() {
        var end = start
        while end < size && (bytes[end] != 0 || index == names.count - 1) { end += 1 }
        files[name] = Array(bytes[start..<min(end, size)])
        start = min(end + 1, size)
    }
    var options = SFZReadOptions()
    // Smaller caps keep each run short; every limit's path is still reachable.
    options.maximumRegionCount = 4_096
    options.maximumTotalSize = 1 << 20
    options.maximumExpandedLength = 4_096
    options.maximumWarningCount = 64
    guard let instrument = try? SFZInstrument.load(contentsOf: names[0], from: SFZMemoryFiles(files), options: options) else { return 0 }
    guard instrument.regions.count <= options.maximumRegionCount, instrument.warnings.count <= options.maximumWarningCount else {
        fatalError("\(instrument.regions.count) regions, \(instrument.warnings.count) warnings over the caps")
    }
    for region in instrument.regions {
        guard (0...127).contains(region.keyRange.low), (0...127).contains(region.keyRange.high),
              (0...127).contains(region.velocityRange.low), (0...127).contains(region.velocityRange.high),
              (0...127).contains(region.pitchKeycenter), (1...100).contains(region.sequenceLength),
              (1...100).contains(region.sequencePosition), (1...16).contains(region.channelRange.low),
              (1...16).contains(region.channelRange.high) else {
            fatalError("region out of range: \(region)")
        }
        if let table = region.velocityCurveTable(), table.count != 128 || table.contains(where: { !$0.isFinite }) {
            fatalError("velocity curve table \(table)")
        }
    }
    for curve in instrument.curves.values where curve.values.count != 128 || !(0...255).contains(curve.index) {
        fatalError("curve \(curve.index) with \(curve.values.count) values")
    }
    return 0
}
