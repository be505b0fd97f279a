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
    /// Any instrument node (no input bus): a hosted LV2 instrument, an instrument you wrote.
    /// It plays every track; what belongs to the sampler or the synthesizer (banks, their
    /// reverb and chorus levels) does not apply to it.
    case node(any AudioNode)
}

/// The graph Apple's MusicSequence builds when a MIDI file is loaded: one General MIDI
/// instrument, then a limiter, then the output. Every track without a destination plays the
/// instrument. Effects given to ``init(instrument:effects:)`` sit between the instrument and
/// the limiter, in order, so the limiter still guards the output.
public struct DefaultGraph {
    /// Node identifier of the instrument.
    public static let instrumentID: UInt32 = 1
    /// Node identifier of the limiter.
    public static let limiterID: UInt32 = 2
    /// Node identifier of the output.
    public static let outputID: UInt32 = 3
    /// Node identifier of the first effect; the next ones follow (4, 5, ...).
    public static let firstEffectID: UInt32 = 4

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

    /// Builds the default graph around `instrument` (the built-in synthesizer unless told),
    /// with `effects` (nodes with one input bus: hosted LV2 effects, a reverb) chained after
    /// it, before the limiter.
    public init(instrument choice: DefaultInstrument = .builtIn, effects: [any AudioNode] = []) {
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
        case .node(let node):
            synthesizer = nil
            sampler = nil
            instrument = node
        }
        limiter = LimiterNode()
        graph.add(instrument, id: Self.instrumentID)
        graph.add(limiter, id: Self.limiterID)
        graph.add(OutputNode(), id: Self.outputID)
        var previous = Self.instrumentID
        for (offset, effect) in effects.enumerated() {
            let id = Self.firstEffectID + UInt32(offset)
            graph.add(effect, id: id)
            // Both nodes exist, so the connection cannot fail.
            try! graph.connect(previous, to: id)
            previous = id
        }
        // The nodes exist, so these connections cannot fail.
        try! graph.connect(previous, to: Self.limiterID)
        try! graph.connect(Self.limiterID, to: Self.outputID)
    }

    /// The number of voices the instrument is sounding.
    public var activeVoiceCount: Int {
        synthesizer?.activeVoiceCount ?? sampler?.activeVoiceCount ?? 0
    }
}
