/// Something a MIDI byte stream carried: a short message, or a complete system exclusive message.
public enum MIDIStreamEvent: Hashable, Sendable {
    /// A channel, system common or real-time message.
    case message(MIDIMessage)
    /// A system exclusive message, from F0 to F7 inclusive. A sysex cut short by another
    /// status byte is delivered with `complete == false` and without the closing F7.
    case systemExclusive(bytes: [UInt8], complete: Bool)
}

/// Turns a raw MIDI byte stream (a `/dev/snd/midiC*D*` device, a FIFO, a serial line) into
/// messages, one byte at a time, so input may be split anywhere.
///
/// It follows the MIDI 1.0 wire rules: running status for channel messages, real-time bytes
/// (F8...FF) delivered at once even in the middle of another message or a sysex without
/// disturbing it, system common messages cancelling running status, and stray data bytes with
/// no status in effect dropped (and counted).
public struct MIDIByteStreamParser: Sendable {
    private var runningStatus: UInt8 = 0
    private var pending: (UInt8, UInt8) = (0, 0)
    private var pendingCount = 0
    private var expected = 0
    private var sysex: [UInt8] = []
    private var inSysex = false
    /// The largest sysex kept; longer ones are cut and delivered incomplete so a broken
    /// sender cannot make the parser grow without bound.
    public let maximumSysexLength: Int
    /// Data bytes that arrived with no status in effect and were dropped.
    public private(set) var droppedByteCount = 0

    /// Creates a parser. `maximumSysexLength` bounds memory on a runaway sysex.
    public init(maximumSysexLength: Int = 1 << 20) {
        self.maximumSysexLength = maximumSysexLength
    }

    /// Feeds bytes and calls `emit` for every event completed by them, in order.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes, emit: (MIDIStreamEvent) -> Void)
    where Bytes.Element == UInt8 {
        for byte in bytes { feed(byte, emit: emit) }
    }

    /// Feeds one byte.
    public mutating func feed(_ byte: UInt8, emit: (MIDIStreamEvent) -> Void) {
        if byte >= 0xF8 {
            // Real-time bytes interleave with everything and change no state.
            if byte != 0xF9 && byte != 0xFD {
                emit(.message(MIDIMessage(status: byte)))
            }
            return
        }
        if inSysex {
            if byte == 0xF7 {
                sysex.append(0xF7)
                emit(.systemExclusive(bytes: sysex, complete: true))
                sysex.removeAll(keepingCapacity: true)
                inSysex = false
                return
            }
            if byte < 0x80 {
                if sysex.count < maximumSysexLength {
                    sysex.append(byte)
                } else {
                    emit(.systemExclusive(bytes: sysex, complete: false))
                    sysex.removeAll(keepingCapacity: true)
                    inSysex = false
                    droppedByteCount += 1
                }
                return
            }
            // Any other status byte ends an unterminated sysex.
            emit(.systemExclusive(bytes: sysex, complete: false))
            sysex.removeAll(keepingCapacity: true)
            inSysex = false
        }
        if byte >= 0x80 {
            pendingCount = 0
            switch byte {
            case 0xF0:
                runningStatus = 0
                inSysex = true
                sysex.append(0xF0)
            case 0xF7:
                runningStatus = 0  // a stray end of exclusive
            default:
                guard let count = MIDIStatus.dataByteCount(byte) else {
                    runningStatus = 0  // undefined F4/F5: cancels running status, carries nothing
                    return
                }
                if count == 0 {
                    runningStatus = 0
                    emit(.message(MIDIMessage(status: byte)))
                } else {
                    runningStatus = byte
                    expected = count
                }
            }
            return
        }
        guard runningStatus != 0 else {
            droppedByteCount += 1
            return
        }
        if pendingCount == 0 {
            pending.0 = byte
            pendingCount = 1
        } else {
            pending.1 = byte
            pendingCount = 2
        }
        if pendingCount == expected {
            emit(.message(MIDIMessage(status: runningStatus, data1: pending.0, data2: expected == 2 ? pending.1 : 0)))
            pendingCount = 0
            if runningStatus >= 0xF0 {
                runningStatus = 0  // system common messages have no running status
            }
        }
    }
}
