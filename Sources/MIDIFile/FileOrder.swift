import MIDI
import Sequencing

/// One event as it appears in a track chunk.
public enum FileEvent: Hashable, Sendable {
    /// A channel message, or a system message kept from the file.
    case message(MIDIMessage)
    /// A sysex event (F0) or packet (F7).
    case sysex(SysexEvent)
    /// A meta event other than end of track.
    case meta(MetaEvent)
}

/// A release waiting to be written: the note-off half of a ``NoteEvent``.
struct PendingRelease {
    var tick: Int64
    var order: UInt32
    var message: MIDIMessage

    @inline(__always)
    static func before(_ a: PendingRelease, _ b: PendingRelease) -> Bool {
        a.tick != b.tick ? a.tick < b.tick : a.order < b.order
    }
}

/// A binary min-heap of releases in manually managed memory (pushed and popped once per
/// note, so no per-call uniqueness checks); polyphony keeps it small. Sifting moves a hole
/// instead of swapping. Call ``deallocate()`` when done.
struct ReleaseHeap {
    private var items: UnsafeMutablePointer<PendingRelease>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 32) {
        self.capacity = max(1, capacity)
        items = .allocate(capacity: self.capacity)
    }

    func deallocate() { items.deallocate() }

    var isEmpty: Bool { count == 0 }

    /// The earliest release; the heap must not be empty.
    var first: PendingRelease { items[0] }

    /// True when the earliest release comes before an event at `tick` with `order`.
    @inline(__always)
    func hasRelease(before tick: Int64, order: UInt32) -> Bool {
        count > 0 && (items[0].tick < tick || (items[0].tick == tick && items[0].order < order))
    }

    @inline(__always)
    mutating func push(_ r: PendingRelease) {
        if count == capacity {
            let grown = UnsafeMutablePointer<PendingRelease>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: items, count: count)
            items.deallocate()
            items = grown
            capacity *= 2
        }
        var i = count
        count += 1
        while i > 0 {
            let parent = (i - 1) >> 1
            guard PendingRelease.before(r, items[parent]) else { break }
            items[i] = items[parent]
            i = parent
        }
        (items + i).initialize(to: r)
    }

    /// Removes and returns the earliest release; the heap must not be empty.
    @inline(__always)
    mutating func pop() -> PendingRelease {
        let top = items[0]
        count -= 1
        let n = count
        guard n > 0 else { return top }
        let last = items[n]
        var i = 0
        while true {
            var child = 2 * i + 1
            if child >= n { break }
            if child + 1 < n && PendingRelease.before(items[child + 1], items[child]) { child += 1 }
            guard PendingRelease.before(items[child], last) else { break }
            items[i] = items[child]
            i = child
        }
        items[i] = last
        return top
    }
}

extension MusicTrack {
    /// Visits the track's events as a file holds them: each note split into its note-on and
    /// its release, everything in `(tick, order)` order, so a track read from a file comes
    /// back in the file's order. Parameter and user events have no SMF form and are skipped.
    public func forEachFileEvent(_ body: (Int64, FileEvent) throws -> Void) rethrows {
        var releases = ReleaseHeap()
        defer { releases.deallocate() }
        try events.withUnsafeBufferPointer { buffer in
            for i in buffer.indices {
                let tick = buffer[i].tick
                let order = buffer[i].order
                while releases.hasRelease(before: tick, order: order) {
                    let r = releases.pop()
                    try body(r.tick, .message(r.message))
                }
                switch buffer[i].event {
                case .note(let n):
                    try body(tick, .message(n.onMessage))
                    releases.push(PendingRelease(tick: tick + n.duration, order: n.releaseOrder, message: n.offMessage))
                case .message(let m):
                    try body(tick, .message(m))
                case .sysex(let s):
                    try body(tick, .sysex(s))
                case .meta(let m):
                    if m.type != MetaType.endOfTrack { try body(tick, .meta(m)) }
                case .parameter, .user:
                    continue
                }
            }
        }
        while !releases.isEmpty {
            let r = releases.pop()
            try body(r.tick, .message(r.message))
        }
    }
}
