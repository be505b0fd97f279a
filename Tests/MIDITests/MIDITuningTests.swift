import AudioTestSupport
import MIDI
import Testing

/// MIDI Tuning Standard messages as an instrument decodes them, and the tuning state they
/// drive: what a tuning program, a channel's selection and a scale/octave message make of a key.
@Suite struct MIDITuningTests {
    typealias Pitch = TuningMessages.Pitch

    /// A recognisable tuning: key k a little above its equal-tempered pitch, by k fractions.
    static func pitch(_ key: Int) -> Pitch? {
        Pitch(semitone: UInt8(key), fraction: UInt16(key * 37))
    }

    @Test func bulkDumpCarriesEveryKeyAndTheName() throws {
        let bytes = TuningMessages.bulkDump(program: 5, name: "Werckmeister III", pitch: Self.pitch)
        #expect(bytes.count == 408)
        guard case .tuningBulkDump(let change) = try #require(SystemExclusiveCommand(bytes)) else {
            Issue.record("not a bulk dump")
            return
        }
        #expect(change.program == 5 && change.bank == 0 && !change.realTime)
        #expect(change.name == "Werckmeister III")
        for key in 0..<128 { #expect(change.cents(forKey: key) == Self.pitch(key)!.cents) }
        #expect(change.cents(forKey: 128) == nil && change.cents(forKey: -1) == nil)
    }

    @Test func bulkDumpWithBankAndNoChangeKeys() throws {
        let bytes = TuningMessages.bulkDump(program: 9, bank: 2, realTime: true, device: 0x10) { $0 == 60 ? nil : Self.pitch($0) }
        guard case .tuningBulkDump(let change) = try #require(SystemExclusiveCommand(bytes)) else {
            Issue.record("not a bulk dump")
            return
        }
        #expect(change.bank == 2 && change.program == 9 && change.realTime)
        #expect(change.cents(forKey: 60) == nil)
        #expect(change.cents(forKey: 61) == Self.pitch(61)!.cents)
    }

    @Test func bulkDumpChecksumAsFluidSynthComputesItIsAcceptedAndAWrongOneIsNot() {
        var bytes = TuningMessages.bulkDump(program: 3, pitch: Self.pitch)
        // FluidSynth's own dumps XOR 7E, 08, 01, the program and the data only.
        var fluid: UInt8 = 0x7E ^ 0x08 ^ 0x01 ^ 3
        for i in 22..<406 { fluid ^= bytes[i] }
        #expect(fluid & 0x7F != bytes[406], "the two reckonings must differ for this test to mean anything")
        bytes[406] = fluid & 0x7F
        #expect(SystemExclusiveCommand(bytes) != nil)
        bytes[406] = (bytes[406] + 1) & 0x7F
        #expect(SystemExclusiveCommand(bytes) == nil)
    }

    @Test func singleNoteChangesWithAndWithoutBank() throws {
        let plain = TuningMessages.noteChange(program: 1, [(60, Pitch(semitone: 60, fraction: 8192)), (61, nil),
                                                           (127, Pitch(semitone: 127, fraction: 16_000))])
        guard case .singleNoteTuningChange(let change) = try #require(SystemExclusiveCommand(plain)) else {
            Issue.record("not a note change")
            return
        }
        #expect(change.program == 1 && change.realTime)
        #expect(change.cents(forKey: 60) == 6050)
        #expect(change.cents(forKey: 61) == nil && change.cents(forKey: 59) == nil)
        let top: Double = 12_700 + 16_000 * 100 / 16_384
        #expect(change.cents(forKey: 127) == top)
        let banked = TuningMessages.noteChange(program: 4, bank: 1, realTime: false, [(0, Pitch(semitone: 2, fraction: 0))])
        guard case .singleNoteTuningChange(let other) = try #require(SystemExclusiveCommand(banked)) else {
            Issue.record("not a note change")
            return
        }
        #expect(other.bank == 1 && other.program == 4 && !other.realTime)
        #expect(other.cents(forKey: 0) == 200)
    }

    @Test func scaleOctaveOneAndTwoByteForms() throws {
        let one = TuningMessages.scaleOctave(channels: 0b1000_0000_0000_0101, cents: [-64, 63, 0, 1, 2, 3, 4, 5, 6, 7, 8, -10])
        guard case .scaleOctaveTuning(let a) = try #require(SystemExclusiveCommand(one)) else {
            Issue.record("not a scale/octave tuning")
            return
        }
        #expect(a.channels == 0b1000_0000_0000_0101 && !a.realTime)
        #expect(a.cents(forPitchClass: 0) == -64 && a.cents(forPitchClass: 1) == 63 && a.cents(forPitchClass: 11) == -10)
        let two = TuningMessages.scaleOctave(channels: 1, values: [0, 16_383, 8192, 4096] + Array(repeating: 8192, count: 8), realTime: true)
        guard case .scaleOctaveTuning(let b) = try #require(SystemExclusiveCommand(two)) else {
            Issue.record("not a scale/octave tuning")
            return
        }
        #expect(b.realTime && b.channels == 1)
        #expect(b.cents(forPitchClass: 0) == -100)
        #expect(b.cents(forPitchClass: 1) == 8191.0 * 100 / 8192)
        #expect(b.cents(forPitchClass: 2) == 0 && b.cents(forPitchClass: 3) == -50)
    }

    @Test func malformedTuningMessagesAreIgnored() {
        let dump = TuningMessages.bulkDump(program: 0, pitch: Self.pitch)
        var highBit = dump
        highBit[100] = 0x80
        var otherDevice = dump
        otherDevice[2] = 0x05
        let change = TuningMessages.noteChange(program: 0, [(60, Pitch(semitone: 60, fraction: 1))])
        var wrongCount = change
        wrongCount[6] = 2
        let octave = TuningMessages.scaleOctave(channels: 1, cents: Array(repeating: 0, count: 12))
        for bad in [highBit, otherDevice, wrongCount, Array(octave.dropLast(2)) + [0xF7], Array(octave.dropLast()) + [0, 0xF7],
                    [0xF0, 0x7E, 0x7F, 0x08, 0x00, 0x05, 0xF7],          // a dump request: nothing to act on
                    [0xF0, 0x7F, 0x7F, 0x08, 0x02, 0x00, 0x00, 0xF7]] {  // a note change of no notes
            #expect(SystemExclusiveCommand(bad) == nil, "\(bad.prefix(8))")
        }
    }

    @Test func everyTruncationAndRandomCorruptionDecodesWithoutTrapping() {
        let messages = [TuningMessages.bulkDump(program: 1, bank: 3, pitch: Self.pitch),
                        TuningMessages.noteChange(program: 2, [(1, nil), (2, Pitch(semitone: 3, fraction: 4))]),
                        TuningMessages.scaleOctave(channels: 3, values: Array(repeating: 100, count: 12))]
        var seed: UInt64 = 0x1234_5678
        func random() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 33
        }
        var decoded = 0
        for message in messages {
            for length in 2..<(message.count - 1) {
                if SystemExclusiveCommand(Array(message.prefix(length)) + [0xF7]) != nil { decoded += 1 }
            }
            for _ in 0..<500 {
                var bytes = message
                for _ in 0..<(1 + Int(random() % 4)) { bytes[1 + Int(random()) % (bytes.count - 2)] = UInt8(random() & 0xFF) }
                _ = SystemExclusiveCommand(bytes)
            }
        }
        // A truncated tuning message never passes for a whole one.
        #expect(decoded == 0)
    }

    @Test func bulkDumpToProgramZeroRetunesEveryChannelAndOthersWaitForSelection() throws {
        let state = MIDITuningState()
        #expect(state.cents(channel: 0, key: 60) == nil)
        let zero = try #require(SystemExclusiveCommand(TuningMessages.bulkDump(program: 0, pitch: Self.pitch)))
        #expect(state.apply(zero) == MIDITuningState.Update(channels: 0xFFFF, realTime: false))
        #expect(state.cents(channel: 7, key: 60) == Self.pitch(60)!.cents)
        let five = try #require(SystemExclusiveCommand(TuningMessages.bulkDump(program: 5, bank: 1) { _ in Pitch(semitone: 69, fraction: 0) }))
        #expect(state.apply(five)?.channels == 0)
        state.selectBank(channel: 2, bank: 1)
        #expect(state.selectProgram(channel: 2, program: 5) == MIDITuningState.Update(channels: 4, realTime: true))
        #expect(state.cents(channel: 2, key: 10) == 6900)
        #expect(state.cents(channel: 3, key: 10) == Self.pitch(10)!.cents)
        // A note change edits the program the channel plays.
        let change = try #require(SystemExclusiveCommand(TuningMessages.noteChange(program: 5, bank: 1, [(10, Pitch(semitone: 1, fraction: 0))])))
        #expect(state.apply(change) == MIDITuningState.Update(channels: 4, realTime: true))
        #expect(state.cents(channel: 2, key: 10) == 100 && state.cents(channel: 2, key: 11) == 6900)
        // A bank beyond those kept selects nothing: equal temperament.
        state.selectBank(channel: 2, bank: UInt8(MIDITuningState.bankCount))
        _ = state.selectProgram(channel: 2, program: 5)
        #expect(state.cents(channel: 2, key: 10) == nil)
        state.reset()
        #expect(state.cents(channel: 3, key: 10) == nil)
    }

    @Test func scaleOctaveRetunesOnlyTheChannelsInItsMaskUntilTheySelectAProgram() throws {
        let state = MIDITuningState()
        let octave = try #require(SystemExclusiveCommand(TuningMessages.scaleOctave(channels: 0b10, cents: [10, 0, 0, 0, -14, 0, 0, 2, 0, 0, 0, 0])))
        #expect(state.apply(octave) == MIDITuningState.Update(channels: 2, realTime: false))
        #expect(state.cents(channel: 1, key: 60) == 6010 && state.cents(channel: 1, key: 76) == 7586)
        #expect(state.cents(channel: 1, key: 61) == 6100)
        #expect(state.cents(channel: 0, key: 60) == nil)
        _ = state.selectProgram(channel: 1, program: 0)
        #expect(state.cents(channel: 1, key: 60) == nil)
    }

    @Test func baseTuningStandsInForEqualTemperamentAndSurvivesAReset() {
        let state = MIDITuningState()
        state.setBaseTuning((0..<128).map { Double($0) * 100 + 5 })
        #expect(state.cents(channel: 9, key: 60) == 6005)
        state.reset()
        #expect(state.cents(channel: 0, key: 0) == 5)
        state.setBaseTuning(nil)
        #expect(state.cents(channel: 0, key: 0) == nil)
    }
}
