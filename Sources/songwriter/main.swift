// Writes the demo songs of Songs/ through the Sequencing API, so they are the project's own,
// reproducible, and exercise what the engine must handle: formats 0 and 1, tempo changes and
// ramps, time and key signature changes, several channels, drums, pitch bend, sustain pedal.
//
// Usage: songwriter [OUTPUT_DIRECTORY]   (default: Songs)
import Foundation
import MIDI
import MIDIFile
import Sequencing

let ppq: Int64 = 480

/// Places notes by bar and beat in a fixed meter.
struct Writer {
    var track = MusicTrack()
    let channel: UInt8
    let beatsPerBar: Int64
    let ticksPerBeat: Int64

    init(name: String, channel: UInt8, program: UInt8?, beatsPerBar: Int64 = 4, ticksPerBeat: Int64 = ppq, volume: UInt8 = 100, pan: UInt8 = 64) {
        self.channel = channel
        self.beatsPerBar = beatsPerBar
        self.ticksPerBeat = ticksPerBeat
        track.name = name
        if let program { track.add(.message(.programChange(channel: channel, program: program)), at: 0) }
        track.add(.message(.controlChange(channel: channel, controller: MIDIController.volume, value: volume)), at: 0)
        track.add(.message(.controlChange(channel: channel, controller: MIDIController.pan, value: pan)), at: 0)
    }

    func tick(bar: Int, beat: Double) -> Int64 {
        Int64(bar) * beatsPerBar * ticksPerBeat + Int64((beat * Double(ticksPerBeat)).rounded())
    }

    mutating func note(bar: Int, beat: Double, key: Int, length: Double, velocity: Int) {
        track.addNote(at: tick(bar: bar, beat: beat), channel: channel, key: UInt8(clamping: key),
                      velocity: UInt8(clamping: velocity), duration: Int64((length * Double(ticksPerBeat)).rounded()))
    }

    mutating func control(bar: Int, beat: Double, _ controller: UInt8, _ value: Int) {
        track.add(.message(.controlChange(channel: channel, controller: controller, value: UInt8(clamping: value))), at: tick(bar: bar, beat: beat))
    }

    mutating func bend(bar: Int, beat: Double, _ value: Int) {
        track.add(.message(.pitchBend(channel: channel, value: UInt16(clamping: value))), at: tick(bar: bar, beat: beat))
    }
}

/// Deterministic variation, so a rerun writes the same bytes.
struct Dice {
    var state: UInt32
    mutating func roll(_ n: Int) -> Int {
        state = state &* 1_664_525 &+ 1_013_904_223
        return Int(state >> 16) % n
    }
}

// MARK: - Song 1: "Morning Steps", format 1, 4/4, C major, piano/bass/strings/drums, a ritardando.

func morningSteps() -> MusicSequence {
    var conductor = MusicTrack()
    conductor.name = "Morning Steps"
    conductor.add(.meta(.text(MetaType.copyright, "Tactus demo song, MIT licensed")), at: 0)
    conductor.add(.meta(.timeSignature(TimeSignature(4, 4))), at: 0)
    conductor.add(.meta(.keySignature(sharpsOrFlats: 0, minor: false)), at: 0)
    conductor.add(.meta(.tempo(bpm: 104)), at: 0)
    conductor.add(.meta(.text(MetaType.marker, "Verse")), at: 0)
    conductor.add(.meta(.text(MetaType.marker, "Chorus")), at: 8 * 4 * ppq)
    // Ritardando over the last two bars, one tempo event per beat.
    for i in 0..<8 {
        conductor.add(.meta(.tempo(bpm: 100 - Double(i) * 4)), at: (14 * 4 + Int64(i)) * ppq)
    }
    let bars = 17
    // C Am F G | C Am Dm G | F G Em Am | F G C C
    let roots = [60, 57, 53, 55, 60, 57, 62, 55, 53, 55, 52, 57, 53, 55, 60, 60]
    let minor: Set<Int> = [57, 62, 52]
    var piano = Writer(name: "Piano", channel: 0, program: 0, volume: 105, pan: 54)
    var bass = Writer(name: "Bass", channel: 1, program: 33, volume: 110, pan: 64)
    var strings = Writer(name: "Strings", channel: 2, program: 48, volume: 78, pan: 80)
    var drums = Writer(name: "Drums", channel: 9, program: nil, volume: 100, pan: 64)
    var dice = Dice(state: 7)
    for bar in 0..<bars - 1 {
        let root = roots[bar]
        let third = root + (minor.contains(root) ? 3 : 4)
        let fifth = root + 7
        let chord = [root, third, fifth]
        // Strings hold the chord, an octave down, with the sustain of a pad.
        for key in chord { strings.note(bar: bar, beat: 0, key: key - 12, length: 3.9, velocity: 58) }
        // Bass: root on 1, fifth on 3, a walk on 4.
        bass.note(bar: bar, beat: 0, key: root - 24, length: 1.8, velocity: 96)
        bass.note(bar: bar, beat: 2, key: fifth - 24, length: 0.9, velocity: 84)
        bass.note(bar: bar, beat: 3, key: roots[min(bar + 1, roots.count - 1)] - 23, length: 0.9, velocity: 80)
        // Piano: broken chord in eighths in the left hand, a melody of chord tones on top.
        for eighth in 0..<8 {
            let key = chord[[0, 1, 2, 1, 0, 1, 2, 1][eighth]]
            piano.note(bar: bar, beat: Double(eighth) / 2, key: key, length: 0.45, velocity: eighth % 2 == 0 ? 72 : 60)
        }
        var beat = 0.0
        while beat < 4 {
            let length = [1.0, 0.5, 0.5, 1.5][dice.roll(4)]
            let key = chord[dice.roll(3)] + 12 + (dice.roll(5) == 0 ? 2 : 0)
            piano.note(bar: bar, beat: beat, key: key, length: min(length, 4 - beat) * 0.95, velocity: 84 + dice.roll(16))
            beat += length
        }
        piano.control(bar: bar, beat: 0, MIDIController.sustainPedal, 127)
        piano.control(bar: bar, beat: 3.9, MIDIController.sustainPedal, 0)
        // Drums: kick 1 and 3, snare 2 and 4, closed hats in eighths, open hat before the bar.
        for beat in [0.0, 2.0, 2.5] { drums.note(bar: bar, beat: beat, key: 36, length: 0.25, velocity: 100) }
        for beat in [1.0, 3.0] { drums.note(bar: bar, beat: beat, key: 38, length: 0.25, velocity: 92) }
        for eighth in 0..<7 { drums.note(bar: bar, beat: Double(eighth) / 2, key: 42, length: 0.2, velocity: eighth % 2 == 0 ? 70 : 50) }
        drums.note(bar: bar, beat: 3.5, key: 46, length: 0.4, velocity: 66)
        if bar % 4 == 3 { drums.note(bar: bar, beat: 3.5, key: 49, length: 1, velocity: 90) }
    }
    // Final chord and crash.
    for key in [48, 55, 60, 64, 67, 72] { piano.note(bar: bars - 1, beat: 0, key: key, length: 3.5, velocity: 90) }
    bass.note(bar: bars - 1, beat: 0, key: 36, length: 3.5, velocity: 100)
    for key in [48, 52, 55] { strings.note(bar: bars - 1, beat: 0, key: key, length: 3.8, velocity: 64) }
    drums.note(bar: bars - 1, beat: 0, key: 49, length: 2, velocity: 110)
    drums.note(bar: bars - 1, beat: 0, key: 36, length: 0.5, velocity: 110)
    var sequence = MusicSequence(timeBase: .ticksPerQuarter(Int(ppq)), tempoTrack: conductor,
                                 tracks: [piano.track, bass.track, strings.track, drums.track])
    sequence.sourceFormat = 1
    return sequence
}

// MARK: - Song 2: "Little Waltz", format 0, 3/4, G major, piano and flute, tempo changes.

func littleWaltz() -> MusicSequence {
    var track = MusicTrack()
    track.name = "Little Waltz"
    track.add(.meta(.timeSignature(TimeSignature(3, 4))), at: 0)
    track.add(.meta(.keySignature(sharpsOrFlats: 1, minor: false)), at: 0)
    track.add(.meta(.tempo(bpm: 144)), at: 0)
    let barTicks = 3 * ppq
    track.add(.meta(.tempo(bpm: 120)), at: 16 * barTicks)   // a slower middle section
    track.add(.meta(.text(MetaType.marker, "Trio")), at: 16 * barTicks)
    track.add(.meta(.tempo(bpm: 144)), at: 24 * barTicks)
    var left = Writer(name: "", channel: 0, program: 0, beatsPerBar: 3, volume: 96, pan: 50)
    var flute = Writer(name: "", channel: 1, program: 73, beatsPerBar: 3, volume: 100, pan: 78)
    // G D/F# Em C | G D G G, twice, then the trio in E minor, then the opening again.
    let progression = [55, 50, 52, 48, 55, 50, 55, 55, 55, 50, 52, 48, 55, 50, 55, 55,
                       52, 47, 48, 45, 52, 47, 52, 52, 55, 50, 52, 48, 55, 50, 55, 55]
    let minor: Set<Int> = [52, 45, 47]
    var dice = Dice(state: 3)
    for (bar, root) in progression.enumerated() {
        let third = root + (minor.contains(root) ? 3 : 4)
        left.note(bar: bar, beat: 0, key: root - 12, length: 0.9, velocity: 80)
        for beat in [1.0, 2.0] {
            for key in [root, third, root + 7] { left.note(bar: bar, beat: beat, key: key, length: 0.6, velocity: 58) }
        }
        // Flute: a dotted figure on chord tones, rising and falling.
        let tones = [root + 12, third + 12, root + 19, root + 24]
        let a = tones[dice.roll(4)], b = tones[dice.roll(4)], c = tones[dice.roll(3)]
        if bar % 4 == 3 {
            flute.note(bar: bar, beat: 0, key: a, length: 2.8, velocity: 88)
            flute.control(bar: bar, beat: 1, MIDIController.modulationWheel, 60)
            flute.control(bar: bar, beat: 2.8, MIDIController.modulationWheel, 0)
        } else {
            flute.note(bar: bar, beat: 0, key: a, length: 1.4, velocity: 92)
            flute.note(bar: bar, beat: 1.5, key: b, length: 0.45, velocity: 78)
            flute.note(bar: bar, beat: 2, key: c, length: 0.95, velocity: 84)
        }
    }
    let last = progression.count
    for key in [43, 55, 59, 62] { left.note(bar: last, beat: 0, key: key, length: 2.8, velocity: 84) }
    flute.note(bar: last, beat: 0, key: 79, length: 2.8, velocity: 90)
    // Format 0: everything in one track, merged in time order.
    var merged = track
    for source in [left.track, flute.track] {
        for e in source.events {
            if case .meta(let m) = e.event, m.type == MetaType.trackName { continue }
            merged.add(e.event, at: e.tick)
        }
    }
    var sequence = MusicSequence(timeBase: .ticksPerQuarter(Int(ppq)), tracks: [merged])
    sequence.sourceFormat = 0
    return sequence
}

// MARK: - Song 3: "Seven Eight", format 1, 7/8 then 4/4, D minor, synths, bend, mod wheel.

func sevenEight() -> MusicSequence {
    let eighth = ppq / 2
    var conductor = MusicTrack()
    conductor.name = "Seven Eight"
    conductor.add(.meta(.timeSignature(TimeSignature(7, 8))), at: 0)
    conductor.add(.meta(.keySignature(sharpsOrFlats: -1, minor: true)), at: 0)
    conductor.add(.meta(.tempo(bpm: 150)), at: 0)
    let sevenBars = 12
    let fourStart = Int64(sevenBars) * 7 * eighth
    conductor.add(.meta(.timeSignature(TimeSignature(4, 4))), at: fourStart)
    conductor.add(.meta(.tempo(bpm: 132)), at: fourStart)
    // An accelerando back up over the last four bars.
    for i in 0..<8 { conductor.add(.meta(.tempo(bpm: 132 + Double(i) * 3)), at: fourStart + 4 * 4 * ppq + Int64(i) * 2 * ppq) }
    var lead = Writer(name: "Lead", channel: 0, program: 81, beatsPerBar: 7, ticksPerBeat: eighth, volume: 92, pan: 70)
    var bass = Writer(name: "Bass", channel: 1, program: 38, beatsPerBar: 7, ticksPerBeat: eighth, volume: 108, pan: 64)
    var pad = Writer(name: "Pad", channel: 2, program: 89, beatsPerBar: 7, ticksPerBeat: eighth, volume: 72, pan: 40)
    var drums = Writer(name: "Drums", channel: 9, program: nil, beatsPerBar: 7, ticksPerBeat: eighth, volume: 100, pan: 64)
    // Bend range of 12 semitones on the lead (RPN 0).
    for (cc, value) in [(101, 0), (100, 0), (6, 12), (38, 0), (101, 127), (100, 127)] { lead.control(bar: 0, beat: 0, UInt8(cc), value) }
    let roots = [50, 50, 46, 48, 50, 50, 46, 45, 50, 53, 46, 45]
    var dice = Dice(state: 11)
    for (bar, root) in roots.enumerated() {
        // 7/8 grouped 2+2+3.
        for (beat, vel) in [(0.0, 104), (2.0, 90), (4.0, 96)] { bass.note(bar: bar, beat: beat, key: root - 12, length: 1.7, velocity: vel) }
        bass.note(bar: bar, beat: 6, key: root - 5, length: 0.9, velocity: 80)
        for beat in [0.0, 4.0] { drums.note(bar: bar, beat: beat, key: 36, length: 0.5, velocity: 108) }
        drums.note(bar: bar, beat: 2, key: 38, length: 0.5, velocity: 96)
        drums.note(bar: bar, beat: 5, key: 39, length: 0.5, velocity: 80)
        for e in 0..<7 { drums.note(bar: bar, beat: Double(e), key: 42, length: 0.4, velocity: [90, 60, 80, 60, 85, 60, 70][e]) }
        pad.control(bar: bar, beat: 0, MIDIController.sustainPedal, 127)
        for key in [root + 12, root + 15, root + 19] { pad.note(bar: bar, beat: 0, key: key, length: 3, velocity: 60) }
        pad.control(bar: bar, beat: 6.8, MIDIController.sustainPedal, 0)
        if bar >= 4 {
            let scale = [0, 2, 3, 5, 7, 8, 10, 12]
            var beat = 0.0
            while beat < 7 {
                let length = [1.0, 1.0, 2.0, 0.5][dice.roll(4)]
                lead.note(bar: bar, beat: beat, key: root + 24 + scale[dice.roll(scale.count)], length: min(length, 7 - beat) * 0.9, velocity: 90 + dice.roll(20))
                beat += length
            }
            if bar % 2 == 1 {
                // A slow bend up a whole tone (1/6 of the 12-semitone range) and back.
                for step in 0...6 { lead.bend(bar: bar, beat: 5 + Double(step) / 6, 8192 + step * 228) }
                lead.bend(bar: bar, beat: 6.9, 8192)
                lead.control(bar: bar, beat: 3, MIDIController.modulationWheel, 80)
                lead.control(bar: bar, beat: 6.9, MIDIController.modulationWheel, 0)
            }
        }
    }
    // 4/4 section: eight bars written in eighths from the 7/8 grid's end.
    let fourRoots = [50, 46, 48, 45, 50, 46, 45, 50]
    for (i, root) in fourRoots.enumerated() {
        let start = fourStart + Int64(i) * 4 * ppq
        func at(_ eighths: Int64) -> Int64 { start + eighths * eighth }
        for e in 0..<8 {
            bass.track.addNote(at: at(Int64(e)), channel: 1, key: UInt8(root - 12 + (e % 4 == 3 ? 7 : 0)), velocity: e % 2 == 0 ? 100 : 82, duration: eighth - 20)
            drums.track.addNote(at: at(Int64(e)), channel: 9, key: 42, velocity: e % 2 == 0 ? 84 : 58, duration: 60)
        }
        for e: Int64 in [0, 3, 4] { drums.track.addNote(at: at(e), channel: 9, key: 36, velocity: 108, duration: 60) }
        for e: Int64 in [2, 6] { drums.track.addNote(at: at(e), channel: 9, key: 38, velocity: 98, duration: 60) }
        for key in [root + 12, root + 15, root + 19, root + 22] {
            pad.track.addNote(at: start, channel: 2, key: UInt8(key), velocity: 62, duration: 4 * ppq - 30)
        }
        for e in stride(from: Int64(0), to: 8, by: 2) {
            lead.track.addNote(at: at(e), channel: 0, key: UInt8(root + 24 + [0, 3, 7, 10][Int(e / 2)]), velocity: 96, duration: eighth * 2 - 30)
        }
    }
    let end = fourStart + 8 * 4 * ppq
    drums.track.addNote(at: end, channel: 9, key: 49, velocity: 112, duration: 480)
    drums.track.addNote(at: end, channel: 9, key: 36, velocity: 112, duration: 240)
    for key: UInt8 in [38, 50, 57, 62] { pad.track.addNote(at: end, channel: 2, key: key, velocity: 70, duration: 4 * ppq) }
    var sequence = MusicSequence(timeBase: .ticksPerQuarter(Int(ppq)), tempoTrack: conductor,
                                 tracks: [lead.track, bass.track, pad.track, drums.track])
    sequence.sourceFormat = 1
    return sequence
}

// MARK: - "Click Track": a rim click on every beat through tempo changes, for timing tests.

func clickTrack() -> MusicSequence {
    var conductor = MusicTrack()
    conductor.name = "Click Track"
    conductor.add(.meta(.timeSignature(TimeSignature(4, 4))), at: 0)
    for (bar, bpm) in [(0, 120.0), (2, 90.0), (4, 150.0), (6, 97.0)] {
        conductor.add(.meta(.tempo(bpm: bpm)), at: Int64(bar) * 4 * ppq)
    }
    var click = MusicTrack()
    click.name = "Click"
    for beat in 0..<32 {
        click.addNote(at: Int64(beat) * ppq, channel: 9, key: beat % 4 == 0 ? 76 : 77, velocity: beat % 4 == 0 ? 120 : 96, duration: ppq / 4)
    }
    var sequence = MusicSequence(timeBase: .ticksPerQuarter(Int(ppq)), tempoTrack: conductor, tracks: [click])
    sequence.sourceFormat = 1
    return sequence
}

let directory = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "Songs"
let songs: [(String, MusicSequence)] = [
    ("morning-steps.mid", morningSteps()),
    ("little-waltz.mid", littleWaltz()),
    ("seven-eight.mid", sevenEight()),
    ("click-track.mid", clickTrack()),
]
do {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for (name, sequence) in songs {
        let path = (directory as NSString).appendingPathComponent(name)
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: sequence), to: path)
        print("wrote \(path)")
    }
} catch {
    FileHandle.standardError.write(Data("songwriter: \(error)\n".utf8))
    exit(1)
}
