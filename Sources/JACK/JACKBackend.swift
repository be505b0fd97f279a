import Foundation
import Playback
import Synchronization

/// Plays a ``PlaybackSession`` as a JACK client: stereo output ports (`out_left`,
/// `out_right`), connected to the system playback ports unless told otherwise, at the
/// server's sample rate and period, whatever the session asked for.
///
/// A callback backend: the server calls the client once per period on its real-time thread,
/// and the session's renderer renders straight into the ports' buffers. Xruns are counted as
/// underruns; a server that shuts down, or throws the client out, ends the session with an
/// ``AudioBackendError`` of kind `io` naming the reason. Under PipeWire, run the same program
/// with `pw-jack`.
public final class JACKBackend: AudioBackend, @unchecked Sendable {
    /// How the client appears and connects.
    public struct Options: Sendable {
        /// The client's name (JACK appends `-01` when it is taken).
        public var clientName: String
        /// The server, or nil for the default one (`$JACK_DEFAULT_SERVER`, else `default`).
        public var server: String?
        /// Where the outputs go when playback starts.
        public var connections: JACKConnections

        public init(clientName: String = "Tactus", server: String? = nil, connections: JACKConnections = .systemPlayback) {
            self.clientName = clientName
            self.server = server
            self.connections = connections
        }
    }

    public let options: Options
    public let isRealTime = true
    private var client: JACKClient?
    private var source: RendererSource?
    private let running = Atomic<Bool>(false)

    /// A backend for the server and connections `options` name.
    public init(options: Options = Options()) {
        self.options = options
    }

    public var name: String { "JACK server '\(options.server ?? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] ?? "default")'" }

    /// The client once open: its ports, rate and transport.
    public var jackClient: JACKClient? { client }

    public func open(_ request: AudioStreamRequest) throws(AudioBackendError) -> AudioStreamFormat {
        do {
            let client = try JACKClient(name: options.clientName, server: options.server)
            self.client = client
            // The server's rate and period are what they are; the session builds its graph for them.
            return AudioStreamFormat(sampleRate: client.sampleRate, periodFrames: client.bufferFrames, latencyFrames: client.bufferFrames)
        } catch {
            throw AudioBackendError(.unavailable, backend: name, reason: error.description)
        }
    }

    public func start(_ renderer: PlaybackRenderer) throws(AudioBackendError) {
        guard let client else { throw AudioBackendError(.io, backend: name, reason: "cannot start: not open") }
        let source = RendererSource(renderer: renderer)
        self.source = source
        do {
            try client.start(source: source, connections: options.connections)
        } catch {
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

/// Hands each JACK period to the session's renderer.
private final class RendererSource: JACKProcessSource, @unchecked Sendable {
    let renderer: PlaybackRenderer
    let consumed = Atomic<Int64>(0)
    init(renderer: PlaybackRenderer) { self.renderer = renderer }
    func process(_ cycle: JACKCycle) {
        renderer.render(frameCount: cycle.frameCount, left: cycle.left, right: cycle.right)
        consumed.add(Int64(cycle.frameCount), ordering: .releasing)
    }
}
