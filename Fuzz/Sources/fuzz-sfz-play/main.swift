import AudioGraph
import Foundation
import MIDI
import Sampler
import SFZ
import SFZPlayback

/// A folder made once per process with two tiny WAV samples, `a.wav` (mono, 16-bit, a looped
/// sine with a `smpl` chunk) and `b.wav` (stereo, 16-bit, unlooped): the in-memory instrument
/// lives in it, so its `sample=a.wav` and `sample=b.wav` are found on disk.
let folder: String = {
    let dir = "/tmp/tactus-fuzz-sfz-play-\(getpid())"
    mkdir(dir, 0o700)
    func le32(_ v: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(v).littleEndian) { Array($0) } }
    func le16(_ v: Int) -> [UInt8] { withUnsafeBytes(of: UInt16(v).littleEndian) { Array($0) } }
    func wav(_ channels: [[Int16]], loop: (Int, Int)?) -> [UInt8] {
        let count = channels[0].count, n = channels.count, rate = 44_100
        var body = Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(n) + le32(rate) + le32(rate * 2 * n)
            + le16(2 * n) + le16(16) + Array("data".utf8) + le32(2 * n * count)
        for i in 0..<count { for c in 0..<n { body += withUnsafeBytes(of: channels[c][i].littleEndian) { Array($0) } } }
        if let loop {
            body += Array("smpl".utf8) + le32(60) + le32(0) + le32(0) + le32(1_000_000_000 / rate) + le32(60)
                + le32(0) + le32(0) + le32(0) + le32(1) + le32(0)
                + le32(0) + le32(0) + le32(loop.0) + le32(loop.1) + le32(0) + le32(0)
        }
        return Array("RIFF".utf8) + le32(body.count) + body
    }
    let sine = (0..<100).map { Int16(16_000 * sin(2 * Double.pi * Double($0) / 100)) }
    let saw = (0..<32).map { Int16(($0 * 2_000) - 32_000) }
    _ = FileManager.default.createFile(atPath: dir + "/a.wav", contents: Data(wav([sine], loop: (0, 99))))
    _ = FileManager.default.createFile(atPath: dir + "/b.wav", contents: Data(wav([saw, saw.reversed()], loop: nil)))
    atexit { _ = try? FileManager.default.removeItem(atPath: "/tmp/tactus-fuzz-sfz-play-\(getpid())") }
    return dir
}()

/// Any bytes as an SFZ instrument played: split at the first two NUL bytes into `main.sfz`,
/// `a.sfz` beside it (for `#include "a.sfz"`, in memory), and up to three (key, velocity) pairs
/// of notes to play (60/100, 64/80 and 36/127 when none are given). The instrument is read and
/// its samples located; one naming a file outside the sample folder is skipped (the fuzzer must
/// not read the machine's files). Its translation into a bank either succeeds or throws an
/// `SFZPlaybackError`; a bank is played through a `SamplerNode` straight to the output for 2048
/// frames (notes on at frames 0, 300 and 700, the first off at 1200), and every sample rendered
/// must be finite, as must the instrument's output gain.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSFZPlay(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var parts: [[UInt8]] = []
    var start = 0
    for index in 0..<3 {
        var end = start
        while end < size && (bytes[end] != 0 || index == 2) { end += 1 }
        parts.append(Array(bytes[start..<min(end, size)]))
        start = min(end + 1, size)
    }
    let files = SFZMemoryFiles([folder + "/main.sfz": parts[0], folder + "/a.sfz": parts[1]])
    var readOptions = SFZReadOptions()
    readOptions.maximumRegionCount = 512
    readOptions.maximumTotalSize = 1 << 18
    readOptions.maximumExpandedLength = 4_096
    readOptions.maximumWarningCount = 64
    guard var instrument = try? SFZInstrument.load(contentsOf: folder + "/main.sfz", from: files, options: readOptions) else { return 0 }
    guard (try? instrument.locateSamples()) != nil else { return 0 }
    for region in instrument.regions {
        if case .file(let path) = region.sample, !path.hasPrefix(folder + "/") || path.contains("/..") || path.contains("/./") { return 0 }
    }
    var options = SFZPlaybackOptions()
    options.maximumSampleMemory = 1 << 20
    let playable: SFZPlayableInstrument
    do {
        playable = try SFZBank.build(instrument, options: options)
    } catch {
        return 0  // typed: SFZPlaybackError
    }
    guard playable.outputGain.isFinite else { fatalError("output gain \(playable.outputGain)") }
    // The pool ends at the default voice limit the target plays with (2 MB less to allocate
    // and write for every input than the full pool of 4,096 voices).
    let sampler = SamplerNode(bank: playable.bank, regionRules: playable.regionRules,
                              maximumVoiceLimit: SamplerNode.defaultVoiceLimit)
    sampler.setParameter(SamplerNode.Parameter.reverbLevel, value: 0)
    sampler.setParameter(SamplerNode.Parameter.chorusLevel, value: 0)
    sampler.setParameter(SamplerNode.Parameter.volume, value: Float(playable.outputGain))
    let graph = AudioGraph()
    let s = graph.add(sampler), o = graph.add(OutputNode())  // the sampler is node 0, as in the tests' Rig
    guard (try? graph.connect(s, to: o)) != nil, let compiled = try? graph.compile(sampleRate: 44_100, maximumFrameCount: 512) else {
        fatalError("a sampler straight to the output does not compile")
    }
    var notes: [(key: UInt8, velocity: UInt8)] = [(60, 100), (64, 80), (36, 127)]
    let tail = parts[2]
    for i in 0..<min(3, tail.count / 2) { notes[i] = (tail[2 * i] & 0x7F, tail[2 * i + 1] & 0x7F) }
    let on = [0, 300, 700]
    var events: [(frame: Int, event: NodeEvent)] = notes.enumerated().map { i, note in
        (on[i], .midi(MIDIMessage(status: 0x90, data1: note.key, data2: note.velocity)))
    }
    events.insert((1200, .midi(MIDIMessage(status: 0x80, data1: notes[0].key, data2: 0))), at: 3)
    var position = 0, next = 0
    let frames = 2048
    while position < frames {
        let n = min(frames - position, 512)
        var block: [GraphEvent] = []
        while next < events.count && events[next].frame < position + n {
            block.append(GraphEvent(offset: events[next].frame - position, nodeIndex: 0, event: events[next].event))
            next += 1
        }
        block.withUnsafeBufferPointer { compiled.render(startFrame: Int64(position), frameCount: n, events: $0) }
        for (name, channel) in [("left", compiled.output.left), ("right", compiled.output.right)] {
            for i in 0..<n where !channel[i].isFinite {
                fatalError("\(name) sample \(position + i) is \(channel[i])")
            }
        }
        position += n
    }
    return 0
}
