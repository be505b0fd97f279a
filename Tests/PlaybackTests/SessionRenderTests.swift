import AudioFileOutput
import AudioGraph
import Foundation
import MIDI
import Playback
import Sequencing
import Synchronization
import Testing

/// What `tactus render` relies on when it renders through a session: a tail until silence that
/// ends where `Player.renderToEnd` ends it, and any `AudioSink` as the offline backend's output.
@Suite struct SessionRenderTests {
    /// Eight notes, then two bars of rests before the end of track: a tail until silence stops
    /// when the sound does, before the end.
    static func songWithRests() -> MusicSequence {
        var sequence = PlaybackSessionTests.song(userEvents: false)
        sequence.tracks[0].explicitLength = 8 * 480
        return sequence
    }

    static func renderToEnd(_ sequence: MusicSequence, tail: RenderTail) throws -> [Float] {
        let player = try Player.makeDefault(sequence: sequence, sampleRate: 44_100, maximumFrameCount: 512)
        var left: [Float] = []
        _ = try player.renderToEnd(blockSize: 512, tail: tail) { l, _, n in left.append(contentsOf: UnsafeBufferPointer(start: l, count: n)) }
        return left
    }

    @Test(arguments: [RenderTail.automatic, .untilSilent(thresholdDecibels: -40, capSeconds: 5), .seconds(0.25)])
    func aSessionsTailEndsWhereRenderToEndsDoesAtEveryBlockSize(tail: RenderTail) async throws {
        let sequence = Self.songWithRests()
        let reference = try Self.renderToEnd(sequence, tail: tail)
        #expect(reference.contains { $0 != 0 })
        for block in [1, 61, 512, 4096] {
            let session = try PlaybackSession(sequence: sequence, options: PlaybackSession.Options(instrument: .builtIn, tail: tail))
            let backend = OfflineBackend(destination: .memory, blockSize: block)
            try session.start(on: backend)
            let summary = try await session.finished()
            #expect(summary.performanceFrames == Int64(reference.count), "\(tail), block \(block)")
            #expect(backend.samples.left == reference, "\(tail), block \(block)")
        }
    }

    @Test func anOfflineBackendRendersEveryBlockSizeItTakesAndRefusesTheRest() async throws {
        let sequence = Self.songWithRests()
        var reference: [Float]?
        for block in [1, 4096, 4097, 65_536] {
            let session = try PlaybackSession(sequence: sequence, options: PlaybackSession.Options(instrument: .builtIn))
            let backend = OfflineBackend(destination: .memory, blockSize: block)
            try session.start(on: backend)
            try await session.finished()
            let left = backend.samples.left
            if let reference { #expect(left.count == reference.count && left == reference, "block \(block)") } else { reference = left }
        }
        // Outside the range the start fails, naming it, instead of rendering another size.
        for block in [0, -1, 65_537] {
            let session = try PlaybackSession(sequence: sequence, options: PlaybackSession.Options(instrument: .builtIn))
            #expect(throws: PlaybackSessionError.backend(AudioBackendError(.cannotOpen, backend: "memory", reason: "block size \(block) is outside 1...65536"))) {
                try session.start(on: OfflineBackend(destination: .memory, blockSize: block))
            }
        }
    }

    @Test func aTailUntilSilenceStopsBeforeTheRestsAndAFixedTailKeepsThem() throws {
        let sequence = Self.songWithRests()
        let endFrame = Int(sequence.makeTempoMap().frame(atTick: 8 * 480, sampleRate: 44_100))
        #expect(try Self.renderToEnd(sequence, tail: .automatic).count < endFrame)
        #expect(try Self.renderToEnd(sequence, tail: .seconds(0)).count == endFrame)
    }

    /// A sink that keeps what it is given and says how it ended.
    final class RecordingSink: AudioSink, @unchecked Sendable {
        var left: [Float] = []
        var finished = 0, cancelled = 0
        let failAfterFrames: Int?

        init(failAfterFrames: Int? = nil) { self.failAfterFrames = failAfterFrames }

        func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(AudioSinkError) {
            if let failAfterFrames, self.left.count + count > failAfterFrames { throw .failed(output: "/music/song.flac", reason: "disk full") }
            self.left.append(contentsOf: UnsafeBufferPointer(start: left, count: count))
        }
        func finish() { finished += 1 }
        func cancel() { cancelled += 1 }
    }

    @Test func anOfflineBackendWritesAnySinkAndFinishesItOnce() async throws {
        let sequence = PlaybackSessionTests.song()
        let reference = try PlaybackSessionTests.offlineReference(sequence, tail: 0.1)
        let sink = RecordingSink()
        let session = try PlaybackSession(sequence: sequence, options: PlaybackSessionTests.options())
        try session.start(on: OfflineBackend(sink: sink, name: "/music/song.flac", blockSize: 300))
        _ = try session.waitUntilFinished()
        #expect(sink.left == reference)
        #expect(sink.finished == 1 && sink.cancelled == 0)
    }

    @Test func aSinkThatFailsEndsTheSessionWithAnIOErrorNamingItAndCancelsIt() async throws {
        let sink = RecordingSink(failAfterFrames: 10_000)
        let session = try PlaybackSession(sequence: PlaybackSessionTests.song(), options: PlaybackSessionTests.options())
        try session.start(on: OfflineBackend(sink: sink, name: "/music/song.flac"))
        #expect(throws: PlaybackSessionError.backend(AudioBackendError(.io, backend: "/music/song.flac", reason: "disk full"))) {
            try session.waitUntilFinished()
        }
        #expect(sink.finished == 0 && sink.cancelled == 1)
        #expect(sink.left.count <= 10_000)
    }

    @Test func aStopWithoutDrainCancelsTheSink() async throws {
        let sink = RecordingSink()
        let session = try PlaybackSession(sequence: PlaybackSessionTests.song(), options: PlaybackSessionTests.options())
        session.setLoop(fromTick: 0, toTick: 960, count: .forever)
        try session.start(on: OfflineBackend(sink: sink, name: "loop.wav"))
        try await Task.sleep(for: .milliseconds(50))
        session.stop(drain: false)
        #expect(try session.waitUntilFinished().ending == .stopped)
        #expect(sink.finished == 0 && sink.cancelled == 1)
    }
}
