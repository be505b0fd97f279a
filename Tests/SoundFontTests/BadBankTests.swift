import Foundation
import Testing
@testable import SoundFont

/// A small deterministic generator (SplitMix64), so every run damages the bank the same way.
struct SeededRandom {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// Reads `bytes[0..<count]` in place and checks the outcome: a clean error, or a bank the
/// sampler can trust. Returns true when the bank was accepted.
@discardableResult
func readDamaged(_ bytes: UnsafeRawBufferPointer, count: Int, what: @autoclosure () -> String) -> Bool {
    do {
        let file = try SoundFontReader.read(UnsafeRawBufferPointer(rebasing: bytes[0..<count]), name: "damaged.sf2")
        if let problem = invariantViolation(file.bank) {
            Issue.record("\(what()): accepted a bank that breaks the sampler's invariants: \(problem)")
        }
        return true
    } catch {
        if error.description.isEmpty { Issue.record("\(what()): an error without a message") }
        return false
    }
}

@Suite("Bad banks: truncated and corrupted TimGM6mb", .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/TimGM6mb.sf2"), "needs /usr/share/sounds/sf2/TimGM6mb.sf2 (Debian package timgm6mb-soundfont)"))
struct BadBankTests {
    @Test("Every truncation in the headers and the hydra, and a stride through the samples, fails cleanly")
    func truncations() throws {
        let bytes = try Banks.timGM6mbBytes()
        let pdta = try #require(chunkHeaders(in: bytes).first { $0.id == "pdta" }).offset
        var positions = Array(0..<min(1024, bytes.count))
        positions += Array(stride(from: 1024, to: pdta, by: 4093))
        positions += Array(pdta..<bytes.count)
        var accepted = 0
        bytes.withUnsafeBytes { raw in
            for count in positions where readDamaged(raw, count: count, what: "truncated to \(count) bytes") {
                accepted += 1
            }
        }
        // Cut inside the last chunk (shdr) at a whole record, the bank still reads, with warnings.
        #expect(accepted > 0)
        #expect(accepted < positions.count / 10)
    }

    @Test("Thousands of seeded corruptions (bit flips, byte sets, chunk size edits, cuts) never crash")
    func corruptions() throws {
        var bytes = try Banks.timGM6mbBytes()
        let pdta = try #require(chunkHeaders(in: bytes).first { $0.id == "pdta" }).offset
        // Chunk headers, whose size fields are the most damaging bytes to edit.
        let headers = [0] + chunkHeaders(in: bytes).map(\.offset)
        var random = SeededRandom(state: 0x50F7_F0E7)
        var accepted = 0, refused = 0
        let rounds = 2500
        for round in 0..<rounds {
            var edits: [(Int, UInt8)] = []
            func set(_ at: Int, _ value: UInt8) {
                edits.append((at, bytes[at]))
                bytes[at] = value
            }
            var length = bytes.count
            var description = ""
            for _ in 0..<(1 + random.below(3)) {
                // Most damage lands in the headers and the hydra, where the parsing is; sample
                // data is opaque to the reader.
                let at = random.below(8) == 0 ? random.below(bytes.count) : (random.below(4) == 0 ? random.below(200) : pdta + random.below(bytes.count - pdta))
                switch random.below(5) {
                case 0:
                    let bit = UInt8(1) << UInt8(random.below(8))
                    set(at, bytes[at] ^ bit)
                    description += " flip \(at)"
                case 1:
                    set(at, [0, 0xFF, 0x7F, 0x80, 1][random.below(5)])
                    description += " set \(at)"
                case 2, 3:
                    let header = headers[random.below(headers.count)]
                    let size: UInt32 = [0, 1, 2, 3, 4, 37, 38, 46, 0xFFFF, 0xFFFF_FFFF, UInt32(random.below(1 << 20)),
                                        UInt32(truncatingIfNeeded: random.next())][random.below(12)]
                    for (i, b) in le32(size).enumerated() { set(header + 4 + i, b) }
                    description += " size@\(header)=\(size)"
                default:
                    length = pdta + random.below(bytes.count - pdta)
                    description += " cut \(length)"
                }
            }
            let ok = bytes.withUnsafeBytes { raw in readDamaged(raw, count: length, what: "round \(round):\(description)") }
            if ok { accepted += 1 } else { refused += 1 }
            for (at, old) in edits.reversed() { bytes[at] = old }
        }
        #expect(accepted + refused == rounds)
        #expect(accepted > 0 && refused > 0, "accepted \(accepted), refused \(refused)")
    }
}

/// Every chunk header of a well-formed RIFF file, lists by their type ("INFO", "sdta", "pdta").
func chunkHeaders(in bytes: [UInt8]) -> [(id: String, offset: Int)] {
    func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
    func id(_ at: Int) -> String { String(decoding: bytes[at..<at + 4], as: UTF8.self) }
    var found: [(String, Int)] = []
    func walk(_ start: Int, _ end: Int) {
        var at = start
        while at + 8 <= end {
            let size = u32(at + 4)
            if id(at) == "LIST" {
                found.append((id(at + 8), at))
                walk(at + 12, min(end, at + 8 + size))
            } else {
                found.append((id(at), at))
            }
            at += 8 + size + (size & 1)
        }
    }
    walk(12, min(bytes.count, 8 + u32(4)))
    return found
}
