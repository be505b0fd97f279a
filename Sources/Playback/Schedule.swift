import AudioGraph
import MIDI
import Sequencing

/// One event of a compiled schedule: what to deliver, to which node, at which frame.
public struct ScheduledEvent: Sendable, Hashable {
    /// Absolute frame at which the event plays.
    public var frame: Int64
    /// Same-frame order: `SequenceEvent.playbackRank` of the event.
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

/// A user event of a compiled schedule, or a text, lyric or marker event of the song: the
/// player hands it to a callback off the audio thread.
public struct ScheduledUserEvent: Sendable, Hashable {
    /// Absolute song frame (at play rate 1) of the event.
    public var frame: Int64
    /// The event's tick in the song's timeline (track offset and loop repeats included).
    public var tick: Int64
    /// Track index: 0 is the tempo track, 1... the event tracks.
    public var track: Int
    /// The application's bytes; for a text event, the text's bytes.
    public var data: [UInt8]
    /// Nil for a user event; for a text event of the song, its meta type (`MetaType.text`,
    /// `MetaType.lyric` or `MetaType.marker`).
    public var metaType: UInt8? = nil
}

/// Building a ``Schedule`` was cancelled by the closure it was given.
public struct ScheduleCancelled: Error, Sendable, Hashable {
    /// Creates the error.
    public init() {}
}

/// A sequence compiled for playback at one sample rate: every event at its exact frame,
/// `round(seconds(tick) * sampleRate)` from the tempo map, notes expanded to note-on and
/// note-off, muted tracks left out (and, when any track is soloed, every track that is not).
///
/// Track loops are unrolled here: the first `loop.length` ticks of a track play `count` times
/// back to back, then the rest of the track follows, shifted by the repeats. A note that would
/// sound past the end of the looped region is released at the region's end, so a repeat never
/// overlaps its own previous pass. A loop that repeats forever is unrolled up to
/// `horizonTick`; a player extends the horizon by compiling again before playback gets there.
///
/// Immutable once built, so it can be built on the control side and handed to the audio
/// thread as one snapshot.
public final class Schedule: Sendable {
    /// The events, sorted by ``ScheduledEvent/playsBefore(_:_:)``.
    public let events: [ScheduledEvent]
    /// User events and the song's text, lyric and marker events (those with a
    /// ``ScheduledUserEvent/metaType``), sorted by frame, then track and order.
    public let userEvents: [ScheduledUserEvent]
    /// The sample rate the frames are counted at.
    public let sampleRate: Int
    /// Frame at which the sequence ends (its length in ticks converted to frames).
    public let endFrame: Int64
    /// Tick at which the sequence ends (loops and offsets included).
    public let endTick: Int64
    /// True when some track loops forever, so ``endFrame`` is only the unrolled horizon.
    public let loopsForever: Bool
    /// The tick up to which forever-looping tracks were unrolled.
    public let horizonTick: Int64
    /// Per track (0 is the tempo track): a fingerprint of everything that decides what the
    /// track plays (events, loop, offset, destination, audibility). A player compares them
    /// between two schedules to release only the notes of tracks that changed.
    public let trackFingerprints: [Int]
    /// The bytes of the schedule's system exclusive events, which the events only point at:
    /// kept for as long as the schedule (and any chase built from it) lives.
    public let systemExclusiveStore: SystemExclusiveStore
    /// The tempo and time signature changes, for nodes that follow the transport.
    public let transport: TransportTimeline

    /// Compiles `sequence`. Tracks without a destination go to `defaultNode`, except their notes
    /// and channel messages on a channel `channelNodes` names, which go to that channel's node;
    /// tracks sent to a MIDI port are not part of an audio schedule. Parameter events go to the
    /// node they name. Tracks that loop forever are unrolled up to `horizonTick` (by default
    /// twice the sequence's length, at least one loop pass).
    public convenience init(sequence: MusicSequence, sampleRate: Int, defaultNode: UInt32, channelNodes: [UInt8: UInt32] = [:],
                            horizonTick: Int64? = nil) {
        // Never cancelled, so it cannot throw.
        try! self.init(sequence: sequence, sampleRate: sampleRate, defaultNode: defaultNode, channelNodes: channelNodes,
                       horizonTick: horizonTick, cancelling: { false })
    }

    /// As ``init(sequence:sampleRate:defaultNode:channelNodes:horizonTick:)``, asking
    /// `shouldCancel` every few thousand events and comparisons: building the schedule of a
    /// song of millions of events takes seconds, which a signal or a deadline must be able to
    /// cut short.
    public init(sequence: MusicSequence, sampleRate: Int, defaultNode: UInt32, channelNodes: [UInt8: UInt32] = [:],
                horizonTick: Int64? = nil, cancelling shouldCancel: () -> Bool) throws(ScheduleCancelled) {
        var steps = 0
        func checkpoint() throws(ScheduleCancelled) {
            steps &+= 1
            if steps & 0xFFFF == 0, shouldCancel() { throw ScheduleCancelled() }
        }
        let tempo = sequence.makeTempoMap()
        self.sampleRate = sampleRate
        let anySolo = sequence.tracks.contains { $0.isSoloed }
        var list: [ScheduledEvent] = []
        var users: [(event: ScheduledUserEvent, order: UInt32)] = []
        var lastTick: Int64 = 0
        var fingerprints: [Int] = []
        // Sysex events get their bytes once all are known: (index in `list`, message).
        var sysexPending: [(index: Int, bytes: [UInt8])] = []
        var forever = false
        let horizon = horizonTick ?? max(2 * sequence.length, 1)
        func frame(_ tick: Int64) -> Int64 { tempo.frame(atTick: tick, sampleRate: sampleRate) }
        for (trackIndex, track) in sequence.allTracks.enumerated() {
            let isTempoTrack = trackIndex == 0
            let audible = isTempoTrack || !(track.isMuted || (anySolo && !track.isSoloed))
            var hasher = Hasher()
            hasher.combine(track)
            hasher.combine(audible)
            fingerprints.append(hasher.finalize())
            if !audible { continue }
            let node: UInt32
            switch track.destination {
            case .none: node = defaultNode
            case .node(let id): node = id
            case .midiPort: continue
            }
            // A channel's own instrument, for the default node's notes and channel messages.
            let routesChannels = track.destination == nil && !channelNodes.isEmpty
            func target(channel: UInt8) -> UInt32 { routesChannels ? channelNodes[channel] ?? node : node }
            // The passes of the track: (shift added to every tick, end of the looped region
            // for note clipping or nil, which events take part).
            let loop = isTempoTrack ? nil : track.loop
            var passes: [(shift: Int64, regionEnd: Int64?, looped: Bool)] = []
            var restShift: Int64 = 0
            if let loop {
                let count: Int64
                switch loop.count {
                case .times(let n): count = Int64(max(1, n))
                case .forever:
                    forever = true
                    let span = max(1, horizon - track.offset)
                    count = max(1, (span + loop.length - 1) / loop.length)
                }
                for k in 0..<count { passes.append((k * loop.length, (k + 1) * loop.length, true)) }
                restShift = (count - 1) * loop.length
                if case .times = loop.count { passes.append((restShift, nil, false)) }
                lastTick = max(lastTick, track.offset + (loop.repeatsForever ? count * loop.length : max(track.length + restShift, count * loop.length)))
            } else {
                passes.append((0, nil, false))
                lastTick = max(lastTick, track.length + track.offset)
            }
            for pass in passes {
                for e in track.events {
                    try checkpoint()
                    if let loop {
                        // Looped passes take the events of the region, the last pass the rest.
                        if pass.looped != (e.tick < loop.length) { continue }
                    }
                    let tick = max(0, e.tick + pass.shift + track.offset)
                    switch e.event {
                    case .note(let n):
                        var endTick = max(0, e.tick + n.duration + pass.shift + track.offset)
                        if let regionEnd = pass.regionEnd { endTick = min(endTick, max(tick, regionEnd + track.offset)) }
                        let noteNode = target(channel: n.channel)
                        let on = ScheduledEvent(frame: frame(tick), rank: e.event.playbackRank,
                                                track: trackIndex, order: e.order, node: noteNode, event: .midi(n.onMessage))
                        // A zero-length note must still start before it stops, so its release is
                        // ranked after the note-ons of its tick.
                        let offRank: UInt8 = endTick == tick ? 9 : SequenceEvent.message(n.offMessage).playbackRank
                        let off = ScheduledEvent(frame: frame(endTick), rank: offRank,
                                                 track: trackIndex, order: n.releaseOrder, node: noteNode, event: .midi(n.offMessage))
                        list.append(on)
                        list.append(off)
                    case .message(let m):
                        // Only channel messages and system reset make sense to an instrument;
                        // timing clock and song position bytes in a file are not for the synth.
                        guard m.isChannelMessage || m.status == 0xFF else { continue }
                        list.append(ScheduledEvent(frame: frame(tick), rank: e.event.playbackRank, track: trackIndex, order: e.order,
                                                   node: m.isChannelMessage ? target(channel: m.channel) : node, event: .midi(m)))
                    case .parameter(let p):
                        let scope = AudioParameterScope(rawValue: p.scope.rawValue) ?? .global
                        let start = frame(tick)
                        let event: NodeEvent
                        if let r = p.ramp {
                            // Tick-exact ends: the ramp reaches its target on the frame of its end tick.
                            let length = max(1, frame(tick + r.duration) - start)
                            let shape = ParameterRampShape(rawValue: r.shape.rawValue) ?? .linear
                            event = .parameterRamp(id: p.parameter, scope: scope, element: p.element,
                                                   ramp: ParameterRamp(from: p.value, to: r.target, length: length, shape: shape))
                        } else {
                            event = .parameter(id: p.parameter, scope: scope, element: p.element, value: p.value)
                        }
                        list.append(ScheduledEvent(frame: start, rank: e.event.playbackRank,
                                                   track: trackIndex, order: e.order, node: p.node, event: event))
                    case .user(let u):
                        users.append((ScheduledUserEvent(frame: frame(tick), tick: tick, track: trackIndex, data: u.data), e.order))
                    case .meta(let m) where m.type == MetaType.text || m.type == MetaType.lyric || m.type == MetaType.marker:
                        // Not for an instrument, but for whoever follows the song (lyrics on
                        // screen): they travel with the user events, in the same order.
                        users.append((ScheduledUserEvent(frame: frame(tick), tick: tick, track: trackIndex, data: m.data, metaType: m.type), e.order))
                    case .sysex(let x) where x.status == 0xF0 && !x.isPacketStart:
                        // A whole message reaches the instrument; packets of a divided one
                        // would need reassembly across events and are left to MIDI ports.
                        sysexPending.append((list.count, [0xF0] + x.payload))
                        list.append(ScheduledEvent(frame: frame(tick), rank: e.event.playbackRank,
                                                   track: trackIndex, order: e.order, node: node,
                                                   event: .midi(MIDIMessage(status: 0xF0, data1: 0, data2: 0))))
                    case .sysex, .meta:
                        // Tempo is in the tempo map.
                        continue
                    }
                }
            }
        }
        let store = SystemExclusiveStore(sysexPending.map(\.bytes))
        for (k, pending) in sysexPending.enumerated() {
            list[pending.index].event = .systemExclusive(store.messages[k])
        }
        systemExclusiveStore = store
        do {
            try list.sort { a, b throws(ScheduleCancelled) in
                try checkpoint()
                return ScheduledEvent.playsBefore(a, b)
            }
        } catch {
            // The comparator throws nothing else (sort(by:) rethrows it untyped).
            throw ScheduleCancelled()
        }
        events = list
        users.sort { a, b in
            if a.event.frame != b.event.frame { return a.event.frame < b.event.frame }
            if a.event.tick != b.event.tick { return a.event.tick < b.event.tick }
            if a.event.track != b.event.track { return a.event.track < b.event.track }
            return a.order < b.order
        }
        userEvents = users.map(\.event)
        endTick = lastTick
        endFrame = max(frame(lastTick), list.last?.frame ?? 0, userEvents.last?.frame ?? 0)
        loopsForever = forever
        self.horizonTick = horizon
        trackFingerprints = fingerprints
        transport = TransportTimeline(sequence: sequence, sampleRate: sampleRate)
    }

    /// The index of the first event at or after `frame` (binary search).
    public func firstIndex(atOrAfterFrame frame: Int64) -> Int {
        events.partitionPoint { $0.frame < frame }
    }

    /// The index of the first user event at or after `frame` (binary search).
    public func firstUserIndex(atOrAfterFrame frame: Int64) -> Int {
        userEvents.partitionPoint { $0.frame < frame }
    }
}

extension Array {
    /// The index of the first element for which `isBefore` is false, in an array where every
    /// element for which it holds comes first (a binary search; the render thread's seeks use
    /// it, so it allocates nothing).
    func partitionPoint(_ isBefore: (Element) -> Bool) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if isBefore(self[mid]) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

extension TrackLoop {
    /// True for a loop that repeats until the player stops.
    var repeatsForever: Bool {
        if case .forever = count { return true }
        return false
    }
}
