import AudioGraph
import MIDI

/// An instrument that records every MIDI message and its frame into memory reserved up front
/// (raw storage: no array growth or copy-on-write checks on the audio thread, in any build).
/// Read ``records`` only once rendering has stopped.
final class SoakProbeNode: AudioNode {
    struct Record {
        var frame: Int64
        var message: MIDIMessage
    }

    let name: String
    let inputBusCount = 0
    let parameterInfos: [AudioParameterInfo] = []
    private let storage: UnsafeMutablePointer<Record>
    private let capacity: Int
    private var count = 0
    /// Messages that did not fit.
    private(set) var overflow = 0

    init(name: String, capacity: Int) {
        self.name = name
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// Everything received, in arrival order.
    var records: UnsafeBufferPointer<Record> { UnsafeBufferPointer(start: storage, count: count) }

    func prepare(sampleRate: Double, maximumFrameCount: Int) { reset() }
    func reset() { count = 0; overflow = 0 }
    func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }

    func receive(_ message: MIDIMessage, atFrame frame: Int64) {
        if count < capacity {
            storage[count] = Record(frame: frame, message: message)
            count += 1
        } else {
            overflow += 1
        }
    }

    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.clear(frameCount: frameCount)
    }
}
