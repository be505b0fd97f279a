import AudioGraph

/// An instrument that plays one value on both sides, whatever it is sent: the steady input
/// that shows what an effect or a gain stage does to each frame.
public final class ConstantNode: AudioNode {
    public let name = "Constant"
    public let inputBusCount = 0
    public let parameterInfos: [AudioParameterInfo] = []
    /// The value of every sample.
    public let value: Float

    /// A node that plays `value`.
    public init(_ value: Float) { self.value = value }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {}
    public func reset() {}
    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {}
    public func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? { nil }
    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.left.update(repeating: value, count: frameCount)
        output.right.update(repeating: value, count: frameCount)
    }
}
