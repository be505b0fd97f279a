import CJACK
import Foundation
import Playback
import Sequencing
import Synchronization

/// Plays a `PlaybackSession` as a JACK client: stereo output ports (`out_left`,
/// `out_right`), connected to the system playback ports unless told otherwise, at the
/// server's sample rate and period, whatever the session asked for.
///
/// A callback backend: the server calls the client once per period on its real-time thread,
/// and the session's renderer renders straight into the ports' buffers. Xruns are counted as
/// underruns; a server that shuts down, or throws the client out, ends the session with an
/// `AudioBackendError` of kind `io` naming the reason. Under PipeWire, run the same program
/// with `pw-jack`.
///
/// Tracks a song routes to MIDI ports (`TrackDestination.midiPort(_:)`, named as
/// JACK MIDI input ports like `fluidsynth:midi_00`) leave from MIDI outputs of the client
/// (`midi_out`, or `midi_out_1`, `midi_out_2`... for several), connected to those ports, each
/// message at its frame inside the period whose audio it belongs with.
public final class JACKBackend: MIDIPortBackend, @unchecked Sendable {
    /// How the client appears and connects.
    public struct Options: Sendable {
        /// The client's name (JACK appends `-01` when it is taken).
        public var clientName: String
        /// The server, or nil for the default one (`$JACK_DEFAULT_SERVER`, else `default`).
        public var server: String?
        /// Where the outputs go when playback starts.
        public var connections: JACKConnections
        /// Whether the client has a MIDI input (`midi_in`), read through ``JACKBackend/midiInput``.
        public var midiInput: Bool
        /// JACK MIDI output ports connected to the MIDI input when playback starts.
        public var midiInputSources: [String]

        /// Options for a client called `clientName` on `server`, its outputs going to
        /// `connections`, with a MIDI input when `midiInput` or some `midiInputSources` ask for one.
        public init(clientName: String = "Tactus", server: String? = nil, connections: JACKConnections = .systemPlayback,
                    midiInput: Bool = false, midiInputSources: [String] = []) {
            self.clientName = clientName
            self.server = server
            self.connections = connections
            self.midiInput = midiInput || !midiInputSources.isEmpty
            self.midiInputSources = midiInputSources
        }
    }

    /// How the client appears and connects.
    public let options: Options
    public let isRealTime = true
    private var client: JACKClient?
    private var source: RendererSource?
    private let running = Atomic<Bool>(false)
    private var taps: [MIDIPortTap] = []
    private var clock: (sequence: MusicSequence, ports: [String])?

    /// The MIDI input, when ``Options/midiInput`` asked for one: start it to receive what
    /// arrives on `midi_in`, with host times a recorder understands.
    public let midiInput: JACKMIDIInput?

    /// A backend for the server and connections `options` name.
    public init(options: Options = Options()) {
        self.options = options
        midiInput = options.midiInput ? JACKMIDIInput() : nil
    }

    public var name: String {
        if let server = options.server { return "JACK server '\(JACKError.shortened(server))'" }
        if let server = ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] {
            return "JACK server '\(JACKError.shortened(server))' ($JACK_DEFAULT_SERVER)"
        }
        return "JACK server 'default'"
    }

    /// The client once open: its ports, rate and transport.
    public var jackClient: JACKClient? { client }

    public func open(_ request: AudioStreamRequest) throws(AudioBackendError) -> AudioStreamFormat {
        do {
            let client = try JACKClient(name: options.clientName, server: options.server, midiInput: options.midiInput)
            self.client = client
            // The server's rate and period are what they are; the session builds its graph for them.
            return AudioStreamFormat(sampleRate: client.sampleRate, periodFrames: client.bufferFrames, latencyFrames: client.bufferFrames)
        } catch {
            throw AudioBackendError(.unavailable, backend: name, reason: error.description)
        }
    }

    public func attachMIDIPorts(_ taps: [MIDIPortTap]) throws(AudioBackendError) {
        guard let client else { throw AudioBackendError(.io, backend: name, reason: "cannot add MIDI outputs: not open") }
        guard taps.count <= JACKClient.maximumAddedMIDIOutputPorts else {
            throw AudioBackendError(.cannotOpen, backend: name, reason: "the song sends tracks to \(taps.count) MIDI ports; JACK output takes at most \(JACKClient.maximumAddedMIDIOutputPorts)")
        }
        let known = client.ports(midi: true, flags: Int32(JackPortIsInput))
        for tap in taps where !known.contains(tap.portName) {
            throw AudioBackendError(.unavailable, backend: name, reason: JACKError.unknownPort(tap.portName, available: known).description)
        }
        do {
            for index in taps.indices { try client.addMIDIOutputPort(named: taps.count == 1 ? "midi_out" : "midi_out_\(index + 1)") }
        } catch {
            throw AudioBackendError(.cannotOpen, backend: name, reason: error.description)
        }
        self.taps = taps
    }

    /// Sends MIDI clock for `sequence` (24 per quarter note on its tempo map, following the
    /// play rate; Start, Stop, Song Position Pointer and Continue with the transport) from a
    /// MIDI output `midi_clock`, connected to `ports` (JACK MIDI inputs) when playback starts.
    /// Call before the session starts; the session must play the same sequence.
    public func sendMIDIClock(for sequence: MusicSequence, to ports: [String]) {
        clock = (sequence, ports)
    }

    /// The full name of the MIDI clock output, once started with ``sendMIDIClock(for:to:)``.
    public private(set) var midiClockPortName: String?

    public func start(_ renderer: PlaybackRenderer) throws(AudioBackendError) {
        guard let client else { throw AudioBackendError(.io, backend: name, reason: "cannot start: not open") }
        let known = client.ports(midi: true, flags: Int32(JackPortIsInput))
        var clockOutput: (port: Int, tap: MIDIPortTap, generator: MIDIClockGenerator)?
        if let clock {
            for port in clock.ports where !known.contains(port) {
                throw AudioBackendError(.unavailable, backend: name, reason: JACKError.unknownPort(port, available: known).description)
            }
            do {
                let index = try client.addMIDIOutputPort(named: "midi_clock")
                midiClockPortName = client.addedMIDIOutputPortNames[index]
                clockOutput = (index, MIDIPortTap(portName: "midi_clock"), MIDIClockGenerator(sequence: clock.sequence, sampleRate: client.sampleRate))
            } catch {
                throw AudioBackendError(.cannotOpen, backend: name, reason: error.description)
            }
        }
        let sources = client.ports(midi: true, flags: Int32(JackPortIsOutput))
        for name in options.midiInputSources where !sources.contains(name) {
            throw AudioBackendError(.unavailable, backend: self.name, reason: JACKError.unknownPort(name, available: sources).description)
        }
        let source = RendererSource(renderer: renderer, taps: taps, input: midiInput, sampleRate: client.sampleRate, clock: clockOutput)
        self.source = source
        // MIDI is connected before the first period renders, so the song's first messages
        // (and the first clock) reach their ports.
        var pairs: [(from: String, to: String)] = []
        for (index, tap) in taps.enumerated() { pairs.append((client.addedMIDIOutputPortNames[index], tap.portName)) }
        if let port = client.midiInputPortName {
            for name in options.midiInputSources { pairs.append((name, port)) }
        }
        if let clock, let clockPort = midiClockPortName {
            for port in clock.ports { pairs.append((clockPort, port)) }
        }
        do {
            try client.start(source: source, connections: options.connections, alsoConnecting: pairs)
        } catch {
            client.stop()
            throw AudioBackendError(.cannotOpen, backend: name, reason: error.description)
        }
        running.store(true, ordering: .releasing)
    }

    public func stop(drain: Bool) throws(AudioBackendError) {
        guard let client, running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        if drain && client.shutdownReason == nil {
            // What was rendered last is in the ports for one more period: let it go out.
            let periods = client.periodCount
            let deadline = Date().addingTimeInterval(Double(client.bufferFrames * 4) / Double(client.sampleRate) + 0.1)
            while client.periodCount < periods + 2 && Date() < deadline { usleep(1_000) }
        }
        client.stop()
    }

    public var framesConsumed: Int64 { source?.consumed.load(ordering: .acquiring) ?? 0 }
    public var underrunCount: Int { client?.xrunCount ?? 0 }
    public var isRunning: Bool { running.load(ordering: .acquiring) && client?.shutdownReason == nil }
    public var failure: AudioBackendError? {
        client?.shutdownReason.map { AudioBackendError(.io, backend: name, reason: "the JACK server stopped the client: \($0)") }
    }
}

/// Hands each JACK period to the session's renderer, then sends what its MIDI port taps
/// collected for the period's frames.
private final class RendererSource: JACKProcessSource, @unchecked Sendable {
    let renderer: PlaybackRenderer
    let taps: [MIDIPortTap]
    let input: JACKMIDIInput?
    let sampleRate: Int
    let clock: (port: Int, tap: MIDIPortTap, generator: MIDIClockGenerator)?
    let consumed = Atomic<Int64>(0)

    init(renderer: PlaybackRenderer, taps: [MIDIPortTap], input: JACKMIDIInput?, sampleRate: Int,
         clock: (port: Int, tap: MIDIPortTap, generator: MIDIClockGenerator)?) {
        self.renderer = renderer
        self.taps = taps
        self.input = input
        self.sampleRate = sampleRate
        self.clock = clock
    }

    /// Writes what `tap` holds for output frames before `end` to the added MIDI output `port`.
    private func send(_ tap: MIDIPortTap, port: Int, cycle: JACKCycle, firstFrame: Int64, end: Int64) {
        tap.drain(before: end) { timed in
            let offset = Int(max(0, timed.frame - firstFrame))
            var bytes = (timed.message.status, timed.message.data1, timed.message.data2)
            let length = 1 + timed.message.dataByteCount
            _ = withUnsafeBytes(of: &bytes) { raw in
                cycle.writeMIDI(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: length), atFrame: offset, port: port)
            }
        }
    }

    func process(_ cycle: JACKCycle) {
        input?.receive(cycle, sampleRate: sampleRate)
        let firstFrame = renderer.renderedFrames
        renderer.render(frameCount: cycle.frameCount, left: cycle.left, right: cycle.right)
        // Sound played at graph frame g is output at frame g (the pre-roll absorbed the
        // graph's latency), so a message goes out at its own frame; the graph has rendered up
        // to its latency further, and those messages wait for the next period.
        let end = firstFrame + Int64(cycle.frameCount)
        for (port, tap) in taps.enumerated() { send(tap, port: port, cycle: cycle, firstFrame: firstFrame, end: end) }
        if let clock {
            // The session renders a JACK period in one engine block, so its anchor covers it.
            if let anchor = renderer.lastBlockAnchor() { clock.generator.advance(anchor: anchor, frameCount: cycle.frameCount, into: clock.tap) }
            send(clock.tap, port: clock.port, cycle: cycle, firstFrame: firstFrame, end: end)
        }
        consumed.add(Int64(cycle.frameCount), ordering: .releasing)
    }
}
