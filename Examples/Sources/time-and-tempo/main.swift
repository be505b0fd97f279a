import Tactus

// 960 ticks per quarter note; 120 BPM, then 100 BPM from bar 3; 4/4, then 3/4 from bar 5.
var song = MusicSequence(timeBase: .ticksPerQuarter(960))
song.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 500_000)), at: 0)
song.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 600_000)), at: 2 * 4 * 960)
song.tempoTrack.add(.meta(.timeSignature(TimeSignature(3, 4))), at: 4 * 4 * 960)

let tempo = song.makeTempoMap()
let meter = song.makeMeterMap()

// Bar 5, beat 2: four bars of 4/4 and one beat, in ticks, beats, seconds and frames.
let tick = meter.tick(at: BarBeatTick(bar: 5, beat: 2))
print("bar 5 beat 2: tick \(tick), \(tempo.beats(atTick: tick)) beats, \(tempo.seconds(atTick: tick)) s,",
      "frame \(tempo.frame(atTick: tick, sampleRate: 48_000)) at 48 kHz")

// And back: the tick at a number of seconds, then its bar, beat and tick.
let back = Int64(tempo.tick(atSeconds: 9.4).rounded())
print("9.4 s is tick \(back), at \(meter.barBeatTick(atTick: back))")

// What users type: bar:beat:tick, seconds or ticks, all resolved through the same maps.
for text in ["5:2", "9.4s", "16320t"] {
    let position = try MusicPosition(parsing: text)
    print("\(text) -> tick \(position.tick(in: song))")
}

// Exact, not accumulated: 1,000 tempo changes of an odd length land on the closed form.
var ramp = MusicSequence(timeBase: .ticksPerQuarter(480))
for i in 0..<1_000 {
    ramp.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 400_001 + i)), at: Int64(i) * 7)
}
let ramped = ramp.makeTempoMap()
let microseconds = (0..<1_000).reduce(Int64(0)) { $0 + Int64(400_001 + $1) * 7 }
let exact = ramped.frame(atTick: 7_000, sampleRate: 44_100)
print("after 1,000 tempo changes: frame \(exact), closed form \((microseconds * 44_100 + 240_000_000) / 480_000_000)")
