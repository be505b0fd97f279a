#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import MIDI
import Sequencing

/// Parses one MTrk payload into a track.
struct TrackParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let options: SMFReadOptions
    let chunkName: String
    let start: Int
    let end: Int
    let truncatedByEOF: Bool
    let fileEnd: Int
    let events: TrackEventStorage
    var warnings: [SMFWarning] = []
    /// The order the track's next event would take, once parsed.
    var nextOrder: UInt32 = 0

    init(file: FileParser, chunkName: String, start: Int, end: Int, truncatedByEOF: Bool, storage: TrackEventStorage) {
        self.events = storage
        self.bytes = file.bytes
        self.options = file.options
        self.chunkName = chunkName
        self.start = start
        self.end = end
        self.truncatedByEOF = truncatedByEOF
        self.fileEnd = file.end
    }

    mutating func warn(_ offset: Int, _ message: String) throws(SMFError) {
        let w = SMFWarning(location: SMFLocation(chunk: chunkName, offset: offset), message: message)
        if options.strict { throw SMFError(location: w.location, reason: .strict(w)) }
        warnings.append(w)
    }

    func fail(_ offset: Int, _ reason: SMFErrorReason) -> SMFError {
        SMFError(location: SMFLocation(chunk: chunkName, offset: offset), reason: reason)
    }

    struct Result {
        var track: MusicTrack
        /// Where chunk scanning resumes when the chunk's length was wrong.
        var resyncAt: Int?
    }

    /// Chunks whose event bound stays below this many events are parsed straight into the
    /// track's final array (see ``parse()``); larger ones go through growable storage.
    static let directLimit = 1 << 21

    mutating func parse() throws(SMFError) -> Result {
        // Every event takes at least two bytes (a delta and a status or data byte), so a
        // chunk holds at most `bound` events. Below the limit, the events are built right in
        // an array of that capacity: pages past the events are never touched, so they cost
        // address space, not memory, and nothing is copied afterwards.
        let bound = (end - start) / 2 + 1
        var outcome: (endOfTrack: Int64?, resyncAt: Int?) = (nil, nil)
        var array: [TimedEvent]
        if bound <= Self.directLimit {
            do {
                array = try [TimedEvent](unsafeUninitializedCapacity: bound) { buffer, initialized in
                    events.attach(buffer.baseAddress!, capacity: bound)
                    defer { initialized = events.detach() }
                    outcome = try parseEvents()
                }
            } catch let error as SMFError {
                throw error
            } catch {
                throw fail(start, .limitExceeded("\(error)"))
            }
        } else {
            events.reset(expectedCount: (end - start) / 3)
            outcome = try parseEvents()
            array = events.takeArray()
        }
        var track = MusicTrack()
        track.adopt(sortedEvents: array, nextOrder: nextOrder)
        track.explicitLength = outcome.endOfTrack
        return Result(track: track, resyncAt: outcome.resyncAt)
    }

    /// Parses the chunk's events into `events`; returns the end-of-track tick, if any, and
    /// where chunk scanning resumes when the chunk length was wrong.
    mutating func parseEvents() throws(SMFError) -> (endOfTrack: Int64?, resyncAt: Int?) {
        // FIFO note pairing per (channel, key): linked lists through `events.pendingNext`.
        let head = events.head
        let tail = events.tail

        var p = start
        var tick: Int64 = 0
        var runningStatus: UInt8 = 0
        var order: UInt32 = 0
        var endOfTrack: Int64?
        var resyncAt: Int?
        var systemWarned = false

        parsing: while p < end {
            let eventStart = p
            // Delta time: at most 4 bytes.
            var delta = 0
            var count = 0
            while true {
                guard p < end else {
                    try warn(eventStart, truncatedByEOF ? "file ends inside a delta time; the cut event is dropped" : "chunk ends inside a delta time; the cut event is dropped")
                    break parsing
                }
                let b = bytes[p]
                p &+= 1
                count &+= 1
                delta = delta << 7 | Int(b & 0x7F)
                if b < 0x80 { break }
                if count == 4 { throw fail(eventStart, .variableLengthQuantityTooLong) }
            }
            // Wrapping adds in the hot path: every position is below `end`, and a tick is at
            // most 2^28 times the events of a chunk (below 2^60).
            tick &+= Int64(delta)
            guard p < end else {
                try warn(eventStart, truncatedByEOF ? "file ends after a delta time; the cut event is dropped" : "chunk ends after a delta time; the cut event is dropped")
                break
            }
            var status = bytes[p]
            if status < 0x80 {
                guard runningStatus != 0 else { throw fail(p, .runningStatusWithoutStatus(byte: status)) }
                status = runningStatus
            } else {
                p &+= 1
            }
            switch status {
            case 0xFF:
                guard p < end else {
                    try warn(eventStart, "track ends inside a meta event; the cut event is dropped")
                    break parsing
                }
                let type = bytes[p]
                p += 1
                let lengthAt = p
                guard let length = try readLength(&p, eventStart: eventStart) else { break parsing }
                if length > end - p {
                    if truncatedByEOF {
                        try warn(eventStart, "file ends inside a meta event of \(length) bytes; the cut event is dropped")
                        break parsing
                    }
                    throw fail(lengthAt, .eventLengthExceedsChunk(kind: "meta", declared: length, available: end - p))
                }
                if length > options.maximumEventLength {
                    throw fail(lengthAt, .limitExceeded("meta event of \(length) bytes, more than \(options.maximumEventLength)"))
                }
                if type == MetaType.endOfTrack {
                    endOfTrack = tick
                    p += length
                    if p < end {
                        let rest = end - p
                        if let tagAt = findTrackTag(from: p) {
                            try warn(p, "\(rest) byte(s) after end of track; the chunk length looks wrong, re-synchronizing on the 'MTrk' at byte \(tagAt)")
                            resyncAt = tagAt
                        } else {
                            try warn(p, "\(rest) byte(s) after end of track ignored")
                        }
                    }
                    break parsing
                }
                let data = Array(UnsafeBufferPointer(rebasing: bytes[p..<p + length]))
                p += length
                events.append(TimedEvent(tick: tick, order: order, event: .meta(MetaEvent(type: type, data: data))))
            case 0xF0, 0xF7:
                let lengthAt = p
                guard let length = try readLength(&p, eventStart: eventStart) else { break parsing }
                if length > end - p {
                    if truncatedByEOF {
                        try warn(eventStart, "file ends inside a sysex event of \(length) bytes; the cut event is dropped")
                        break parsing
                    }
                    throw fail(lengthAt, .eventLengthExceedsChunk(kind: "sysex", declared: length, available: end - p))
                }
                if length > options.maximumEventLength {
                    throw fail(lengthAt, .limitExceeded("sysex event of \(length) bytes, more than \(options.maximumEventLength)"))
                }
                let data = Array(UnsafeBufferPointer(rebasing: bytes[p..<p + length]))
                p += length
                events.append(TimedEvent(tick: tick, order: order, event: .sysex(SysexEvent(status: status, payload: data))))
            default:
                // Channel messages (nearly every event) take two data bytes, but program change and
                // channel pressure (C0-DF) one; the table is for the rare system messages.
                let dataCount: Int
                if status < 0xF0 {
                    dataCount = status & 0xE0 == 0xC0 ? 1 : 2
                } else if let count = MIDIStatus.dataByteCount(status) {
                    dataCount = count
                } else {
                    throw fail(p - 1, .undefinedStatus(status))
                }
                if status >= 0xF0 && !systemWarned {
                    try warn(eventStart, "system message 0x\(hex(status)) inside a track (not allowed in SMF); kept")
                    systemWarned = true
                }
                guard end &- p >= dataCount else {
                    try warn(eventStart, truncatedByEOF ? "file ends inside a MIDI message; the cut message is dropped" : "chunk ends inside a MIDI message; the cut message is dropped (the chunk length is probably wrong)")
                    break parsing
                }
                var d1: UInt8 = 0, d2: UInt8 = 0
                if dataCount >= 1 {
                    d1 = bytes[p]
                    if d1 > 0x7F { throw fail(p, .dataByteOutOfRange(status: status, byte: d1)) }
                }
                if dataCount == 2 {
                    d2 = bytes[p &+ 1]
                    if d2 > 0x7F { throw fail(p + 1, .dataByteOutOfRange(status: status, byte: d2)) }
                }
                p &+= dataCount
                if status < 0xF0 { runningStatus = status }
                let message = MIDIMessage(status: status, data1: d1, data2: d2)
                let kind = status & 0xF0
                if kind == 0x90 && d2 > 0 {
                    let k = Int(status & 0x0F) << 7 | Int(d1)
                    let index = Int32(truncatingIfNeeded: events.count)
                    events.append(TimedEvent(tick: tick, order: order, event: .message(message)))
                    if tail[k] >= 0 { events.pendingNext[Int(tail[k])] = index } else { head[k] = index }
                    tail[k] = index
                } else if kind == 0x80 || kind == 0x90 {
                    let k = Int(status & 0x0F) << 7 | Int(d1)
                    let opened = head[k]
                    if opened >= 0 {
                        head[k] = events.pendingNext[Int(opened)]
                        if head[k] < 0 { tail[k] = -1 }
                        // A release further away than a note's duration can hold leaves both
                        // halves as messages, which play and write back the same.
                        if !events.closeNote(at: Int(opened), tick: tick, releaseVelocity: kind == 0x80 ? d2 : 0,
                                             releasedByZeroVelocityNoteOn: kind == 0x90, releaseOrder: order) {
                            events.append(TimedEvent(tick: tick, order: order, event: .message(message)))
                        }
                    } else {
                        events.append(TimedEvent(tick: tick, order: order, event: .message(message)))
                    }
                } else {
                    events.append(TimedEvent(tick: tick, order: order, event: .message(message)))
                }
            }
            order &+= 1
        }
        if endOfTrack == nil && !truncatedByEOF {
            try warn(end, "track has no end-of-track event; it ends with its last event")
        }
        // Every event kept, and every release, has an order below this.
        nextOrder = order
        return (endOfTrack, resyncAt)
    }

    /// Reads a variable-length length field; nil (with a warning) when the chunk ends inside it.
    mutating func readLength(_ p: inout Int, eventStart: Int) throws(SMFError) -> Int? {
        var value = 0
        var count = 0
        while true {
            guard p < end else {
                try warn(eventStart, "track ends inside a length field; the cut event is dropped")
                return nil
            }
            let b = bytes[p]
            p += 1
            count += 1
            value = value << 7 | Int(b & 0x7F)
            if b < 0x80 { return value }
            if count == 4 { throw fail(p - 4, .variableLengthQuantityTooLong) }
        }
    }

    func findTrackTag(from: Int) -> Int? {
        var i = from
        while i + 8 <= fileEnd {
            if bytes[i] == 0x4D && bytes[i + 1] == 0x54 && bytes[i + 2] == 0x72 && bytes[i + 3] == 0x6B { return i }
            i += 1
            if i >= end { break }
        }
        return nil
    }
}

/// A track's events while its chunk is parsed, in manually managed memory: pending note-ons
/// become notes in place without copying the enum around, and at the end the events are moved
/// (a plain memory copy, no per-event retain or release) into an array of exactly their count.
/// One storage serves all the tracks of a file.
final class TrackEventStorage {
    private var base: UnsafeMutablePointer<TimedEvent>
    private(set) var count = 0
    private var capacity: Int
    /// Per event: the next pending note-on of the same channel and key (first in, first
    /// out), or -1; only meaningful for pending note-ons.
    private(set) var pendingNext: UnsafeMutablePointer<Int32>
    /// Per event: the attack velocity of a pending note-on.
    private var velocity: UnsafeMutablePointer<UInt8>
    /// Per channel and key (`channel << 7 | key`): the first and last pending note-on, or -1.
    let head: UnsafeMutablePointer<Int32> = .allocate(capacity: 2048)
    let tail: UnsafeMutablePointer<Int32> = .allocate(capacity: 2048)

    /// Room in `pendingNext` and `velocity` (at least `capacity`).
    private var sideCapacity: Int

    init() {
        capacity = 16
        sideCapacity = 16
        base = .allocate(capacity: capacity)
        pendingNext = .allocate(capacity: capacity)
        velocity = .allocate(capacity: capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
        pendingNext.deallocate()
        velocity.deallocate()
        head.deallocate()
        tail.deallocate()
    }

    /// The storage's own event buffer while ``attach(_:capacity:)`` lends it another.
    private var owned: (base: UnsafeMutablePointer<TimedEvent>, capacity: Int)?

    /// Builds the next track's events in `buffer` (uninitialized room for `capacity` events,
    /// which the caller guarantees is enough) until ``detach()``.
    func attach(_ buffer: UnsafeMutablePointer<TimedEvent>, capacity: Int) {
        reset(expectedCount: 0)
        if capacity > sideCapacity {
            pendingNext.deallocate()
            velocity.deallocate()
            pendingNext = .allocate(capacity: capacity)
            velocity = .allocate(capacity: capacity)
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
        head.update(repeating: -1, count: 2048)
        tail.update(repeating: -1, count: 2048)
        if expectedCount > capacity {
            base.deallocate()
            pendingNext.deallocate()
            velocity.deallocate()
            capacity = expectedCount
            sideCapacity = expectedCount
            base = .allocate(capacity: capacity)
            pendingNext = .allocate(capacity: capacity)
            velocity = .allocate(capacity: capacity)
        }
    }

    @inline(__always)
    func append(_ event: TimedEvent) {
        if count == populatedLimit { extendPopulated() }
        (base + count).initialize(to: event)
        pendingNext[count] = -1
        if case .message(let m) = event.event { velocity[count] = m.data2 }
        count &+= 1
    }

    /// Turns the pending note-on at `index` into a note that ends at `tick`; false (and the
    /// note-on left as it is) when the duration exceeds ``NoteEvent/maximumDuration``.
    @inline(__always)
    func closeNote(at index: Int, tick: Int64, releaseVelocity: UInt8, releasedByZeroVelocityNoteOn: Bool, releaseOrder: UInt32) -> Bool {
        let on = base + index
        let duration = tick &- on.pointee.tick
        // The slot holds the note-on as a `.message` (no references): it is overwritten
        // without deinitializing.
        guard duration <= NoteEvent.maximumDuration, case .message(let m) = on.pointee.event else { return false }
        let note = NoteEvent(channel: m.status & 0x0F, key: m.data1, velocity: velocity[index],
                             duration: duration, releaseVelocity: releaseVelocity,
                             releasedByZeroVelocityNoteOn: releasedByZeroVelocityNoteOn, releaseOrder: releaseOrder)
        on.initialize(to: TimedEvent(tick: on.pointee.tick, order: on.pointee.order, event: .note(note)))
        return true
    }

    /// Events below this index lie in pages already made resident (or in storage that grows
    /// by copying): ``append(_:)`` compares against it, as it would against the capacity.
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
        newNext.update(from: pendingNext, count: count)
        pendingNext.deallocate()
        pendingNext = newNext
        let newVelocity = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newVelocity.update(from: velocity, count: count)
        velocity.deallocate()
        velocity = newVelocity
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
