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
