import AudioGraph
import Foundation
import LV2
import MIDI
import Testing

/// A file sent to eg-sampler while it renders: loaded by its worker right after the slice
/// (offline) or on a thread of its own (live), and played by the notes after that.
@Suite(.enabled(if: hasEgSampler, "\(needsEgSampler)"))
struct LV2WorkerTests {
    static let sampler = "http://lv2plug.in/plugins/eg-sampler"
    static let sampleProperty = "http://lv2plug.in/plugins/eg-sampler#sample"

    /// Renders `node` block by block from frame 0, 256 frames at a time.
    final class BlockRenderer {
        let node: LV2PluginNode
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        var frame: Int64 = 0

        init(_ node: LV2PluginNode) {
            self.node = node
            node.prepare(sampleRate: 44_100, maximumFrameCount: 256)
        }

        deinit {
            left.deallocate()
            right.deallocate()
        }

        /// The left channel of the next `frames` frames (a multiple of 256).
        func render(_ frames: Int) -> [Float] {
            var out: [Float] = []
            for _ in 0..<(frames / 256) {
                node.render(startFrame: frame, frameCount: 256, inputs: UnsafeBufferPointer(start: nil, count: 0),
                            output: StereoBuffer(left: left, right: right))
                out += Array(UnsafeBufferPointer(start: left, count: 256))
                frame += 256
            }
            return out
        }

        /// Plays one note at the next block and returns the 4,352 frames from its first sound
        /// on (the node's output is a grid late), or nil when it is silent.
        func playNote() -> [Float]? {
            node.receive(.noteOn(channel: 0, key: 60, velocity: 100), atFrame: frame)
            let heard = render(4_608)
            node.receive(.noteOff(channel: 0, key: 60), atFrame: frame)
            _ = render(2_048)
            guard let first = heard.firstIndex(where: { $0 != 0 }) else { return nil }
            return Array(heard[first...].prefix(4_352))
        }
    }

    /// Crossings of zero: a 660 Hz sine crosses about 130 times in 4,352 frames; eg-sampler's
    /// own sample, a click, far fewer.
    static func crossings(_ samples: [Float]) -> Int {
        zip(samples, samples.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
    }

    static func isTheSine(_ note: [Float]?) -> Bool {
        guard let note else { return false }
        return (115...145).contains(crossings(note))
    }

    @Test("offline: a file sent while rendering is loaded right after the next slice, and the next note plays it")
    func offlineTheNextNotePlaysIt() throws {
        let wav = try LV2NodeBehaviourTests().sineWAV()
        defer { try? FileManager.default.removeItem(at: wav) }
        let renderer = BlockRenderer(try LV2PluginNode(uri: Self.sampler, catalogue: LV2Catalogue()))
        let before = renderer.playNote()
        #expect(before != nil && !Self.isTheSine(before), "\(before.map(Self.crossings) ?? -1) crossings before the file was sent")
        #expect(renderer.node.sendFile(wav.path, forProperty: Self.sampleProperty))
        _ = renderer.render(256)
        let after = renderer.playNote()
        #expect(Self.isTheSine(after), "\(after.map(Self.crossings) ?? -1) crossings after")
    }

    @Test("live: with the worker in the background, a file sent while rendering is loaded while rendering goes on, and later notes play it")
    func liveTheWorkerThreadLoadsIt() throws {
        let wav = try LV2NodeBehaviourTests().sineWAV()
        defer { try? FileManager.default.removeItem(at: wav) }
        let node = try LV2PluginNode(uri: Self.sampler, catalogue: LV2Catalogue())
        node.worksInBackground = true
        let renderer = BlockRenderer(node)
        #expect(!Self.isTheSine(renderer.playNote()))
        #expect(node.sendFile(wav.path, forProperty: Self.sampleProperty))
        // The worker thread's load takes what it takes: notes are played until one plays the
        // sine, with a generous bound against a hang.
        let deadline = ContinuousClock.now + .seconds(30)
        var heard = false
        var notes = 0
        while !heard && ContinuousClock.now < deadline {
            heard = Self.isTheSine(renderer.playNote())
            notes += 1
        }
        #expect(heard, "no note played the sine in 30 s (\(notes) notes)")
        // Back to the synchronous worker, and the sampler still plays the sine.
        node.worksInBackground = false
        #expect(Self.isTheSine(renderer.playNote()))
    }
}
