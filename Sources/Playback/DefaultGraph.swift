import AudioGraph
import Instruments
import Sampler

/// The instrument a ``DefaultGraph`` plays every track through.
public enum DefaultInstrument {
    /// The built-in General MIDI synthesizer.
    case builtIn
    /// A SoundFont sampler, already configured (reverb, chorus, voice limit).
    case sampler(SamplerNode)
    /// The built-in General MIDI synthesizer, already configured (retuned to a Scala scale,
    /// for example).
    case synthesizer(GMSynthesizer)
}

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
    public let instrument: any AudioNode
    /// The instrument when it is the built-in synthesizer.
    public let synthesizer: GMSynthesizer?
    /// The instrument when it is a SoundFont sampler.
    public let sampler: SamplerNode?
    /// The limiter before the output (its input gain is the render gain).
    public let limiter: LimiterNode

    /// Builds the default graph around `instrument` (the built-in synthesizer unless told).
    public init(instrument choice: DefaultInstrument = .builtIn) {
        graph = AudioGraph()
        switch choice {
        case .builtIn:
            let synth = GMSynthesizer()
            synthesizer = synth
            sampler = nil
            instrument = synth
        case .synthesizer(let synth):
            synthesizer = synth
            sampler = nil
            instrument = synth
        case .sampler(let node):
            synthesizer = nil
            sampler = node
            instrument = node
        }
        limiter = LimiterNode()
        graph.add(instrument, id: Self.instrumentID)
        graph.add(limiter, id: Self.limiterID)
        graph.add(OutputNode(), id: Self.outputID)
        // The three nodes exist, so these connections cannot fail.
        try! graph.connect(Self.instrumentID, to: Self.limiterID)
        try! graph.connect(Self.limiterID, to: Self.outputID)
    }

    /// The number of voices the instrument is sounding.
    public var activeVoiceCount: Int {
        synthesizer?.activeVoiceCount ?? sampler?.activeVoiceCount ?? 0
    }
}
