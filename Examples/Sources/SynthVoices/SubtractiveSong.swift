import Tactus

/// The subtractive-synth example's song and graph, shared by the program and its tests: four
/// bars of a bass note on every beat under a held chord, with the filter's cutoff swept from
/// 150 Hz to 8 kHz by an automation lane.
public struct SubtractiveSong {
    /// Ticks per quarter note.
    public static let quarter: Int64 = 960
    /// The graph: the synthesizer into the output.
    public let graph: AudioGraph
    /// The synthesizer's node identifier.
    public let synth: UInt32
    /// The song, its one track routed to the synthesizer.
    public let sequence: MusicSequence

    /// Builds a new graph (with a new synthesizer) and the song.
    public init() throws {
        let quarter = Self.quarter
        graph = AudioGraph()
        synth = graph.add(SubtractiveSynth.make())
        let output = graph.add(OutputNode())
        try graph.connect(synth, to: output)

        var track = MusicTrack()
        track.destination = .node(synth)
        for bar in 0..<4 {
            let start = Int64(bar) * 4 * quarter
            for (beat, key) in [36, 43, 48, 43].enumerated() {
                track.addNote(at: start + Int64(beat) * quarter, channel: 0, key: UInt8(key), velocity: 110, duration: quarter - 60)
            }
            for key in [60, 63, 67] {
                track.addNote(at: start, channel: 0, key: UInt8(key), velocity: 80, duration: 4 * quarter - 30)
            }
        }
        // Evenly in pitch: an exponential ramp over the four bars.
        let cutoff = try graph.parameterAddress(node: synth, named: "Cutoff")
        track.addAutomation(cutoff, points: [
            AutomationPoint(tick: 0, value: 150, curveToNext: .exponential),
            AutomationPoint(tick: 16 * quarter, value: 8_000),
        ])
        sequence = MusicSequence(tracks: [track])
    }

    /// A session that plays the song through the graph, with a one-second tail.
    public func session(sampleRate: Int = 44_100) throws -> PlaybackSession {
        try PlaybackSession(sequence: sequence, graph: graph, defaultNode: synth,
                            options: PlaybackSession.Options(tailSeconds: 1, sampleRate: sampleRate))
    }
}
