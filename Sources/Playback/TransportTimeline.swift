import AudioGraph
import Sequencing

/// The song's tempo and time signature as the transport reports them to nodes that follow it
/// (`AudioNode.followsTransport`): the musical position at every frame where either changes,
/// and the position at any song frame between them. Built on the control side with the
/// schedule; read on the audio thread without allocating.
public struct TransportTimeline: Sendable {
    /// A frame where the tempo or the time signature changes (or the song's first frame), with
    /// the position there. Its `speed` is left 1; the engine sets the play rate.
    public struct Change: Sendable, Hashable {
        /// The song frame of the change.
        public var songFrame: Int64
        /// The position at `songFrame`, at speed 1.
        public var position: TransportPosition
    }

    /// The changes, by song frame; the first is at frame 0.
    public let changes: [Change]
    /// Frames per second the song frames count.
    public let sampleRate: Int

    /// The timeline of `sequence` at `sampleRate`.
    public init(sequence: MusicSequence, sampleRate: Int) {
        let tempo = sequence.makeTempoMap()
        let meter = sequence.makeMeterMap()
        self.sampleRate = sampleRate
        var ticks = Set<Int64>([0])
        for segment in tempo.segments { ticks.insert(segment.startTick) }
        for segment in meter.segments { ticks.insert(segment.startTick) }
        var changes: [Change] = []
        // Both are in tick order: one pass over the meter's segments, not a search per change.
        var meterIndex = 0
        for tick in ticks.sorted() {
            let frame = tempo.frame(atTick: tick, sampleRate: sampleRate)
            while meterIndex + 1 < meter.segments.count && meter.segments[meterIndex + 1].startTick <= tick { meterIndex += 1 }
            let segment = meter.segments[meterIndex]
            let unit = segment.signature.denominator
            let elapsed = tick - segment.startTick
            let inBar = elapsed % segment.ticksPerBar
            let position = TransportPosition(
                songFrame: frame, speed: 1, bar: segment.startBar - 1 + elapsed / segment.ticksPerBar,
                barBeat: Double(inBar) / Double(segment.ticksPerBeat), beatsPerBar: Float(max(1, segment.signature.numerator)),
                beatUnit: Int32(unit), beatsPerMinute: tempo.bpm(atTick: tick) * Double(unit) / 4)
            // Two ticks on one frame (a very fast tempo): the later one's position holds there.
            if let last = changes.last, last.songFrame == frame { changes.removeLast() }
            changes.append(Change(songFrame: frame, position: position))
        }
        self.changes = changes
    }

    /// The index of the first change at or after `frame` (binary search).
    public func firstIndex(atOrAfterFrame frame: Int64) -> Int {
        changes.partitionPoint { $0.songFrame < frame }
    }

    /// The position at `songFrame`, moving at `speed`: the last change before it, carried on
    /// at its tempo and in its time signature.
    public func position(atSongFrame songFrame: Int64, speed: Float) -> TransportPosition {
        let index = max(0, firstIndex(atOrAfterFrame: songFrame + 1) - 1)
        var position = changes[index].position
        let frames = Double(max(0, songFrame - changes[index].songFrame))
        let beats = position.barBeat + frames * position.beatsPerMinute / (60 * Double(sampleRate))
        let beatsPerBar = Double(position.beatsPerBar)
        let bars = (beats / beatsPerBar).rounded(.down)
        position.bar += Int64(bars)
        position.barBeat = max(0, beats - bars * beatsPerBar)
        position.songFrame = songFrame
        position.speed = speed
        return position
    }
}
