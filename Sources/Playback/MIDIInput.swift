import MIDI
import Sequencing

/// One message from a MIDI input and the monotonic host time (nanoseconds, `CLOCK_MONOTONIC`)
/// at which it arrived.
public struct MIDIInputEvent: Hashable, Sendable {
    /// When the message arrived.
    public var hostNanos: Int64
    /// The message: a short message, or a whole sysex from F0 to F7.
    public var bytes: [UInt8]

    /// Creates an input event.
    public init(hostNanos: Int64, bytes: [UInt8]) {
        self.hostNanos = hostNanos
        self.bytes = bytes
    }
}

/// A raw MIDI byte stream as an input source: bytes read from a `/dev/snd/midiC*D*` device
/// or a FIFO, in pieces of any size, become stamped messages.
///
/// Every message completed by a piece is stamped with the piece's arrival time: a driver
/// hands over bytes as they come off the wire, so a piece rarely spans more than one message.
/// Timing clock (F8) and active sensing (FE) carry no musical content and are left out.
public struct MIDIByteStreamInput: Sendable {
    private var parser: MIDIByteStreamParser

    /// A source whose sysex messages are bounded by `maximumSysexLength` bytes.
    public init(maximumSysexLength: Int = 1 << 16) {
        parser = MIDIByteStreamParser(maximumSysexLength: maximumSysexLength)
    }

    /// Data bytes the parser dropped because no status was in effect.
    public var droppedByteCount: Int { parser.droppedByteCount }

    /// Feeds a piece of the stream that arrived at `hostNanos`; returns the messages it completed.
    public mutating func receive<Bytes: Sequence>(_ bytes: Bytes, atHostTime hostNanos: Int64) -> [MIDIInputEvent]
    where Bytes.Element == UInt8 {
        var events: [MIDIInputEvent] = []
        parser.feed(bytes) { event in
            switch event {
            case .message(let m):
                if m.status == 0xF8 || m.status == 0xFE { return }
                events.append(MIDIInputEvent(hostNanos: hostNanos, bytes: m.bytes))
            case .systemExclusive(let data, let complete):
                // A sysex cut short is kept, closed, so the track still holds what was sent.
                events.append(MIDIInputEvent(hostNanos: hostNanos, bytes: complete ? data : data + [0xF7]))
            }
        }
        return events
    }
}
