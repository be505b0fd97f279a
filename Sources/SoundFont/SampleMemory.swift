#if canImport(Glibc)
import Glibc
#endif

/// A whole file mapped read-only; the bank's sample words point into it. Unmapped when the last
/// bank using it goes away.
final class MappedFile: SoundFontBank.SampleStorage, @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer

    /// Maps the file at `path`. Errors carry no path; the caller adds it.
    init(path: String, maximumSize: Int) throws(SoundFontError) {
        let whole = SoundFontLocation(chunk: nil, offset: 0)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            throw SoundFontError(location: whole, reason: .cannotOpen(errno == ENOENT ? "no such file" : String(cString: strerror(errno))))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw SoundFontError(location: whole, reason: .cannotOpen(String(cString: strerror(errno))))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            let what = info.st_mode & S_IFMT == S_IFDIR ? "is a directory, not a SoundFont" : "not a regular file"
            throw SoundFontError(location: whole, reason: .cannotOpen(what))
        }
        let size = Int(info.st_size)
        guard size > 0 else { throw SoundFontError(location: whole, reason: .emptyFile) }
        guard size <= maximumSize else {
            throw SoundFontError(location: whole, reason: .limitExceeded("file is \(size) bytes, more than the \(maximumSize) allowed"))
        }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            throw SoundFontError(location: whole, reason: .cannotOpen("cannot map into memory: \(String(cString: strerror(errno)))"))
        }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
    }

    /// The mapping is read-only and private, so dropped pages are read again from the file.
    func releaseReloadablePages() {
        if let base = bytes.baseAddress { _ = madvise(UnsafeMutableRawPointer(mutating: base), bytes.count, Int32(MADV_DONTNEED)) }
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}

/// Sample words and low bytes copied out of a buffer into aligned memory owned by the bank:
/// for banks read from memory, and for files whose `smpl` data is not 2-byte aligned.
final class CopiedSamples: SoundFontBank.SampleStorage, @unchecked Sendable {
    let data: SoundFontSampleData
    private let words: UnsafeMutableBufferPointer<Int16>
    private let lowBytes: UnsafeMutableBufferPointer<UInt8>?

    init(bytes: UnsafeRawBufferPointer, wordsOffset: Int, wordCount: Int, lowBytesOffset: Int?) {
        words = UnsafeMutableBufferPointer<Int16>.allocate(capacity: max(wordCount, 1))
        if wordCount > 0, let source = bytes.baseAddress {
            let destination = UnsafeMutableRawPointer(words.baseAddress!)
            destination.copyMemory(from: source + wordsOffset, byteCount: wordCount * 2)
            if !isLittleEndianHost {
                for i in 0..<wordCount { words[i] = Int16(littleEndian: words[i]) }
            }
        }
        if let lowBytesOffset {
            let low = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(wordCount, 1))
            if wordCount > 0, let source = bytes.baseAddress {
                UnsafeMutableRawPointer(low.baseAddress!).copyMemory(from: source + lowBytesOffset, byteCount: wordCount)
            }
            lowBytes = low
        } else {
            lowBytes = nil
        }
        data = SoundFontSampleData(
            words: UnsafeBufferPointer(rebasing: words[0..<wordCount]),
            lowBytes: lowBytes.map { UnsafeBufferPointer(rebasing: $0[0..<wordCount]) })
    }

    deinit {
        words.deallocate()
        lowBytes?.deallocate()
    }
}

/// Bytes copied out of a caller's buffer and owned: the compressed sample data of a SoundFont 3
/// bank read from memory.
final class CopiedBytes: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer

    init(_ source: UnsafeRawBufferPointer) {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(source.count, 1), alignment: 16)
        copy.copyMemory(from: source)
        bytes = UnsafeRawBufferPointer(rebasing: copy[0..<source.count])
    }

    deinit {
        bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0).deallocate() }
    }
}
