import Playback
import Recording

extension JACKMIDIInput: RecordingInput {
    public var inputDescription: String { "JACK MIDI input" }

    public func startDelivering(to deliver: @escaping @Sendable (MIDIInputEvent) -> Void) throws(RecordingInputError) {
        start { host, bytes in deliver(MIDIInputEvent(hostNanos: host, bytes: bytes)) }
    }

    public func stopDelivering() { stop() }

    public var inputFailure: String? { nil }
}
