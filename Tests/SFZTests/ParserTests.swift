import Testing
import SFZ

/// The text level: comments, `#define`, `#include`, values with spaces, case, syntax warnings
/// and the limits.
@Suite struct SFZParserTests {
    @Test func commentsOfBothKindsAreSkippedWherever() throws {
        let result = try instrument("""
            // a line comment <region> sample=no.wav
            <region> /* block
            comment <region> */ sample=yes one.wav // trailing comment
            key=c4/*inline*/ lovel=10
            """)
        #expect(result.regions.count == 1)
        #expect(result.regions[0].sample == .file("/instrument/yes one.wav"))
        #expect(result.regions[0].keyRange == SFZRange(60, 60))
        #expect(result.regions[0].velocityRange == SFZRange(10, 127))
        #expect(result.warnings.isEmpty)
    }

    @Test func unterminatedBlockCommentIsAWarningAndEndsTheFile() throws {
        let result = try instrument("<region> sample=a.wav\n/* never closed\n<region> sample=b.wav")
        #expect(result.regions.count == 1)
        #expect(result.warnings.map(\.line) == [2])
        #expect(result.warnings[0].message.contains("unterminated block comment"))
    }

    @Test func valuesKeepTheirSpacesUntilTheNextOpcodeOrHeader() throws {
        let result = try instrument("""
            <region> sample=Grand Piano/C4 soft.wav   key=60 <region>sample=x y.wav<region> sample=tail spaces.wav   \t
            <region> sample=a b.wav #define $X 1
            """)
        #expect(result.regions.map(\.sample) == [
            .file("/instrument/Grand Piano/C4 soft.wav"), .file("/instrument/x y.wav"),
            .file("/instrument/tail spaces.wav"), .file("/instrument/a b.wav"),
        ])
        #expect(result.regions[0].keyRange == SFZRange(60, 60))
    }

    @Test func backslashesInSamplePathsAndDefaultPathBecomeSlashes() throws {
        let result = try instrument("""
            <control> default_path=Samples\\Piano\\
            <region> sample=Soft\\c4.wav
            """)
        #expect(result.regions[0].sample == .file("/instrument/Samples/Piano/Soft/c4.wav"))
    }

    @Test func definesExpandInValuesNamesAndIncludes() throws {
        let result = try instrument("""
            #define $KEY 36
            #define $CC 64
            #define $NAME drums
            #include "$NAME.sfz"
            <region> sample=a.wav key=$KEY locc$CC=10
            """, others: ["drums.sfz": "<region> sample=kick.wav key=$KEY"])
        #expect(result.regions.count == 2)
        #expect(result.regions[0].sample == .file("/instrument/kick.wav"))
        #expect(result.regions.map(\.keyRange) == [SFZRange(36, 36), SFZRange(36, 36)])
        #expect(result.regions[1].controllerRanges == [64: SFZRange(10.0, 127.0)])
        #expect(result.warnings.isEmpty)
    }

    @Test func aDefineTakesOneWordAndTheRestOfTheLineIsRead() throws {
        let result = try instrument("""
            <region> sample=a.wav
            #define $VOL -6 key=40
            volume=$VOL
            """)
        #expect(result.regions[0].volume == -6)
        #expect(result.regions[0].keyRange == SFZRange(40, 40))
    }

    @Test func theShortestDefinedNameMatchesAsSfizzAndAria() throws {
        // sfizz's SpecificBugs/wrong-replacements.sfz: `$KeyCrash2Edge` expands `$KeyCrash2`.
        let result = try instrument("""
            #define $KeyCrash2Edge 52
            #define $KeyCrash2 57
            <region> sample=a.wav key=$KeyCrash2Edge
            """)
        #expect(result.regions[0].keyRange == SFZRange(57, 57))
    }

    @Test func anUndefinedVariableIsDroppedWithAWarning() throws {
        let result = try instrument("<region> sample=a.wav\nvolume=$NOPE")
        #expect(result.regions[0].volume == 0)
        let warning = try #require(result.warnings.first { $0.message.contains("$NOPE is not defined") })
        #expect(warning.line == 2)
        #expect(warning.opcode == "volume")
        #expect(warning.path == "/instrument/main.sfz")
    }

    @Test func aSelfReferringDefinitionIsAnErrorNotAHang() {
        #expect {
            _ = try instrument("#define $A $A\n<region> sample=$A")
        } throws: { ($0 as? SFZError)?.kind == .expansionTooLong && ($0 as? SFZError)?.line == 2 }
    }

    @Test func anExponentialDefinitionChainHitsTheExpansionLimit() {
        // Names that are no prefix of each other, or ARIA's shortest-match rule would cut them.
        var text = "#define $L0x x\n"
        for i in 1...30 { text += "#define $L\(i)x $L\(i - 1)x$L\(i - 1)x\n" }
        text += "<region> sample=$L30x"
        #expect {
            _ = try instrument(text)
        } throws: { ($0 as? SFZError)?.kind == .expansionTooLong }
    }

    @Test func aLongDefinitionRepeatedOnEveryLineHitsTheTotalExpansionLimitQuickly() {
        // Each value is within the per-value limit; together they would have built 6 GB (76 s).
        let text = "#define $X " + String(repeating: "1", count: 60_000) + "\n<region> sample=a.wav\n"
            + String(repeating: "amp_veltrack=$X\n", count: 100_000)
        #expect {
            _ = try instrument(text)
        } throws: { error in
            guard let error = error as? SFZError, error.kind == .expansionTooLong else { return false }
            // It stops where the total passes 64 MiB (line 1,121), not at the end.
            return error.reason.contains("SFZReadOptions.maximumExpandedTotal") && (error.line ?? .max) < 1_200
        }
    }

    @Test func warningsQuoteALongTokenShortened() throws {
        let long = String(repeating: "7", count: 50_000)
        let result = try instrument("<region> sample=a.wav amp_veltrack=\(long)x \(long)=1")
        #expect(result.warnings.count == 2)
        for warning in result.warnings {
            #expect(warning.message.count < 300, "\(warning.message.prefix(300))")
            #expect(warning.message.contains("… (50001 bytes)") || warning.message.contains("… (50000 bytes)"), "\(warning.message.prefix(300))")
        }
    }

    @Test func includesResolveAgainstTheInstrumentFolderThenBesideTheIncluder() throws {
        let result = try instrument("#include \"parts\\strings.sfz\"", others: [
            "parts/strings.sfz": "#include \"parts/violin.sfz\"\n#include \"cello.sfz\"",
            "parts/violin.sfz": "<region> sample=violin.wav",
            "parts/cello.sfz": "<region> sample=cello.wav",
        ])
        #expect(result.regions.map(\.sample) == [.file("/instrument/violin.wav"), .file("/instrument/cello.wav")])
        #expect(result.files == ["/instrument/main.sfz", "/instrument/parts/strings.sfz", "/instrument/parts/violin.sfz", "/instrument/parts/cello.sfz"])
    }

    @Test func aHeaderContinuesAcrossAnInclude() throws {
        let result = try instrument("<region> sample=a.wav\n#include \"more.sfz\"\nkey=50", others: ["more.sfz": "volume=-3"])
        #expect(result.regions.count == 1)
        #expect(result.regions[0].volume == -3)
        #expect(result.regions[0].keyRange == SFZRange(50, 50))
    }

    @Test func anIncludeCycleIsSkippedWithAWarningNamingTheChain() throws {
        let result = try instrument("#include \"a.sfz\"", others: ["a.sfz": "<region> sample=a.wav\n\n#include \"b.sfz\"", "b.sfz": "#include \"a.sfz\"\nkey=40"])
        // b.sfz's include of a.sfz is skipped; the rest of b.sfz still applies to a's region.
        #expect(result.regions.map(\.sample) == [.file("/instrument/a.wav")])
        #expect(result.regions[0].keyRange == SFZRange(40, 40))
        #expect(result.warnings.map(\.description) == ["/instrument/b.sfz:1: #include cycle skipped: /instrument/a.sfz -> /instrument/b.sfz -> /instrument/a.sfz"])
    }

    @Test func anIncludeCycleIsAnErrorNamingTheChainWhenAsked() {
        var options = SFZReadOptions()
        options.refusesIncludeCycles = true
        #expect {
            _ = try instrument("#include \"a.sfz\"", others: ["a.sfz": "<region> sample=a.wav\n\n#include \"b.sfz\"", "b.sfz": "#include \"a.sfz\""], options: options)
        } throws: { error in
            guard let error = error as? SFZError else { return false }
            return error.kind == .includeCycle && error.path == "/instrument/b.sfz" && error.line == 1
                && error.reason == "#include cycle: /instrument/a.sfz -> /instrument/b.sfz -> /instrument/a.sfz"
        }
    }

    @Test func includingAFileTwiceWithoutACycleIsFine() throws {
        let result = try instrument("#include \"r.sfz\"\n#include \"r.sfz\"", others: ["r.sfz": "<region> sample=r.wav"])
        #expect(result.regions.count == 2)
    }

    @Test func includeDepthIsBounded() throws {
        var others: [String: String] = [:]
        for level in 1...20 { others["l\(level).sfz"] = "#include \"l\(level + 1).sfz\"" }
        others["l21.sfz"] = "<region> sample=deep.wav"
        var options = SFZReadOptions()
        options.maximumIncludeDepth = 16
        #expect {
            _ = try instrument("#include \"l1.sfz\"", others: others, options: options)
        } throws: { error in
            guard let error = error as? SFZError else { return false }
            return error.kind == .includeTooDeep && error.path == "/instrument/l16.sfz" && error.reason.contains("maximumIncludeDepth")
        }
        options.maximumIncludeDepth = 21
        #expect(try instrument("#include \"l1.sfz\"", others: others, options: options).regions.count == 1)
    }

    @Test func aMissingIncludeIsAnErrorAtTheDirective() {
        #expect {
            _ = try instrument("<region> sample=a.wav\n#include \"gone.sfz\"")
        } throws: { error in
            guard let error = error as? SFZError else { return false }
            return error.kind == .unreadableFile && error.path == "/instrument/main.sfz" && error.line == 2
                && error.reason == "#include \"gone.sfz\": /instrument/gone.sfz: no such file" && error.isUnreadableInput
        }
    }

    @Test func fileSizeAndRegionCountAreBounded() throws {
        var options = SFZReadOptions()
        options.maximumFileSize = 100
        #expect {
            _ = try instrument(String(repeating: "// padding\n", count: 10), options: options)
        } throws: { ($0 as? SFZError)?.kind == .fileTooLarge }
        options = SFZReadOptions()
        options.maximumRegionCount = 3
        #expect(try instrument(String(repeating: "<region> sample=a.wav\n", count: 3), options: options).regions.count == 3)
        #expect {
            _ = try instrument(String(repeating: "<region> sample=a.wav\n", count: 4), options: options)
        } throws: { ($0 as? SFZError)?.kind == .tooManyRegions && ($0 as? SFZError)?.line == 4 }
    }

    @Test func repeatedIncludesAreBoundedByTheTotalText() {
        var options = SFZReadOptions()
        options.maximumTotalSize = 10_000
        let fanOut = String(repeating: "#include \"b.sfz\"\n", count: 100)
        #expect {
            _ = try instrument(fanOut, others: ["b.sfz": String(repeating: "// 1234567890\n", count: 10)], options: options)
        } throws: { ($0 as? SFZError)?.kind == .tooMuchText }
    }

    @Test func malformedLinesAreWarningsAndSkipped() throws {
        let result = try instrument("""
            <region> sample=a.wav
            what is this
            <region sample=b.wav>
            #pragma once
            = 5
            <region> sample=c.wav key=62
            """)
        #expect(result.regions.map(\.sample) == [.file("/instrument/a.wav"), .file("/instrument/c.wav")])
        #expect(result.warnings.map(\.line) == [2, 3, 4, 5])
        #expect(result.warnings[2].message == "unknown directive #pragma (line skipped)")
    }

    @Test func opcodesBeforeAnyHeaderAreIgnoredWithAWarning() throws {
        let result = try instrument("volume=3\n<region> sample=a.wav")
        #expect(result.regions[0].volume == 0)
        #expect(result.warnings.first?.message == "opcode `volume` is not under any header (ignored)")
    }

    @Test func opcodeNamesAreCaseInsensitiveAndAliasesAreRead() throws {
        let r = try region("KEY=D4 Volume=-2 LoopMode=loop_sustain loopstart=10 loopend=20 offby=3 gain=-4 tune=15 polyphony_group=2 filtype=hpf_1p cutoff1=500 ampeg_vel2attack=0.5")
        #expect(r.keyRange == SFZRange(62, 62))
        #expect(r.volume == -4)
        #expect(r.loopMode == .loopSustain)
        #expect(r.loopStart == 10 && r.loopEnd == 20)
        #expect(r.offBy == 3)
        #expect(r.tune == 15)
        #expect(r.group == 2)
        #expect(r.filterType == .highPassOnePole)
        #expect(r.cutoff == 500)
        #expect(r.amplitudeEnvelope.velocityToAttack == 0.5)
    }

    @Test func headersAreCaseSensitiveAsInSfizz() throws {
        let result = try instrument("<Region> sample=a.wav")
        #expect(result.regions.isEmpty)
        #expect(result.warnings.first?.message == "unknown header <Region> (its opcodes are ignored)")
    }

    @Test func embeddedSampleDataRunsToTheNextHeader() throws {
        let result = try instrument("""
            <region> sample=kick.wav
            <sample> name=kick.wav base64data=UklGR//abc/*x+y
            ==
            <region> sample=kick.wav key=40
            """)
        #expect(result.embeddedSampleNames == ["kick.wav"])
        #expect(result.regions.map(\.sample) == [.embedded("kick.wav"), .embedded("kick.wav")])
        #expect(result.regions[1].keyRange == SFZRange(40, 40))
    }

    /// Inputs whose cost would grow with the square of their size if a line were rescanned for
    /// each opcode on it, or a group's opcodes reapplied to each region: both finish only if
    /// the reader stays linear.
    @Test func longLinesAndBigGroupsStayLinear() throws {
        let line = try instrument("<region> sample=a.wav " + String(repeating: "volume=-1 pan=5 ", count: 10_000) + "key=3")
        #expect(line.regions.count == 1 && line.regions[0].volume == -1 && line.regions[0].keyRange == SFZRange(3, 3))
        let defines = try instrument(String(repeating: "#define $A 1 ", count: 10_000) + "\n<region> sample=a.wav key=$A")
        #expect(defines.regions[0].keyRange == SFZRange(1, 1))
        let group = "<group> " + String(repeating: "pan=1 ", count: 5_000) + "volume=-2\n" + String(repeating: "<region> sample=a.wav\n", count: 2_000)
        let groups = try instrument(group)
        #expect(groups.regions.count == 2_000 && groups.regions.allSatisfy { $0.volume == -2 && $0.pan == 1 })
    }
}
