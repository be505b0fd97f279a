import AudioEffects
import AudioFileOutput
import AudioGraph
import Foundation
import Instruments
import MIDI
import Playback
import Sequencing
import Testing

/// `PlaybackSession` plays a graph the program built, as it plays the default graph: the same
/// samples as the engine underneath, at every block size, with the same errors and tails.
@Suite struct CustomGraphSessionTests {
    /// A sine that starts at full level on the note's frame and stops at its note-off.
    struct SineVoice: SynthVoice {
        var phase = 0.0, increment = 0.0, sampleRate = 44_100.0, sounding = false, level: Float = 0
        init() {}
        mutating func prepare(sampleRate: Double) { self.sampleRate = sampleRate }
        mutating func start(_ note: VoiceNote, context: VoiceContext) {
            increment = note.frequency / sampleRate
            phase = 0.25  // starts at its crest, so the first frame is not zero
            level = 0.2 * note.gain
            sounding = true
        }
        mutating func release() { sounding = false }
        var isFinished: Bool { !sounding }
        mutating func render(into output: UnsafeMutablePointer<Float>, frameCount: Int, context: VoiceContext) {
            // Silent from its release on: the instrument asks `isFinished` only between calls.
            for i in 0..<frameCount {
                output[i] = sounding ? level * Float(sin(2 * Double.pi * phase)) : 0
                phase += increment
                if phase >= 1 { phase -= 1 }
            }
        }
    }

    /// A graph of the sine instrument into a gain node into the output, and its node ids.
    static func graph() throws -> (graph: AudioGraph, sine: UInt32) {
        let graph = AudioGraph()
        let sine = graph.add(PolyphonicInstrument(name: "Sine", parameters: []) { SineVoice() })
        let gain = graph.add(GainNode())
        let output = graph.add(OutputNode())
        try graph.connect(sine, to: gain)
        try graph.connect(gain, to: output)
        return (graph, sine)
    }

    /// Four notes across a tempo change; the track has no destination (it plays the default node).
    static func song() -> MusicSequence {
        var track = MusicTrack()
        for (i, key) in [60, 64, 67, 72].enumerated() {
            track.addNote(at: Int64(i) * 480, channel: 0, key: UInt8(key), velocity: 100, duration: 300)
        }
        var sequence = MusicSequence(tracks: [track])
        sequence.tempoTrack.add(.meta(.tempo(bpm: 90)), at: 960)
        return sequence
    }

    static func render(_ sequence: MusicSequence, graph: AudioGraph, defaultNode: UInt32, blockSize: Int,
                       options: PlaybackSession.Options = PlaybackSession.Options(tailSeconds: 0.2)) async throws -> (left: [Float], summary: PlaybackSummary) {
        let session = try PlaybackSession(sequence: sequence, graph: graph, defaultNode: defaultNode, options: options)
        let backend = OfflineBackend(destination: .memory, blockSize: blockSize)
        try session.start(on: backend)
        let summary = try await session.finished()
        return (backend.samples.left, summary)
    }

    @Test func aProgramsGraphPlaysEveryNoteOnItsFrameAtEveryBlockSize() async throws {
        let sequence = Self.song()
        let tempo = sequence.makeTempoMap()
        var reference: [Float]?
        for blockSize in [1, 64, 65, 512, 4096] {
            let (graph, sine) = try Self.graph()
            let (left, summary) = try await Self.render(sequence, graph: graph, defaultNode: sine, blockSize: blockSize)
            #expect(summary.ending == .reachedEnd)
            if let reference {
                #expect(left.count == reference.count && left == reference, "block size \(blockSize): first difference at \(zip(left, reference).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(left.count, reference.count))")
            } else {
                reference = left
            }
        }
        let left = try #require(reference)
        for i in 0..<4 {
            let frame = Int(tempo.frame(atTick: Int64(i) * 480, sampleRate: 44_100))
            #expect(left[frame] != 0, "note \(i) sounds on its frame \(frame)")
            if i == 0 { #expect(left[..<frame].allSatisfy { $0 == 0 }) }
        }
        // The song's end (the last note-off) plus the 0.2 s tail asked for.
        let end = Int(tempo.frame(atTick: 3 * 480 + 300, sampleRate: 44_100))
        #expect(left.count == end + 8_820)
    }

    /// `Options.effects` chain nodes between the default graph's instrument and its limiter:
    /// a gain stage of -6.02 dB halves every sample of the built-in synthesizer's render (which
    /// stays below the limiter's ceiling, so the limiter passes it unchanged).
    @Test func theDefaultGraphPlaysTheInstrumentThroughTheEffectsGiven() async throws {
        func render(effects: [any AudioNode]) async throws -> [Float] {
            var options = PlaybackSession.Options(instrument: .builtIn, tailSeconds: 0.2)
            options.effects = effects
            let session = try PlaybackSession(sequence: Self.song(), options: options)
            let backend = OfflineBackend(destination: .memory, blockSize: 65)
            try session.start(on: backend)
            _ = try await session.finished()
            return backend.samples.left
        }
        let dry = try await render(effects: [])
        let halved = try await render(effects: [GainNode(decibels: 20 * log10(0.5))])
        #expect(dry.count == halved.count)
        #expect(dry.contains { abs($0) > 0.01 })
        let worst = zip(dry, halved).map { abs($0 * 0.5 - $1) }.max() ?? 1
        #expect(worst < 1e-6, "largest difference from half the dry render: \(worst)")
        // Two stages in order: -6.02 dB then +6.02 dB gives the dry render back.
        let restored = try await render(effects: [GainNode(decibels: 20 * log10(0.5)), GainNode(decibels: 20 * log10(2))])
        #expect(zip(dry, restored).allSatisfy { abs($0 - $1) < 1e-6 })
    }

    @Test func aTrackRoutedToANodeThatIsNotInTheGraphIsRefusedAtTheStart() throws {
        var sequence = Self.song()
        sequence.tracks.append(MusicTrack())
        sequence.tracks[1].destination = .node(99)
        let (graph, sine) = try Self.graph()
        let session = try PlaybackSession(sequence: sequence, graph: graph, defaultNode: sine)
        #expect(throws: PlaybackSessionError.missingNode(99, track: 1)) { try session.start(on: OfflineBackend()) }
        #expect(session.outcome == nil, "nothing started")

        // The default graph has nodes 1 to 3: a track naming another is refused the same way.
        let standard = try PlaybackSession(sequence: sequence, options: PlaybackSession.Options(instrument: .builtIn))
        #expect(throws: PlaybackSessionError.missingNode(99, track: 1)) { try standard.start(on: OfflineBackend()) }
    }

    @Test func aDefaultNodeThatIsNotInTheGraphIsRefused() throws {
        let (graph, _) = try Self.graph()
        #expect(throws: PlaybackSessionError.missingNode(42, track: nil)) {
            _ = try PlaybackSession(sequence: Self.song(), graph: graph, defaultNode: 42)
        }
    }

    @Test func nodesAddedToTheGraphAfterTheSessionWasMadeDoNotReachIt() async throws {
        let (graph, sine) = try Self.graph()
        let session = try PlaybackSession(sequence: Self.song(), graph: graph, defaultNode: sine,
                                          options: PlaybackSession.Options(tailSeconds: 0))
        // A second output would make the graph uncompilable, were the session to see it.
        graph.add(OutputNode())
        try session.start(on: OfflineBackend())
        #expect(try await session.finished().ending == .reachedEnd)
    }

    @Test func anOfflineSessionEndsWhereTactusRenderDoesAndADeviceKeepsTwoSeconds() async throws {
        // Left to the backend, an offline session's tail is the render's: until silent.
        let sequence = Self.song()
        let (graph, sine) = try Self.graph()
        let automatic = try await Self.render(sequence, graph: graph, defaultNode: sine, blockSize: 512,
                                              options: PlaybackSession.Options(tail: .automatic))
        let (graph2, sine2) = try Self.graph()
        let byDefault = try await Self.render(sequence, graph: graph2, defaultNode: sine2, blockSize: 512,
                                              options: PlaybackSession.Options())
        #expect(byDefault.left.count == automatic.left.count && byDefault.left == automatic.left)
        #expect(PlaybackSession.Options().tail == nil)
        #expect(PlaybackSession.Options().tailSeconds == 2, "what a device plays after the end")

        // The same holds for the default graph.
        let standard = try PlaybackSession(sequence: sequence, options: PlaybackSession.Options(instrument: .builtIn))
        let backend = OfflineBackend(destination: .memory)
        try standard.start(on: backend)
        let summary = try await standard.finished()
        let explicit = try PlaybackSession(sequence: sequence, options: PlaybackSession.Options(instrument: .builtIn, tail: .automatic))
        let backend2 = OfflineBackend(destination: .memory)
        try explicit.start(on: backend2)
        #expect(try await explicit.finished().performanceFrames == summary.performanceFrames)
        #expect(backend.samples.left.count == backend2.samples.left.count && backend.samples.left == backend2.samples.left)
    }

    /// A voice whose arithmetic broke: silence, then not-a-number from its fourth note on.
    struct BrokenVoice: SynthVoice {
        var isNaN = false, sounding = false
        init() {}
        mutating func prepare(sampleRate: Double) {}
        mutating func start(_ note: VoiceNote, context: VoiceContext) { isNaN = note.key == 72; sounding = true }
        mutating func release() { sounding = false }
        var isFinished: Bool { !sounding }
        mutating func render(into output: UnsafeMutablePointer<Float>, frameCount: Int, context: VoiceContext) {
            for i in 0..<frameCount { output[i] = sounding && isNaN ? .nan : 0.1 }
        }
    }

    @Test func anInstrumentThatMakesNaNStopsTheRenderAndLeavesNoFile() async throws {
        // No file format holds NaN (the integer writers trapped on it): the render fails with a
        // kind a program can name, and the half-written file is removed.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-nan-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/out.wav"
        for format in [WAVSampleFormat.s16, .f32] {
            let graph = AudioGraph()
            let broken = graph.add(PolyphonicInstrument(name: "Broken", parameters: []) { BrokenVoice() })
            try graph.connect(broken, to: graph.add(OutputNode()))
            let session = try PlaybackSession(sequence: Self.song(), graph: graph, defaultNode: broken,
                                              options: PlaybackSession.Options(tailSeconds: 0.2))
            try session.start(on: OfflineBackend(destination: .wavFile(path: path, format: format, channelCount: 2), blockSize: 64))
            do {
                _ = try await session.finished()
                Issue.record("a NaN render finished (\(format))")
            } catch {
                guard case .backend(let failure) = error else { Issue.record("\(error)"); continue }
                #expect(failure.kind == .nonFiniteAudio)
                #expect(failure.description.hasPrefix(path + ": NaN or infinite audio from frame "), "\(failure)")
            }
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "no temporary left")
        }
    }
}
