import Foundation
import MIDIFile

/// SHA-256 of a file read in 1 MiB pieces: the manifest's input and output hashes.
enum FileHash {
    /// The lowercase hex digest of the file at `path`, or nil when it cannot be read.
    static func sha256(path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var hasher = SHA256()
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 64)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, chunk)
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(start: buffer, count: n))
        }
        return hasher.finish()
    }

    /// The lowercase hex digest of `bytes`.
    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hexDigest(bytes) }
}
