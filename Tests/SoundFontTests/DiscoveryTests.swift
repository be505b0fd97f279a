import Testing
import SoundFont

@Suite("SoundFont discovery")
struct DiscoveryTests {
    let fluid = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
    let tim = "/usr/share/sounds/sf2/TimGM6mb.sf2"

    @Test("An explicit path comes first, then TACTUS_SOUNDFONT, then the standard paths in order")
    func order() throws {
        let existing: Set<String> = ["/banks/mine.sf2", "/banks/env.sf2", fluid, tim]
        let exists = { (path: String) in existing.contains(path) }
        let environment = ["TACTUS_SOUNDFONT": "/banks/env.sf2"]
        #expect(try SoundFontDiscovery.resolve(explicitPath: "/banks/mine.sf2", environment: environment, fileExists: exists)
                == .init(path: "/banks/mine.sf2", origin: .option))
        #expect(try SoundFontDiscovery.resolve(explicitPath: nil, environment: environment, fileExists: exists)
                == .init(path: "/banks/env.sf2", origin: .environment))
        #expect(try SoundFontDiscovery.resolve(explicitPath: nil, environment: [:], fileExists: exists)
                == .init(path: fluid, origin: .standardLocation), "default-GM.sf2 is missing, so FluidR3 is next")
        #expect(try SoundFontDiscovery.resolve(explicitPath: nil, environment: ["TACTUS_SOUNDFONT": ""], fileExists: { $0 == tim })?.path == tim,
                "an empty variable counts as unset")
        #expect(try SoundFontDiscovery.resolve(explicitPath: nil, environment: [:], fileExists: { _ in true })?.path
                == "/usr/share/sounds/sf2/default-GM.sf2")
    }

    @Test("No bank anywhere gives nil: the caller plays with the built-in synthesizer")
    func none() throws {
        #expect(try SoundFontDiscovery.resolve(explicitPath: nil, environment: [:], fileExists: { _ in false }) == nil)
    }

    @Test("A missing explicit or environment bank is an error naming the paths tried and where they came from")
    func missing() {
        do {
            _ = try SoundFontDiscovery.resolve(explicitPath: "/nowhere/piano.sf2", environment: ["TACTUS_SOUNDFONT": "/banks/env.sf2"],
                                               fileExists: { _ in false })
            Issue.record("a missing explicit bank was accepted")
        } catch {
            #expect(error.tried == [.init(path: "/nowhere/piano.sf2", origin: .option)])
            #expect(error.description == "/nowhere/piano.sf2: no such SoundFont file; tried /nowhere/piano.sf2 (from --soundfont)")
        }
        do {
            _ = try SoundFontDiscovery.resolve(explicitPath: nil, environment: ["TACTUS_SOUNDFONT": "/typo.sf2"], fileExists: { _ in false })
            Issue.record("a missing environment bank was accepted")
        } catch {
            #expect(error.description.contains("/typo.sf2 (from TACTUS_SOUNDFONT)"))
        }
    }

    @Test("The real file check follows links, and refuses directories and missing files")
    func realFileCheck() {
        #expect(SoundFontDiscovery.isRegularFile("/etc/hostname") || SoundFontDiscovery.isRegularFile("/etc/passwd"))
        #expect(!SoundFontDiscovery.isRegularFile("/etc"))
        #expect(!SoundFontDiscovery.isRegularFile("/nonexistent/bank.sf2"))
        #expect(SoundFontDiscovery.currentEnvironment()["PATH"] != nil)
    }
}
