import Foundation
import JACK
import Playback
import Sequencing
import Testing

/// MIDI clock in over JACK: a session following the clock another session sends, as
/// `tactus play --driver jack --transport-in PORT --follow-clock` follows it. Part of the one
/// serialized JACK suite.
extension JACKClientTests {
    /// What the control thread saw of both sessions at one moment.
    struct ClockInSample {
        var clockBeats: Double
        var followerBeats: Double
        var heardBPM: Double
    }

    /// A follower session and a clock-sending session in one JACK server; returns the samples
    /// taken while the sender played, and the xruns of both.
    static func followClockOnce(server: JACKServer, clockSong: MusicSequence) throws -> ([ClockInSample], Int) {
        // The sessions' JACK clients close when the sessions are freed, which their control
        // threads may do a moment after the sender finishes. A client left open when its server
        // stops and the next test's server starts makes libjack crash (seen once in three runs
        // of the suite): wait until both backends are gone before the server may stop.
        weak var followerBackend: JACKBackend?
        weak var senderBackend: JACKBackend?
        let result = try followClock(server: server, clockSong: clockSong, backends: { followerBackend = $0; senderBackend = $1 })
        let released = waitUntil(seconds: 10) { followerBackend == nil && senderBackend == nil }
        #expect(released, "a JACK client of the clock test outlived it")
        return result
    }

    private static func followClock(server: JACKServer, clockSong: MusicSequence,
                                    backends: (JACKBackend, JACKBackend) -> Void) throws -> ([ClockInSample], Int) {
        // The follower's own song plays at 120 BPM: the clock sets its pace.
        var song = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        for beat in 0..<64 { track.addNote(at: Int64(beat) * 480, channel: 0, key: 60, velocity: 90, duration: 240) }
        song.tracks = [track]
        let follower = try PlaybackSession(sequence: song, options: .init(instrument: .builtIn, tailSeconds: 0, startsPlaying: false))
        let input = JACKBackend(options: .init(clientName: "tactus-follow", server: server.name, connections: .none, midiInput: true))
        try follower.start(on: input)
        defer { follower.stop() }
        let transport = MIDITransportFollower(followingClockOf: follower, ticksPerQuarter: 480)
        let midiInput = try #require(input.midiInput)
        midiInput.start { nanos, bytes in transport.receive(bytes, atNanos: nanos) }
        defer { midiInput.stop() }

        let sender = try PlaybackSession(sequence: clockSong, options: .init(instrument: .builtIn, tailSeconds: 0))
        let output = JACKBackend(options: .init(clientName: "tactus-clock-out", server: server.name, connections: .none))
        backends(input, output)
        output.sendMIDIClock(for: clockSong, to: [try #require(input.jackClient?.midiInputPortName)])
        try sender.start(on: output)
        var samples: [ClockInSample] = []
        while sender.outcome == nil {
            if let clock = sender.position, let followed = follower.position, clock.isPlaying {
                // The follower's beats carried to the moment of the sender's position.
                let heard = followed.songBPM * followed.rate
                let carried = followed.beats + Double(clock.monotonicNanos - followed.monotonicNanos) / 60e9 * (followed.isPlaying ? heard : 0)
                samples.append(ClockInSample(clockBeats: clock.beats, followerBeats: carried, heardBPM: heard))
            }
            usleep(2_000)
        }
        return (samples, input.underrunCount + output.underrunCount)
    }

    @Test("MIDI clock in over JACK at 100 then 140 BPM: two quarter notes after each change the follower plays within 1 % of the clock's tempo and within one clock (and one period) of its position")
    func followsAClockOverJACK() throws {
        // Periods of 1024 frames: short enough to follow closely, long enough that a loaded
        // machine rarely misses one (a run with an xrun is played again).
        let server = try JACKServer("clock-in", sampleRate: 48_000, period: 1024)
        defer { server.stop() }  // keeps the server alive to the end of the test
        var clockSong = MusicSequence(timeBase: .ticksPerQuarter(480))
        clockSong.tempoTrack.add(.meta(.tempo(bpm: 100)), at: 0)
        clockSong.tempoTrack.add(.meta(.tempo(bpm: 140)), at: 8 * 480)
        var track = MusicTrack()
        for beat in 0..<16 { track.addNote(at: Int64(beat) * 480, channel: 0, key: 72, velocity: 80, duration: 240) }
        clockSong.tracks = [track]
        guard let samples = try withoutXruns({ try Self.followClockOnce(server: server, clockSong: clockSong) }) else { return }
        let periodBeats = 1024.0 / 48_000 * 140 / 60
        for (range, bpm) in [(2.0..<7.5, 100.0), (10.0..<15.5, 140.0)] {
            let settled = samples.filter { range.contains($0.clockBeats) }
            try #require(settled.count > 50, "samples between beats \(range): \(settled.count)")
            // The tempo the follower played against the clock's: the least-squares slope of its
            // beats over the clock's across the settled span. Both positions are published once
            // a period, so the two ends alone would be off by up to two periods; and the rate
            // the follower is told moment to moment also corrects its phase.
            let n = Double(settled.count)
            let meanClock = settled.reduce(0) { $0 + $1.clockBeats } / n, meanFollower = settled.reduce(0) { $0 + $1.followerBeats } / n
            let covariance = settled.reduce(0) { $0 + ($1.clockBeats - meanClock) * ($1.followerBeats - meanFollower) }
            let variance = settled.reduce(0) { $0 + ($1.clockBeats - meanClock) * ($1.clockBeats - meanClock) }
            let played = covariance / variance
            #expect(abs(played - 1) < 0.01, "at \(bpm) BPM the follower played \((played - 1) * 100) % off the clock's tempo")
            let lags = settled.map { abs($0.followerBeats - $0.clockBeats) }
            #expect(lags.max()! < 1.0 / 24 + periodBeats, "at \(bpm) BPM the follower is up to \(lags.max()!) beats from the clock")
        }
    }
}
