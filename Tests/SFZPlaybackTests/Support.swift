import AudioGraph
import AudioTestSupport
import Foundation
import MIDI
import Sampler
import SFZ
@testable import SFZPlayback

/// A folder of SFZ fixtures, removed when the test ends.
final class Fixtures {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-sfzplay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// A 16-bit WAV file of `channels[c][frame]` (values -32768...32767), with a `smpl` chunk
    /// after the audio when `unityNote` or `loop` (first and last frame) is given.
    func writeWAV(_ name: String, _ channels: [[Int16]], rate: Int = 44_100, unityNote: Int? = nil,
                  loop: (start: Int, end: Int)? = nil) throws {
        let count = channels[0].count, n = channels.count
        func le32(_ v: Int) -> Data { withUnsafeBytes(of: UInt32(v).littleEndian) { Data($0) } }
        func le16(_ v: Int) -> Data { withUnsafeBytes(of: UInt16(v).littleEndian) { Data($0) } }
        var body = Data("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(n) + le32(rate) + le32(rate * 2 * n)
            + le16(2 * n) + le16(16) + Data("data".utf8) + le32(2 * n * count)
        for i in 0..<count {
            for c in 0..<n { body += withUnsafeBytes(of: channels[c][i].littleEndian) { Data($0) } }
        }
        if unityNote != nil || loop != nil {
            let loops = loop.map { le32(0) + le32(0) + le32($0.start) + le32($0.end) + le32(0) + le32(0) } ?? Data()
            body += Data("smpl".utf8) + le32(36 + loops.count) + le32(0) + le32(0) + le32(1_000_000_000 / rate)
                + le32(unityNote ?? 60) + le32(0) + le32(0) + le32(0) + le32(loop == nil ? 0 : 1) + le32(0) + loops
        }
        try (Data("RIFF".utf8) + le32(body.count) + body).write(to: url.appendingPathComponent(name))
    }

    func writeSFZ(_ name: String, _ text: String) throws -> String {
        try Data(text.utf8).write(to: url.appendingPathComponent(name))
        return path(name)
    }
}

/// `frames` frames of a sine of `period` frames at `amplitude`.
func sine(period: Double, frames: Int, amplitude: Double = 16_000) -> [Int16] {
    (0..<frames).map { Int16((amplitude * sin(2 * Double.pi * Double($0) / period)).rounded()) }
}

/// A sampler playing `instrument` straight to the output, reverb and chorus off, at its gain.
struct Rig {
    let graph: CompiledGraph

    init(_ instrument: SFZPlayableInstrument) throws {
        let sampler = SamplerNode(bank: instrument.bank, regionRules: instrument.regionRules)
        sampler.setParameter(SamplerNode.Parameter.reverbLevel, value: 0)
        sampler.setParameter(SamplerNode.Parameter.chorusLevel, value: 0)
        sampler.setParameter(SamplerNode.Parameter.volume, value: Float(instrument.outputGain))
        let g = AudioGraph()
        let s = g.add(sampler), o = g.add(OutputNode())
        try g.connect(s, to: o)
        graph = try g.compile(sampleRate: 44_100, maximumFrameCount: 4096)
    }

    /// Renders `frames` frames; each note is (frame, key, velocity, frame of its note-off or nil);
    /// `messages` go out at their frames too.
    func render(frames: Int, notes: [(at: Int, key: UInt8, velocity: UInt8, off: Int?)], channel: UInt8 = 0,
                messages: [(at: Int, message: MIDIMessage)] = [], blockSizes: [Int] = [512]) -> (left: [Float], right: [Float]) {
        var events: [(frame: Int, node: Int, event: NodeEvent)] = messages.map { ($0.at, 0, .midi($0.message)) }
        for note in notes {
            events.append((note.at, 0, .midi(MIDIMessage(status: 0x90 | channel, data1: note.key, data2: note.velocity))))
            if let off = note.off { events.append((off, 0, .midi(MIDIMessage(status: 0x80 | channel, data1: note.key, data2: 0)))) }
        }
        // Stable: messages before notes at the same frame, note-ons before later note-offs.
        events = events.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }.map(\.element)
        return renderGraph(graph, frames: frames, blockSizes: blockSizes, events: events)
    }
}

/// Frequency from the positive-going zero crossings of `x[range]`, interpolated.
func frequency(_ x: [Float], _ range: Range<Int>, sampleRate: Double = 44_100) -> Double {
    var first = -1.0, last = -1.0, n = 0
    for i in max(1, range.lowerBound)..<min(x.count, range.upperBound) where x[i - 1] < 0 && x[i] >= 0 {
        let t = Double(i - 1) + Double(-x[i - 1] / (x[i] - x[i - 1]))
        if first < 0 { first = t }
        last = t
        n += 1
    }
    guard n > 1 else { return 0 }
    return Double(n - 1) / (last - first) * sampleRate
}

/// Peak of |x| in `range`.
func peak(_ x: [Float], _ range: Range<Int>) -> Float {
    x[max(0, range.lowerBound)..<min(x.count, range.upperBound)].reduce(0) { max($0, abs($1)) }
}

func decibels(_ ratio: Float) -> Double { 20 * log10(Double(ratio)) }

func loadError(_ path: String, options: SFZPlaybackOptions = SFZPlaybackOptions()) -> SFZPlaybackError? {
    do {
        _ = try SFZBank.load(contentsOf: path, options: options)
        return nil
    } catch {
        return error
    }
}
