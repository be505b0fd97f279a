import MIDI
import Playback
import Recording
import Locking

/// A ``SequencerClient``'s input port as a `RecordingInput` (Recording): whatever other programs send to
/// the port, or sources connected to it (``SequencerClient/connectInput(from:)``), is
/// recorded with the kernel's stamps.
public final class SequencerRecordingInput: RecordingInput, @unchecked Sendable {
    /// The client whose input port is read.
    public let client: SequencerClient
    /// How the kernel stamps arrivals.
    public let stamps: SequencerInputStamps
    private let running = Locked<SequencerInput?>(nil)

    /// Records what arrives at `client`'s input port, stamped as `stamps` says.
    public init(client: SequencerClient, stamps: SequencerInputStamps = .queueTicks) {
        self.client = client
        self.stamps = stamps
    }

    public var inputDescription: String { "sequencer port \(client.inputAddress)" }

    public func startDelivering(to deliver: @escaping @Sendable (MIDIInputEvent) -> Void) throws(RecordingInputError) {
        do {
            let input = try client.startInput(stamps: stamps) { host, bytes in deliver(MIDIInputEvent(hostNanos: host, bytes: bytes)) }
            running.withLock { $0 = input }
        } catch {
            throw RecordingInputError(input: inputDescription, reason: "\(error)")
        }
    }

    public func stopDelivering() {
        running.withLock { input in
            input?.stop()
            input = nil
        }
    }

    public var inputFailure: String? { nil }
}

extension RawMIDIInput: RecordingInput {
    public var inputDescription: String { "raw MIDI device \(device)" }

    public func startDelivering(to deliver: @escaping @Sendable (MIDIInputEvent) -> Void) throws(RecordingInputError) {
        // The kernel stamps each read; the parser splits it into messages carrying that stamp.
        let parser = Locked(MIDIByteStreamInput())
        start { host, bytes in
            for event in parser.withLock({ $0.receive(bytes, atHostTime: host) }) { deliver(event) }
        }
    }

    public func stopDelivering() { stop() }

    public var inputFailure: String? { nil }

    /// A raw MIDI device or FIFO to record from: a card's `/dev/snd/midiC*D*` is read through
    /// ALSA with the kernel's monotonic stamps where it can be; anything else (a FIFO, a serial
    /// line, or no libasound) is read directly and stamped on reading.
    /// - Throws: `MIDIInputDeviceError` (Playback) with the system's reason (no such file, permission denied).
    public static func recordingInput(path: String) throws(MIDIInputDeviceError) -> any RecordingInput {
        if let stamped = RawMIDIInput(path: path) { return stamped }
        return try MIDIByteStreamReader(path: path)
    }
}
