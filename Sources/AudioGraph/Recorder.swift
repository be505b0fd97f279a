import MIDI

/// A test instrument that records the absolute frame of every MIDI message it receives and
/// writes a unit impulse on the left channel at each note-on, so both the event path and the
/// audio path can be checked to the frame. Its one parameter, the probe (id 0), records every
/// plain change and every ramp it receives, follows ramps like the other built-in nodes, and
/// is written to the right channel at every frame, so automation can be checked to the frame
/// and the value. Recording goes into storage reserved up front.
public final class EventRecordingNode: ParameterizedNode {
    /// One received message and the frame it arrived at.
    public struct Record: Hashable, Sendable {
        /// Absolute frame.
        public var frame: Int64
        /// The message.
        public var message: MIDIMessage
    }

    public let name = "Event recorder"
    public let inputBusCount = 0
    public let parameters = NodeParameters([
        AudioParameterInfo(id: 0, name: "Probe", range: -1_000_000...1_000_000, unit: .generic, defaultValue: 0),
    ])
    /// Everything received, in arrival order.
    public private(set) var records: [Record] = []
    /// Plain parameter changes received: (absolute frame, value).
    public private(set) var parameterChanges: [(frame: Int64, value: Float)] = []
    /// Parameter ramps received: (absolute frame, ramp as delivered).
    public private(set) var parameterRamps: [(frame: Int64, ramp: ParameterRamp)] = []
    private var pendingImpulse = false
    private var frame: Int64 = 0
    private let capacity: Int

    /// Creates a recorder with room for `capacity` records (recording stops when full).
    public init(capacity: Int = 1 << 16) {
        self.capacity = capacity
        records.reserveCapacity(capacity)
        parameterChanges.reserveCapacity(capacity)
        parameterRamps.reserveCapacity(capacity)
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        parameters.prepare(sampleRate: sampleRate)
        reset()
    }

    public func reset() {
        records.removeAll(keepingCapacity: true)
        parameterChanges.removeAll(keepingCapacity: true)
        parameterRamps.removeAll(keepingCapacity: true)
        parameters.settle()
        pendingImpulse = false
    }

    /// Sets the probe and records the change with its frame.
    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {
        guard scope == .global, parameters.set(id, value) else { return }
        if parameterChanges.count < capacity { parameterChanges.append((frame, value)) }
    }

    /// Starts a ramp of the probe and records it with its frame.
    public func rampParameter(_ id: UInt32, ramp: ParameterRamp, scope: AudioParameterScope, element: UInt32) {
        guard scope == .global, parameters.ramp(id, ramp) else { return }
        if parameterRamps.count < capacity { parameterRamps.append((frame, ramp)) }
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
        parameters.renderStretches(frameCount: frameCount, changed: {}) { offset, count in
            (output.right + offset).update(repeating: parameters[0], count: count)
        }
        frame = startFrame + Int64(frameCount)
    }
}
