import MIDI

/// How often a track's loop repeats.
public enum LoopCount: Hashable, Sendable {
    /// Play the looped region this many times in all (1 plays it once).
    case times(Int)
    /// Repeat until the player stops.
    case forever
}

/// A track loop: the first `length` ticks of the track, repeated.
public struct TrackLoop: Hashable, Sendable {
    /// Length of the looped region in ticks (from the track's start).
    public var length: Int64
    /// How often it plays.
    public var count: LoopCount

    /// Creates a loop.
    public init(length: Int64, count: LoopCount) {
        self.length = max(1, length)
        self.count = count
    }
}

/// Where a track's events go.
public enum TrackDestination: Hashable, Sendable {
    /// An instrument node of the audio graph, by node identifier.
    case node(UInt32)
    /// A MIDI port, by name or `CLIENT:PORT` address.
    case midiPort(String)
}

/// A sequence of timed events with playback properties, like Apple's MusicTrack.
///
/// Events stay sorted by tick and, within a tick, by ``TimedEvent/order``. The track is a
/// value: edits make a new version that a player can pick up while the old one plays.
public struct MusicTrack: Hashable, Sendable {
    /// The events, sorted by `(tick, order)`.
    public private(set) var events: [TimedEvent]
    /// A muted track is not heard.
    public var isMuted = false
    /// When any track is soloed, only soloed tracks are heard.
    public var isSoloed = false
    /// Optional loop of the track's start.
    public var loop: TrackLoop?
    /// Ticks by which the whole track is shifted when played.
    public var offset: Int64 = 0
    /// Explicit end of the track in ticks (the SMF end-of-track); nil means it ends with its
    /// last event.
    public var explicitLength: Int64?
    /// Where the events go; nil means the sequence's default instrument.
    public var destination: TrackDestination?
    private var nextOrder: UInt32 = 0

    /// An empty track.
    public init() {
        events = []
    }

    /// A track holding `events`, which need not be sorted.
    public init(events: [TimedEvent]) {
        self.events = events
        restoreOrder()
    }

    /// Number of events (a note counts once).
    public var count: Int { events.count }

    /// True when the track has no events.
    public var isEmpty: Bool { events.isEmpty }

    /// The end of the track: its explicit length, or the end of its last event.
    public var length: Int64 {
        var end: Int64 = 0
        for e in events { end = max(end, e.endTick) }
        return max(end, explicitLength ?? 0)
    }

    /// The name from the first track-name meta event, if any.
    public var name: String? {
        get {
            for e in events {
                if case .meta(let m) = e.event, m.type == MetaType.trackName { return m.text }
            }
            return nil
        }
        set {
            if let i = events.firstIndex(where: {
                if case .meta(let m) = $0.event { return m.type == MetaType.trackName }
                return false
            }) {
                if let newValue {
                    events[i].event = .meta(.text(MetaType.trackName, newValue))
                } else {
                    events.remove(at: i)
                }
            } else if let newValue {
                add(.meta(.text(MetaType.trackName, newValue)), at: 0)
            }
        }
    }

    /// Adds an event at `tick` after the events already on that tick and returns its index.
    @discardableResult
    public mutating func add(_ event: SequenceEvent, at tick: Int64) -> Int {
        var event = event
        let order = takeOrder()
        if case .note(var n) = event {
            n.releaseOrder = takeOrder()
            event = .note(n)
        }
        let timed = TimedEvent(tick: max(0, tick), order: order, event: event)
        let index = insertionIndex(for: timed)
        events.insert(timed, at: index)
        return index
    }

    /// Adds a note. A convenience for `add(.note(...), at:)`.
    @discardableResult
    public mutating func addNote(at tick: Int64, channel: UInt8, key: UInt8, velocity: UInt8, duration: Int64, releaseVelocity: UInt8 = 0) -> Int {
        add(.note(NoteEvent(channel: channel, key: key, velocity: velocity, duration: duration, releaseVelocity: releaseVelocity)), at: tick)
    }

    /// Appends events that are already in `(tick, order)` order and after every present
    /// event; used by readers, which know their order. Falls back to sorting when they are not.
    public mutating func append(contentsOf sortedEvents: [TimedEvent]) {
        let wasSorted = events.isEmpty || sortedEvents.isEmpty || TrackOrdering.less(events[events.count - 1], sortedEvents[0]) || events[events.count - 1] == sortedEvents[0]
        if events.isEmpty {
            // Adopt the array (no element copies): readers hand over millions of events.
            events = sortedEvents
        } else {
            events.append(contentsOf: sortedEvents)
        }
        sortedEvents.withUnsafeBufferPointer { buffer in
            for i in buffer.indices {
                nextOrder = max(nextOrder, buffer[i].order &+ 1)
                if case .note(let n) = buffer[i].event { nextOrder = max(nextOrder, n.releaseOrder &+ 1) }
            }
        }
        if !wasSorted { restoreOrder() }
    }

    /// Takes `sortedEvents` (sorted by tick and order, every order and release order below
    /// `nextOrder`) as the events of an empty track without copying or scanning them: for the
    /// file reader, which knows both. A track with events appends them instead.
    package mutating func adopt(sortedEvents: [TimedEvent], nextOrder: UInt32) {
        guard events.isEmpty else { return append(contentsOf: sortedEvents) }
        events = sortedEvents
        self.nextOrder = max(self.nextOrder, nextOrder)
    }

    /// Replaces the event at `index`, keeping the track sorted; returns its new index.
    @discardableResult
    public mutating func replaceEvent(at index: Int, with event: TimedEvent) -> Int {
        events.remove(at: index)
        let i = insertionIndex(for: event)
        events.insert(event, at: i)
        return i
    }

    /// Removes and returns the event at `index`.
    @discardableResult
    public mutating func removeEvent(at index: Int) -> TimedEvent {
        events.remove(at: index)
    }

    /// Removes every event for which `shouldRemove` is true.
    public mutating func removeAll(where shouldRemove: (TimedEvent) throws -> Bool) rethrows {
        try events.removeAll(where: shouldRemove)
    }

    /// Applies `transform` to every event, then re-sorts.
    public mutating func mapEvents(_ transform: (inout TimedEvent) throws -> Void) rethrows {
        for i in events.indices { try transform(&events[i]) }
        restoreOrder()
    }

    /// The index of the first event at or after `tick`.
    public func firstIndex(atOrAfterTick tick: Int64) -> Int {
        var lo = 0, hi = events.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if events[mid].tick < tick { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Events whose tick lies in `range`.
    public func events(in range: Range<Int64>) -> ArraySlice<TimedEvent> {
        events[firstIndex(atOrAfterTick: range.lowerBound)..<firstIndex(atOrAfterTick: range.upperBound)]
    }

    /// A fresh order value for an event created now.
    public mutating func takeOrder() -> UInt32 {
        defer { nextOrder &+= 1 }
        return nextOrder
    }

    private func insertionIndex(for e: TimedEvent) -> Int {
        var lo = 0, hi = events.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if TrackOrdering.less(e, events[mid]) { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    private mutating func restoreOrder() {
        // Stable: equal keys keep their relative positions.
        let indexed = events.enumerated().sorted { a, b in
            if TrackOrdering.less(a.element, b.element) { return true }
            if TrackOrdering.less(b.element, a.element) { return false }
            return a.offset < b.offset
        }
        events = indexed.map(\.element)
        for e in events {
            nextOrder = max(nextOrder, e.order &+ 1)
            if case .note(let n) = e.event { nextOrder = max(nextOrder, n.releaseOrder &+ 1) }
        }
    }
}

/// The storage order of track events.
public enum TrackOrdering {
    /// `(tick, order)` comparison.
    @inlinable
    public static func less(_ a: TimedEvent, _ b: TimedEvent) -> Bool {
        a.tick != b.tick ? a.tick < b.tick : a.order < b.order
    }
}
