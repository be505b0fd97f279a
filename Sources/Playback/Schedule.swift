import AudioGraph
import MIDI
import Sequencing

/// One event of a compiled schedule: what to deliver, to which node, at which frame.
public struct ScheduledEvent: Sendable, Hashable {
    /// Absolute frame at which the event plays.
    public var frame: Int64
    /// Same-frame order: ``SequenceEvent/playbackRank`` of the event.
    public var rank: UInt8
    /// Track index: 0 is the tempo track, 1... the event tracks.
    public var track: Int
    /// The event's order within its track and tick.
    public var order: UInt32
    /// Identifier of the graph node the event goes to.
    public var node: UInt32
    /// The event.
    public var event: NodeEvent

    /// The documented playback order: frame, rank, track, order.
    public static func playsBefore(_ a: ScheduledEvent, _ b: ScheduledEvent) -> Bool {
        if a.frame != b.frame { return a.frame < b.frame }
        if a.rank != b.rank { return a.rank < b.rank }
        if a.track != b.track { return a.track < b.track }
        return a.order < b.order
    }
}

/// A sequence compiled for playback at one sample rate: every event at its exact frame,
/// `round(seconds(tick) * sampleRate)` from the tempo map, notes expanded to note-on and
/// note-off, muted tracks left out (and, when any track is soloed, every track that is not).
///
/// Immutable once built, so it can be built on the control side and handed to the audio
/// thread as one snapshot.
public final class Schedule: Sendable {
    /// The events, sorted by ``ScheduledEvent/playsBefore(_:_:)``.
    public let events: [ScheduledEvent]
    /// The sample rate the frames are counted at.
    public let sampleRate: Int
    /// Frame at which the sequence ends (its length in ticks converted to frames).
    public let endFrame: Int64

    /// Compiles `sequence`. Tracks without a destination go to `defaultNode`; tracks sent to
    /// a MIDI port are not part of an audio schedule. Parameter events go to the node they name.
    public init(sequence: MusicSequence, sampleRate: Int, defaultNode: UInt32) {
        let tempo = sequence.makeTempoMap()
        self.sampleRate = sampleRate
        let anySolo = sequence.tracks.contains { $0.isSoloed }
        var list: [ScheduledEvent] = []
        var lastTick: Int64 = 0
        for (trackIndex, track) in sequence.allTracks.enumerated() {
            let isTempoTrack = trackIndex == 0
            if !isTempoTrack && (track.isMuted || (anySolo && !track.isSoloed)) { continue }
            let node: UInt32
            switch track.destination {
            case .none: node = defaultNode
            case .node(let id): node = id
            case .midiPort: continue
            }
            lastTick = max(lastTick, track.length + track.offset)
            for e in track.events {
                let tick = max(0, e.tick + track.offset)
                switch e.event {
                case .note(let n):
                    let on = ScheduledEvent(frame: tempo.frame(atTick: tick, sampleRate: sampleRate), rank: e.event.playbackRank,
                                            track: trackIndex, order: e.order, node: node, event: .midi(n.onMessage))
                    // A zero-length note must still start before it stops, so its release is
                    // ranked after the note-ons of its tick.
                    let offRank: UInt8 = n.duration == 0 ? 9 : SequenceEvent.message(n.offMessage).playbackRank
                    let off = ScheduledEvent(frame: tempo.frame(atTick: tick + n.duration, sampleRate: sampleRate), rank: offRank,
                                             track: trackIndex, order: n.releaseOrder, node: node, event: .midi(n.offMessage))
                    list.append(on)
                    list.append(off)
                case .message(let m):
                    // Only channel messages and system reset make sense to an instrument;
                    // timing clock and song position bytes in a file are not for the synth.
                    guard m.isChannelMessage || m.status == 0xFF else { continue }
                    list.append(ScheduledEvent(frame: tempo.frame(atTick: tick, sampleRate: sampleRate), rank: e.event.playbackRank,
                                               track: trackIndex, order: e.order, node: node, event: .midi(m)))
                case .parameter(let p):
                    let scope = AudioParameterScope(rawValue: p.scope.rawValue) ?? .global
                    list.append(ScheduledEvent(frame: tempo.frame(atTick: tick, sampleRate: sampleRate), rank: e.event.playbackRank,
                                               track: trackIndex, order: e.order, node: p.node,
                                               event: .parameter(id: p.parameter, scope: scope, element: p.element, value: p.value)))
                case .sysex, .meta, .user:
                    // Tempo is in the tempo map; sysex, text and user events are for the player.
                    continue
                }
            }
        }
        list.sort(by: ScheduledEvent.playsBefore)
        events = list
        endFrame = max(tempo.frame(atTick: lastTick, sampleRate: sampleRate), list.last?.frame ?? 0)
    }

    /// The index of the first event at or after `frame` (binary search).
    public func firstIndex(atOrAfterFrame frame: Int64) -> Int {
        var lo = 0, hi = events.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if events[mid].frame < frame { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
