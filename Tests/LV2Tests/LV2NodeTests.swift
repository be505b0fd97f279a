import AudioGraph
import Foundation
import LV2
import MIDI
import Playback
import Sequencing
import Testing
import TactusTestSupport

/// True when lilv loads and finds the MDA plugins.
let hasMDAPlugins: Bool = (try? LV2Catalogue())?.plugins.contains { $0.uri == mda("Piano") } ?? false

func mda(_ name: String) -> String { "http://drobilla.net/plugins/mda/\(name)" }

let needsPlugins = "needs lilv and the MDA plugins (Debian packages liblilv-0-0, mda-lv2)"

/// A short song with two tempo changes: the first `notes` of 12 notes, overlapping, at
/// 44.1 kHz, and the frames of all 12 from the tempo map.
func tempoSong(notes: Int = 12) -> (MusicSequence, [Int64]) {
    var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
    let tempos: [(tick: Int64, usPerQuarter: Int64)] = [(0, 500_000), (1_500, 371_113), (3_100, 612_345)]
    for t in tempos { sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: Int(t.usPerQuarter))), at: t.tick) }
    var track = MusicTrack()
    var ticks: [Int64] = []
    for i in 0..<12 {
        let tick = Int64(i * 377 + (i % 3) * 11)
        ticks.append(tick)
        guard i < notes else { continue }
        track.addNote(at: tick, channel: 0, key: UInt8(48 + (i * 5) % 30), velocity: UInt8(70 + i * 4), duration: Int64(120 + (i % 4) * 90))
    }
    sequence.tracks = [track]
    return (sequence, ticks.map { frame(tick: $0, ppq: 480, tempos: tempos, rate: 44_100) })
}

/// The frame of `tick` from the tempo map in closed form, rounded to the nearest frame (as
/// the player's schedule rounds).
func frame(tick: Int64, ppq: Int64, tempos: [(tick: Int64, usPerQuarter: Int64)], rate: Int64) -> Int64 {
    var numerator: Int64 = 0
    var segmentStart: Int64 = 0, tempo: Int64 = 500_000
    for change in tempos where change.tick < tick {
        numerator += (change.tick - segmentStart) * tempo
        segmentStart = change.tick
        tempo = change.usPerQuarter
    }
    numerator += (tick - segmentStart) * tempo
    let den = ppq * 1_000_000
    return (2 * numerator * rate + den) / (2 * den)
}

/// A player whose default node is the plugin, straight into the output (no limiter, whose
/// look-ahead would move sound before a note).
func pluginPlayer(_ uri: String, _ sequence: MusicSequence, maximumFrameCount: Int = 4096) throws -> Player {
    let node = try LV2PluginNode(uri: uri, catalogue: LV2Catalogue(), sampleRate: 44_100)
    let graph = AudioGraph()
    graph.add(node, id: 1)
    graph.add(OutputNode(), id: 2)
    try graph.connect(1, to: 2)
    return Player(sequence: sequence, graph: try graph.compile(sampleRate: 44_100, maximumFrameCount: maximumFrameCount), defaultNode: 1)
}

/// The song rendered to its end plus 1 s, through the offline path that drops the graph's
/// latency, in blocks of `blockSize`; left then right.
func offlineRender(_ uri: String, _ sequence: MusicSequence, blockSize: Int = 512) throws -> [Float] {
    let player = try pluginPlayer(uri, sequence)
    var left: [Float] = [], right: [Float] = []
    _ = try player.renderToEnd(blockSize: blockSize, tail: .seconds(1)) { l, r, n in
        left.append(contentsOf: UnsafeBufferPointer(start: l, count: n))
        right.append(contentsOf: UnsafeBufferPointer(start: r, count: n))
    }
    return left + right
}

/// `frames` frames rendered through the player in blocks cycling through `sizes`.
func blockRender(_ uri: String, _ sequence: MusicSequence, frames: Int, sizes: [Int]) throws -> [Float] {
    let player = try pluginPlayer(uri, sequence, maximumFrameCount: sizes.max()!)
    player.start()
    let capacity = sizes.max()!
    let l = UnsafeMutablePointer<Float>.allocate(capacity: capacity), r = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
    defer { l.deallocate(); r.deallocate() }
    var out: [Float] = []
    out.reserveCapacity(frames * 2)
    var done = 0, i = 0
    while done < frames {
        let n = min(sizes[i % sizes.count], frames - done)
        i += 1
        player.render(frameCount: n, into: StereoBuffer(left: l, right: r))
        for k in 0..<n { out.append(l[k]); out.append(r[k]) }
        done += n
    }
    return out
}

/// Not mda EPiano: its constructor cross-fades the loop ends of its static wave table in
/// place, so every instance made in the process changes what the next one plays (two renders
/// of one song differ once a note reaches a loop), and instances made on two threads race.
@Suite(.enabled(if: hasMDAPlugins, "\(needsPlugins)"))
struct LV2InstrumentTests {
    /// Each note's onset is where the render with it first differs from the render without
    /// it (the song cut before it): that frame must be the note's frame from the tempo map.
    @Test(arguments: ["Piano", "DX10"])
    func everyNoteStartsAtItsExactFrame(plugin: String) throws {
        let frames = tempoSong().1
        var previous: [Float]? = nil
        for count in 1...frames.count {
            let full = try offlineRender(mda(plugin), tempoSong(notes: count).0)
            let half = full.count / 2
            let onset: Int? = (0..<half).first { i in
                let before = previous.map { i < $0.count / 2 ? ($0[i], $0[i + $0.count / 2]) : (0, 0) } ?? (0, 0)
                return full[i] != before.0 || full[i + half] != before.1
            }
            #expect(onset.map(Int64.init) == frames[count - 1], "\(plugin) note \(count)")
            previous = full
        }
    }

    @Test(arguments: ["Piano", "DX10", "JX10"])
    func theRenderDoesNotDependOnTheBlockSize(plugin: String) throws {
        let (sequence, _) = tempoSong()
        let frames = 200_000
        let random = randomBlockSizes(count: 200, maximum: 700, seed: 2_711)
        let reference = try blockRender(mda(plugin), sequence, frames: frames, sizes: [512])
        #expect(reference.contains { $0 != 0 })
        for sizes in [[1], [64], [65], [random.max()!], random, [3, 61, 64, 65, 127, 1]] {
            let render = try blockRender(mda(plugin), sequence, frames: frames, sizes: sizes)
            #expect(render == reference, "\(plugin), blocks \(sizes.prefix(6))")
        }
    }
}
