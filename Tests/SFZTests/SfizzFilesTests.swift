import Foundation
import Testing
import SFZ

/// sfizz's own parser test files (../shared/sfz/sfizz-testfiles): every one reads, with the
/// results sfizz's tests expect, and no truncation or mutation of them crashes the reader.
@Suite(.enabled(if: SfizzTestFiles.root != nil, "../shared/sfz/sfizz-testfiles not found next to the repository"))
struct SfizzFilesTests {
    /// The files that include each other in a loop: sfizz's include guard cuts the loop, and
    /// so does the reader, with a warning; asked to refuse cycles, it names this chain.
    static let cycles: [String: String] = [
        "Includes/root_loop.sfz": "included_loop1.sfz -> included_loop2.sfz -> included_loop1.sfz",
        "Includes/included_loop1.sfz": "included_loop1.sfz -> included_loop2.sfz -> included_loop1.sfz",
        "Includes/included_loop2.sfz": "included_loop2.sfz -> included_loop1.sfz -> included_loop2.sfz",
    ]

    static func load(_ relative: String) throws(SFZError) -> SFZInstrument {
        try SFZInstrument.load(contentsOf: SfizzTestFiles.path(relative))
    }

    @Test func everyFileReadsAndOnlyTheLoopsAreRefusedWhenAskedTo() throws {
        let files = SfizzTestFiles.all()
        #expect(files.count == 49)
        var regionCount = 0
        var strict = SFZReadOptions()
        strict.refusesIncludeCycles = true
        for file in files {
            let instrument = try Self.load(file)
            regionCount += instrument.regions.count
            #expect(instrument.warnings.contains { $0.message.hasPrefix("#include cycle skipped") } == (Self.cycles[file] != nil), "\(file)")
            do {
                _ = try SFZInstrument.load(contentsOf: SfizzTestFiles.path(file), options: strict)
                #expect(Self.cycles[file] == nil, "\(file) should be refused as a cycle")
            } catch {
                let folder = SfizzTestFiles.path("Includes") + "/"
                let chain = error.reason.replacingOccurrences(of: folder, with: "")
                #expect(error.kind == .includeCycle && chain == "#include cycle: " + (Self.cycles[file] ?? "-"), "\(file): \(error)")
            }
        }
        #expect(regionCount > 250)
    }

    @Test func hierarchyAsSfizzTestsIt() throws {
        for file in ["basic_hierarchy.sfz", "basic_hierarchy_antislash.sfz"] {
            let regions = try Self.load(file).regions
            #expect(regions.count == 8)
            #expect(regions.allSatisfy { $0.width == 40 })
            #expect(regions.map(\.pan) == [30, 30, 30, 30, -10, -10, -10, -10])
            #expect(regions.map(\.keyRange.low) == [60, 61, 50, 51, 40, 41, 30, 31])
            let names = regions.map { region -> String in
                guard case .file(let path) = region.sample else { return "?" }
                return String(path.dropFirst(SfizzTestFiles.root!.path.count + 1))
            }
            #expect(names == Array(repeating: ["Regions/dummy.wav", "Regions/dummy.1.wav"], count: 4).flatMap { $0 })
        }
    }

    @Test func definesDefaultPathsAndBackslashesAsSfizzTestsThem() throws {
        let root = SfizzTestFiles.root!.path
        let defines = try Self.load("defines.sfz").regions
        #expect(defines.map(\.keyRange) == [SFZRange(36, 36), SFZRange(38, 38), SFZRange(42, 42), SFZRange(0, 127)])
        #expect(defines[3].volume == -12 && defines[3].sample == .generator("*sine"))
        #expect(try Self.load("default_path.sfz").regions.map(\.sample) == [
            .file(root + "/DefaultPath/SubPath1/sample1.wav"), .file(root + "/DefaultPath/SubPath2/sample2.wav"),
            .file(root + "/DefaultPath/SubPath1/sample1.wav"), .file(root + "/DefaultPath/SubPath2/sample2.wav"),
        ])
        #expect(try Self.load("default_path_generator.sfz").regions.map(\.sample) == [.generator("*sine")])
        #expect(try Self.load("SpecificBugs/win_backslashes.sfz").regions.map(\.sample) == [.file(root + "/SpecificBugs/Xylo/Subfolder/closedhat.wav")])
        let replaced = try Self.load("SpecificBugs/wrong-replacements.sfz").regions
        #expect(replaced.map(\.keyRange) == [SFZRange(57, 57), SFZRange(57, 57), SFZRange(0, 127)])
        #expect(try Self.load("dollar_include_main.sfz").regions.map(\.sample) == [.generator("*sine")])
        let groups = try Self.load("groups_avl.sfz").regions
        #expect(groups.count == 5 && groups.allSatisfy { $0.volume == 6 && $0.keyRange == SFZRange(36, 36) })
        #expect(groups.map(\.velocityRange) == [SFZRange(1, 26), SFZRange(27, 52), SFZRange(53, 77), SFZRange(78, 102), SFZRange(103, 127)])
        #expect(try Self.load("Regions/regions_opcodes.sfz").regions.map(\.keyRange) == [SFZRange(2, 14)])
        #expect(try Self.load("Regions/underscore_opcodes.sfz").regions.map(\.loopMode) == [.loopSustain])
        #expect(try Self.load("looped_regions.sfz").regions.map(\.loopMode) == [nil, .noLoop, nil])
        let offBy = try Self.load("off_by.sfz").regions
        #expect(offBy.map(\.group) == [1, 2, 3, 3] && offBy.map(\.offBy) == [2, 3, 3, 3])
        let switches = try Self.load("labels_sw.sfz").regions
        #expect(switches.map(\.keyswitchLast) == [36, 38, 40])
        #expect(switches.allSatisfy { $0.keyswitchRange == SFZRange(36, 40) && $0.keyswitchDefault == 36 && $0.keyRange == SFZRange(41, 127) })
    }

    @Test func includesAsSfizzTestsThem() throws {
        let folder = SfizzTestFiles.path("Includes")
        for file in ["root_subdir.sfz", "root_subdir_win.sfz"] {
            #expect(try Self.load("Includes/" + file).regions.map(\.sample) == [.file(folder + "/dummy_subdir.wav")])
        }
        #expect(try Self.load("Includes/root_recursive.sfz").regions.map(\.sample) == [.file(folder + "/dummy_recursive2.wav"), .file(folder + "/dummy_recursive1.wav")])
        // sfizz's "Include loops (with include guard)" test: the loop is cut, each region read once.
        for file in ["root_loop.sfz", "included_loop1.sfz"] {
            #expect(try Self.load("Includes/" + file).regions.map(\.sample) == [.file(folder + "/dummy_loop2.wav"), .file(folder + "/dummy_loop1.wav")])
        }
        #expect(try Self.load("Includes/multiple_includes_with_comments.sfz").regions.map(\.sample) == [.file(folder + "/dummy.wav"), .file(folder + "/dummy2.wav")])
    }

    @Test func samplesAreFoundIgnoringCaseAndTheFirstMissingOneIsNamed() throws {
        let root = SfizzTestFiles.root!.path
        var caseless = try Self.load("case_insensitive.sfz")
        try caseless.locateSamples()
        #expect(caseless.regions.map(\.sample) == [
            .file(root + "/dummy1.wav"), .file(root + "/Regions/dummy.wav"), .file(root + "/Regions/dummy.wav"), .file(root + "/Regions/dummy.wav"),
        ])
        var bad = try Self.load("Regions/regions_bad.sfz")
        #expect {
            try bad.locateSamples()
        } throws: { error in
            guard let error = error as? SFZError else { return false }
            return error.kind == .missingSample && error.path == root + "/Regions/nonexistent.wav"
                && error.reason == "sample not found (named by the region at \(root)/Regions/regions_bad.sfz:2)"
        }
        var hierarchy = try Self.load("basic_hierarchy.sfz")
        try hierarchy.locateSamples()
        var embedded = try Self.load("kick_embedded.sfz")
        #expect(embedded.regions.map(\.sample) == [.embedded("kick_embedded.wav")])
        try embedded.locateSamples()
    }

    /// Serves one file's bytes in place of the real file, the rest from the disk.
    struct Overlay: SFZFileSource {
        var path: String
        var bytes: [UInt8]
        func contents(of path: String, maximumSize: Int) throws(SFZError) -> [UInt8] {
            if path == self.path { return bytes }
            return try SFZDiskFiles().contents(of: path, maximumSize: maximumSize)
        }
        func fileExists(_ path: String) -> Bool { path == self.path || SFZDiskFiles().fileExists(path) }
    }

    static func checkSane(_ instrument: SFZInstrument) {
        for region in instrument.regions {
            guard (0...127).contains(region.keyRange.low), (0...127).contains(region.keyRange.high),
                  (0...127).contains(region.velocityRange.low), (0...127).contains(region.velocityRange.high),
                  (0...127).contains(region.pitchKeycenter), (1...100).contains(region.sequenceLength) else {
                Issue.record("region out of its ranges: \(region)")
                return
            }
        }
    }

    @Test func everyTruncationReadsOrFailsCleanly() throws {
        var outcomes = [0, 0]
        for file in SfizzTestFiles.all() {
            let path = SfizzTestFiles.path(file)
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            // Files up to 8 KiB (45 of the 49) are cut at every byte. The four larger ones (three
            // carry base64 samples, one is a flat drum kit) at every byte of their first 2 KiB
            // and every 127th byte after: every cut costs a parse of what comes before it, and
            // cutting them all at every byte would take minutes in a debug build.
            var cuts = Array(0...bytes.count)
            if bytes.count > 8 << 10 {
                cuts = (0...bytes.count).filter { $0 < 2 << 10 || $0 % 127 == 0 || $0 == bytes.count }
            }
            for cut in cuts {
                do {
                    let result = try SFZInstrument.load(contentsOf: path, from: Overlay(path: path, bytes: Array(bytes[0..<cut])))
                    Self.checkSane(result)
                    outcomes[0] += 1
                } catch {
                    outcomes[1] += 1
                }
            }
        }
        #expect(outcomes[0] + outcomes[1] == 18_565 && outcomes[0] > 10_000)
    }

    @Test func seededMutationsReadOrFailCleanly() throws {
        var generator = SeededGenerator(state: 0x5F2)
        let files = SfizzTestFiles.all().filter { !$0.contains("embedded") }
        let pieces: [[UInt8]] = ["<region>", "<group>", "<curve>", "<control>", "#include \"", "#define $", "$", "=", "//", "/*", "*/",
                                 "\n", " ", "\\", "key=", "-1", "c#4", "999999999999999999999", "<", ">", "\"", "v127=", "amp_velcurve_",
                                 "locc", "\u{0}", "\u{FF}"].map { Array($0.utf8) }
        var outcomes = [0, 0]
        for _ in 0..<4_000 {
            let file = files[Int(generator.next() % UInt64(files.count))]
            let path = SfizzTestFiles.path(file)
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            for _ in 0...(generator.next() % 6) {
                let at = bytes.isEmpty ? 0 : Int(generator.next() % UInt64(bytes.count + 1))
                switch generator.next() % 4 {
                case 0 where at < bytes.count: bytes[at] = UInt8(truncatingIfNeeded: generator.next())
                case 1: bytes.insert(contentsOf: pieces[Int(generator.next() % UInt64(pieces.count))], at: at)
                case 2 where at < bytes.count: bytes.removeSubrange(at..<min(bytes.count, at + Int(generator.next() % 16)))
                default:
                    let from = bytes.isEmpty ? 0 : Int(generator.next() % UInt64(bytes.count))
                    bytes.insert(contentsOf: bytes[from..<min(bytes.count, from + 40)], at: at)
                }
            }
            do {
                Self.checkSane(try SFZInstrument.load(contentsOf: path, from: Overlay(path: path, bytes: bytes)))
                outcomes[0] += 1
            } catch {
                #expect(!error.reason.isEmpty)
                outcomes[1] += 1
            }
        }
        #expect(outcomes[0] > 2_000)
    }
}
