import Foundation
import Testing
@testable import SoundFont

/// Batch rendering keeps one bank for a whole folder of songs; what each song's voices read
/// must not stay resident for the rest of the run.
@Suite("Releasing a mapped bank's sample pages")
struct SampleMemoryReleaseTests {
    /// Resident bytes of the mapping that holds `address`, from `/proc/self/smaps`.
    static func residentBytes(ofMappingContaining address: UnsafeRawPointer) throws -> Int {
        let target = UInt(bitPattern: address)
        // Read to the end: /proc files report a size of zero.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inside = bounds.count == 2 && bounds[0] <= target && target < bounds[1]
            } else if inside, fields.first == "Rss:", fields.count >= 2, let kilobytes = Int(fields[1]) {
                return kilobytes * 1024
            }
        }
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "no mapping holds \(address) in /proc/self/smaps"])
    }

    static func checksum(_ words: UnsafeBufferPointer<Int16>) -> Int {
        var sum = 0
        for (i, word) in words.enumerated() { sum &+= Int(word) &* (i & 1023 &+ 1) }
        return sum
    }

    @Test("A mapped bank's pages leave the process and come back unchanged",
          .enabled(if: FileManager.default.fileExists(atPath: Banks.timGM6mb), "needs /usr/share/sounds/sf2/TimGM6mb.sf2 (Debian package timgm6mb-soundfont)"))
    func mappedPagesAreReleasedAndReread() throws {
        let file = try SoundFontReader.read(contentsOf: Banks.timGM6mb)
        let words = file.bank.sampleData.words
        let base = try #require(words.baseAddress)
        let sampleBytes = words.count * 2
        #expect(sampleBytes > 4 << 20)

        let first = Self.checksum(words)
        let touched = try Self.residentBytes(ofMappingContaining: base)
        #expect(touched >= sampleBytes, "every sample page read is resident: \(touched) of \(sampleBytes) bytes")

        file.bank.releaseReloadableSampleMemory()
        let released = try Self.residentBytes(ofMappingContaining: base)
        #expect(released < 64 << 10, "after the release \(released) bytes stay resident")

        #expect(Self.checksum(words) == first, "the samples read after the release are the same")
    }

    @Test("Samples the bank allocated are kept")
    func ownedSamplesAreKept() {
        let points = (0..<5000).map { Int16(truncatingIfNeeded: $0 &* 37) }
        let bank = SoundFontBank(name: "owned", presets: [], samples: [], words: points)
        bank.releaseReloadableSampleMemory()
        #expect(Array(bank.sampleData.words) == points)
    }
}
