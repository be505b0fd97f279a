import Foundation
import Testing
@testable import MIDIFile
@testable import Sequencing

/// The reader must never crash, hang or read out of bounds, whatever it is given. Swift traps
/// on any out-of-bounds access, so a test that finishes proves it for the inputs tried.
@Suite("Reader robustness")
struct RobustnessTests {
    /// A small deterministic generator, so failures reproduce.
    struct SplitMix64 {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func seeds() throws -> [(String, [UInt8])] {
        var result: [(String, [UInt8])] = []
        for url in SharedMaterial.songs() {
            result.append((url.lastPathComponent, Array(try Data(contentsOf: url))))
        }
        // A RIFF RMID wrapper, so every truncation of the wrapper is tried too.
        let smf = SMFBytes.header() + SMFBytes.track(SMFBytes.fourNotes)
        func le(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)] }
        let dataChunk = Array("data".utf8) + le(smf.count) + smf
        result.append(("riff", Array("RIFF".utf8) + le(4 + dataChunk.count) + Array("RMID".utf8) + dataChunk))
        result.append(("fixture", SMFBytes.header(format: 1, tracks: 2)
            + SMFBytes.track([0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20, 0x00, 0xF0, 0x02, 0x7E, 0xF7] + SMFBytes.eot)
            + SMFBytes.track(SMFBytes.fourNotes)))
        return result
    }

    static func exercise(_ bytes: [UInt8]) {
        if let file = try? SMFReader.read(bytes) {
            _ = FileDump.document(of: file)
            let sequence = file.makeSequence()
            _ = sequence.makeTempoMap().seconds(atTick: sequence.length)
            _ = sequence.makeMeterMap().barBeatTick(atTick: sequence.length)
            let written = SMFWriter.bytes(of: sequence)
            // Whatever Tactus writes, it reads back, and writing that again changes nothing.
            let reread = try? SMFReader.read(written)
            #expect(reread != nil)
            if let reread {
                #expect(SMFWriter.bytes(of: reread.makeSequence()) == written)
            }
        }
    }

    @Test("Every truncation of every song, at every byte")
    func truncations() throws {
        let seeds = try Self.seeds()
        #expect(seeds.count >= 4, "Songs/ should hold at least three songs")
        for (_, bytes) in seeds {
            for cut in 0..<bytes.count {
                Self.exercise(Array(bytes[..<cut]))
            }
        }
    }

    @Test("Thousands of random byte flips, insertions and deletions")
    func mutations() throws {
        var rng = SplitMix64(state: 0x7AC7_05)
        for (_, bytes) in try Self.seeds() {
            for _ in 0..<1500 {
                var mutated = bytes
                let edits = 1 + Int(rng.next() % 4)
                for _ in 0..<edits where !mutated.isEmpty {
                    let at = Int(rng.next() % UInt64(mutated.count))
                    switch rng.next() % 4 {
                    case 0: mutated[at] ^= UInt8(1 << (rng.next() % 8))
                    case 1: mutated[at] = UInt8(truncatingIfNeeded: rng.next())
                    case 2: mutated.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
                    default: mutated.remove(at: at)
                    }
                }
                Self.exercise(mutated)
            }
        }
    }

    @Test("A RIFF header cut before its type is refused cleanly (fuzz-smf crash-48046834)")
    func shortRIFF() {
        #expect(throws: SMFError.self) { try SMFReader.read([0x52, 0x49, 0x46, 0x46, 0x00, 0x4F, 0x00]) }
    }

    @Test("Length fields are checked before anything is allocated")
    func hugeLengths() throws {
        // A sysex claiming 256 MB and a track claiming 4 GB, in a file of a few dozen bytes.
        let sysex = SMFBytes.header() + SMFBytes.track([0x00, 0xF0, 0xFF, 0xFF, 0xFF, 0x7F, 0x01])
        #expect(throws: SMFError.self) { try SMFReader.read(sysex) }
        let track = SMFBytes.header() + Array("MTrk".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + SMFBytes.fourNotes
        let file = try SMFReader.read(track)
        #expect(FileDump.notes(of: file).matched.count == 4)
    }
}
