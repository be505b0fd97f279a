import AudioGraph
import MIDI

/// A graph node that stands for a MIDI port: the engine plays the tracks routed to the port
/// into it like into an instrument (at their frames, following the tempo map, the play rate,
/// loops and locates, with note-offs on stop and the chase on locate), and it keeps the
/// messages, with their frames, for a backend that sends MIDI itself inside its periods
/// (JACK MIDI).
///
/// The engine and the backend call it from the same thread, the backend's period callback,
/// one after the other (the session's pre-roll, before the backend starts, aside), so it needs
/// no atomics. Its storage is allocated once: rendering never allocates.
public final class MIDIPortTap: AudioNode {
    /// A message and the engine frame it was played at.
    public struct TimedMessage: Sendable, Hashable {
        /// The graph frame the engine delivered the message at.
        public var frame: Int64
        /// The message.
        public var message: MIDIMessage
    }

    /// The port the tap stands for, as the sequence names it.
    public let portName: String
    /// Messages the tap can hold between two periods; more in one period are dropped and
    /// counted in ``droppedCount``.
    public let capacity: Int

    private let storage: UnsafeMutablePointer<TimedMessage>
    private var head = 0
    private var count = 0
    /// Messages dropped because the tap was full (a track denser than `capacity` per period).
    public private(set) var droppedCount = 0

    /// A tap for the port `portName` holding up to `capacity` messages.
    public init(portName: String, capacity: Int = 4096) {
        self.portName = portName
        self.capacity = max(1, capacity)
        storage = UnsafeMutablePointer<TimedMessage>.allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    public var name: String { "MIDI port \(portName)" }
    public var inputBusCount: Int { 0 }
    public var parameterInfos: [AudioParameterInfo] { [] }
    public func prepare(sampleRate: Double, maximumFrameCount: Int) { reset() }
    public func reset() { head = 0; count = 0 }
    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    public func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }

    public func receive(_ message: MIDIMessage, atFrame frame: Int64) {
        guard count < capacity else { droppedCount += 1; return }
        storage[(head + count) % capacity] = TimedMessage(frame: frame, message: message)
        count += 1
    }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.clear(frameCount: frameCount)
    }

    /// Messages held now.
    public var pendingCount: Int { count }

    /// Hands `body` each held message played before graph frame `frame`, oldest first, and
    /// forgets them; later ones stay for the next period. Real-time safe.
    public func drain(before frame: Int64, _ body: (TimedMessage) -> Void) {
        while count > 0 {
            let next = storage[head]
            guard next.frame < frame else { return }
            body(next)
            head = (head + 1) % capacity
            count -= 1
        }
    }
}

/// A backend that sends the tracks routed to MIDI ports itself, at their frames inside its
/// periods (JACK MIDI), instead of leaving them to an ALSA sequencer queue.
///
/// The session, when its backend adopts this, gives each port the song names a
/// ``MIDIPortTap`` in the graph and routes the port's tracks to it. After each period's render
/// the backend drains the taps of the messages for the period's output frames. The graph
/// renders ahead of what it outputs by its latency (a limiter's look-ahead, pre-rolled before
/// the start), and sound played at graph frame `g` comes out at output frame `g`: so a
/// message played at graph frame `g` goes out at output frame `g`, with the sound it belongs
/// to, and a tap holds messages for up to that latency, into the next period.
public protocol MIDIPortBackend: AudioBackend {
    /// Called once after ``AudioBackend/open(_:)`` and before ``AudioBackend/start(_:)``, with
    /// one tap per port, in the order the song names them. Throws when a port cannot be made
    /// or does not exist.
    func attachMIDIPorts(_ taps: [MIDIPortTap]) throws(AudioBackendError)
}
