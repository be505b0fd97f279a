import ALSA
import AudioGraph
import Foundation
import MIDI
import MIDIFile
import Playback
import Sequencing
import Synchronization
import Testing

/// The playback session: loading, backends, transport, events, the end and failures.
@Suite struct PlaybackSessionTests {
    /// One track of `notes` eighth notes at 120 BPM (480 per quarter), with a user event on
    /// every quarter.
    static func song(notes: Int = 8, userEvents: Bool = true) -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 120)), at: 0)
        var track = MusicTrack()
        for i in 0..<notes { track.addNote(at: Int64(i * 240), channel: 0, key: UInt8(60 + i % 12), velocity: 100, duration: 200) }
        if userEvents {
            for i in 0..<(notes / 2) { track.add(.user(UserEvent(data: [UInt8(i)])), at: Int64(i * 480)) }
        }
        sequence.tracks = [track]
        return sequence
    }

    static func options(tail: Double = 0.1, sampleRate: Int = 44_100) -> PlaybackSession.Options {
        PlaybackSession.Options(instrument: .builtIn, tailSeconds: tail, sampleRate: sampleRate)
    }

    /// What `Player.renderToEnd` (the path of `tactus render`) produces for `sequence`.
    static func offlineReference(_ sequence: MusicSequence, tail: Double, sampleRate: Int = 44_100, blockSize: Int = 512) throws -> [Float] {
        let player = try Player.makeDefault(sequence: sequence, sampleRate: sampleRate, maximumFrameCount: blockSize)
        var left: [Float] = []
        _ = try player.renderToEnd(blockSize: blockSize, tailSeconds: tail) { l, _, n in left.append(contentsOf: UnsafeBufferPointer(start: l, count: n)) }
        return left
    }

    @Test func anOfflineSessionPlaysExactlyWhatRenderToEndDoesAtEveryBlockSize() async throws {
        let sequence = Self.song()
        let reference = try Self.offlineReference(sequence, tail: 0.1)
        #expect(reference.contains { $0 != 0 })
        for block in [1, 64, 65, 512, 4096] {
            let session = try PlaybackSession(sequence: sequence, options: Self.options())
            let backend = OfflineBackend(destination: .memory, blockSize: block)
            try session.start(on: backend)
            let summary = try await session.finished()
            #expect(summary.ending == .reachedEnd)
            #expect(summary.performanceFrames == Int64(reference.count))
            #expect(backend.samples.left == reference, "block \(block)")
        }
    }

    @Test func aWAVFileBackendWritesTheWholeSongAndAStopWithoutDrainLeavesNothing() async throws {
        let dir = NSTemporaryDirectory() + "tactus-session-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let session = try PlaybackSession(sequence: Self.song(), options: Self.options())
        try session.start(on: OfflineBackend(wavFile: dir + "/song.wav"))
        let summary = try await session.finished()
        let data = try wavSampleData(dir + "/song.wav")
        #expect(Int64(data.count) == summary.performanceFrames * 4)

        let endless = try PlaybackSession(sequence: Self.song(), options: Self.options())
        endless.setLoop(fromTick: 0, toTick: 960, count: .forever)
        try endless.start(on: OfflineBackend(wavFile: dir + "/endless.wav"))
        try await Task.sleep(for: .milliseconds(50))
        endless.stop(drain: false)
        #expect(try await endless.finished().ending == .stopped)
        #expect(!FileManager.default.fileExists(atPath: dir + "/endless.wav"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["song.wav"], "no temporary file left")
    }

    @Test(.enabled(if: InstalledLibrary.alsa, "needs libasound.so.2 (Debian package libasound2)"))
    func theALSAFilePluginGetsExactlyTheSamplesOfTactusRender() async throws {
        let cli = RenderCommandTests()
        let (dir, _) = try cli.workspace()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let midi = try PlayCommandTests().song(in: dir)
        let wav = dir + "/out.wav", raw = dir + "/out.raw"
        let rendered = try cli.run(["render", "--instrument", "builtin", midi, "-o", wav, "--format", "s16", "--sample-rate", "48000", "--tail", "0.3"])
        #expect(rendered.status == 0, "\(rendered.stderr)")

        var options = PlaybackSession.Options(instrument: .builtIn, tailSeconds: 0.3, sampleRate: 48_000, latencySeconds: 0.02)
        options.logHandler = nil
        let session = try PlaybackSession(contentsOf: midi, options: options)
        try session.start(on: ALSAPCMBackend(device: "file:'\(raw)',raw"))
        let summary = try await session.finished()
        #expect(summary.ending == .reachedEnd && summary.underruns == 0)
        let expected = try wavSampleData(wav)
        let got = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        try #require(got.count >= expected.count, "played \(got.count) bytes, rendered \(expected.count)")
        #expect(Array(got[..<expected.count]) == expected)
        #expect(got[expected.count...].allSatisfy { $0 == 0 }, "silence after the end")
        #expect(expected.contains { $0 != 0 })
    }

    /// Polls `condition` on this thread (never suspending, so a busy test pool cannot delay
    /// the steps that depend on time) until it holds or `seconds` pass.
    @discardableResult
    static func wait(_ seconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            usleep(2_000)
        }
        return true
    }

    /// The session's outcome once it has ended (waiting at most 30 s).
    static func outcome(_ session: PlaybackSession) throws -> PlaybackSummary {
        wait(30) { session.outcome != nil }
        return try #require(session.outcome).get()
    }

    @Test func pauseHoldsThePositionAndResumePlaysOnToTheEnd() throws {
        // 16 eighth notes at 120 BPM: 4 seconds of song on a device-paced null backend.
        let session = try PlaybackSession(sequence: Self.song(notes: 16), options: Self.options())
        try session.start(on: NullBackend(realTime: true, periodFrames: 512, latencyFrames: 1024))
        #expect(Self.wait(5) { (session.position?.tick ?? 0) > 0 })
        session.pause()
        #expect(Self.wait(5) { session.position?.isPlaying == false })
        let paused = try #require(session.position)
        #expect(paused.tick > 0)
        #expect(Self.wait(5) { (session.position?.outputFrame ?? 0) > paused.outputFrame + 44_100 / 2 }, "the device keeps running")
        #expect(session.position?.tick == paused.tick, "the position holds while paused")
        session.resume()
        #expect(Self.wait(5) { session.position?.isPlaying == true })
        let summary = try Self.outcome(session)
        #expect(summary.ending == .reachedEnd)
        // The song is 8 beats at 120 BPM = 4 s, plus the tail, plus a pause of over half a second.
        #expect(summary.performanceFrames > 44_100 * 4 + 44_100 / 2)
    }

    @Test(arguments: [true, false])
    func stopEndsALongSongPromptlyWithOrWithoutDrain(drain: Bool) throws {
        let session = try PlaybackSession(sequence: Self.song(notes: 400), options: Self.options())
        let backend = NullBackend(realTime: true, periodFrames: 256, latencyFrames: 2048)
        try session.start(on: backend)
        #expect(Self.wait(5) { backend.framesConsumed > 44_100 / 10 })
        let asked = ContinuousClock.now
        let playedBefore = backend.framesConsumed
        session.stop(drain: drain)
        let summary = try Self.outcome(session)
        #expect(ContinuousClock.now - asked < .seconds(3))
        #expect(summary.ending == .stopped)
        #expect(!backend.isRunning)
        // The performance ends at most a second of frames after the stop was asked for
        // (the device's buffer, a period, and the control loop's pass); with drain the
        // device plays at least that far.
        #expect(summary.performanceFrames >= playedBefore)
        #expect(summary.performanceFrames < playedBefore + 44_100)
        if drain { #expect(summary.framesPlayed >= summary.performanceFrames) }
    }

    @Test func aDeviceFailureEndsTheSessionWithATypedErrorAndAnEvent() async throws {
        let session = try PlaybackSession(sequence: Self.song(notes: 64), options: Self.options())
        let events = session.events()
        try session.start(on: NullBackend(failAtFrame: 20_000))
        await #expect(throws: PlaybackSessionError.backend(AudioBackendError(.io, backend: "null", reason: "write failed (injected at frame 20000)"))) {
            try await session.finished()
        }
        var errors: [AudioBackendError] = []
        for await event in events { if case .deviceError(let error) = event { errors.append(error) } }
        #expect(errors.map(\.kind) == [.io])
    }

    @Test func eventsArriveInOrderOnceEach() async throws {
        var sequence = Self.song(notes: 8)
        sequence.tracks[0].add(.user(UserEvent(data: [0xFF])), at: 1_919)
        let session = try PlaybackSession(sequence: sequence, options: Self.options())
        session.setLoop(fromTick: 0, toTick: 960, count: .times(3))
        let events = session.events()
        try session.start(on: NullBackend(periodFrames: 128, underrunAtFrames: [1_000, 1_001, 5_000]))
        var received: [PlaybackEvent] = []
        for await event in events { received.append(event) }
        let users = received.compactMap { if case .userEvent(let e) = $0 { return e } else { return nil } }
        // The loop [0, 960) plays 3 times (events at ticks 0 and 480 each time), then the rest.
        #expect(users.map(\.data) == [[0], [1], [0], [1], [0], [1], [2], [3], [0xFF]])
        #expect(users.map(\.tick) == [0, 480, 0, 480, 0, 480, 960, 1440, 1919])
        // Numbered as sequence.tracks is (and as setMuted numbers it): the first event track is 0.
        #expect(users.allSatisfy { $0.track == 0 })
        #expect(received.filter { if case .loopPass = $0 { true } else { false } } == [.loopPass(completedPasses: 1), .loopPass(completedPasses: 2)])
        #expect(received.filter { $0 == .endReached }.count == 1)
        // Two underruns inside one period are still two events.
        #expect(received.filter { if case .underrun = $0 { true } else { false } } == [.underrun(total: 1), .underrun(total: 2), .underrun(total: 3)])
        guard case .finished(let summary) = received.last else { Issue.record("no finished event last"); return }
        #expect(summary.underruns == 3)
    }

    @Test func positionEventsComeAtTheAskedRate() async throws {
        let session = try PlaybackSession(sequence: Self.song(notes: 4), options: Self.options())
        let events = session.events(positionInterval: .milliseconds(100))
        let started = ContinuousClock.now
        try session.start(on: NullBackend(realTime: true, periodFrames: 512))
        var positions: [PlaybackPosition] = []
        for await event in events { if case .position(let p) = event { positions.append(p) } }
        // 1 s of song and 0.1 s of tail: about 11 positions, at least 6 on a loaded machine, and
        // never more than one per 100 ms of the time it took (longer under a sanitizer).
        let tenths = Int((ContinuousClock.now - started) / .milliseconds(100))
        #expect(positions.count >= 6 && positions.count <= tenths + 2, "\(positions.count) in \(tenths) tenths of a second")
        #expect(positions.map(\.tick) == positions.map(\.tick).sorted())
    }

    @Test func muteAndSoloChooseTheTracksHeard() async throws {
        var sequence = Self.song(notes: 16, userEvents: false)
        sequence.tracks.append(sequence.tracks[0])
        func peak(_ setUp: (PlaybackSession) throws -> Void) async throws -> Float {
            let session = try PlaybackSession(sequence: sequence, options: Self.options())
            try setUp(session)
            let backend = OfflineBackend(destination: .memory)
            try session.start(on: backend)
            try await session.finished()
            return backend.samples.left.map(abs).max() ?? 0
        }
        let both = try await peak { _ in }
        let one = try await peak { try $0.setMuted(true, track: 0) }
        let soloed = try await peak { try $0.setSoloed(true, track: 1) }
        let none = try await peak { try $0.setMuted(true, track: 0); try $0.setMuted(true, track: 1) }
        #expect(both > 0.05)
        #expect(one > 0.01 && one < both * 0.9)
        #expect(soloed == one, "soloing track 2 sounds like muting track 1")
        #expect(none < 1e-6, "the synthesizer's anti-denormal floor, no notes")

        // A track the sequence does not have is refused, not ignored (nor taken as another).
        let session = try PlaybackSession(sequence: sequence, options: Self.options())
        #expect(throws: PlaybackSessionError.noSuchTrack(2, count: 2)) { try session.setMuted(true, track: 2) }
        #expect(throws: PlaybackSessionError.noSuchTrack(-1, count: 2)) { try session.setSoloed(true, track: -1) }
    }

    @Test func rateLocateAndStopWhilePlaying() async throws {
        // Live changes (not queued before the start) on a device-paced backend.
        let session = try PlaybackSession(sequence: Self.song(notes: 64, userEvents: false), options: Self.options())
        let events = session.events()
        try session.start(on: NullBackend(realTime: true, periodFrames: 256))
        #expect(Self.wait(5) { (session.position?.tick ?? 0) > 0 })
        session.setRate(2)
        session.locate(toTick: 4_800)
        #expect(Self.wait(5) { session.position?.rate == 2 && (session.position?.tick ?? 0) >= 4_800 })
        session.stop()
        let summary = try Self.outcome(session)
        #expect(summary.ending == .stopped)
        var last: PlaybackEvent?
        for await event in events { last = event }
        #expect(last == .finished(summary))
    }

    @Test func loadingErrorsNameTheFileAndKind() throws {
        #expect(throws: PlaybackSessionError.unreadableFile(path: "/nonexistent/x.mid", reason: "no such file")) {
            try PlaybackSession(contentsOf: "/nonexistent/x.mid", options: Self.options())
        }
        #expect(throws: PlaybackSessionError.self) { try PlaybackSession(midiBytes: Array("MThd garbage".utf8), name: "bytes") }
        let session = try PlaybackSession(midiBytes: SMFWriter.bytes(of: Self.song()), options: Self.options())
        #expect(session.sequence.tracks.count == 1)
        try session.start(on: NullBackend())
        #expect(throws: PlaybackSessionError.alreadyStarted) { try session.start(on: NullBackend()) }
        session.stop(drain: false)
    }

    @Test func aDeviceThatCannotOpenIsATypedError() throws {
        let session = try PlaybackSession(sequence: Self.song(), options: Self.options())
        do {
            try session.start(on: ALSAPCMBackend(device: "hw:99,0"))
            Issue.record("opened hw:99,0")
        } catch {
            guard case .backend(let backendError) = error else { Issue.record("\(error)"); return }
            #expect([.unavailable, .cannotOpen].contains(backendError.kind))
            #expect(backendError.description.hasPrefix("audio device 'hw:99,0': "))
        }
    }

    /// Library code never prints or exits: messages go through typed errors and the log hook.
    @Test func noLibrarySourcePrintsOrExits() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let libraries = ["MIDI", "Sequencing", "MIDIFile", "SoundFont", "SFZ", "SFZPlayback", "AudioGraph", "Instruments", "Sampler", "Playback", "Recording", "ALSA", "JACK",
                         "AudioFileOutput", "BatchRender", "TactusTestSupport", "CALSA", "CJACK", "CSndFile", "CVorbisFile", "Tactus"]
        let forbidden = try Regex(#"\b(print|debugPrint|exit|fputs|fputc|puts|perror)\(|FileHandle\.standard(Error|Output)|\bstdout\b|\bstderr\b"#)
        var offenders: [String] = []
        for library in libraries {
            let dir = root.appendingPathComponent("Sources/\(library)")
            guard let files = FileManager.default.enumerator(atPath: dir.path) else { Issue.record("no \(dir.path)"); continue }
            for case let file as String in files where file.hasSuffix(".swift") || file.hasSuffix(".c") || file.hasSuffix(".h") {
                let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                    if code.contains(forbidden) { offenders.append("Sources/\(library)/\(file):\(n + 1): \(line)") }
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }
}
