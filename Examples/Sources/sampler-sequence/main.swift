// The WWDC 2011 "Music in iOS and Lion" session: a SoundFont sampler, a sequence built in
// code, and a user event on every bar that comes back to the program, in order, with its
// tick, while the sequence plays (here offline, to a WAV file).
//
//     swift run sampler-sequence [OUT.wav]
//
// The bank is found as `tactus` finds it: $TACTUS_SOUNDFONT, else the standard paths
// (Debian's timgm6mb-soundfont or fluid-soundfont-gm install one).
import Foundation
import Tactus

let path = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "sampler-sequence.wav"
let quarter: Int64 = 960
let bars = 8

func fail(_ message: String, _ code: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(code)
}

let bankPath: String
do {
    guard let choice = try SoundFontDiscovery.resolve(explicitPath: nil, environment: SoundFontDiscovery.currentEnvironment()) else {
        fail("no SoundFont bank found: set TACTUS_SOUNDFONT or install the Debian package timgm6mb-soundfont", 69)
    }
    bankPath = choice.path
} catch {
    fail("\(error)", 66)
}

// The sequence, built in code: a walking bass and a vibraphone arpeggio, and on every bar's
// downbeat a user event carrying the bar number.
var bass = MusicTrack()
var vibes = MusicTrack()
var markers = MusicTrack()
bass.add(.message(.programChange(channel: 0, program: 32)), at: 0)
vibes.add(.message(.programChange(channel: 1, program: 11)), at: 0)
let roots: [UInt8] = [45, 50, 43, 48]
for bar in 0..<bars {
    let start = Int64(bar) * 4 * quarter
    let root = roots[bar % roots.count]
    for beat in 0..<4 {
        bass.addNote(at: start + Int64(beat) * quarter, channel: 0, key: root + [0, 7, 12, 7][beat], velocity: 100,
                     duration: quarter - 40)
    }
    for step in 0..<8 {
        vibes.addNote(at: start + Int64(step) * quarter / 2, channel: 1, key: root + 24 + [0, 4, 7, 12, 16, 12, 7, 4][step],
                      velocity: 80, duration: quarter / 2)
    }
    markers.add(.user(UserEvent(data: [UInt8(bar + 1)])), at: start)
}
let sequence = MusicSequence(tracks: [bass, vibes, markers])

do {
    let bank = try SoundFontReader.read(contentsOf: bankPath).bank
    let player = try Player.makeDefault(sequence: sequence, sampleRate: 44_100, maximumFrameCount: 512,
                                        instrument: .sampler(SamplerNode(bank: bank)))
    // User events arrive on the control side, whenever the program services the player.
    var received: [PlayedUserEvent] = []
    player.userEventHandler = { received.append($0) }
    let wav = try WAVWriter(path: path, sampleRate: 44_100, channelCount: 2, format: .s16)
    let stats = try player.renderToEnd(blockSize: 512, tailSeconds: 1) { left, right, count in
        try wav.write(left: left, right: right, count: count)
        _ = player.service()
    }
    _ = player.service()
    try wav.finish()
    for event in received { print("bar \(event.data.first ?? 0) at tick \(event.tick) (track \(event.track.map(String.init) ?? "tempo"))") }
    let expected = (0..<bars).map { (UInt8($0 + 1), Int64($0) * 4 * quarter) }
    guard received.map({ ($0.data.first ?? 0, $0.tick) }).elementsEqual(expected, by: { $0 == $1 }) else {
        fail("\(path): expected one user event per bar, in order; got \(received.count)", 1)
    }
    print("\(path): \(stats.frameCount) frames with \(bankPath), \(received.count) bar events in order")
} catch {
    fail("\(path): \(error)", 73)
}
