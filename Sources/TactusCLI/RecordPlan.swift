import ALSA
import ArgumentParser
import Foundation
import JACK
import MIDI
import MIDIFile
import Playback
import Recording
import Sequencing
import Synchronization

/// `tactus record`'s options checked against each other and the backing: the sequence the
/// take goes into and its settings.
extension RecordCommand {
    /// The checked options: the sequence recorded into and the take's settings.
    struct Plan {
        var base: MusicSequence
        var settings: RecordingSettings
        var durationSeconds: Double?
    }

    var stampMode: SequencerInputStamps { SequencerInputStamps(rawValue: stamps) ?? .queueTicks }

    func makePlan() throws -> Plan {
        guard SequencerInputStamps(rawValue: stamps) != nil else { throw usage("--stamps '\(stamps)' is not 'tick' or 'real'") }
        if overdub && replace { throw usage("--overdub and --replace exclude each other") }
        guard (0...16).contains(countIn) else { throw usage("--count-in \(countIn) is outside 0...16 bars") }
        var base: MusicSequence
        if let backing {
            if tempo != nil || timesig != nil { throw usage("--tempo and --timesig set up a recording without --backing; the backing has its own") }
            base = try loadTimedMIDIFile(backing, options: input, purpose: "played").makeSequence()
        } else {
            base = MusicSequence(timeBase: .ticksPerQuarter(960))
            let bpm = tempo ?? 120
            guard bpm.isFinite, (10...400).contains(bpm) else { throw usage("--tempo \(bpm) is outside 10...400 BPM") }
            base.tempoTrack.add(.meta(.tempo(bpm: bpm)), at: 0)
            var signature = TimeSignature.common
            if let timesig {
                let parts = timesig.split(separator: "/")
                guard parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), (1...32).contains(n),
                      [1, 2, 4, 8, 16, 32].contains(d) else { throw usage("--timesig '\(timesig)' is not like 4/4 or 6/8") }
                signature = TimeSignature(n, d)
            }
            base.tempoTrack.add(.meta(.timeSignature(signature)), at: 0)
        }
        func position(_ text: String, _ option: String) throws -> Int64 {
            do { return try MusicPosition(parsing: text).tick(in: base) } catch { throw usage("\(option): \(error)") }
        }
        var settings = RecordingSettings(mode: replace ? .replace : .overdub)
        if let from { settings.startTick = try position(from, "--from") }
        if let punchIn { settings.punchIn = try position(punchIn, "--punch-in") }
        if let punchOut { settings.punchOut = try position(punchOut, "--punch-out") }
        if let a = settings.punchIn, let b = settings.punchOut, b <= a { throw usage("--punch-out is not after --punch-in") }
        if let loop {
            let range: Range<Int64>?
            do { range = try MusicRange(parsing: loop).ticks(in: base) } catch { throw usage("--loop-record: \(error)") }
            guard let range else { throw usage("--loop-record \(loop) is empty") }
            if from != nil { throw usage("--loop-record starts at its own start; leave out --from") }
            settings.loop = range
            settings.startTick = range.lowerBound
        }
        if let quantize {
            guard let grid = QuantizeGrid(parsing: quantize) else { throw usage("--quantize '\(quantize)' is not a grid like 1/16, 1/8t or 1/4.") }
            settings.quantize = grid
        }
        if let track {
            let indices: [Int]
            do {
                indices = try EditScript.trackIndices(track, option: "--track", sequence: base, conductor: !base.tempoTrack.isEmpty)
            } catch {
                throw usage("\(error)")
            }
            guard indices.count == 1 else { throw usage("--track takes one track") }
            if settings.loop != nil { throw usage("loop takes go to tracks of their own; leave out --track") }
            settings.targetTrack = indices[0]
        } else if replace {
            throw usage("--replace needs --track (the track whose events the take replaces)")
        }
        var durationSeconds: Double?
        if let duration {
            let text = duration.hasSuffix("s") ? String(duration.dropLast()) : duration
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
                throw usage("--duration '\(duration)' is not a number of seconds (like 30 or 30s)")
            }
            durationSeconds = seconds
        }
        return Plan(base: base, settings: settings, durationSeconds: durationSeconds)
    }
}
