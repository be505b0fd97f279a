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
private struct PendingRelease {
    var tick: Int64
    var order: UInt32
    var message: MIDIMessage

    @inline(__always)
    static func before(_ a: PendingRelease, _ b: PendingRelease) -> Bool {
        a.tick != b.tick ? a.tick < b.tick : a.order < b.order
    }
}

/// A binary min-heap of releases; polyphony keeps it small. Sifting moves a hole instead of
/// swapping, over the array's buffer.
private struct ReleaseHeap {
    var items: [PendingRelease] = []

    var first: PendingRelease? { items.first }

    mutating func push(_ r: PendingRelease) {
        items.append(r)
        items.withUnsafeMutableBufferPointer { heap in
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) >> 1
                guard PendingRelease.before(r, heap[parent]) else { break }
                heap[i] = heap[parent]
                i = parent
            }
            heap[i] = r
        }
    }

    mutating func pop() -> PendingRelease {
        let top = items[0]
        let last = items.removeLast()
        items.withUnsafeMutableBufferPointer { heap in
            let n = heap.count
            guard n > 0 else { return }
            var i = 0
            while true {
                var child = 2 * i + 1
                if child >= n { break }
                if child + 1 < n && PendingRelease.before(heap[child + 1], heap[child]) { child += 1 }
                guard PendingRelease.before(heap[child], last) else { break }
                heap[i] = heap[child]
                i = child
            }
            heap[i] = last
        }
        return top
    }
}

extension MusicTrack {
    /// Visits the track's events as a file holds them: each note split into its note-on and
    /// its release, everything in `(tick, order)` order, so a track read from a file comes
    /// back in the file's order. Parameter and user events have no SMF form and are skipped.
    public func forEachFileEvent(_ body: (Int64, FileEvent) throws -> Void) rethrows {
        var releases = ReleaseHeap()
        releases.items.reserveCapacity(32)
        try events.withUnsafeBufferPointer { buffer in
            for i in buffer.indices {
                let tick = buffer[i].tick
                let order = buffer[i].order
                while let r = releases.first, r.tick < tick || (r.tick == tick && r.order < order) {
                    try body(r.tick, .message(releases.pop().message))
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
        while !releases.items.isEmpty {
            let r = releases.pop()
            try body(r.tick, .message(r.message))
        }
    }
}
