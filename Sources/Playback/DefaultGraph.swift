import AudioGraph
import Instruments

/// The graph Apple's MusicSequence builds when a MIDI file is loaded: one General MIDI
/// instrument, then a limiter, then the output. Every track without a destination plays the
/// instrument.
public struct DefaultGraph {
    /// Node identifier of the instrument.
    public static let instrumentID: UInt32 = 1
    /// Node identifier of the limiter.
    public static let limiterID: UInt32 = 2
    /// Node identifier of the output.
    public static let outputID: UInt32 = 3

    /// The graph under construction; add nodes to it before compiling if tracks name them.
    public let graph: AudioGraph
    /// The instrument.
    public let instrument: GMSynthesizer
    /// The limiter before the output (its input gain is the render gain).
    public let limiter: LimiterNode

    /// Builds the default graph.
    public init() {
        graph = AudioGraph()
        instrument = GMSynthesizer()
        limiter = LimiterNode()
        graph.add(instrument, id: Self.instrumentID)
        graph.add(limiter, id: Self.limiterID)
        graph.add(OutputNode(), id: Self.outputID)
        // The three nodes exist, so these connections cannot fail.
        try! graph.connect(Self.instrumentID, to: Self.limiterID)
        try! graph.connect(Self.limiterID, to: Self.outputID)
    }
}
