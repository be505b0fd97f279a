import Foundation

/// The chunks of a RIFF WAVE file, for tests that compare the samples of files other programs
/// wrote or decoded (their headers differ in size and in the chunks they carry).
public enum WAVChunks {
    /// A file's chunk is missing.
    public struct Missing: Error, CustomStringConvertible {
        /// The chunk's identifier.
        public let chunk: String
        public var description: String { "no \(chunk) chunk" }
    }

    /// The bytes of the first `data` chunk of the WAV file `bytes` (cut short where the file is).
    public static func samples(_ bytes: Data) throws(Missing) -> Data {
        let words = [UInt8](bytes)
        var at = 12
        while at + 8 <= words.count {
            let size = Int(UInt32(words[at + 4]) | UInt32(words[at + 5]) << 8 | UInt32(words[at + 6]) << 16 | UInt32(words[at + 7]) << 24)
            if words[at..<at + 4].elementsEqual("data".utf8) { return Data(words[(at + 8)..<min(words.count, at + 8 + size)]) }
            at += 8 + size + (size & 1)
        }
        throw Missing(chunk: "data")
    }

    /// The same for the WAV file at `path`.
    public static func samples(atPath path: String) throws -> Data {
        try samples(Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

/// Writes a 16-bit mono 44.1 kHz WAV file of a sine at `frequency` Hz, `frames` long (at
/// about -4 dBFS), to `url`: a sample for the samplers under test, written by hand so that
/// nothing under test writes it.
public func writeSineWAV(frequency: Double, frames: Int, to url: URL) throws {
    var data = Data()
    func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    data.append(contentsOf: Array("RIFF".utf8)); le(UInt32(36 + frames * 2)); data.append(contentsOf: Array("WAVEfmt ".utf8))
    le(UInt32(16)); le(UInt16(1)); le(UInt16(1)); le(UInt32(44_100)); le(UInt32(88_200)); le(UInt16(2)); le(UInt16(16))
    data.append(contentsOf: Array("data".utf8)); le(UInt32(frames * 2))
    for i in 0..<frames { le(Int16((sin(Double(i) * 2 * .pi * frequency / 44_100) * 20_000).rounded())) }
    try data.write(to: url)
}
