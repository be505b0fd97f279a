import Sequencing

/// The option parsers of the CLI: positions, ranges and quantize grids. Whatever they accept
/// must resolve to ticks without trapping.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPositions(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
    sequence.tempoTrack.add(.meta(.timeSignature(TimeSignature(7, 8))), at: 0)
    sequence.tempoTrack.add(.meta(.tempo(bpm: 97)), at: 1000)
    if let position = try? MusicPosition(parsing: text) {
        let tick = position.tick(in: sequence)
        if tick < 0 { fatalError("negative tick from \(text)") }
    }
    if let range = try? MusicRange(parsing: text), let ticks = range.ticks(in: sequence) {
        if ticks.isEmpty { fatalError("empty range accepted from \(text)") }
    }
    if let grid = QuantizeGrid(parsing: text), grid.ticks(ticksPerQuarter: 480) < 1 {
        fatalError("grid of no ticks from \(text)")
    }
    return 0
}
