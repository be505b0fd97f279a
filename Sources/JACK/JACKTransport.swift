import Playback
import Sequencing

/// Publishes a sequence's bar, beat and tick for JACK transport frames, from its tempo map
/// and time signatures, so other clients' bars line up with the song (as timebase master).
///
/// JACK's beat is the time signature's beat (a quarter in 4/4, an eighth in 7/8); its ticks
/// are the sequence's ticks per such beat, and its tempo is in those beats per minute.
/// Everything is computed from maps built up front: safe on the real-time thread.
public final class SequenceTimebase: JACKTimebaseProvider, @unchecked Sendable {
    private let tempo: TempoMap
    private let meter: MeterMap
    private let ticksPerQuarter: Int

    /// A timebase for `sequence`.
    public init(sequence: MusicSequence) {
        tempo = sequence.makeTempoMap()
        meter = sequence.makeMeterMap()
        ticksPerQuarter = sequence.timeBase.ticksPerQuarterForBeats
    }

    /// The sequence tick at a transport frame.
    public func tick(atFrame frame: UInt32, sampleRate: UInt32) -> Int64 {
        Int64(tempo.tick(atSeconds: Double(frame) / Double(max(sampleRate, 1))).rounded(.down))
    }

    /// The song's bar, beat and tick, time signature and tempo at transport frame `frame`.
    public func barBeatTick(atFrame frame: UInt32, sampleRate: UInt32) -> JACKBarBeatTick {
        let tick = tick(atFrame: frame, sampleRate: sampleRate)
        let position = meter.barBeatTick(atTick: tick)
        let signature = meter.signature(atTick: tick)
        let ticksPerBeat = signature.ticksPerBeat(ticksPerQuarter: ticksPerQuarter)
        let barStart = meter.tick(atBar: position.bar)
        let quarterBPM = tempo.bpm(atTick: tick)
        return JACKBarBeatTick(bar: Int32(clamping: position.bar), beat: Int32(clamping: position.beat), tick: Int32(clamping: position.tick),
                               barStartTick: Double(barStart), beatsPerBar: Float(signature.numerator),
                               beatType: Float(signature.denominator), ticksPerBeat: Double(ticksPerBeat),
                               beatsPerMinute: quarterBPM * Double(signature.denominator) / 4)
    }
}

/// Makes a `PlaybackSession` follow the JACK transport: when another client starts, stops
/// or moves the transport, the session resumes, pauses or locates to the same time in the
/// song. The song's time is the transport's (play rate 1).
///
/// Call ``update()`` regularly from the control thread (every 10 to 20 ms); it reads the
/// transport, which JACK allows from any thread.
public final class JACKTransportFollower: @unchecked Sendable {
    private let client: JACKClient
    private let session: PlaybackSession
    private let tempo: TempoMap
    private var lastRolling = false
    private var lastFrame: UInt32?
    /// How far the song may drift from the transport before the follower locates, in frames.
    public var toleranceFrames: Int64

    /// Follows `client`'s transport with `session`, which should start paused.
    public init(client: JACKClient, session: PlaybackSession) {
        self.client = client
        self.session = session
        tempo = session.sequence.makeTempoMap()
        toleranceFrames = Int64(client.bufferFrames * 2)
    }

    /// The song tick at a transport frame.
    public func tick(atFrame frame: UInt32) -> Int64 {
        Int64(tempo.tick(atSeconds: Double(frame) / Double(client.sampleRate)).rounded(.down))
    }

    /// Reads the transport and moves the session after it; returns the transport state read.
    @discardableResult
    public func update() -> JACKTransportState {
        let state = client.transport()
        defer {
            lastRolling = state.isRolling
            lastFrame = state.frame
        }
        let moved = lastFrame.map { previous in
            if state.isRolling && lastRolling {
                // Rolling: a jump is a move larger than the time since the last look could explain.
                guard let position = session.position else { return false }
                let songFrame = Int64((position.seconds * Double(client.sampleRate)).rounded())
                return abs(songFrame - Int64(state.frame)) > toleranceFrames
            }
            return previous != state.frame
        } ?? true
        if moved { session.locate(toTick: tick(atFrame: state.frame)) }
        if state.isRolling != lastRolling || lastFrame == nil {
            if state.isRolling { session.resume() } else { session.pause() }
        }
        return state
    }
}
