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

    /// The lowercase hex digest of `bytes`, hashed in 256 KiB pieces with `shouldCancel` asked
    /// before each; nil once it says true. (A debug build hashes about 6 MB a second: the input
    /// of a batch's long song took most of a second that `--timeout` could not cut.)
    static func sha256(_ bytes: [UInt8], shouldCancel: () -> Bool) -> String? {
        var hasher = SHA256()
        let piece = 1 << 18
        let finished = bytes.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                if shouldCancel() { return false }
                let end = min(raw.count, offset + piece)
                hasher.update(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
                offset = end
            }
            return true
        }
        return finished ? hasher.finish() : nil
    }
}
