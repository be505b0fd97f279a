// The scheduler alone: a sequence of 16 tracks with 10,000 events per second of music,
// played through the player and engine into a graph whose instrument does nothing, so what
// is measured is the engine's work (commands, cursor, offsets, note tracking, block
// splitting) and not synthesis. Reports the thread CPU time per second of audio as a share of
// one core, and the largest block: events in it and its time.
//
//     swift build -c release --product tactus-scheduler-benchmark
//     .build/release/tactus-scheduler-benchmark [--seconds S] [--block-size N] [--runs R]
import AudioGraph
import Foundation
import MIDI
import Playback
import Sequencing

var musicSeconds = 60
var blockSize = 512
var runs = 5
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--seconds": musicSeconds = Int(arguments.popFirst() ?? "") ?? musicSeconds
    case "--block-size": blockSize = Int(arguments.popFirst() ?? "") ?? blockSize
    case "--runs": runs = Int(arguments.popFirst() ?? "") ?? runs
    default:
        FileHandle.standardError.write(Data("usage: tactus-scheduler-benchmark [--seconds S] [--block-size N] [--runs R]\n".utf8))
        exit(64)
    }
}

/// An instrument that ignores everything and renders nothing.
final class NullNode: AudioNode {
    let name = "Null"
    let inputBusCount = 0
    let parameterInfos: [AudioParameterInfo] = []
    func prepare(sampleRate: Double, maximumFrameCount: Int) {}
    func reset() {}
    func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    func receive(_ message: MIDIMessage, atFrame frame: Int64) {}
    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {}
}

// 960 ticks per quarter at 512,000 us per quarter is exactly 1875 ticks per second, so a
// note every 6 ticks (note-on and note-off 3 ticks apart) is 625 events per second per
// track: 10,000 per second over 16 tracks.
let sampleRate = 48_000
var sequence = MusicSequence(timeBase: .ticksPerQuarter(960))
sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 512_000)), at: 0)
for t in 0..<16 {
    var track = MusicTrack()
    for n in 0..<(musicSeconds * 1875 / 6) {
        track.addNote(at: Int64(n * 6 + t % 3), channel: UInt8(t), key: UInt8(36 + (n * 7 + t) % 60), velocity: 90, duration: 3)
    }
    sequence.tracks.append(track)
}

func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

let graph = AudioGraph()
graph.add(NullNode(), id: 1)
graph.add(OutputNode(), id: 2)
try graph.connect(1, to: 2)
let compiled = try graph.compile(sampleRate: Double(sampleRate), maximumFrameCount: blockSize)
let compileStart = threadCPUSeconds()
let player = Player(sequence: sequence, graph: compiled, defaultNode: 1)
let compileSeconds = threadCPUSeconds() - compileStart
let events = player.schedule.events.count
print("scheduler benchmark: 16 tracks, \(events) events in \(musicSeconds) s of music (\(events / musicSeconds) per second), \(sampleRate) Hz, blocks of \(blockSize) frames")
print(String(format: "schedule compiled on the control side in %.3f s", compileSeconds))

let left = UnsafeMutablePointer<Float>.allocate(capacity: blockSize), right = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
let buffer = StereoBuffer(left: left, right: right)
for rate in [1.0, 20.0] {
    var shares: [Double] = []
    var worstBlockMicroseconds = 0.0
    var worstBlockEvents = 0
    for _ in 0..<runs {
        player.stop()
        player.playRate = rate
        player.locate(toTick: 0)
        player.start()
        var cpu = 0.0
        var frames = 0
        while true {
            let cursorBefore = player.engine.cursor
            let t0 = threadCPUSeconds()
            player.engine.render(frameCount: blockSize, into: buffer)
            let dt = threadCPUSeconds() - t0
            cpu += dt
            frames += blockSize
            let delivered = player.engine.cursor - cursorBefore
            if delivered > worstBlockEvents { worstBlockEvents = delivered }
            if dt * 1e6 > worstBlockMicroseconds { worstBlockMicroseconds = dt * 1e6 }
            if !player.isPlaying { break }
        }
        shares.append(cpu / (Double(frames) / Double(sampleRate)) * 100)
    }
    let sorted = shares.sorted()
    print(String(format: "rate %4.1f: %@ %% of one core per second of audio (median %.4f %%, %d runs); worst block: %d events, %.1f us (%.2f %% of its %.2f ms)",
                 rate, sorted.map { String(format: "%.4f", $0) }.joined(separator: " "), sorted[sorted.count / 2], runs,
                 worstBlockEvents, worstBlockMicroseconds,
                 worstBlockMicroseconds / (Double(blockSize) / Double(sampleRate) * 1e6) * 100, Double(blockSize) / Double(sampleRate) * 1e3))
}
left.deallocate()
right.deallocate()
