#if canImport(Glibc)
import Glibc
#endif
import MIDI
import Playback
import Locking

/// A source of live MIDI for a ``RecordingSession``: a sequencer port, a raw MIDI device, a
/// JACK MIDI port, or messages a program sends itself (``InProcessMIDIInput``).
///
/// An input delivers every message with the monotonic host time (`CLOCK_MONOTONIC`,
/// nanoseconds) at which it arrived, in order, from a thread of its own or the sender's, never
/// the audio thread. The session stamps those times into the take through its clock, so an
/// input that knows the arrival time better than "now" (the kernel's stamp of a sequencer
/// event or of a raw MIDI read) gives a more exact take.
///
/// Opening the device or port belongs to the input's initializer, so that a missing device is
/// an error before any recording starts; the session only starts and stops delivery.
public protocol RecordingInput: AnyObject, Sendable {
    /// A few words naming the input in messages: a port address, a device path.
    var inputDescription: String { get }
    /// Starts delivering messages to `deliver`. Called once, by the session.
    func startDelivering(to deliver: @escaping @Sendable (MIDIInputEvent) -> Void) throws(RecordingInputError)
    /// Stops delivering; once it returns, `deliver` is no longer called. Idempotent.
    func stopDelivering()
    /// Why the input stopped by itself (a device read failed), if it did.
    var inputFailure: String? { get }
}

/// An input that could not start, with its name and the reason.
public struct RecordingInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The input, as ``RecordingInput/inputDescription`` names it.
    public var input: String
    /// What went wrong.
    public var reason: String

    /// Creates an error.
    public init(input: String, reason: String) {
        self.input = input
        self.reason = reason
    }

    public var description: String { "\(input): \(reason)" }
}

/// MIDI a program plays into a recording itself: an on-screen keyboard, a generator, a test.
///
/// The `send` methods deliver on the caller's thread, in the order of the calls; messages
/// sent before the session started delivery, or after it stopped, are refused (the call
/// returns false). Several threads may send; each message goes in whole.
public final class InProcessMIDIInput: RecordingInput, @unchecked Sendable {
    public let inputDescription: String
    private let receiver = Locked<(@Sendable (MIDIInputEvent) -> Void)?>(nil)

    /// An input named `name` in messages.
    public init(name: String = "in-process input") {
        inputDescription = name
    }

    public func startDelivering(to deliver: @escaping @Sendable (MIDIInputEvent) -> Void) throws(RecordingInputError) {
        receiver.withLock { $0 = deliver }
    }

    public func stopDelivering() {
        receiver.withLock { $0 = nil }
    }

    public var inputFailure: String? { nil }

    /// Sends the bytes of one message (a channel message, or a sysex from F0 to F7) as arrived
    /// at `hostNanos` (now by default; see ``RecordingSession/hostTime(atTakeSeconds:)`` to
    /// place a message at a chosen time). Returns false when the session is not recording.
    @discardableResult
    public func send(_ bytes: [UInt8], atHostTime hostNanos: Int64 = monotonicNanoseconds()) -> Bool {
        // Delivery happens under the lock, so stopDelivering() returning means no call is in flight.
        receiver.withLock { deliver in
            guard let deliver, !bytes.isEmpty else { return false }
            deliver(MIDIInputEvent(hostNanos: hostNanos, bytes: bytes))
            return true
        }
    }

    /// Sends a channel message as arrived at `hostNanos` (now by default).
    @discardableResult
    public func send(_ message: MIDIMessage, atHostTime hostNanos: Int64 = monotonicNanoseconds()) -> Bool {
        send(message.bytes, atHostTime: hostNanos)
    }
}

extension MIDIByteStreamReader: RecordingInput {
    public var inputDescription: String { path }

    public func startDelivering(to deliver: @escaping @Sendable (MIDIInputEvent) -> Void) throws(RecordingInputError) {
        start(deliver)
    }

    public func stopDelivering() { stop() }

    public var inputFailure: String? { error.map { "read failed (\($0))" } }
}
