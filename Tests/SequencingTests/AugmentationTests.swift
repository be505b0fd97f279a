import MIDI
import Testing
import Sequencing

@Suite("Seeded augmentation")
struct AugmentationTests {
    static let spec = "transpose=-3..3,tempo=0.8..1.25,velocity=0.7..1.4,gain=-6..0"

    @Test("A spec reads back as it was written, and every malformed part is named with its reason")
    func parsing() throws {
        let spec = try AugmentationSpec(parsing: "gain=-6..0, transpose = -3..3,tempo=0.8..1.25,velocity=0.7..1.4")
        #expect(spec.description == Self.spec)
        #expect(try AugmentationSpec(parsing: "tempo=1.5").ranges[.tempo] == 1.5...1.5)
        let refusals: [(String, String)] = [
            ("colour=1", "unknown knob 'colour'"), ("tempo", "expected knob=VALUE"), ("tempo=fast", "'fast' is not a number"),
            ("tempo=1.2..0.9", "the low end is above the high end"), ("tempo=0.1..1", "tempo must lie in 0.25...4"),
            ("transpose=0.5", "whole semitones"), ("gain=-30", "gain must lie in -24...24"), ("gain=1,gain=2", "given twice"),
            ("tempo=1..2..3", "is not a number or LOW..HIGH"), ("tempo=nan", "is not a number"), ("", "expected knob=VALUE"),
            ("reverb=1.5", "reverb must lie in 0...1"), ("chorus=-0.1..0", "chorus must lie in 0...1"), ("programs=2", "programs must lie in 0...1"),
        ]
        for (text, reason) in refusals {
            #expect(throws: AugmentationError.self, "\(text)") { try AugmentationSpec(parsing: text) }
            do {
                _ = try AugmentationSpec(parsing: text)
            } catch {
                #expect(error.description.contains(reason), "\(text): \(error)")
            }
        }
    }

    @Test("Draws depend only on the seed, the key and the knob: repeatable, different per seed and file, inside the ranges")
    func draws() throws {
        let spec = try AugmentationSpec(parsing: Self.spec)
        let keys = (0..<200).map { "folder/song-\($0).mid" }
        let draws = keys.map { spec.draw(seed: 42, key: $0) }
        #expect(draws == keys.map { spec.draw(seed: 42, key: $0) })
        #expect(draws != keys.map { spec.draw(seed: 43, key: $0) })
        for draw in draws {
            #expect((-3...3).contains(draw.transpose) && draw.values[.transpose] == Double(draw.transpose))
            #expect((0.8...1.25).contains(draw.values[.tempo] ?? 0))
            #expect((0.7...1.4).contains(draw.values[.velocity] ?? 0))
            #expect((-6...0).contains(draw.gainDecibels))
        }
        // Spread over the ranges, not stuck: every transposition comes up, tempos cover both halves.
        #expect(Set(draws.map(\.transpose)) == Set(-3...3))
        #expect(draws.contains { $0.values[.tempo]! < 1 } && draws.contains { $0.values[.tempo]! > 1.1 })
        // Another knob leaves the others' values alone.
        let fewer = try AugmentationSpec(parsing: "tempo=0.8..1.25")
        #expect(keys.map { fewer.draw(seed: 42, key: $0).values[.tempo] } == draws.map { $0.values[.tempo] })
    }

    @Test("A draw written as a spec redraws exactly the same values, whatever the seed and key")
    func drawsRoundTrip() throws {
        let spec = try AugmentationSpec(parsing: Self.spec)
        for i in 0..<50 {
            let draw = spec.draw(seed: UInt64(i) &* 0x9E37_79B9, key: "song-\(i).mid")
            let fixed = try AugmentationSpec(parsing: draw.description)
            #expect(fixed.draw(seed: 7, key: "anything") == draw, "\(draw)")
        }
        #expect(AugmentationSpec().draw(seed: 1, key: "x").description == "")
    }

    @Test("A draw transposes all but the drums, scales the tempo keeping the beats, curves velocities and adds its gain within -24...24 dB")
    func applying() throws {
        var song = MusicSequence(timeBase: .ticksPerQuarter(480))
        song.tempoTrack.add(.meta(.tempo(bpm: 100)), at: 0)
        song.tempoTrack.add(.meta(.tempo(bpm: 150)), at: 1_920)
        var track = MusicTrack()
        track.addNote(at: 0, channel: 0, key: 60, velocity: 127, duration: 240)
        track.addNote(at: 480, channel: 0, key: 64, velocity: 64, duration: 240)
        track.addNote(at: 960, channel: 9, key: 36, velocity: 100, duration: 120)
        song.tracks = [track]
        let draw = try AugmentationSpec(parsing: "transpose=-5,tempo=1.5,velocity=2,gain=3").draw(seed: 0, key: "")
        let changed = song.augmented(by: draw)
        let notes = changed.tracks[0].events.compactMap { e -> (Int64, NoteEvent)? in
            if case .note(let n) = e.event { return (e.tick, n) }
            return nil
        }
        #expect(notes.map(\.0) == [0, 480, 960])
        #expect(notes.map(\.1.key) == [55, 59, 36])
        // 127 x (v / 127)^2: the top stays, the middle softens.
        #expect(notes.map(\.1.velocity) == [127, 32, 79])
        #expect(changed.tempoChanges.map(\.microsecondsPerQuarter) == [400_000, 266_667])
        #expect(changed.makeTempoMap().seconds(atTick: 1_920) < song.makeTempoMap().seconds(atTick: 1_920) * 0.67)
        #expect(draw.gain(addedTo: -2) == 1 && draw.gain(addedTo: 23) == 24)
        #expect(song.augmented(by: AugmentationSpec().draw(seed: 0, key: "")) == song)
    }

    @Test("The programs knob swaps each program for another of its family with the drawn chance, the same way for the same value; the drums stay; a channel without a program change gets one")
    func programSwaps() throws {
        func swapped(_ chance: Double) throws -> AugmentationDraw {
            try AugmentationSpec(parsing: "programs=\(chance)").draw(seed: 0, key: "")
        }
        let none = try swapped(0), all = try swapped(1), half = try swapped(0.5)
        for program in UInt8(0)...127 {
            #expect(none.swappedProgram(program) == program)
            let other = all.swappedProgram(program)
            #expect(other != program && other / 8 == program / 8, "\(program) -> \(other)")
            #expect(half.swappedProgram(program) == (try swapped(0.5)).swappedProgram(program))
        }
        let kept = (UInt8(0)...127).filter { half.swappedProgram($0) == $0 }.count
        #expect((40...88).contains(kept), "\(kept) of 128 kept at chance 0.5")
        // Effect factors: 1 unless drawn.
        #expect(none.reverbFactor == 1 && none.chorusFactor == 1)
        let effects = try AugmentationSpec(parsing: "reverb=0.25,chorus=0").draw(seed: 3, key: "a")
        #expect(effects.reverbFactor == 0.25 && effects.chorusFactor == 0 && effects.description == "reverb=0.25,chorus=0")

        var song = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        track.add(.message(MIDIMessage(status: 0xC1, data1: 33, data2: 0)), at: 0)
        track.add(.message(MIDIMessage(status: 0xC9, data1: 5, data2: 0)), at: 0)
        track.addNote(at: 0, channel: 0, key: 60, velocity: 100, duration: 240)
        track.addNote(at: 0, channel: 1, key: 40, velocity: 100, duration: 240)
        track.addNote(at: 0, channel: 9, key: 36, velocity: 100, duration: 120)
        song.tracks = [track]
        let changed = song.augmented(by: all)
        let programs = changed.tracks[0].events.compactMap { e -> (UInt8, UInt8)? in
            if case .message(let m) = e.event, m.status & 0xF0 == 0xC0 { return (m.channel, m.data1) }
            return nil
        }.sorted { $0.0 < $1.0 }
        #expect(programs.map(\.0) == [0, 1, 9])
        #expect(programs[0].1 == all.swappedProgram(0) && programs[0].1 < 8 && programs[0].1 != 0)
        #expect(programs[1].1 == all.swappedProgram(33) && programs[1].1 / 8 == 4)
        #expect(programs[2].1 == 5)
        #expect(song.augmented(by: none) == song)
    }
}
