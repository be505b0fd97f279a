import AudioGraph
import AudioTestSupport
import Foundation
import MIDI
@testable import Sampler
import SoundFont
import Testing

/// MPE messages shared by the tests of both instruments' MPE handling.
enum MPEMessages {
    /// An MPE Configuration Message: RPN 6 selected on the manager channel, then the member count.
    static func configuration(manager: UInt8, members: UInt8) -> [MIDIMessage] {
        [.controlChange(channel: manager, controller: MIDIController.rpnMSB, value: 0),
         .controlChange(channel: manager, controller: MIDIController.rpnLSB, value: MPEZones.configurationRPN),
         .controlChange(channel: manager, controller: MIDIController.dataEntryMSB, value: members)]
    }

    /// RPN 0 (pitch bend sensitivity) set to `semitones` on `channel`.
    static func bendRange(channel: UInt8, semitones: UInt8) -> [MIDIMessage] {
        [.controlChange(channel: channel, controller: MIDIController.rpnMSB, value: 0),
         .controlChange(channel: channel, controller: MIDIController.rpnLSB, value: 0),
         .controlChange(channel: channel, controller: MIDIController.dataEntryMSB, value: semitones)]
    }

    /// The pitch wheel value that bends `semitones` over a range of `range` semitones.
    static func bend(semitones: Double, range: Double) -> UInt16 {
        UInt16((8192 + 8192 * semitones / range).rounded())
    }
}

/// Goertzel-style magnitude of `x[range]` at `hertz`, Hann windowed.
func magnitude(_ x: [Float], _ range: Range<Int>, hertz: Double, sampleRate: Double = 44_100) -> Double {
    var re = 0.0, im = 0.0
    let n = Double(range.count), w = 2 * Double.pi * hertz / sampleRate
    for (k, i) in range.enumerated() {
        let hann = 0.5 - 0.5 * cos(2 * Double.pi * Double(k) / n)
        re += Double(x[i]) * hann * cos(w * Double(i))
        im -= Double(x[i]) * hann * sin(w * Double(i))
    }
    return (re * re + im * im).squareRoot() / n
}

/// MIDI Polyphonic Expression through the sampler: a chord on three member channels of a Lower
/// Zone, one note bent, one darkened by CC 74 and one pressed, each voice isolated from the
/// chord's audio (the chord minus a render without that note) and measured.
@Suite struct SamplerMPETests {
    /// A 441 Hz sine at root key 69 with a faint 20th harmonic (3 % of it, too small to add zero
    /// crossings), so a filter's cutoff shows in the harmonic's level.
    static func bank() -> SoundFontBank {
        let period = 100, periods = 200, n = period * periods
        let words = (0..<n).map { i -> Int16 in
            let t = 2 * Double.pi * Double(i) / Double(period)
            return Int16((16_000 * sin(t) + 480 * sin(20 * t)).rounded())
        }
        return singleBank(TestSample(words: words, loop: 0..<n))
    }

    static let frames = 88_200
    static let change = 30_000
    static let before = 4410..<29_000
    static let after = 35_000..<86_000
    /// Chord notes: (member channel, key).
    static let chord: [(channel: UInt8, key: UInt8)] = [(1, 48), (2, 60), (3, 72)]

    /// An MCM for a 15-member Lower Zone, the chord, and at `change` frames: channel 2 bent up
    /// 3 semitones (its range is 48), CC 74 at 0 on channel 1, full pressure on channel 3.
    static func events(without omitted: Int? = nil, expression: Bool = true, pressure: Bool = true) -> [(frame: Int, message: MIDIMessage)] {
        var e = MPEMessages.configuration(manager: 0, members: 15).map { (frame: 0, message: $0) }
        for (n, note) in chord.enumerated() where n != omitted {
            e.append((10, .noteOn(channel: note.channel, key: note.key, velocity: 100)))
        }
        if expression {
            e.append((change, .pitchBend(channel: 2, value: MPEMessages.bend(semitones: 3, range: 48))))
            e.append((change, .controlChange(channel: 1, controller: MIDIController.timbre, value: 0)))
            if pressure { e.append((change, .channelPressure(channel: 3, pressure: 127))) }
        }
        return e
    }

    /// Each chord note's own signal: the chord's render minus a render without that note.
    static func isolatedVoices(expression: Bool = true, pressure: Bool = true) throws -> [[Float]] {
        let all = try SamplerRig(bank()).render(frames: frames, events(expression: expression, pressure: pressure)).left
        return try chord.indices.map { n in
            let rest = try SamplerRig(bank()).render(frames: frames, events(without: n, expression: expression, pressure: pressure)).left
            return zip(all, rest).map { $0 - $1 }
        }
    }

    static func expected(_ key: UInt8, semitones: Double = 0) -> Double { 441 * exp2((Double(key) - 69 + semitones) / 12) }

    @Test func bendingOneNoteOfAChordMovesThatVoiceAlone() throws {
        let voices = try Self.isolatedVoices()
        // Channel 2 (key 60) bent exactly 3 semitones; channel 1 held its pitch.
        for (n, semitones) in [(0, 0.0), (1, 3.0)] {
            let key = Self.chord[n].key
            let was = frequency(voices[n], Self.before), now = frequency(voices[n], Self.after)
            let wasError = cents(was / Self.expected(key)), nowError = cents(now / Self.expected(key, semitones: semitones))
            #expect(abs(wasError) < 0.1, "voice \(n) before: \(was) Hz, \(wasError) cents off")
            #expect(abs(nowError) < 0.1, "voice \(n) after: \(now) Hz, \(nowError) cents off")
        }
        // Channel 3 pressed: its vibrato (channel pressure -> vibrato, the SoundFont default
        // modulator) swings its pitch, and only its own.
        func swing(_ x: [Float], _ range: Range<Int>) -> Double {
            let measured = stride(from: range.lowerBound, to: range.upperBound - 1024, by: 1024).map { frequency(x, $0..<($0 + 1024)) }
            return cents(measured.max()! / measured.min()!)
        }
        #expect(swing(voices[2], Self.after) > 20, "pressed voice swings \(swing(voices[2], Self.after)) cents")
        #expect(swing(voices[2], Self.before) < 2)
        #expect(swing(voices[0], Self.after) < 2 && swing(voices[1], Self.after) < 2)
    }

    @Test func timbreOnOneChannelDarkensThatVoiceAlone() throws {
        // Without the pressure, whose vibrato would smear the harmonic being measured.
        let voices = try Self.isolatedVoices(pressure: false)
        func brightness(_ n: Int, _ range: Range<Int>) -> Double {
            let f0 = frequency(voices[n], range)
            return 20 * log10(magnitude(voices[n], range, hertz: 20 * f0) / magnitude(voices[n], range, hertz: f0))
        }
        let drop = (0..<3).map { brightness($0, Self.before) - brightness($0, Self.after) }
        #expect(drop[0] > 10, "CC 74 at 0 lowers channel 1's 20th harmonic by \(drop[0]) dB")
        #expect(abs(drop[1]) < 1 && abs(drop[2]) < 1, "the other voices' harmonics move \(drop[1]) and \(drop[2]) dB")
    }

    /// Renders `events` keeping only the note-ons of `channel`, and measures `range`.
    static func frequencyAlone(_ events: [(frame: Int, message: MIDIMessage)], channel: UInt8, _ range: Range<Int>) throws -> Double {
        let alone = events.filter { !($0.message.status & 0xF0 == 0x90 && $0.message.channel != channel) }
        return frequency(try SamplerRig(bank()).render(frames: frames, alone).left, range)
    }

    @Test func managerBendMovesEveryNoteOfTheZone() throws {
        // The manager's range is 2 after the configuration message: a full bend up adds 2
        // semitones (times 8191/8192) to each member's own bend.
        var e = Self.events(expression: false)
        e.append((Self.change, .pitchBend(channel: 0, value: 16_383)))
        e.append((Self.change, .pitchBend(channel: 2, value: MPEMessages.bend(semitones: 3, range: 48))))
        let manager = 2 * 8191.0 / 8192
        for (channel, key, semitones) in [(UInt8(1), UInt8(48), manager), (2, 60, 3 + manager)] {
            let f = try Self.frequencyAlone(e, channel: channel, Self.after)
            #expect(abs(cents(f / Self.expected(key, semitones: semitones))) < 0.1, "channel \(channel): \(f) Hz")
        }
    }

    @Test func bendRangeOnAMemberChannelAppliesToTheWholeZone() throws {
        // RPN 0 on channel 5 sets 12 semitones for every member; channel 2 then bends a full 12.
        var e = Self.events(expression: false)
        e += MPEMessages.bendRange(channel: 5, semitones: 12).map { (frame: 20, message: $0) }
        e.append((Self.change, .pitchBend(channel: 2, value: MPEMessages.bend(semitones: 6, range: 12))))
        let f = try Self.frequencyAlone(e, channel: 2, Self.after)
        #expect(abs(cents(f / Self.expected(60, semitones: 6))) < 0.1, "\(f) Hz")
    }

    @Test func channelTenIsMelodicInsideAZoneAndDrumsWithoutOne() throws {
        // The drum kit (bank 128) plays an 882 Hz sine at key 69, the melodic preset 441 Hz.
        let bank = makeBank(samples: [.sine(period: 100), .sine(period: 50)],
                            presets: [(0, 0, [TestRegion(sample: 0, generators: [.sampleModes: 1])]),
                                      (128, 0, [TestRegion(sample: 1, generators: [.sampleModes: 1])])])
        let notes: [(frame: Int, message: MIDIMessage)] = [(10, .noteOn(channel: 9, key: 69, velocity: 100))]
        func played(_ before: [MIDIMessage]) throws -> Double {
            frequency(try SamplerRig(bank).render(frames: 22_050, before.map { (0, $0) } + notes).left, 4410..<22_050)
        }
        #expect(abs(cents(try played([]) / 882)) < 0.1, "channel 10 is a drum channel without MPE")
        let zone = MPEMessages.configuration(manager: 0, members: 15)
        #expect(abs(cents(try played(zone) / 441)) < 0.1, "a member channel 10 plays the melodic preset")
        // A zone of 0 members removes it: channel 10 is drums again.
        #expect(abs(cents(try played(zone + MPEMessages.configuration(manager: 0, members: 0)) / 882)) < 0.1)
        // An Upper Zone of 6 members (channels 10-15) takes channel 10 too.
        #expect(abs(cents(try played(MPEMessages.configuration(manager: 15, members: 6)) / 441)) < 0.1)
    }

    @Test func withoutAConfigurationMessageNothingChanges() throws {
        // The same stream, with the bend, CC 74 and pressure but no MCM, against the notes and
        // messages one by one: the bend range stays 2, CC 74 does nothing.
        let e = Self.events().filter { $0.frame > 0 }
        let f = try Self.frequencyAlone(e, channel: 2, Self.after)
        #expect(abs(cents(f / Self.expected(60, semitones: 3 * 2.0 / 48))) < 0.1, "\(f) Hz")
        let first = try SamplerRig(Self.bank()).render(frames: Self.frames, e.filter { !($0.message.status & 0xF0 == 0x90 && $0.message.channel != 1) }).left
        let withoutTimbre = try SamplerRig(Self.bank()).render(frames: Self.frames, e.filter {
            !($0.message.status & 0xF0 == 0x90 && $0.message.channel != 1) && $0.message.data1 != MIDIController.timbre
        }).left
        #expect(first == withoutTimbre, "CC 74 outside a zone leaves the sound bit-identical")
    }
}

/// What a zone's manager channel and a change of roles do to the members' notes: the
/// manager's CC 74 and pressure combine with each member's, a member's own program change is
/// ignored, and a channel whose role changes releases its notes.
@Suite struct SamplerMPEZoneTests {
    typealias Events = [(frame: Int, message: MIDIMessage)]

    /// Each chord voice alone (the chord minus a render without it), with `extra` events.
    static func isolated(_ extra: Events) throws -> [[Float]] {
        let render = { (e: Events) in try SamplerRig(SamplerMPETests.bank()).render(frames: SamplerMPETests.frames, e).left }
        let all = try render(SamplerMPETests.events(expression: false) + extra)
        return try SamplerMPETests.chord.indices.map { n in
            zip(all, try render(SamplerMPETests.events(without: n, expression: false) + extra)).map { $0 - $1 }
        }
    }

    @Test func theManagersTimbreDarkensEveryVoiceAndAddsToAMembersOwn() throws {
        let change = SamplerMPETests.change
        let managerOnly = try Self.isolated([(change, .controlChange(channel: 0, controller: MIDIController.timbre, value: 0))])
        let plain = try Self.isolated([])
        func brightness(_ x: [Float], _ range: Range<Int>) -> Double {
            let f0 = frequency(x, range)
            return 20 * log10(magnitude(x, range, hertz: 20 * f0) / magnitude(x, range, hertz: f0))
        }
        for n in 0..<3 {
            let drop = brightness(plain[n], SamplerMPETests.after) - brightness(managerOnly[n], SamplerMPETests.after)
            #expect(drop > 10, "the manager's CC 74 at 0 lowers voice \(n)'s 20th harmonic by \(drop) dB")
        }
        // A member at 127 and the manager at 0: their offsets from 64 cancel (almost: +63 - 64).
        let cancelled = try Self.isolated([(change, .controlChange(channel: 0, controller: MIDIController.timbre, value: 0)),
                                           (change, .controlChange(channel: 1, controller: MIDIController.timbre, value: 127))])
        let residue = brightness(plain[0], SamplerMPETests.after) - brightness(cancelled[0], SamplerMPETests.after)
        #expect(abs(residue) < 1, "member 127 with manager 0 moves voice 0's harmonic by \(residue) dB")
    }

    @Test func theManagersPressureGivesEveryVoiceItsVibrato() throws {
        let voices = try Self.isolated([(SamplerMPETests.change, .channelPressure(channel: 0, pressure: 127))])
        func swing(_ x: [Float], _ range: Range<Int>) -> Double {
            let measured = stride(from: range.lowerBound, to: range.upperBound - 1024, by: 1024).map { frequency(x, $0..<($0 + 1024)) }
            return cents(measured.max()! / measured.min()!)
        }
        for n in 0..<3 {
            #expect(swing(voices[n], SamplerMPETests.after) > 20, "voice \(n) swings \(swing(voices[n], SamplerMPETests.after)) cents")
            #expect(swing(voices[n], SamplerMPETests.before) < 2)
        }
    }

    @Test func aMemberChannelsOwnProgramChangeIsIgnored() throws {
        // Program 1 is a sine an octave up: outside a zone the change is heard, inside it is not.
        let bank = makeBank(samples: [.sine(period: 100), .sine(period: 50)],
                            presets: [(0, 0, [TestRegion(sample: 0, generators: [.sampleModes: 1])]),
                                      (0, 1, [TestRegion(sample: 1, generators: [.sampleModes: 1])])])
        let note: Events = [(1, .programChange(channel: 2, program: 1)), (10, .noteOn(channel: 2, key: 69, velocity: 100))]
        func played(_ before: [MIDIMessage]) throws -> Double {
            frequency(try SamplerRig(bank).render(frames: 22_050, before.map { (0, $0) } + note).left, 4410..<22_050)
        }
        #expect(abs(cents(try played([]) / 882)) < 0.1, "outside a zone channel 3 takes program 1")
        #expect(abs(cents(try played(MPEMessages.configuration(manager: 0, members: 15)) / 441)) < 0.1,
                "a member channel keeps its zone's program")
    }

    @Test func aChannelWhoseRoleChangesReleasesItsNotes() throws {
        // A looping note on channel 4, then a Lower Zone that makes channel 4 a member.
        let note: Events = [(10, .noteOn(channel: 3, key: 69, velocity: 100))]
        let zone = MPEMessages.configuration(manager: 0, members: 15).map { (frame: 22_050, message: $0) }
        /// The level after the message against the level before it.
        func tailLevel(_ e: Events) throws -> Float {
            let x = try SamplerRig(SamplerMPETests.bank()).render(frames: 44_100, e).left
            return x[33_075...].map(abs).max()! / x[11_025..<22_050].map(abs).max()!
        }
        #expect(try tailLevel(note) > 0.9, "without the message the note sounds on")
        #expect(try tailLevel(note + zone) < 1e-3, "the role change released it")
        // A zone of two members (channels 2 and 3) leaves channel 4 and its note alone.
        let small = MPEMessages.configuration(manager: 0, members: 2).map { (frame: 22_050, message: $0) }
        #expect(try tailLevel(note + small) > 0.9, "a channel outside the new zone keeps its note")
    }
}

/// The zone arithmetic of MPE Configuration Messages.
@Suite struct MPEZoneRuleTests {
    @Test func aManagersMessagesReachTheZoneAsTheSpecificationSays() {
        #expect(MPEZones.zoneMessage(for: .controlChange(channel: 0, controller: 64, value: 127)) == .controller(64, value: 127))
        #expect(MPEZones.zoneMessage(for: .controlChange(channel: 0, controller: MIDIController.allNotesOff, value: 0))
                == .controller(MIDIController.allNotesOff, value: 0))
        #expect(MPEZones.zoneMessage(for: .programChange(channel: 0, program: 40)) == .program(40))
        for message in [MIDIMessage.pitchBend(channel: 0, value: 9000), .channelPressure(channel: 0, pressure: 90),
                        .controlChange(channel: 0, controller: MIDIController.timbre, value: 10)] {
            #expect(MPEZones.zoneMessage(for: message) == .expression, "\(message)")
        }
        for controller in [MIDIController.rpnMSB, MIDIController.rpnLSB, MIDIController.nrpnMSB, MIDIController.nrpnLSB,
                           MIDIController.dataEntryMSB, MIDIController.dataEntryLSB] {
            #expect(MPEZones.zoneMessage(for: .controlChange(channel: 0, controller: controller, value: 0)) == MPEZones.ZoneMessage.none)
        }
        #expect(MPEZones.zoneMessage(for: .noteOn(channel: 0, key: 60, velocity: 100)) == MPEZones.ZoneMessage.none)
    }

    @Test func zonesShrinkEachOtherAndZeroRemovesOne() {
        var z = MPEZones()
        #expect(!z.isActive && z.memberMask == 0)
        #expect(z.configure(managerChannel: 3, memberCount: 4) == nil)
        _ = z.configure(managerChannel: 0, memberCount: 7)
        #expect(z.memberMask == 0b1111_1110 && z.manager(of: 7) == 0 && z.manager(of: 8) == nil)
        _ = z.configure(managerChannel: 15, memberCount: 7)
        #expect(z.lowerMemberCount == 7 && z.upperMemberCount == 7)
        #expect(z.manager(of: 8) == 15 && z.manager(of: 14) == 15 && z.members(ofZoneWith: 15) == 0b0111_1111_0000_0000)
        // A Lower Zone of 10 would overlap: the Upper Zone keeps 4 members (channels 11-14).
        _ = z.configure(managerChannel: 0, memberCount: 10)
        #expect(z.lowerMemberCount == 10 && z.upperMemberCount == 4)
        // 15 members take every channel but the manager: no Upper Zone left.
        _ = z.configure(managerChannel: 0, memberCount: 15)
        #expect(z.upperMemberCount == 0 && z.manager(of: 15) == 0 && !z.isManager(15))
        _ = z.configure(managerChannel: 0, memberCount: 0)
        #expect(!z.isActive && !z.isMember(5))
    }

    @Test("Data entry: RPN 6 on a manager configures, RPN 0 on a member sets the zone's range, anything else is not MPE's")
    func dataEntryMeanings() {
        var z = MPEZones()
        #expect(z.dataEntry(channel: 1, rpnMSB: 0, rpnLSB: 0, value: 12, coarse: true, currentBendRange: 2) == .notMPE)
        #expect(z.dataEntry(channel: 3, rpnMSB: 0, rpnLSB: 6, value: 4, coarse: true, currentBendRange: 2) == .notMPE)
        // Manager 0 and members 1-4 change role.
        #expect(z.dataEntry(channel: 0, rpnMSB: 0, rpnLSB: 6, value: 4, coarse: true, currentBendRange: 2) == .zonesChanged(0b1_1111))
        #expect(z.dataEntry(channel: 2, rpnMSB: 0, rpnLSB: 0, value: 24, coarse: true, currentBendRange: 48.5) == .memberBendRange(24.5))
        #expect(z.dataEntry(channel: 2, rpnMSB: 0, rpnLSB: 0, value: 150, coarse: false, currentBendRange: 24.5) == .memberBendRange(24 + Float(99) / 100))
        // The configuration's LSB, an NRPN-like MSB and a manager's RPN 0 are the ordinary handling's.
        #expect(z.dataEntry(channel: 0, rpnMSB: 0, rpnLSB: 6, value: 4, coarse: false, currentBendRange: 2) == .notMPE)
        #expect(z.dataEntry(channel: 2, rpnMSB: 1, rpnLSB: 0, value: 4, coarse: true, currentBendRange: 2) == .notMPE)
        #expect(z.dataEntry(channel: 0, rpnMSB: 0, rpnLSB: 0, value: 4, coarse: true, currentBendRange: 2) == .notMPE)
    }
}
