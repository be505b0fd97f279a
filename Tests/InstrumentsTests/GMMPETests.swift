import AudioGraph
import AudioTestSupport
import Foundation
import Instruments
import MIDI
import Testing

/// MIDI Polyphonic Expression through the built-in synthesizer: a chord of the steady organ on
/// three member channels of a Lower Zone (the program sent once, on the manager channel), one
/// note bent, one darkened by CC 74, one pressed. Each voice is isolated from the chord's audio
/// (the chord minus a render without that note) and measured.
@Suite struct GMMPETests {
    static let change = 22_050
    static let frames = change + 80_000
    static let chord: [(channel: UInt8, key: UInt8)] = [(1, 48), (2, 60), (3, 67)]

    static func configuration(manager: UInt8, members: UInt8) -> [MIDIMessage] {
        [.controlChange(channel: manager, controller: MIDIController.rpnMSB, value: 0),
         .controlChange(channel: manager, controller: MIDIController.rpnLSB, value: MPEZones.configurationRPN),
         .controlChange(channel: manager, controller: MIDIController.dataEntryMSB, value: members)]
    }

    /// The chord after an MCM (15 members) and a program change on the manager; at `change`,
    /// channel 2 bends up 3 semitones over its 48, CC 74 goes to 0 on channel 1 and channel 3
    /// gets full pressure (unless `pressure` is false).
    static func events(program: UInt8, without omitted: Int? = nil, mpe: Bool = true, pressure: Bool = true) -> [(frame: Int, message: MIDIMessage)] {
        var e = (mpe ? configuration(manager: 0, members: 15) : []).map { (frame: 0, message: $0) }
        e.append((1, .programChange(channel: 0, program: program)))
        if !mpe { for note in chord { e.append((1, .programChange(channel: note.channel, program: program))) } }
        for (n, note) in chord.enumerated() where n != omitted {
            e.append((10, .noteOn(channel: note.channel, key: note.key, velocity: 100)))
        }
        e.append((change, .pitchBend(channel: 2, value: 8192 + 512)))
        e.append((change, .controlChange(channel: 1, controller: MIDIController.timbre, value: 0)))
        if pressure { e.append((change, .channelPressure(channel: 3, pressure: 127))) }
        return e
    }

    static func isolatedVoices(mpe: Bool = true, pressure: Bool = true) throws -> [[Float]] {
        let program = try #require(GMTuningTests.steadyProgram)
        let all = try SynthRig().render(frames: frames, messages: events(program: program, mpe: mpe, pressure: pressure)).left
        return try chord.indices.map { n in
            let rest = try SynthRig().render(frames: frames, messages: events(program: program, without: n, mpe: mpe, pressure: pressure)).left
            return zip(all, rest).map { $0 - $1 }
        }
    }

    static func afterChange(_ x: [Float]) -> [Float] { Array(x[change...]) }

    static func vibratoRate() throws -> Double {
        Double(GMPatches.melodic(program: Int(try #require(GMTuningTests.steadyProgram))).vibratoRate)
    }

    /// Level of harmonics 3 to 8 against the fundamental, in dB, after the change.
    static func brightness(_ x: [Float], f0: Double) -> Double {
        let range = (change + 4410)..<(change + 48_510)
        let high = (3...8).map { magnitude(x, range, hertz: Double($0) * f0) }.reduce(0, +)
        return 20 * log10(high / magnitude(x, range, hertz: f0))
    }

    @Test func bendingOneNoteOfAChordMovesThatVoiceAlone() throws {
        let voices = try Self.isolatedVoices()
        let rate = try Self.vibratoRate()
        for (n, semitones) in [(0, 0.0), (1, 3.0)] {
            let want = GMTuningTests.expected(Double(Self.chord[n].key) * 100 + semitones * 100)
            let measured = GMTuningTests.periodicFrequency(Self.afterChange(voices[n]), near: want, vibratoRate: rate)
            #expect(GMTuningTests.error(measured, want) < 0.1, "voice \(n): \(measured) Hz, want \(want)")
        }
    }

    @Test func timbreAndPressureChangeTheirOwnVoiceOnly() throws {
        let mpe = try Self.isolatedVoices()
        let plain = try Self.isolatedVoices(mpe: false)
        let unpressed = try Self.isolatedVoices(pressure: false)
        // Outside MPE, CC 74 and pressure do nothing; inside, CC 74 at 0 darkens channel 1.
        let f0 = [48, 60, 67].map { GMTuningTests.expected(Double($0) * 100) }
        let drop = Self.brightness(plain[0], f0: f0[0]) - Self.brightness(unpressed[0], f0: f0[0])
        #expect(drop > 6, "CC 74 at 0 lowers channel 1's harmonics by \(drop) dB")
        let third = Self.brightness(plain[2], f0: f0[2]) - Self.brightness(unpressed[2], f0: f0[2])
        #expect(abs(third) < 0.5, "channel 3's harmonics move \(third) dB")
        // Pressure on channel 3 changes its voice (a deeper vibrato) and leaves channel 1's alone.
        func difference(_ a: [Float], _ b: [Float], _ range: Range<Int>) -> Float {
            range.reduce(0) { max($0, abs(a[$1] - b[$1])) }
        }
        let later = (Self.change + 4410)..<Self.frames
        #expect(difference(mpe[2], unpressed[2], 0..<Self.change) < 1e-5)
        #expect(difference(mpe[2], unpressed[2], later) > 0.01, "pressure changes the pressed voice")
        #expect(difference(mpe[0], unpressed[0], later) < 1e-5, "pressure on channel 3 leaves channel 1 alone")
    }

    @Test func channelTenIsMelodicInsideAZone() throws {
        // Key 69 on channel 10 plays a drum; in a zone it plays program 0, as channel 1 does.
        let notes: [(frame: Int, message: MIDIMessage)] = [(10, .noteOn(channel: 9, key: 69, velocity: 100))]
        let zoned = try SynthRig().render(frames: 44_100, messages: Self.configuration(manager: 0, members: 15).map { (0, $0) } + notes).left
        let drums = try SynthRig().render(frames: 44_100, messages: notes).left
        #expect(zoned != drums)
        let zonedMelodic = try SynthRig().render(frames: 44_100, messages: [(10, .noteOn(channel: 0, key: 69, velocity: 100))]).left
        #expect(zoned.count == zonedMelodic.count)
        // The piano on channel 10 of the zone sounds like the piano on channel 1.
        let corr = zip(zoned, zonedMelodic).reduce(0.0) { $0 + Double($1.0 * $1.1) }
        let norm = (zoned.reduce(0.0) { $0 + Double($1 * $1) } * zonedMelodic.reduce(0.0) { $0 + Double($1 * $1) }).squareRoot()
        #expect(corr / norm > 0.99, "correlation \(corr / norm)")
    }

    @Test func memberBendRangeIsZoneWideAndTheManagerBendAddsToIt() throws {
        // RPN 0 on member channel 6 sets 12 semitones for every member; channel 3 bends up 6 of
        // them and the manager (range 2) all the way up.
        let program = try #require(GMTuningTests.steadyProgram)
        var e = Self.configuration(manager: 0, members: 15).map { (frame: 0, message: $0) }
        e += [(1, .programChange(channel: 0, program: program))]
        e += [MIDIMessage.controlChange(channel: 5, controller: MIDIController.rpnMSB, value: 0),
              .controlChange(channel: 5, controller: MIDIController.rpnLSB, value: 0),
              .controlChange(channel: 5, controller: MIDIController.dataEntryMSB, value: 12)].map { (frame: 2, message: $0) }
        e += [(3, .pitchBend(channel: 2, value: 8192 + 4096)), (3, .pitchBend(channel: 0, value: 16_383)),
              (10, .noteOn(channel: 2, key: 60, velocity: 100))]
        let out = try SynthRig().render(frames: 80_000, messages: e).left
        let want = GMTuningTests.expected(6000 + 600 + 200 * 8191 / 8192)
        let measured = GMTuningTests.periodicFrequency(out, near: want, vibratoRate: try Self.vibratoRate())
        #expect(GMTuningTests.error(measured, want) < 0.1, "\(measured) Hz, want \(want)")
    }

    @Test func theManagersTimbreDarkensEveryVoice() throws {
        // The chord without its own expression, then CC 74 at 0 on the manager at `change`.
        let program = try #require(GMTuningTests.steadyProgram)
        func chord(managerTimbre: Bool, without omitted: Int? = nil) -> [(frame: Int, message: MIDIMessage)] {
            var e = Self.events(program: program, without: omitted).filter { $0.frame < Self.change }
            if managerTimbre { e.append((Self.change, .controlChange(channel: 0, controller: MIDIController.timbre, value: 0))) }
            return e
        }
        func voices(_ managerTimbre: Bool) throws -> [[Float]] {
            let all = try SynthRig().render(frames: Self.frames, messages: chord(managerTimbre: managerTimbre)).left
            return try Self.chord.indices.map { n in
                zip(all, try SynthRig().render(frames: Self.frames, messages: chord(managerTimbre: managerTimbre, without: n)).left).map { $0 - $1 }
            }
        }
        let dark = try voices(true), plain = try voices(false)
        for (n, note) in Self.chord.enumerated() {
            let f0 = GMTuningTests.expected(Double(note.key) * 100)
            let drop = Self.brightness(plain[n], f0: f0) - Self.brightness(dark[n], f0: f0)
            #expect(drop > 6, "the manager's CC 74 at 0 lowers voice \(n)'s harmonics by \(drop) dB")
        }
    }

    @Test func aMemberChannelsOwnProgramChangeIsIgnoredAndARoleChangeReleasesNotes() throws {
        let program = try #require(GMTuningTests.steadyProgram)
        let zone = Self.configuration(manager: 0, members: 15).map { (frame: 0, message: $0) }
        let note: [(frame: Int, message: MIDIMessage)] = [(1, .programChange(channel: 0, program: program)), (10, .noteOn(channel: 2, key: 60, velocity: 100))]
        // Strings, or a piano if the steady program is strings: another family either way.
        let other: [(frame: Int, message: MIDIMessage)] = [(5, .programChange(channel: 2, program: program / 8 == 5 ? 0 : 40))]
        let kept = try SynthRig().render(frames: 22_050, messages: zone + note).left
        #expect(try SynthRig().render(frames: 22_050, messages: zone + note + other).left == kept, "a member keeps its zone's program")
        #expect(try SynthRig().render(frames: 22_050, messages: note + other).left != (try SynthRig().render(frames: 22_050, messages: note).left),
                "outside a zone the change is heard")
        // A held note on channel 4, then a zone that makes it a member: the note is released.
        let held: [(frame: Int, message: MIDIMessage)] = [(1, .programChange(channel: 3, program: program)), (10, .noteOn(channel: 3, key: 60, velocity: 100))]
        func tail(_ e: [(frame: Int, message: MIDIMessage)]) throws -> Float {
            let x = try SynthRig().render(frames: 88_200, messages: e).left
            return x[66_150...].map(abs).max()! / x[11_025..<22_050].map(abs).max()!
        }
        #expect(try tail(held) > 0.5, "without the message the organ holds")
        #expect(try tail(held + Self.configuration(manager: 0, members: 15).map { (frame: 22_050, message: $0) }) < 1e-3)
    }

    @Test func withoutAConfigurationMessageBendRangeStaysTwo() throws {
        let voices = try Self.isolatedVoices(mpe: false)
        let want = GMTuningTests.expected(6000 + 300 * 2.0 / 48)
        let measured = GMTuningTests.periodicFrequency(Self.afterChange(voices[1]), near: want, vibratoRate: try Self.vibratoRate())
        #expect(GMTuningTests.error(measured, want) < 0.1, "\(measured) Hz, want \(want)")
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
