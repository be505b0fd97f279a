import MIDI

/// A test instrument that records the absolute frame of every MIDI message it receives and
/// writes a unit impulse on the left channel at each note-on, so both the event path and the
/// audio path can be checked to the frame. Recording goes into storage reserved up front.
public final class EventRecordingNode: AudioNode {
    /// One received message and the frame it arrived at.
    public struct Record: Hashable, Sendable {
        /// Absolute frame.
        public var frame: Int64
        /// The message.
        public var message: MIDIMessage
    }

    public let name = "Event recorder"
    public let inputBusCount = 0
    public let parameterInfos: [AudioParameterInfo] = [
        AudioParameterInfo(id: 0, name: "Probe", range: -1_000_000...1_000_000, unit: .generic, defaultValue: 0),
    ]
    /// Everything received, in arrival order.
    public private(set) var records: [Record] = []
    /// Parameter changes received: (absolute frame, value).
    public private(set) var parameterChanges: [(frame: Int64, value: Float)] = []
    private var pendingImpulse = false
    private var probe: Float = 0
    private var frame: Int64 = 0
    private let capacity: Int

    /// Creates a recorder with room for `capacity` records (recording stops when full).
    public init(capacity: Int = 1 << 16) {
        self.capacity = capacity
        records.reserveCapacity(capacity)
        parameterChanges.reserveCapacity(capacity)
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) { reset() }
    public func reset() {
        records.removeAll(keepingCapacity: true)
        parameterChanges.removeAll(keepingCapacity: true)
        pendingImpulse = false
    }

    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {
        guard id == 0 else { return }
        probe = value
        if parameterChanges.count < capacity { parameterChanges.append((frame, value)) }
    }

    public func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? {
        id == 0 ? probe : nil
    }

    public func receive(_ message: MIDIMessage, atFrame frame: Int64) {
        self.frame = frame
        if records.count < capacity { records.append(Record(frame: frame, message: message)) }
        if message.isNoteOn { pendingImpulse = true }
    }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.clear(frameCount: frameCount)
        if pendingImpulse && frameCount > 0 {
            output.left[0] = 1
            pendingImpulse = false
        }
        frame = startFrame + Int64(frameCount)
    }
}
