import MIDI
import Sequencing

/// The click a recording plays: General MIDI wood blocks on the percussion channel, the high
/// one on the first beat of every bar, the low one on the other beats. Clicks are notes of a
/// track added to the playing sequence, so they are scheduled like any other note and land on
/// the exact frame of their beat; the recorded file does not get them.
public enum Metronome {
    /// The percussion channel (MIDI channel 10).
    public static let channel: UInt8 = 9
    /// Hi Wood Block, on bar starts.
    public static let accentKey: UInt8 = 76
    /// Low Wood Block, on the other beats.
    public static let beatKey: UInt8 = 77

    /// Clicks on every beat of `meter` from `range.lowerBound` (rounded up to a beat) up to,
    /// not including, `range.upperBound`.
    public static func clickTrack(meter: MeterMap, in range: Range<Int64>) -> MusicTrack {
        var track = MusicTrack()
        track.name = "Metronome"
        // Bar by bar: a time signature change starts a new bar, and its beats count from there.
        var bar = meter.barBeatTick(atTick: max(0, range.lowerBound)).bar
        while true {
            let barStart = meter.tick(atBar: bar)
            if barStart >= range.upperBound { break }
            let next = meter.tick(atBar: bar + 1)
            let beat = meter.signature(atTick: barStart).ticksPerBeat(ticksPerQuarter: meter.ticksPerQuarter)
            var tick = barStart
            while tick < next && tick < range.upperBound {
                if tick >= range.lowerBound {
                    let accent = tick == barStart
                    track.addNote(at: tick, channel: channel, key: accent ? accentKey : beatKey, velocity: accent ? 127 : 90,
                                  duration: max(1, beat / 4))
                }
                tick += beat
            }
            bar += 1
        }
        return track
    }
}

extension MusicSequence {
    /// Ticks in `bars` bars of the time signature at tick 0: the length of a count-in.
    public func countInTicks(bars: Int) -> Int64 {
        let meter = makeMeterMap()
        let first = meter.segments[0]
        return first.ticksPerBar * Int64(max(0, bars))
    }

    /// The sequence moved `ticks` later, the tempo, time and key signatures at tick 0 staying
    /// there so the gap in front plays at the song's opening tempo and meter: the sequence a
    /// count-in plays. Tick `t` of the original is tick `t + ticks` of the result, and its
    /// time is the original's plus the gap's length.
    public func delayed(byTicks ticks: Int64) -> MusicSequence {
        guard ticks > 0 else { return self }
        var copy = self
        func shift(_ track: inout MusicTrack) {
            track.mapEvents { e in
                if e.tick == 0, case .meta(let m) = e.event,
                   [MetaType.tempo, MetaType.timeSignature, MetaType.keySignature].contains(m.type) {
                    return
                }
                e.tick += ticks
            }
            if let length = track.explicitLength { track.explicitLength = length + ticks }
        }
        shift(&copy.tempoTrack)
        for i in copy.tracks.indices { shift(&copy.tracks[i]) }
        return copy
    }
}
