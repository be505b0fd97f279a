import Foundation
import JACK
import Playback
import Sequencing
import Locking
import Synchronization
import Testing

/// Captures audio from the start of the capture and MIDI with its frame counted from the same
/// start, into buffers allocated up front.
final class AudioAndMIDICapture: JACKProcessSource, @unchecked Sendable {
    let capacity: Int
    let left: UnsafeMutablePointer<Float>
    let captured = Atomic<Int>(0)
    /// (frame since the capture's start, status, data1, data2), up to 4,096 messages.
    let midi = UnsafeMutablePointer<(frame: Int, status: UInt8, data1: UInt8, data2: UInt8)>.allocate(capacity: 4096)
    let midiCount = Atomic<Int>(0)
    let armed = Atomic<Bool>(false)

    init(frames: Int) {
        capacity = frames
        left = .allocate(capacity: frames)
        left.initialize(repeating: 0, count: frames)
    }

    deinit {
        left.deallocate()
        midi.deallocate()
    }

    func process(_ cycle: JACKCycle) {
        guard armed.load(ordering: .acquiring) else { return }
        let start = captured.load(ordering: .relaxed)
        var count = midiCount.load(ordering: .relaxed)
        for index in 0..<cycle.midiInputCount where count < 4096 {
            guard let event = cycle.midiInput(at: index), (1...3).contains(event.bytes.count) else { continue }
            let bytes = event.bytes
            midi[count] = (start + event.frame, bytes[0], bytes.count > 1 ? bytes[1] : 0, bytes.count > 2 ? bytes[2] : 0)
            count += 1
        }
        midiCount.store(count, ordering: .releasing)
        let n = min(cycle.frameCount, capacity - start)
        if n > 0, let input = cycle.inputLeft { (left + start).update(from: input, count: n) }
        captured.store(start + max(0, n), ordering: .releasing)
    }
}

/// Tracks sent to MIDI ports through JACK. Part of the one serialized JACK suite.
extension JACKClientTests {
    /// The session song with a third track for a MIDI port: notes off the period grid, across
    /// a tempo change, so both the frames and the tempo map are checked.
    static func portSong(port: String) -> MusicSequence {
        var sequence = sessionSong()
        sequence.tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: 361_111)), at: 4 * 480 + 113)
        var part = MusicTrack()
        for (index, tick) in [0, 37, 480 + 5, 2 * 480 + 301, 4 * 480 + 7, 6 * 480 + 419].enumerated() {
            part.addNote(at: Int64(tick), channel: 9, key: UInt8(40 + index), velocity: 100, duration: 97)
        }
        part.destination = .midiPort(port)
        sequence.tracks.append(part)
        return sequence
    }

    @Test("tracks sent to a JACK MIDI port arrive at exactly their frames, in step with the audio")
    func portTracksAtExactFrames() async throws {
        let server = try JACKServer("midiout", sampleRate: 48_000, period: 2048)
        defer { server.stop() }  // keeps the server alive to the end of the test
        guard let (received, firstHeard, sequence, sampleRate) = try await withoutXruns({ try await Self.playPortSong(server: server) }) else { return }

        let tempo = sequence.makeTempoMap()
        var expected: [(frame: Int64, status: UInt8, key: UInt8)] = []
        for event in sequence.tracks[2].events {
            guard case .note(let note) = event.event else { continue }
            expected.append((tempo.frame(atTick: event.tick, sampleRate: sampleRate), 0x99, note.key))
            expected.append((tempo.frame(atTick: event.tick + note.duration, sampleRate: sampleRate), 0x89, note.key))
        }
        expected.sort { $0.frame != $1.frame ? $0.frame < $1.frame : $0.status > $1.status }
        #expect(received.map(\.data1) == expected.map(\.key))
        #expect(received.map { $0.status == 0x99 && $0.data2 > 0 ? 0x99 : 0x89 } == expected.map(\.status))
        try #require(received.count == expected.count)
        // Every message lands at its song frame, counted from the first.
        for (got, want) in zip(received, expected) {
            #expect(Int64(got.frame - received[0].frame) == want.frame - expected[0].frame,
                    "key \(got.data1) at \(got.frame - received[0].frame) instead of \(want.frame - expected[0].frame)")
        }
        // And in step with the audio: the first note-on leaves in the frame the song's first
        // sound is heard at, as the offline render places it.
        let reference = try await Self.offlineRender(sampleRate: sampleRate)
        let firstReference = try #require(reference.left.indices.first { reference.left[$0] != 0 })
        let heard = try #require(firstHeard, "no sound reached the probe")
        #expect(received[0].frame - heard == Int(expected[0].frame) - firstReference)
    }

    /// One play of the port song into a probe client: the MIDI it received, the probe's frame of
    /// the first sound, the song (its port track names the probe), the server's rate and the
    /// xruns the session saw.
    private static func playPortSong(server: JACKServer) async throws -> (([CapturedMIDI], Int?, MusicSequence, Int), Int) {
        let probe = try JACKClient(name: "portprobe", server: server.name, audioInput: true, midiInput: true)
        let capture = AudioAndMIDICapture(frames: probe.sampleRate * 8)
        try probe.start(source: capture, connections: .none)
        let port = try #require(probe.midiInputPortName)
        let sequence = Self.portSong(port: port)

        let session = try PlaybackSession(sequence: sequence, options: PlaybackSession.Options(instrument: .builtIn, tailSeconds: 0.5))
        let backend = JACKBackend(options: .init(clientName: "tactus-midi", server: server.name, connections: .ports(probe.inputPortNames)))
        capture.armed.store(true, ordering: .releasing)
        try session.start(on: backend)
        #expect(backend.jackClient?.addedMIDIOutputPortNames.count == 1)
        _ = try await session.finished()
        probe.waitForMorePeriods()
        probe.stop()
        let received = (0..<capture.midiCount.load(ordering: .acquiring)).map { capture.midi[$0] }
        let firstHeard = (0..<capture.captured.load(ordering: .acquiring)).first { capture.left[$0] != 0 }
        return ((received, firstHeard, sequence, probe.sampleRate), backend.underrunCount)
    }

    @Test("a JACK MIDI port that does not exist: the session does not start, and the error names the port and lists the others")
    func unknownMIDIPort() throws {
        let server = try JACKServer("midiout-unknown")
        defer { server.stop() }  // keeps the server alive to the end of the test
        let session = try PlaybackSession(sequence: Self.portSong(port: "nobody:midi_in"), options: PlaybackSession.Options(instrument: .builtIn))
        let backend = JACKBackend(options: .init(clientName: "tactus-midi", server: server.name, connections: .none))
        do {
            try session.start(on: backend)
            Issue.record("the session started")
        } catch {
            guard case .backend(let failure) = error else { Issue.record("unexpected \(error)"); return }
            #expect(failure.kind == .unavailable)
            #expect(failure.reason.contains("no JACK port 'nobody:midi_in'"))
        }
    }
}

/// Sends note-ons at fixed offsets over a few periods once armed, and notes the host time of
/// each (the period's start plus the offset).
final class StampedMIDISender: JACKProcessSource, @unchecked Sendable {
    let offsets: [Int]
    let periods: Int
    let armed = Atomic<Bool>(false)
    let sent = UnsafeMutablePointer<Int64>.allocate(capacity: 256)
    let sentCount = Atomic<Int>(0)
    private let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 3)
    private var period = 0

    init(offsets: [Int], periods: Int) {
        self.offsets = offsets
        self.periods = periods
        bytes.initialize(from: [0x90, 0, 100], count: 3)
    }

    deinit {
        sent.deallocate()
        bytes.deallocate()
    }

    func process(_ cycle: JACKCycle) {
        guard armed.load(ordering: .acquiring), period < periods else { return }
        var count = sentCount.load(ordering: .relaxed)
        for offset in offsets {
            bytes[1] = UInt8(count)
            cycle.writeMIDI(UnsafeBufferPointer(start: bytes, count: 3), atFrame: offset)
            sent[count] = cycle.hostNanoseconds + Int64(offset) * 1_000_000_000 / 48_000
            count += 1
        }
        sentCount.store(count, ordering: .releasing)
        period += 1
    }
}

extension JACKClientTests {
    @Test("JACK MIDI in: what another client sends reaches the session's input in order, each stamped within one period of when it was sent")
    func midiInputStamps() async throws {
        let server = try JACKServer("midiin", sampleRate: 48_000, period: 1024)
        defer { server.stop() }  // keeps the server alive to the end of the test
        let keyboard = try JACKClient(name: "keyboard", server: server.name, midiOutput: true)
        let sender = StampedMIDISender(offsets: [0, 7, 300, 511], periods: 6)
        try keyboard.start(source: sender, connections: .none)

        let session = try PlaybackSession(sequence: Self.sessionSong(), options: PlaybackSession.Options(instrument: .builtIn))
        let backend = JACKBackend(options: .init(clientName: "tactus-in", server: server.name, connections: .none,
                                                 midiInputSources: [try #require(keyboard.midiOutputPortName)]))
        let received = Locked<[(Int64, [UInt8])]>([])
        let input = try #require(backend.midiInput)
        input.start { host, bytes in received.withLock { $0.append((host, bytes)) } }
        try session.start(on: backend)
        sender.armed.store(true, ordering: .releasing)
        #expect(waitUntil { received.withLock { $0.count } >= 24 })
        session.stop(drain: false)
        _ = try? await session.finished()
        input.stop()
        keyboard.stop()

        let got = received.withLock { $0 }
        #expect(got.map { $0.1[1] } == (0..<24).map { UInt8($0) }, "every message once, in order")
        let period = Int64(1024) * 1_000_000_000 / 48_000
        for (index, (host, _)) in got.enumerated() where index < 24 {
            let sentAt = sender.sent[index]
            #expect(abs(host - sentAt) <= period + 20_000, "message \(index) stamped \(host - sentAt) ns from when it was sent")
            if index > 0 {
                // Stamps are as far apart as the frames, to less than a frame (20.8 us): JACK's
                // clock is moved onto CLOCK_MONOTONIC with two reads per period.
                let spacing = (host - got[index - 1].0) - (sentAt - sender.sent[index - 1])
                #expect(abs(spacing) <= 20_000, "message \(index): spacing off by \(spacing) ns")
            }
        }
        #expect(input.droppedCount == 0)
    }
}
