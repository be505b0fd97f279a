import Testing
import SFZ

/// Header inheritance and every opcode the model reads, with SFZ's defaults and sfizz's rules
/// for values out of range.
@Suite struct SFZResolverTests {
    @Test func defaultsAreSFZs() throws {
        let r = try region("")
        #expect(r.keyRange == SFZRange(0, 127) && r.triggersOnNote)
        #expect(r.velocityRange == SFZRange(0, 127))
        #expect(r.channelRange == SFZRange(1, 16))
        #expect(r.pitchKeycenter == 60 && !r.pitchKeycenterFromSample)
        #expect(r.randomRange == SFZRange(0.0, 1.0))
        #expect(r.sequenceLength == 1 && r.sequencePosition == 1)
        #expect(r.trigger == .attack && r.offMode == .fast && r.offBy == nil && r.group == 0)
        #expect(r.volume == 0 && r.amplitude == 100 && r.pan == 0 && r.width == 100)
        #expect(r.tune == 0 && r.transpose == 0 && r.pitchKeytrack == 100 && r.ampVeltrack == 100)
        #expect(r.amplitudeEnvelope.release == 0.001 && r.amplitudeEnvelope.sustain == 100 && r.amplitudeEnvelope.attack == 0)
        #expect(r.filterEnvelope.release == 0 && r.filterEnvelope.depth == 0)
        #expect(r.cutoff == nil && r.filterType == .lowPassTwoPole)
        #expect(r.offset == 0 && r.end == nil && r.loopMode == nil && r.loopStart == nil && r.loopEnd == nil)
        #expect(r.polyphony == nil && r.notePolyphony == nil)
        #expect(r.velocityCurveTable() == nil)
    }

    @Test func headersInheritGlobalMasterGroupRegionAndResetAsSfizz() throws {
        let result = try instrument("""
            <global> width=40 volume=-1
            <master> pan=30
            <group> tune=67 volume=-2
            <region> key=60 sample=a.wav
            <region> key=61 sample=b.wav volume=-3
            <group> tune=56
            <region> key=50 sample=c.wav
            <master> pan=-10
            <region> key=40 sample=d.wav
            <global> amplitude=50
            <region> key=30 sample=e.wav
            """)
        let r = result.regions
        #expect(r.count == 5)
        #expect(r.map(\.width) == [40, 40, 40, 40, 100])
        #expect(r.map(\.pan) == [30, 30, 30, -10, 0])
        #expect(r.map(\.tune) == [67, 67, 56, 0, 0])
        #expect(r.map(\.volume) == [-2, -3, -1, -1, 0])
        #expect(r.map(\.amplitude) == [100, 100, 100, 100, 50])
        #expect(r.map(\.keyRange) == [SFZRange(60, 60), SFZRange(61, 61), SFZRange(50, 50), SFZRange(40, 40), SFZRange(30, 30)])
        #expect(r.map(\.line) == [4, 5, 7, 9, 11])
    }

    @Test func keysTakeNumbersAndNoteNamesWithC4At60() throws {
        #expect(try region("lokey=c4 hikey=c#4").keyRange == SFZRange(60, 61))
        #expect(try region("lokey=db4 hikey=B4").keyRange == SFZRange(61, 71))
        #expect(try region("lokey=c-1 hikey=g9").keyRange == SFZRange(0, 127))
        #expect(try region("lokey=e♭3 hikey=f♯3").keyRange == SFZRange(51, 54))
        let key = try region("key=a0")
        #expect(key.keyRange == SFZRange(21, 21) && key.pitchKeycenter == 21)
        #expect(try region("key=40 pitch_keycenter=d#3").pitchKeycenter == 51)
        #expect(try region("pitch_keycenter=sample").pitchKeycenterFromSample)
        // Not notes: e# and cb do not exist, and octave 10 runs past 127.
        let bad = try instrument("<region> sample=a.wav lokey=e#4 hikey=cb4 pitch_keycenter=c10")
        #expect(bad.regions[0].keyRange == SFZRange(0, 127) && bad.regions[0].pitchKeycenter == 60)
        #expect(!bad.regions[0].triggersOnNote)
        #expect(bad.warnings.compactMap(\.opcode) == ["lokey", "hikey", "pitch_keycenter"])
    }

    @Test func hikeyMinusOneTurnsNoteTriggeringOffQuietly() throws {
        let result = try instrument("<region> sample=a.wav hikey=-1")
        #expect(!result.regions[0].triggersOnNote)
        #expect(result.warnings.isEmpty)
    }

    @Test func outOfRangeValuesFollowSfizz() throws {
        let result = try instrument("""
            <region> sample=a.wav lokey=200 seq_length=0 seq_position=101 end=-5 rt_decay=-3 lochan=17
            <region> sample=a.wav lovel=-20 hivel=300 polyphony=-2 note_polyphony=0 loop_start=-1 loop_end=99999999999
            <region> sample=a.wav volume=60 pan=-300 amplitude=20000 offset=-7 key=57Edge
            """)
        let (a, b, c) = (result.regions[0], result.regions[1], result.regions[2])
        // Refused, so the default: lokey, seq_length, seq_position, lochan.
        #expect(a.keyRange.low == 0 && a.sequenceLength == 1 && a.sequencePosition == 1 && a.channelRange.low == 1)
        // Clamped: end to 0, rt_decay at its lower bound.
        #expect(a.end == 0 && a.releaseTriggerDecay == 0)
        #expect(b.velocityRange == SFZRange(0, 127) && b.polyphony == 0 && b.notePolyphony == 1)
        #expect(b.loopStart == nil && b.loopEnd == Int(Int32.max))
        // Kept as written (sfizz's permissive opcodes), and trailing junk after a number.
        #expect(c.volume == 60 && c.pan == -300 && c.amplitude == 20000 && c.offset == -7)
        #expect(c.keyRange == SFZRange(57, 57))
        #expect(Set(result.warnings.compactMap(\.opcode)) == ["lokey", "seq_length", "seq_position", "lochan", "loop_start"])
        #expect(result.warnings.allSatisfy { $0.line == 1 || $0.line == 2 })
    }

    @Test func rangeAndConditionOpcodes() throws {
        let r = try region("lovel=20 hivel=90 lochan=2 hichan=3 locc1=10 hicc1=20 hicc64=63 lorand=0.25 hirand=0.5 seq_length=4 seq_position=3")
        #expect(r.velocityRange == SFZRange(20, 90))
        #expect(r.channelRange == SFZRange(2, 3))
        #expect(r.controllerRanges == [1: SFZRange(10.0, 20.0), 64: SFZRange(0.0, 63.0)])
        #expect(r.randomRange == SFZRange(0.25, 0.5))
        #expect(r.sequenceLength == 4 && r.sequencePosition == 3)
        #expect(!r.velocityRange.contains(19) && r.velocityRange.contains(20) && r.velocityRange.contains(90) && !r.velocityRange.contains(91))
        #expect(!SFZRange(5, 4).contains(4) && !SFZRange(5, 4).contains(5))
    }

    @Test func triggerGroupsAndKeySwitches() throws {
        for (written, trigger) in [("attack", SFZTrigger.attack), ("release", .release), ("first", .first), ("legato", .legato), ("release_key", .releaseKey)] {
            #expect(try region("trigger=\(written)").trigger == trigger)
        }
        let r = try region("trigger=release rt_decay=6 group=5 off_by=6 off_mode=normal polyphony=4 note_polyphony=2 sw_lokey=c1 sw_hikey=36 sw_last=d1 sw_default=35")
        #expect(r.trigger == .release && r.releaseTriggerDecay == 6)
        #expect(r.group == 5 && r.offBy == 6 && r.offMode == .normal && r.offTime == 0.006)
        // As sfizz, off_time chooses the timed mode; an off_mode after it still wins.
        let timed = try region("off_mode=normal off_time=0.25"), overridden = try region("off_time=0.25 off_mode=fast")
        #expect(timed.offMode == .time && timed.offTime == 0.25)
        #expect(overridden.offMode == .fast && overridden.offTime == 0.25)
        #expect(r.polyphony == 4 && r.notePolyphony == 2)
        #expect(r.keyswitchRange == SFZRange(24, 36) && r.keyswitchLast == 26 && r.keyswitchDefault == 35)
        let bad = try instrument("<region> sample=a.wav trigger=sometimes off_mode=slow")
        #expect(bad.regions[0].trigger == .attack && bad.regions[0].offMode == .fast)
        #expect(bad.warnings.map(\.opcode) == ["trigger", "off_mode"])
        #expect(bad.warnings[0].message == "`trigger=sometimes`: not one of attack, release, release_key, first, legato; ignored")
    }

    @Test func amplitudePitchAndEnvelopeOpcodes() throws {
        let r = try region("""
            volume=-6.5 amplitude=80 pan=-25 width=50 tune=-12 transpose=-12 pitch_keytrack=50 amp_veltrack=75
            ampeg_delay=0.1 ampeg_start=5 ampeg_attack=0.2 ampeg_hold=0.3 ampeg_decay=0.4 ampeg_sustain=60 ampeg_release=1.5
            ampeg_vel2delay=0.01 ampeg_vel2attack=-0.1 ampeg_vel2hold=0.02 ampeg_vel2decay=0.03 ampeg_vel2sustain=10 ampeg_vel2release=0.5
            """)
        #expect(r.volume == -6.5 && r.amplitude == 80 && r.pan == -25 && r.width == 50)
        #expect(r.tune == -12 && r.transpose == -12 && r.pitchKeytrack == 50 && r.ampVeltrack == 75)
        var expected = SFZEnvelope()
        expected.delay = 0.1
        expected.start = 5
        expected.attack = 0.2
        expected.hold = 0.3
        expected.decay = 0.4
        expected.sustain = 60
        expected.release = 1.5
        expected.velocityToDelay = 0.01
        expected.velocityToAttack = -0.1
        expected.velocityToHold = 0.02
        expected.velocityToDecay = 0.03
        expected.velocityToSustain = 10
        expected.velocityToRelease = 0.5
        #expect(r.amplitudeEnvelope == expected)
    }

    @Test func filterAndFilterEnvelopeOpcodes() throws {
        for (written, type) in [("lpf_1p", SFZFilterType.lowPassOnePole), ("lpf_2p", .lowPassTwoPole), ("hpf_1p", .highPassOnePole), ("hpf_2p", .highPassTwoPole)] {
            #expect(try region("fil_type=\(written)").filterType == type)
        }
        let r = try region("cutoff=1200 resonance=6 fil_keytrack=100 fil_keycenter=c5 fil_veltrack=2400 fileg_attack=0.5 fileg_decay=1 fileg_sustain=20 fileg_release=2 fileg_depth=-1200 fileg_delay=0.1 fileg_hold=0.05")
        #expect(r.cutoff == 1200 && r.resonance == 6 && r.filterKeytrack == 100 && r.filterKeycenter == 72 && r.filterVeltrack == 2400)
        #expect(r.filterEnvelope.attack == 0.5 && r.filterEnvelope.decay == 1 && r.filterEnvelope.sustain == 20)
        #expect(r.filterEnvelope.release == 2 && r.filterEnvelope.depth == -1200 && r.filterEnvelope.delay == 0.1 && r.filterEnvelope.hold == 0.05)
        let unsupported = try instrument("<region> sample=a.wav fil_type=lpf_2p\n<region> sample=a.wav fil_type=lpf_2p fil_type=bpf_2p")
        #expect(unsupported.regions[1].filterType == .lowPassTwoPole)
        #expect(unsupported.warnings.map(\.line) == [2] && unsupported.warnings[0].opcode == "fil_type")
    }

    @Test func sampleOffsetsAndLoops() throws {
        for (written, mode) in [("no_loop", SFZLoopMode.noLoop), ("one_shot", .oneShot), ("loop_continuous", .loopContinuous), ("loop_sustain", .loopSustain)] {
            #expect(try region("loop_mode=\(written)").loopMode == mode)
        }
        let r = try region("offset=100 end=44099 loop_start=2000 loop_end=40000")
        #expect(r.offset == 100 && r.end == 44099 && r.loopStart == 2000 && r.loopEnd == 40000)
    }

    @Test func velocityCurvePointsJoinWithStraightLines() throws {
        let r = try region("amp_velcurve_64=0.8 amp_velcurve_100=0.9")
        #expect(r.ampVelocityCurve == [SFZVelocityPoint(velocity: 64, gain: 0.8), SFZVelocityPoint(velocity: 100, gain: 0.9)])
        let table = try #require(r.velocityCurveTable())
        #expect(table.count == 128)
        #expect(table[0] == 0 && table[64] == 0.8 && table[100] == 0.9 && table[127] == 1)
        #expect(abs(table[32] - 0.4) < 1e-12)
        #expect(abs(table[82] - 0.85) < 1e-12)
        // Points from the group come first; the region's own point at the same velocity wins.
        let inherited = try instrument("<group> amp_velcurve_127=0.5 amp_velcurve_1=0.2\n<region> sample=a.wav amp_velcurve_127=0.7")
        let inheritedTable = try #require(inherited.regions[0].velocityCurveTable())
        #expect(inheritedTable[127] == 0.7 && inheritedTable[1] == 0.2)
    }

    @Test func curvesAreNumberedAndFilledAsSfizz() throws {
        let result = try instrument("""
            <curve> curve_index=17 v000=1 v063=0.5 v127=0
            <curve> v064=0.25
            <curve> curve_index=300 v1=1
            """)
        let curve = try #require(result.curves[17])
        #expect(curve.values[0] == 1 && curve.values[63] == 0.5 && curve.values[127] == 0)
        #expect(abs(curve.values[95] - 0.25) < 1e-12)
        // An implicit index after explicit ones is refused; curve_index 300 is out of range
        // (the default 0, as sfizz).
        #expect(result.curves.keys.sorted() == [0, 17])
        #expect(result.warnings.map(\.line) == [2, 3])
        let implicit = try instrument("<curve> v064=0.25\n<curve> v001=1")
        #expect(implicit.curves.keys.sorted() == [7, 8])
        #expect(implicit.curves[7]!.values[32] == 0.125)
    }

    @Test func defaultPathAppliesToLaterRegionsAndResetsOnEachControl() throws {
        let result = try instrument("""
            <region> sample=one.wav
            <control> default_path=Kit/
            <region> sample=two.wav
            <region> sample=*sine
            <control>
            <region> sample=three.wav
            """)
        #expect(result.regions.map(\.sample) == [.file("/instrument/one.wav"), .file("/instrument/Kit/two.wav"), .generator("*sine"), .file("/instrument/three.wav")])
    }

    @Test func noteAndOctaveOffsetsMoveKeysLikeSfizz() throws {
        let result = try instrument("""
            <control> octave_offset=1 note_offset=-2
            <region> sample=a.wav key=60 sw_last=30
            <region> sample=a.wav lokey=120 hikey=127
            <region> sample=a.wav
            <control> note_offset=1
            <region> sample=a.wav key=60
            """)
        let r = result.regions
        #expect(r[0].keyRange == SFZRange(70, 70) && r[0].pitchKeycenter == 70 && r[0].keyswitchLast == 40)
        #expect(r[1].keyRange == SFZRange(127, 127))
        // The whole keyboard stays whole; the pitch center moves.
        #expect(r[2].keyRange == SFZRange(0, 127) && r[2].pitchKeycenter == 70)
        // A later <control> changes only what it sets.
        #expect(r[3].keyRange == SFZRange(73, 73))
    }

    @Test func unknownOpcodesAreWarningsNamingFileLineAndOpcodeOnce() throws {
        let result = try instrument("""
            <global> xfin_lovel=20
            <region> sample=a.wav
            <region> sample=b.wav
              lfo01_freq=2 volume=-1
            """, others: [:])
        #expect(result.regions.count == 2 && result.regions[1].volume == -1)
        #expect(result.warnings == [
            SFZWarning(path: "/instrument/main.sfz", line: 1, opcode: "xfin_lovel", message: "unknown or unsupported opcode `xfin_lovel` (ignored)"),
            SFZWarning(path: "/instrument/main.sfz", line: 4, opcode: "lfo01_freq", message: "unknown or unsupported opcode `lfo01_freq` (ignored)"),
        ])
        #expect(result.warnings[1].description == "/instrument/main.sfz:4: unknown or unsupported opcode `lfo01_freq` (ignored)")
    }

    @Test func warningsInAnIncludedFileNameThatFile() throws {
        let result = try instrument("<region> sample=a.wav\n#include \"sub/x.sfz\"", others: ["sub/x.sfz": "\n\nbogus_opcode=1"])
        #expect(result.warnings.map { "\($0.path):\($0.line):\($0.opcode ?? "")" } == ["/instrument/sub/x.sfz:3:bogus_opcode"])
    }

    @Test func warningsAreCappedAndCounted() throws {
        var options = SFZReadOptions()
        options.maximumWarningCount = 5
        let result = try instrument("<region> sample=a.wav " + (1...12).map { "junk\($0)=1" }.joined(separator: " "), options: options)
        #expect(result.warnings.count == 5 && result.droppedWarningCount == 7)
    }
}
