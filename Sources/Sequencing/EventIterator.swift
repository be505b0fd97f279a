/// Walks a track's events forward and back, and edits or deletes the current one, like
/// Apple's MusicEventIterator.
///
/// The iterator owns a copy of the track; read ``track`` back when done editing.
///
/// ```swift
/// var it = EventIterator(track: track)
/// it.seek(toTick: 960)
/// while let e = it.current {
///     if case .sysex = e.event { it.deleteCurrent() } else { it.moveNext() }
/// }
/// track = it.track
/// ```
public struct EventIterator: Sendable {
    /// The track as edited so far.
    public private(set) var track: MusicTrack
    /// Index of the current event; `track.count` means past the end.
    public private(set) var index: Int

    /// Starts at the first event of `track`.
    public init(track: MusicTrack) {
        self.track = track
        self.index = 0
    }

    /// The event under the iterator, or nil before the start or past the end.
    public var current: TimedEvent? {
        index >= 0 && index < track.events.count ? track.events[index] : nil
    }

    /// True when there is an event under the iterator.
    public var hasCurrent: Bool { current != nil }

    /// True when an event follows the current one.
    public var hasNext: Bool { index + 1 < track.events.count }

    /// True when an event precedes the current one.
    public var hasPrevious: Bool { index > 0 }

    /// Moves to the first event at or after `tick` (past the end when there is none).
    public mutating func seek(toTick tick: Int64) {
        index = track.firstIndex(atOrAfterTick: tick)
    }

    /// Moves to the next event; returns false when it moved past the end.
    @discardableResult
    public mutating func moveNext() -> Bool {
        if index < track.events.count { index += 1 }
        return index < track.events.count
    }

    /// Moves to the previous event; returns false (staying put) at the first event.
    @discardableResult
    public mutating func movePrevious() -> Bool {
        guard index > 0 else { return false }
        index -= 1
        return true
    }

    /// Replaces the current event's content, keeping its tick.
    public mutating func setCurrentEvent(_ event: SequenceEvent) {
        guard var e = current else { return }
        e.event = event
        index = track.replaceEvent(at: index, with: e)
    }

    /// Moves the current event to `tick`; the iterator follows it.
    public mutating func setCurrentTick(_ tick: Int64) {
        guard var e = current else { return }
        e.tick = max(0, tick)
        index = track.replaceEvent(at: index, with: e)
    }

    /// Deletes the current event; the iterator then points at the event that followed it.
    public mutating func deleteCurrent() {
        guard current != nil else { return }
        track.removeEvent(at: index)
    }
}
