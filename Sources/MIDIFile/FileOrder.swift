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

/// A binary min-heap of releases; polyphony keeps it small.
private struct ReleaseHeap {
    var items: [PendingRelease] = []

    var first: PendingRelease? { items.first }

    mutating func push(_ r: PendingRelease) {
        items.append(r)
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) >> 1
            if PendingRelease.before(items[i], items[parent]) {
                items.swapAt(i, parent)
                i = parent
            } else { break }
        }
    }

    mutating func pop() -> PendingRelease {
        let top = items[0]
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < items.count && PendingRelease.before(items[l], items[m]) { m = l }
                if r < items.count && PendingRelease.before(items[r], items[m]) { m = r }
                if m == i { break }
                items.swapAt(i, m)
                i = m
            }
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
        for e in events {
            while let r = releases.first, r.tick < e.tick || (r.tick == e.tick && r.order < e.order) {
                try body(r.tick, .message(releases.pop().message))
            }
            switch e.event {
            case .note(let n):
                try body(e.tick, .message(n.onMessage))
                releases.push(PendingRelease(tick: e.tick + n.duration, order: n.releaseOrder, message: n.offMessage))
            case .message(let m):
                try body(e.tick, .message(m))
            case .sysex(let s):
                try body(e.tick, .sysex(s))
            case .meta(let m):
                if m.type != MetaType.endOfTrack { try body(e.tick, .meta(m)) }
            case .parameter, .user:
                continue
            }
        }
        while !releases.items.isEmpty {
            let r = releases.pop()
            try body(r.tick, .message(r.message))
        }
    }
}
