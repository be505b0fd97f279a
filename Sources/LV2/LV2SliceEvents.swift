import AudioGraph
import CLilv
import MIDI

/// What reaches a plugin's atom inputs: the MIDI events and transport positions received for
/// a slice's frames, written as atom sequences when the slice runs, and the messages the
/// control side sends between renders (`patch:Set` of a file).
///
/// The slice's storage is allocated once, at fixed capacities: receiving and writing run on
/// the render thread and allocate nothing. Messages are forged on the control side.
final class LV2SliceEvents {
    /// MIDI events one slice holds; more are dropped and counted.
    static let eventCapacity = 4096
    /// Transport changes one slice holds; past that, the latest replaces the last queued one.
    static let positionCapacity = 16

    private let eventFrames = UnsafeMutablePointer<Int64>.allocate(capacity: eventCapacity)
    private let eventMessages = UnsafeMutablePointer<MIDIMessage>.allocate(capacity: eventCapacity)
    private(set) var eventCount = 0
    /// Events that did not fit: the slice's queue was full, or its atom buffer.
    private(set) var droppedEventCount = 0
    private let positionFrames = UnsafeMutablePointer<Int64>.allocate(capacity: positionCapacity)
    private let positions = UnsafeMutablePointer<TransportPosition>.allocate(capacity: positionCapacity)
    private(set) var positionCount = 0

    deinit {
        eventFrames.deallocate()
        eventMessages.deallocate()
        positionFrames.deallocate()
        positions.deallocate()
    }

    /// Queues `message` for the slice that holds `frame`.
    func add(_ message: MIDIMessage, atFrame frame: Int64) {
        guard eventCount < Self.eventCapacity else {
            droppedEventCount += 1
            return
        }
        eventFrames[eventCount] = frame
        eventMessages[eventCount] = message
        eventCount += 1
    }

    /// Queues the transport's state for the slice that holds `frame`.
    func add(_ position: TransportPosition, atFrame frame: Int64) {
        if positionCount == Self.positionCapacity { positionCount -= 1 }
        positionFrames[positionCount] = frame
        positions[positionCount] = position
        positionCount += 1
    }

    /// Forgets the MIDI events gathered so far.
    func discardEvents() { eventCount = 0 }

    /// Forgets the transport positions gathered so far.
    func discardPositions() { positionCount = 0 }

    /// Writes into `buffer` an atom sequence holding one message at frame 0: `patch:Set` of
    /// `property` (a URI) to the file `path` (control side). False when it does not fit.
    static func writeFileMessage(_ path: String, forProperty property: String, into buffer: UnsafeMutableRawPointer, capacity: Int,
                                 features: LV2HostFeatures) -> Bool {
        let map = features.map
        func urid(_ uri: String) -> UInt32 { tactus_urid_map_uri(map, uri) }
        func padded(_ n: Int) -> Int { (n + 7) & ~7 }
        let pathBytes = Array(path.utf8) + [0]
        // Object body (id, otype), then two properties (key, context, value atom, value).
        let propertyValue = 8 + 8 + 8 + padded(4)
        let pathValue = 8 + 8 + padded(pathBytes.count)
        let objectSize = 8 + propertyValue + pathValue
        let total = 16 + padded(objectSize) // the event's frames and the object's atom header
        let header = MemoryLayout<LV2_Atom_Sequence>.size
        guard header + total <= capacity else { return false }
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: header + total)
        let sequence = buffer.assumingMemoryBound(to: LV2_Atom_Sequence.self)
        sequence.pointee.atom = LV2_Atom(size: UInt32(header + total - MemoryLayout<LV2_Atom>.size), type: features.atomSequence)
        sequence.pointee.body = LV2_Atom_Sequence_Body(unit: 0, pad: 0)
        var at = buffer + header
        func put(_ value: UInt32) { at.storeBytes(of: value, as: UInt32.self); at += 4 }
        at.storeBytes(of: Int64(0), as: Int64.self); at += 8
        put(UInt32(objectSize)); put(urid("http://lv2plug.in/ns/ext/atom#Object"))
        put(0); put(urid("http://lv2plug.in/ns/ext/patch#Set"))
        put(urid("http://lv2plug.in/ns/ext/patch#property")); put(0)
        put(4); put(urid("http://lv2plug.in/ns/ext/atom#URID")); put(urid(property)); put(0)
        put(urid("http://lv2plug.in/ns/ext/patch#value")); put(0)
        put(UInt32(pathBytes.count)); put(urid("http://lv2plug.in/ns/ext/atom#Path"))
        pathBytes.withUnsafeBytes { at.copyMemory(from: $0.baseAddress!, byteCount: pathBytes.count) }
        return true
    }

    /// Writes an atom sequence into `buffer` for the slice starting at `sliceStart`: the
    /// `prefixBytes` bytes at `prefix` first (whole events at frame 0: messages the control side
    /// sent), then the MIDI events (with `midi`) and `time:Position` objects (with
    /// `includePositions`) merged by frame, a position before the MIDI events of its frame.
    /// What does not fit is dropped, MIDI events counted; the caller forgets the slice's events
    /// once every port is written.
    func writeSequence(into buffer: UnsafeMutableRawPointer, capacity: Int, sliceStart: Int64, midi: Bool, positions includePositions: Bool,
                       features: LV2HostFeatures, prefix: UnsafeRawPointer? = nil, prefixBytes: Int = 0) {
        let sequence = buffer.assumingMemoryBound(to: LV2_Atom_Sequence.self)
        sequence.pointee.atom.type = features.atomSequence
        sequence.pointee.body = LV2_Atom_Sequence_Body(unit: 0, pad: 0)
        var used = MemoryLayout<LV2_Atom_Sequence>.size
        let eventHeader = MemoryLayout<LV2_Atom_Event_Frames>.size
        if let prefix, prefixBytes > 0, used + prefixBytes <= capacity {
            (buffer + used).copyMemory(from: prefix, byteCount: prefixBytes)
            used += prefixBytes
        }
        var m = midi ? 0 : eventCount, p = includePositions ? 0 : positionCount
        while m < eventCount || p < positionCount {
            let positionFirst = p < positionCount && (m == eventCount || positionFrames[p] <= eventFrames[m])
            // Events arrive in frame order; one from before the slice (only after a jump)
            // plays at its first frame.
            let frame = max(0, (positionFirst ? positionFrames[p] : eventFrames[m]) - sliceStart)
            if positionFirst {
                let total = eventHeader + Self.positionObjectSize
                if used + total <= capacity {
                    Self.writePosition(positions[p], frame: frame, at: buffer + used, uris: features.time)
                    used += total
                }
                p += 1
                continue
            }
            let message = eventMessages[m]
            m += 1
            let size = 1 + message.dataByteCount
            let total = eventHeader + ((size + 7) & ~7)
            guard used + total <= capacity else {
                droppedEventCount += 1
                continue
            }
            let event = (buffer + used).assumingMemoryBound(to: LV2_Atom_Event_Frames.self)
            event.pointee.frames = frame
            event.pointee.body = LV2_Atom(size: UInt32(size), type: features.midiEvent)
            let bytes = (buffer + used + eventHeader).assumingMemoryBound(to: UInt8.self)
            bytes[0] = message.status
            bytes[1] = message.data1
            bytes[2] = message.data2
            used += total
        }
        sequence.pointee.atom.size = UInt32(used - MemoryLayout<LV2_Atom>.size)
    }

    /// Bytes of a `time:Position` object's body: its id and type, then seven properties of
    /// 24 bytes each (key, context, the value's atom header, the value padded to 8).
    private static let positionObjectSize = 8 + 7 * 24

    /// Writes `position` as an event at `frame` whose body is a `time:Position` object.
    private static func writePosition(_ position: TransportPosition, frame: Int64, at start: UnsafeMutableRawPointer, uris: LV2TimeURIDs) {
        start.storeBytes(of: frame, as: Int64.self)
        start.storeBytes(of: UInt32(positionObjectSize), toByteOffset: 8, as: UInt32.self)
        start.storeBytes(of: uris.object, toByteOffset: 12, as: UInt32.self)
        start.storeBytes(of: UInt32(0), toByteOffset: 16, as: UInt32.self)
        start.storeBytes(of: uris.position, toByteOffset: 20, as: UInt32.self)
        var property = start + 24
        writeProperty(uris.frame, type: uris.long, size: 8, bits: UInt64(bitPattern: position.songFrame), at: &property)
        writeProperty(uris.speed, type: uris.float, size: 4, bits: UInt64(position.speed.bitPattern), at: &property)
        writeProperty(uris.bar, type: uris.long, size: 8, bits: UInt64(bitPattern: position.bar), at: &property)
        writeProperty(uris.barBeat, type: uris.float, size: 4, bits: UInt64(Float(position.barBeat).bitPattern), at: &property)
        writeProperty(uris.beatUnit, type: uris.int, size: 4, bits: UInt64(UInt32(bitPattern: position.beatUnit)), at: &property)
        writeProperty(uris.beatsPerBar, type: uris.float, size: 4, bits: UInt64(position.beatsPerBar.bitPattern), at: &property)
        writeProperty(uris.beatsPerMinute, type: uris.float, size: 4, bits: UInt64(Float(position.beatsPerMinute).bitPattern), at: &property)
    }

    /// One property of an atom object: key, context, the value's atom header, then the value
    /// (its low `size` bytes of `bits`, little-endian as x86 and ARM store them) padded to 8.
    private static func writeProperty(_ key: LV2_URID, type: LV2_URID, size: UInt32, bits: UInt64, at pointer: inout UnsafeMutableRawPointer) {
        pointer.storeBytes(of: key, as: UInt32.self)
        pointer.storeBytes(of: UInt32(0), toByteOffset: 4, as: UInt32.self)
        pointer.storeBytes(of: size, toByteOffset: 8, as: UInt32.self)
        pointer.storeBytes(of: type, toByteOffset: 12, as: UInt32.self)
        pointer.storeBytes(of: bits, toByteOffset: 16, as: UInt64.self)
        pointer += 24
    }
}
