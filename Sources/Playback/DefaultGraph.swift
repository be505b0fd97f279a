import AudioEffects
import AudioGraph
import Instruments
import Sampler
import Sequencing

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
/// instrument. Effects given to ``init(instrument:channelInstruments:effects:)`` sit between the instrument and
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
    /// Node identifier of channel `channel`'s own instrument (100 + the channel, 0-15).
    public static func channelInstrumentID(_ channel: UInt8) -> UInt32 { 100 + UInt32(channel & 0x0F) }

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
    /// The channels with an instrument of their own, and the identifiers of those nodes:
    /// what a ``Player`` routes their notes and channel messages by (``Player/channelNodes``).
    public let channelNodes: [UInt8: UInt32]

    /// Builds the default graph around `instrument` (the built-in synthesizer unless told),
    /// with `effects` (nodes with one input bus: hosted LV2 effects, a reverb) chained after
    /// it, before the limiter. `channelInstruments` (MIDI channel 0-15 to an instrument node:
    /// a hosted LV2 drum machine for channel 9) play those channels instead, into the same
    /// effects; a graph with nodes of different latencies lines them up (see `CompiledGraph`).
    public init(instrument choice: DefaultInstrument = .builtIn, channelInstruments: [UInt8: any AudioNode] = [:],
                effects: [any AudioNode] = []) {
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
        var routes: [UInt8: UInt32] = [:]
        for (channel, node) in channelInstruments.sorted(by: { $0.key < $1.key }) {
            let id = Self.channelInstrumentID(channel)
            graph.add(node, id: id)
            try! graph.connect(id, to: effects.isEmpty ? Self.limiterID : Self.firstEffectID)
            routes[channel & 0x0F] = id
        }
        channelNodes = routes
    }

    /// The number of voices the instrument is sounding.
    public var activeVoiceCount: Int {
        synthesizer?.activeVoiceCount ?? sampler?.activeVoiceCount ?? 0
    }
}

extension Player {
    /// A player through the default graph (the built-in GM synthesizer or a SoundFont sampler,
    /// limiter, output). `extraNodes` are added to the graph unconnected, for tracks that name
    /// them (``MIDIPortTap``s, say): the graph renders nodes that lead nowhere too.
    public static func makeDefault(sequence: MusicSequence, sampleRate: Int, maximumFrameCount: Int = 4096,
                                   gainDecibels: Float = 0, instrument: DefaultInstrument = .builtIn,
                                   extraNodes: [(id: UInt32, node: any AudioNode)] = []) throws(AudioGraphError) -> Player {
        let defaults = DefaultGraph(instrument: instrument)
        defaults.limiter.setParameter(LimiterNode.Parameter.inputGain, value: gainDecibels)
        for extra in extraNodes { defaults.graph.add(extra.node, id: extra.id) }
        let compiled = try defaults.graph.compile(sampleRate: Double(sampleRate), maximumFrameCount: maximumFrameCount)
        return Player(sequence: sequence, graph: compiled, defaultNode: DefaultGraph.instrumentID)
    }
}
