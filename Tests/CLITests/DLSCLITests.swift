import Foundation
import Testing

/// DLS banks through the command line: `info --soundfont`, `render --soundfont`, and an RMI
/// song playing the bank it carries. The banks are the fuzz seeds: one libinstpatch wrote
/// (a tool other than Tactus), one without articulation (what FluidSynth's DLS path plays).
@Suite("DLS banks through the CLI")
struct DLSCLITests {
    static let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/seeds/fuzz-dls")

    /// A song playing program 5 on channel 1 and key 36 on the drum channel, the two
    /// instruments of the test banks.
    static func song() -> Data {
        var track: [UInt8] = [0x00, 0xC0, 5]
        for (i, key) in [48, 60, 64, 72].enumerated() {
            track += [i == 0 ? 0x00 : 0x40, 0x90, UInt8(key), 100, 0x00, 0x99, 36, 100, 0x83, 0x00, 0x80, UInt8(key), 0, 0x00, 0x89, 36, 0]
        }
        track += [0x00, 0xFF, 0x2F, 0x00]
        let length = UInt32(track.count)
        let header: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 1, 0xE0] + Array("MTrk".utf8)
        return Data(header + [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)] + track)
    }

    static func chunk(_ id: String, _ body: Data) -> Data {
        let n = UInt32(body.count)
        var out = Data(id.utf8) + Data([UInt8(n & 0xFF), UInt8((n >> 8) & 0xFF), UInt8((n >> 16) & 0xFF), UInt8(n >> 24)]) + body
        if body.count & 1 == 1 { out.append(0) }
        return out
    }

    @Test("info --soundfont describes a DLS bank libinstpatch wrote")
    func info() throws {
        let bank = Self.seeds.appendingPathComponent("level2-written-by-libinstpatch.dls").path
        let result = try CLI.run(["info", "--soundfont", bank])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("version:     DLS Level 2"))
        #expect(lines.contains("samples:     3 (0.0 MB of sample data, 16-bit)"))
        #expect(lines.contains("presets:     2 (3 regions)"))
        #expect(lines.contains("  1:5     Triangle (2 regions)"))
        #expect(lines.contains("  128:0   Kit (1 region)"))
    }

    @Test("A damaged DLS bank exits 65 with the path, chunk and reason")
    func damaged() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var bytes = [UInt8](try Data(contentsOf: Self.seeds.appendingPathComponent("level1-made.dls")))
        let ptbl = try #require((0..<bytes.count - 4).first { bytes[$0..<$0 + 4].elementsEqual("ptbl".utf8) })
        bytes[ptbl + 13] = 0x7F
        let path = dir.appendingPathComponent("bad.dls").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let result = try CLI.run(["info", "--soundfont", path])
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix("\(path): ptbl at byte \(ptbl): pool table declares "), "\(result.stderr)")
    }

    @Test("An RMI song plays the DLS bank it carries, as --soundfont with that bank does")
    func rmi() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bankPath = Self.seeds.appendingPathComponent("level2-plain.dls").path
        let bank = try Data(contentsOf: URL(fileURLWithPath: bankPath))
        let mid = dir.appendingPathComponent("song.mid"), rmi = dir.appendingPathComponent("song.rmi")
        try Self.song().write(to: mid)
        try Self.chunk("RIFF", Data("RMID".utf8) + Self.chunk("data", Self.song()) + bank).write(to: rmi)
        let a = dir.appendingPathComponent("a.wav").path, b = dir.appendingPathComponent("b.wav").path
        let embedded = try CLI.run(["render", rmi.path, "-o", a], environment: ["TACTUS_SOUNDFONT": "", "PATH": "/usr/bin:/bin"])
        #expect(embedded.status == 0, "\(embedded.stderr)")
        #expect(embedded.stdout.contains("with the DLS Level 2 bank embedded in \(rmi.path) (RMI)"), "\(embedded.stdout)")
        let named = try CLI.run(["render", mid.path, "-o", b, "--soundfont", bankPath])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.stdout.contains("with the DLS Level 2 bank \(bankPath) (--soundfont)"), "\(named.stdout)")
        let audioA = try Data(contentsOf: URL(fileURLWithPath: a)), audioB = try Data(contentsOf: URL(fileURLWithPath: b))
        #expect(audioA.count > 100_000)
        #expect(audioA == audioB)
        // Discovery: the environment may name a DLS bank; an explicit --soundfont beats an RMI's bank.
        let c = dir.appendingPathComponent("c.wav").path
        let fromEnvironment = try CLI.run(["render", mid.path, "-o", c], environment: ["TACTUS_SOUNDFONT": bankPath, "PATH": "/usr/bin:/bin"])
        #expect(fromEnvironment.stdout.contains("with the DLS Level 2 bank \(bankPath) (TACTUS_SOUNDFONT)"), "\(fromEnvironment.stdout)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: c)) == audioB)
        let other = Self.seeds.appendingPathComponent("level1-made.dls").path
        let explicit = try CLI.run(["render", rmi.path, "-o", c, "--soundfont", other])
        #expect(explicit.stdout.contains("with the DLS Level 1 bank \(other) (--soundfont)"), "\(explicit.stdout)")
    }

    @Test("A DLS bank's articulation plays: a 0.5 s attack makes a note's start quiet")
    func articulationPlays() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Bank select MSB 1, program 5 (the seeds' "Triangle"), key 48 held one second.
        var track: [UInt8] = [0x00, 0xB0, 0, 1, 0x00, 0xC0, 5, 0x00, 0x90, 48, 127, 0x83, 0x60, 0x80, 48, 0]
        track += [0x00, 0xFF, 0x2F, 0x00]
        let mid = dir.appendingPathComponent("held.mid")
        try Data(Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 1, 0xE0] + Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track).write(to: mid)
        func startAndLater(_ bank: String) throws -> (Double, Double) {
            let out = dir.appendingPathComponent("\(bank).wav").path
            let result = try CLI.run(["render", mid.path, "-o", out, "--no-reverb", "--soundfont", Self.seeds.appendingPathComponent(bank).path])
            #expect(result.status == 0, "\(result.stderr)")
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
            let data = try #require((12..<bytes.count - 8).first { bytes[$0..<$0 + 4].elementsEqual("data".utf8) }) + 8
            func rms(_ from: Double, _ to: Double) -> Double {
                var sum = 0.0, n = 0
                for frame in Int(from * 44_100)..<Int(to * 44_100) {
                    let at = data + frame * 4
                    let v = Double(Int16(bitPattern: UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8))
                    sum += v * v
                    n += 1
                }
                return (sum / Double(n)).squareRoot()
            }
            return (rms(0.01, 0.06), rms(0.45, 0.5))
        }
        // The bank libinstpatch wrote keeps the instrument articulation (attack 0.5 s): the
        // note's first 50 ms are far below its level at the end of the attack.
        let (start, later) = try startAndLater("level2-written-by-libinstpatch.dls")
        #expect(later > 0 && start < later / 4, "start \(start), later \(later)")
    }
}
