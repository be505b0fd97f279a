#if canImport(Glibc)
import Glibc
#endif
import MIDI
import Sequencing

/// A track's events while its chunk is parsed, in manually managed memory: pending note-ons
/// become notes in place without copying the enum around, and at the end the events are moved
/// (a plain memory copy, no per-event retain or release) into an array of exactly their count.
/// One storage serves all the tracks of a file.
final class TrackEventStorage {
    private var base: UnsafeMutablePointer<TimedEvent>
    private(set) var count = 0
    private var capacity: Int
    /// Per event: the next pending note-on of the same channel and key (first in, first
    /// out), or -1; written for note-ons only, and only meaningful while they are pending.
    private var pendingNext: UnsafeMutablePointer<Int32>
    /// Per channel and key (`channel << 7 | key` = k): the first pending note-on at `2k`,
    /// the last at `2k + 1`, or -1. Side by side, so one pointer serves both.
    let pendingEnds: UnsafeMutablePointer<Int32> = .allocate(capacity: 4096)

    /// Room in `pendingNext` (at least `capacity`).
    private var sideCapacity: Int

    init() {
        capacity = 16
        sideCapacity = 16
        base = .allocate(capacity: capacity)
        pendingNext = .allocate(capacity: capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
        pendingNext.deallocate()
        pendingEnds.deallocate()
    }

    /// The storage's own event buffer while ``attach(_:capacity:)`` lends it another.
    private var owned: (base: UnsafeMutablePointer<TimedEvent>, capacity: Int)?

    /// Builds the next track's events in `buffer` (uninitialized room for `capacity` events,
    /// which the caller guarantees is enough) until ``detach()``.
    func attach(_ buffer: UnsafeMutablePointer<TimedEvent>, capacity: Int) {
        reset(expectedCount: 0)
        if capacity > sideCapacity {
            pendingNext.deallocate()
            pendingNext = .allocate(capacity: capacity)
            sideCapacity = capacity
        }
        owned = (base, self.capacity)
        base = buffer
        self.capacity = capacity
    }

    /// Ends ``attach(_:capacity:)``: returns the number of events initialized in the lent
    /// buffer, which now owns them.
    func detach() -> Int {
        let n = count
        count = 0
        populatedLimit = 0
        if let owned {
            base = owned.base
            capacity = owned.capacity
        }
        owned = nil
        return n
    }

    /// Empties the storage for the next track, with room for `expectedCount` events.
    func reset(expectedCount: Int) {
        base.deinitialize(count: count)
        count = 0
        populatedLimit = 0
        pendingEnds.update(repeating: -1, count: 4096)
        if expectedCount > capacity {
            base.deallocate()
            pendingNext.deallocate()
            capacity = expectedCount
            sideCapacity = expectedCount
            base = .allocate(capacity: capacity)
            pendingNext = .allocate(capacity: capacity)
        }
    }

    /// Adds a meta or sysex event.
    func append(_ event: TimedEvent) {
        var cursor = self.cursor
        cursor.append(event)
        commit(cursor)
    }

    /// The write position, for a loop that keeps it in registers; ``commit(_:)`` takes it
    /// back. Appends through it go nowhere else until then.
    var cursor: EventCursor {
        EventCursor(storage: self, base: base, count: count, populatedLimit: populatedLimit,
                    pendingNext: pendingNext, pendingEnds: pendingEnds)
    }

    /// Takes back the events appended through a ``cursor``.
    func commit(_ cursor: EventCursor) {
        count = cursor.count
    }

    /// Makes room for the event at `cursor.count`, then refreshes the cursor (growing moves
    /// the buffers).
    fileprivate func makeRoom(_ cursor: inout EventCursor) {
        count = cursor.count
        extendPopulated()
        cursor = self.cursor
    }

    /// Events below this index lie in pages already made resident (or in storage that grows
    /// by copying): a cursor's appends compare against it, as they would against the capacity.
    private var populatedLimit = 0

    /// Events a ``extendPopulated()`` call makes resident ahead: 64 KiB, so a track's array
    /// ends at most that far past its last event in resident memory.
    private static let populateAheadEvents = 65_536 / MemoryLayout<TimedEvent>.stride

    /// Makes the next stretch of the lent buffer resident with one `madvise` instead of a page
    /// fault per page: a large track writes thousands of fresh pages, and on a VM each fault's
    /// entry and exit cost as much as the parsing of the events on its page. Where the kernel
    /// lacks `MADV_POPULATE_WRITE` (before Linux 5.14) the call fails and the pages fault in
    /// as before.
    private func extendPopulated() {
        guard count < capacity else { return grow() }
        guard owned != nil else {
            populatedLimit = capacity
            return
        }
        let next = min(capacity, count + Self.populateAheadEvents)
        let pageMask = ~(Int(sysconf(Int32(_SC_PAGESIZE))) - 1)
        let from = Int(bitPattern: base + count) & pageMask
        let to = Int(bitPattern: base + next) & pageMask
        if to > from {
            _ = madvise(UnsafeMutableRawPointer(bitPattern: from), to - from, Self.populateWrite)
        }
        populatedLimit = next
    }

    /// `MADV_POPULATE_WRITE` (Linux 5.14), which Glibc's headers on older systems lack.
    private static let populateWrite: Int32 = 23

    private func grow() {
        precondition(owned == nil, "a chunk held more events than its byte count allows")
        let newCapacity = capacity * 2
        let newBase = UnsafeMutablePointer<TimedEvent>.allocate(capacity: newCapacity)
        newBase.moveInitialize(from: base, count: count)
        base.deallocate()
        base = newBase
        let newNext = UnsafeMutablePointer<Int32>.allocate(capacity: newCapacity)
        newNext.initialize(from: pendingNext, count: count)
        pendingNext.deallocate()
        pendingNext = newNext
        capacity = newCapacity
        sideCapacity = newCapacity
        populatedLimit = capacity
    }

    /// Moves the events out into an exactly sized array; the storage is empty afterwards.
    func takeArray() -> [TimedEvent] {
        let n = count
        count = 0
        return [TimedEvent](unsafeUninitializedCapacity: n) { buffer, initialized in
            if n > 0 { buffer.baseAddress!.moveInitialize(from: base, count: n) }
            initialized = n
        }
    }
}

/// A ``TrackEventStorage``'s write position as plain values: appends through it keep the
/// count and buffers in registers instead of reloading them from the storage object after
/// every store.
struct EventCursor {
    let storage: TrackEventStorage
    let base: UnsafeMutablePointer<TimedEvent>
    private(set) var count: Int
    /// Events below this index may be written without asking the storage for room.
    let populatedLimit: Int
    let pendingNext: UnsafeMutablePointer<Int32>
    let pendingEnds: UnsafeMutablePointer<Int32>

    // Each append spells out its three steps: written as calls of one another, the run loop
    // took 1.6% to 8% more instructions (callgrind, smf-bench load).

    /// Adds a meta or sysex event.
    @inline(__always)
    mutating func append(_ event: TimedEvent) {
        if count == populatedLimit { storage.makeRoom(&self) }
        (base + count).initialize(to: event)
        count &+= 1
    }

    /// Adds a channel message that no release will look for.
    @inline(__always)
    mutating func appendMessage(_ message: MIDIMessage, tick: Int64, order: UInt32) {
        if count == populatedLimit { storage.makeRoom(&self) }
        (base + count).initialize(to: TimedEvent(tick: tick, order: order, event: .message(message)))
        count &+= 1
    }

    /// Adds a note-on that waits for its release, last of its channel and key's pending ones.
    @inline(__always)
    mutating func appendNoteOn(_ message: MIDIMessage, tick: Int64, order: UInt32) {
        if count == populatedLimit { storage.makeRoom(&self) }
        (base + count).initialize(to: TimedEvent(tick: tick, order: order, event: .message(message)))
        pendingNext[count] = -1
        count &+= 1
    }

    /// Turns the pending note-on at `index` (of `channel` and `key`) into a note that ends at
    /// `tick`; false (and the note-on left as it is) when the duration exceeds
    /// ``NoteEvent/maximumDuration``.
    @inline(__always)
    func closeNote(at index: Int, channel: UInt8, key: UInt8, tick: Int64, releaseVelocity: UInt8,
                   releasedByZeroVelocityNoteOn: Bool, releaseOrder: UInt32) -> Bool {
        let on = base + index
        let start = on.pointee.tick
        let duration = tick &- start
        // The slot holds the note-on as a `.message` (no references), so it is overwritten
        // without deinitializing.
        guard duration <= NoteEvent.maximumDuration, case .message(let noteOn) = on.pointee.event else { return false }
        let note = NoteEvent(channel: channel, key: key, velocity: noteOn.data2,
                             duration: duration, releaseVelocity: releaseVelocity,
                             releasedByZeroVelocityNoteOn: releasedByZeroVelocityNoteOn, releaseOrder: releaseOrder)
        on.initialize(to: TimedEvent(tick: start, order: on.pointee.order, event: .note(note)))
        return true
    }
}
