import MIDIFile
import Sequencing

/// Reads any bytes as a MIDI file. When the reader accepts them, everything downstream must
/// work too, and the writer's output must read back to the same events (the two reads agree).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSMF(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let file = try? SMFReader.read(bytes) else { return 0 }
    let sequence = file.makeSequence()
    let length = sequence.length
    if sequence.timeBase.isUsable {
        _ = sequence.makeTempoMap().frame(atTick: length, sampleRate: 48_000)
    }
    _ = sequence.makeMeterMap().barBeatTick(atTick: length)
    let written = SMFWriter.bytes(of: sequence)
    guard let reread = try? SMFReader.read(written) else {
        fatalError("the writer produced a file the reader refuses")
    }
    if SMFWriter.bytes(of: reread.makeSequence()) != written {
        fatalError("read(write(x)) written again differs: the round trip is not stable")
    }
    let expected = FileDump.notes(of: file)
    let actual = FileDump.notes(of: reread)
    if expected.matched != actual.matched || expected.unterminated != actual.unterminated || expected.orphans != actual.orphans {
        fatalError("notes differ after a write and a read")
    }
    return 0
}
