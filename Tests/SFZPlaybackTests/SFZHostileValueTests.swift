import Foundation
import SFZ
@testable import SFZPlayback
import Testing

/// Numbers an SFZ file may hold that no instrument means: each is read within a limit, played
/// there with a warning naming the limit, and the notes still sound as finite audio. Before the
/// limits these trapped the process (`tune=1e17`, `transpose=1e300`) or made NaN audio that
/// trapped the integer writers (`amp_velcurve_127=1e39`).
@Suite struct SFZHostileValueTests {
    func fixtures() throws -> Fixtures {
        let f = try Fixtures()
        try f.writeWAV("tone.wav", [sine(period: 100, frames: 22_050)])
        try f.writeWAV("pair.wav", [sine(period: 100, frames: 22_050), sine(period: 50, frames: 22_050)])
        return f
    }

    @Test("a value beyond the arithmetic's reach is played at its limit, with a warning naming it, and the audio stays finite",
          arguments: [
              ("tune=1e17", "`tune=1e17`: beyond the playable -12000...12000; played as 12000"),
              ("transpose=1e300", "`transpose=1e300`: beyond the playable -127...127; played as 127"),
              ("transpose=-1e300", "`transpose=-1e300`: beyond the playable -127...127; played as -127"),
              ("amp_velcurve_127=1e39", "`amp_velcurve_127=1e39`: beyond the playable -1000000...1000000; played as 1000000"),
              ("pan=1e300 width=-1e300", "`pan=1e300`: beyond the playable -1000000...1000000; played as 1000000"),
              ("volume=-1e300", "`volume=-1e300`: beyond the playable -1000000...1000000; played as -1000000"),
              ("ampeg_sustain=1e300 ampeg_vel2sustain=-1e300", "`ampeg_sustain=1e300`: beyond the playable -1000000...1000000; played as 1000000"),
              ("ampeg_release=1e308 ampeg_vel2release=1e308", "`ampeg_release=1e308`: beyond the playable -1000000...1000000; played as 1000000"),
              ("cutoff=1e300 resonance=1e300 fil_keytrack=1e300", "`cutoff=1e300`: beyond the playable -1000000...1000000; played as 1000000"),
          ])
    func hugeValues(opcodes: String, warning: String) throws {
        let f = try fixtures()
        for sample in ["tone.wav", "pair.wav"] {
            let bank = try SFZBank.load(contentsOf: try f.writeSFZ("i.sfz", "<region> sample=\(sample) \(opcodes)\n"))
            #expect(bank.warnings.contains { $0.message == warning }, "\(bank.warnings.map(\.message))")
            let out = try Rig(bank).render(frames: 8_000, notes: [(0, 60, 127, 4_000), (100, 72, 1, nil)])
            #expect(out.left.allSatisfy(\.isFinite) && out.right.allSatisfy(\.isFinite), "\(opcodes) with \(sample)")
        }
    }

    @Test("tune and transpose together beyond ten octaves play at ten octaves, with one warning for the sum")
    func tuneAndTransposeSum() throws {
        let f = try fixtures()
        let bank = try SFZBank.load(contentsOf: try f.writeSFZ("i.sfz", "<region> sample=tone.wav tune=12000 transpose=127\n"))
        #expect(bank.warnings.map(\.message) == ["`tune` with transpose asks for 24700 cents; played at 12000"])
        let limit = try SFZBank.load(contentsOf: try f.writeSFZ("j.sfz", "<region> sample=tone.wav tune=12000\n"))
        let rig = try Rig(bank), reference = try Rig(limit)
        let notes: [(at: Int, key: UInt8, velocity: UInt8, off: Int?)] = [(0, 36, 100, nil)]
        #expect(rig.render(frames: 2_000, notes: notes).left == reference.render(frames: 2_000, notes: notes).left)
    }

    @Test("values within reach are kept exactly as written: a file that plays today plays the same")
    func valuesWithinReachAreKept() throws {
        let f = try fixtures()
        let bank = try SFZBank.load(contentsOf: try f.writeSFZ("i.sfz", "<region> sample=tone.wav tune=-2400 transpose=-24 volume=-60 amp_velcurve_100=3\n"))
        #expect(bank.warnings.isEmpty, "\(bank.warnings)")
    }
}
