#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
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
        var p = start
        var tick: Int64 = 0
        var runningStatus: UInt8 = 0
        var order: UInt32 = 0
        var endOfTrack: Int64?
        var resyncAt: Int?
        var systemWarned = false

        parsing: while p < end {
            // Most events are channel messages: runs of them are read by a loop of their own.
            if end &- p >= ChannelMessageRun.margin {
                var run = ChannelMessageRun(position: p, tick: tick, order: order, runningStatus: runningStatus)
                readChannelMessages(&run)
                (p, tick, order, runningStatus) = (run.position, run.tick, run.order, run.runningStatus)
                guard p < end else { break }
                if let shouldCancel = options.shouldCancel, shouldCancel() { throw fail(p, .cancelled) }
            }
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
                var cursor = events.cursor
                Self.store(MIDIMessage(status: status, data1: d1, data2: d2), tick: tick, order: order, into: &cursor)
                events.commit(cursor)
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

    /// Reads channel messages from `run.position` until an event that is not one (meta,
    /// sysex, a bad byte) or the chunk's last ``ChannelMessageRun/margin`` bytes, which the
    /// general loop reads and reports. No read needs an end check of its own: a delta time, a
    /// status and two data bytes fit in the margin. Kept apart from the general loop so its
    /// state stays in registers. A run also ends after ``SMFReadOptions/cancellationStride``
    /// bytes, so the general loop asks whether to cancel that often (its one bound check
    /// covers both).
    func readChannelMessages(_ run: inout ChannelMessageRun) {
        let bytes = self.bytes.baseAddress!
        let last = min(end &- ChannelMessageRun.margin, run.position &+ SMFReadOptions.cancellationStride)
        var p = run.position
        var tick = run.tick
        var order = run.order
        var runningStatus = run.runningStatus
        var cursor = events.cursor
        defer {
            events.commit(cursor)
            run = ChannelMessageRun(position: p, tick: tick, order: order, runningStatus: runningStatus)
        }
        while p <= last {
            var q = p
            var b = bytes[q]
            var delta = Int(b & 0x7F)
            q &+= 1
            if b >= 0x80 {
                b = bytes[q]
                delta = delta << 7 | Int(b & 0x7F)
                q &+= 1
                if b >= 0x80 {
                    b = bytes[q]
                    delta = delta << 7 | Int(b & 0x7F)
                    q &+= 1
                    if b >= 0x80 {
                        b = bytes[q]
                        delta = delta << 7 | Int(b & 0x7F)
                        q &+= 1
                        // Still a continuation bit: a delta of 5 bytes, an error.
                        if b >= 0x80 { return }
                    }
                }
            }
            var status = bytes[q]
            if status >= 0x80 { q &+= 1 } else { status = runningStatus }
            // A running status is always a channel status, or 0 before the first one.
            guard status >= 0x80 && status < 0xF0 else { return }
            let twoDataBytes = status & 0xE0 != 0xC0
            let d1 = bytes[q]
            let d2 = twoDataBytes ? bytes[q &+ 1] : 0
            guard (d1 | d2) < 0x80 else { return }
            p = q &+ (twoDataBytes ? 2 : 1)
            tick &+= Int64(delta)
            runningStatus = status
            Self.store(MIDIMessage(status: status, data1: d1, data2: d2), tick: tick, order: order, into: &cursor)
            order &+= 1
        }
    }

    /// Adds a channel message to the track; a note-on waits for its release, which turns it
    /// into a note. Note pairing is first in, first out per channel and key: linked lists
    /// through the storage's `pendingNext`.
    @inline(__always)
    static func store(_ message: MIDIMessage, tick: Int64, order: UInt32, into cursor: inout EventCursor) {
        let kind = message.status & 0xF0
        guard kind == 0x80 || kind == 0x90 else { return cursor.appendMessage(message, tick: tick, order: order) }
        let k = Int(message.status & 0x0F) << 7 | Int(message.data1)
        let ends = cursor.pendingEnds + 2 &* k
        if kind == 0x90 && message.data2 > 0 {
            let index = Int32(truncatingIfNeeded: cursor.count)
            cursor.appendNoteOn(message, tick: tick, order: order)
            if ends[1] >= 0 { cursor.pendingNext[Int(ends[1])] = index } else { ends[0] = index }
            ends[1] = index
            return
        }
        let opened = ends[0]
        guard opened >= 0 else { return cursor.appendMessage(message, tick: tick, order: order) }
        ends[0] = cursor.pendingNext[Int(opened)]
        if ends[0] < 0 { ends[1] = -1 }
        // A release further away than a note's duration can hold leaves both halves as
        // messages, which play and write back the same.
        if !cursor.closeNote(at: Int(opened), channel: message.status & 0x0F, key: message.data1, tick: tick,
                             releaseVelocity: kind == 0x80 ? message.data2 : 0,
                             releasedByZeroVelocityNoteOn: kind == 0x90, releaseOrder: order) {
            cursor.appendMessage(message, tick: tick, order: order)
        }
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

/// Where ``TrackParser/readChannelMessages(_:)`` starts and where it stopped.
struct ChannelMessageRun {
    /// Bytes the run leaves to the general loop at a chunk's end: a 4-byte delta time, a
    /// status and two data bytes, plus one.
    static let margin = 8
    var position: Int
    var tick: Int64
    var order: UInt32
    var runningStatus: UInt8
}
