import CJACK
import Foundation
import Synchronization

/// A JACK client with a stereo audio output and optional MIDI input and output ports.
///
/// The server calls the client once per period on its real-time thread; the client hands the
/// period's port buffers to its ``JACKProcessSource``, which renders straight into them. The
/// server's sample rate and period size are taken as they are. Server shutdown and xruns are
/// counted from JACK's callbacks and read with ``shutdownReason`` and ``xrunCount``.
public final class JACKClient: @unchecked Sendable {
    /// The name the server gave the client (JACK appends `-01` and so on when taken).
    public let name: String
    /// The server's sample rate.
    public let sampleRate: Int
    /// The server's period, in frames, when the client opened.
    public let bufferFrames: Int
    /// The full names of the left and right output ports.
    public let outputPortNames: [String]
    /// The full names of the left and right audio input ports, if there are any.
    public let inputPortNames: [String]
    /// The full name of the MIDI input port, if there is one.
    public let midiInputPortName: String?
    /// The full name of the MIDI output port, if there is one.
    public let midiOutputPortName: String?

    private let handle: OpaquePointer
    private let left: OpaquePointer
    private let right: OpaquePointer
    private let inputs: (left: OpaquePointer, right: OpaquePointer)?
    private let midiIn: OpaquePointer?
    private let midiOut: OpaquePointer?
    private let xruns = Atomic<Int>(0)
    private let shutDown = Atomic<Bool>(false)
    private let active = Atomic<Bool>(false)
    // The source is called only once the outputs are connected, so nothing it renders is lost.
    private let live = Atomic<Bool>(false)
    private let periods = Atomic<Int64>(0)
    // Written by the shutdown callback without allocating, read after `shutDown` is seen.
    private let shutdownText = ReasonBuffer()
    // MIDI outputs added before activation (one per MIDI port a song names), and a table of
    // their buffers the process callback fills without allocating.
    private var portMIDIOuts: [OpaquePointer] = []
    private let portMIDIBuffers = PortBufferTable()
    /// The full names of the MIDI outputs added with ``addMIDIOutputPort(named:)``, in order.
    public private(set) var addedMIDIOutputPortNames: [String] = []
    /// How many MIDI outputs ``addMIDIOutputPort(named:)`` can add.
    public static let maximumAddedMIDIOutputPorts = PortBufferTable.capacity
    private var source: JACKProcessSource?
    private var timebase: JACKTimebaseProvider?
    private var context: Unmanaged<JACKClient>?

    /// Opens a client on the server `server` (nil: the default, or `$JACK_DEFAULT_SERVER`),
    /// never starting one, and registers `out_left`/`out_right` (and `midi_in`/`midi_out`).
    /// With `audioInput`, also `in_left`/`in_right`, whose signal each cycle carries.
    public init(name: String = "Tactus", server: String? = nil, audioInput: Bool = false, midiInput: Bool = false,
                midiOutput: Bool = false) throws(JACKError) {
        // libjack reads $JACK_DEFAULT_SERVER itself when no server is named: both are checked.
        if let named = server ?? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"],
           let problem = JACKError.serverNameProblem(named) {
            throw .invalidServerName(named, reason: problem)
        }
        try JACKLibrary.load()
        var status: Int32 = 0
        guard let client = tactus_jack_client_open(name, server, &status) else {
            throw .serverUnavailable(server: server, status: status)
        }
        handle = client
        func register(_ port: String, _ type: String, _ flags: UInt) throws(JACKError) -> OpaquePointer {
            guard let registered = jack_port_register(client, port, type, flags, 0) else {
                jack_client_close(client)
                throw .portRegistration(name: port)
            }
            return registered
        }
        left = try register("out_left", TACTUS_JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput))
        right = try register("out_right", TACTUS_JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput))
        inputs = audioInput ? (try register("in_left", TACTUS_JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsInput)),
                                try register("in_right", TACTUS_JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsInput))) : nil
        midiIn = midiInput ? try register("midi_in", TACTUS_JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsInput)) : nil
        midiOut = midiOutput ? try register("midi_out", TACTUS_JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsOutput)) : nil
        self.name = jack_get_client_name(client).map { String(cString: $0) } ?? name
        sampleRate = Int(jack_get_sample_rate(client))
        bufferFrames = Int(jack_get_buffer_size(client))
        outputPortNames = [String(cString: jack_port_name(left)), String(cString: jack_port_name(right))]
        inputPortNames = inputs.map { [String(cString: jack_port_name($0.left)), String(cString: jack_port_name($0.right))] } ?? []
        midiInputPortName = midiIn.map { String(cString: jack_port_name($0)) }
        midiOutputPortName = midiOut.map { String(cString: jack_port_name($0)) }
    }

    deinit {
        stop()
        jack_client_close(handle)
    }

    /// Registers one more MIDI output port, `name` (like `midi_out_2`), before ``start(source:connections:alsoConnecting:)``;
    /// returns its index for ``JACKCycle/writeMIDI(_:atFrame:port:)``.
    @discardableResult
    public func addMIDIOutputPort(named name: String) throws(JACKError) -> Int {
        guard !active.load(ordering: .relaxed), portMIDIOuts.count < Self.maximumAddedMIDIOutputPorts,
              let port = jack_port_register(handle, name, TACTUS_JACK_DEFAULT_MIDI_TYPE, UInt(JackPortIsOutput), 0) else {
            throw .portRegistration(name: name)
        }
        portMIDIOuts.append(port)
        addedMIDIOutputPortNames.append(String(cString: jack_port_name(port)))
        return portMIDIOuts.count - 1
    }

    /// Xruns the server reported since the client opened.
    public var xrunCount: Int { xruns.load(ordering: .relaxed) }

    /// Periods processed so far.
    public var periodCount: Int64 { periods.load(ordering: .acquiring) }

    /// Why the server stopped the client, once it has (server shutdown, or the client was
    /// too slow and the server zombified it); nil while all is well.
    public var shutdownReason: String? {
        guard shutDown.load(ordering: .acquiring) else { return nil }
        let text = String(cString: shutdownText.bytes)
        return text.isEmpty ? "the server shut down" : text
    }

    /// Activates the client and connects the outputs as `connections` says, and the port pairs
    /// of `alsoConnecting` (MIDI, say); from then on `source` is called once per period (the
    /// periods before the connections are silent, so nothing the source writes is lost).
    public func start(source: JACKProcessSource, connections: JACKConnections = .systemPlayback,
                      alsoConnecting pairs: [(from: String, to: String)] = []) throws(JACKError) {
        guard !active.load(ordering: .relaxed) else { return }
        self.source = source
        let context = Unmanaged.passUnretained(self)
        self.context = context
        let arg = context.toOpaque()
        jack_set_process_callback(handle, { frames, arg in
            Unmanaged<JACKClient>.fromOpaque(arg!).takeUnretainedValue().process(frames)
            return 0
        }, arg)
        jack_set_xrun_callback(handle, { arg in
            Unmanaged<JACKClient>.fromOpaque(arg!).takeUnretainedValue().xruns.add(1, ordering: .relaxed)
            return 0
        }, arg)
        jack_on_info_shutdown(handle, { _, reason, arg in
            let client = Unmanaged<JACKClient>.fromOpaque(arg!).takeUnretainedValue()
            if let reason { strncpy(client.shutdownText.bytes, reason, ReasonBuffer.capacity - 1) }
            client.shutDown.store(true, ordering: .releasing)
        }, arg)
        guard jack_activate(handle) == 0 else { throw .activation }
        active.store(true, ordering: .relaxed)
        do {
            try connect(connections)
            for pair in pairs { try connect(pair.from, to: pair.to) }
        } catch {
            stop()
            throw error
        }
        live.store(true, ordering: .releasing)
    }

    /// Deactivates the client (the source is no longer called once this returns).
    public func stop() {
        guard active.exchange(false, ordering: .relaxed) else { return }
        live.store(false, ordering: .releasing)
        if !shutDown.load(ordering: .acquiring) { jack_deactivate(handle) }
        source = nil
    }

    /// Full names of the ports matching a regular expression, of a type, with flags.
    public func ports(matching pattern: String? = nil, midi: Bool = false, flags: Int32 = 0) -> [String] {
        guard let list = jack_get_ports(handle, pattern, midi ? TACTUS_JACK_DEFAULT_MIDI_TYPE : TACTUS_JACK_DEFAULT_AUDIO_TYPE, UInt(flags)) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        var names: [String] = []
        var index = 0
        while let name = list[index] {
            names.append(String(cString: name))
            index += 1
        }
        return names
    }

    /// Connects `source` to `destination` (full port names).
    public func connect(_ source: String, to destination: String) throws(JACKError) {
        if let reason = shutdownReason { throw .shutdown(reason: reason) }
        let rc = jack_connect(handle, source, destination)
        // EEXIST: already connected, which is what was asked for.
        if rc != 0 && rc != EEXIST { throw .connection(from: source, to: destination) }
    }

    private func connect(_ connections: JACKConnections) throws(JACKError) {
        let targets: [String]
        switch connections {
        case .none: return
        case .systemPlayback:
            targets = Array(ports(flags: Int32(JackPortIsInput | JackPortIsPhysical)).prefix(2))
            if targets.isEmpty { return }
        case .ports(let names):
            let known = ports(flags: Int32(JackPortIsInput))
            for name in names where !known.contains(name) { throw .unknownPort(name, available: known) }
            targets = names
        }
        for (index, port) in outputPortNames.enumerated() {
            try connect(port, to: targets[min(index, targets.count - 1)])
        }
    }

    // MARK: Transport

    /// The transport's state and position now (any thread).
    public func transport() -> JACKTransportState {
        // A client the server has shut down must not call into it again.
        guard !shutDown.load(ordering: .acquiring) else { return JACKTransportState(isRolling: false, frame: 0) }
        var position = jack_position_t()
        let state = jack_transport_query(handle, &position)
        let hasBBT = position.valid & Int32(JackPositionBBT.rawValue) != 0
        return JACKTransportState(isRolling: state == JackTransportRolling || state == JackTransportStarting,
                                  frame: position.frame,
                                  barBeatTick: hasBBT ? (position.bar, position.beat, position.tick) : nil,
                                  beatsPerMinute: hasBBT ? position.beats_per_minute : nil)
    }

    /// Starts the transport rolling (for every client on the server).
    public func startTransport() { if isUsable { jack_transport_start(handle) } }
    /// Stops the transport.
    public func stopTransport() { if isUsable { jack_transport_stop(handle) } }
    /// Moves the transport to `frame`.
    public func locateTransport(frame: UInt32) { if isUsable { _ = jack_transport_locate(handle, frame) } }

    private var isUsable: Bool { !shutDown.load(ordering: .acquiring) }

    /// Publishes bar, beat and tick for every period from `provider` as the server's timebase
    /// master. With `conditional`, fails when another client already is the master.
    public func becomeTimebaseMaster(_ provider: JACKTimebaseProvider, conditional: Bool = false) -> Bool {
        timebase = provider
        let arg = Unmanaged.passUnretained(self).toOpaque()
        return jack_set_timebase_callback(handle, conditional ? 1 : 0, { _, _, position, _, arg in
            guard let position, let arg else { return }
            let client = Unmanaged<JACKClient>.fromOpaque(arg).takeUnretainedValue()
            guard let provider = client.timebase else { return }
            let bbt = provider.barBeatTick(atFrame: position.pointee.frame, sampleRate: position.pointee.frame_rate)
            position.pointee.valid = Int32(JackPositionBBT.rawValue)
            position.pointee.bar = bbt.bar
            position.pointee.beat = bbt.beat
            position.pointee.tick = bbt.tick
            position.pointee.bar_start_tick = bbt.barStartTick
            position.pointee.beats_per_bar = bbt.beatsPerBar
            position.pointee.beat_type = bbt.beatType
            position.pointee.ticks_per_beat = bbt.ticksPerBeat
            position.pointee.beats_per_minute = bbt.beatsPerMinute
        }, arg) == 0
    }

    /// Gives up being the timebase master.
    public func releaseTimebase() {
        if isUsable { jack_release_timebase(handle) }
        timebase = nil
    }

    // MARK: The real-time thread

    private func process(_ frames: jack_nframes_t) {
        let count = Int(frames)
        let leftBuffer = jack_port_get_buffer(left, frames)!.assumingMemoryBound(to: Float.self)
        let rightBuffer = jack_port_get_buffer(right, frames)!.assumingMemoryBound(to: Float.self)
        let midiInBuffer = midiIn.flatMap { jack_port_get_buffer($0, frames) }
        let midiOutBuffer = midiOut.flatMap { jack_port_get_buffer($0, frames) }
        if let midiOutBuffer { jack_midi_clear_buffer(midiOutBuffer) }
        for index in portMIDIOuts.indices {
            let buffer = jack_port_get_buffer(portMIDIOuts[index], frames)
            if let buffer { jack_midi_clear_buffer(buffer) }
            portMIDIBuffers.pointers[index] = buffer
        }
        var firstFrame: jack_nframes_t = 0
        var usecs: jack_time_t = 0
        var next: jack_time_t = 0
        var period: Float = 0
        if jack_get_cycle_times(handle, &firstFrame, &usecs, &next, &period) != 0 {
            firstFrame = jack_last_frame_time(handle)
            usecs = jack_get_time()
        }
        if let source, live.load(ordering: .acquiring) {
            let inLeft = inputs.flatMap { jack_port_get_buffer($0.left, frames) }.map { UnsafePointer($0.assumingMemoryBound(to: Float.self)) }
            let inRight = inputs.flatMap { jack_port_get_buffer($0.right, frames) }.map { UnsafePointer($0.assumingMemoryBound(to: Float.self)) }
            source.process(JACKCycle(frameCount: count, left: leftBuffer, right: rightBuffer, inputLeft: inLeft, inputRight: inRight,
                                     firstFrameTime: firstFrame,
                                     hostNanoseconds: monotonicNanoseconds(ofJACKMicroseconds: usecs), midiIn: midiInBuffer, midiOut: midiOutBuffer,
                                     portMIDIOut: portMIDIBuffers.pointers, portMIDIOutCount: portMIDIOuts.count))
        } else {
            leftBuffer.update(repeating: 0, count: count)
            rightBuffer.update(repeating: 0, count: count)
        }
        periods.add(1, ordering: .releasing)
    }
}

/// JACK's time `usecs` on the monotonic clock the rest of Tactus uses (CLOCK_MONOTONIC).
/// jackd keeps time on CLOCK_MONOTONIC_RAW, which drifts from CLOCK_MONOTONIC by the clock's
/// NTP slewing (a quarter of a second after a few hours here): the two clocks are read back to
/// back and the difference applied. Real-time safe.
func monotonicNanoseconds(ofJACKMicroseconds usecs: jack_time_t) -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let jackNow = Int64(jack_get_time()) * 1000
    return Int64(usecs) * 1000 + (Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - jackNow)
}

/// A fixed buffer for the server's shutdown reason, owned by its own object so it is freed
/// however the client's initializer ends (a throwing initializer runs no deinit).
private final class ReasonBuffer {
    static let capacity = 256
    let bytes = UnsafeMutablePointer<CChar>.allocate(capacity: ReasonBuffer.capacity)
    init() { bytes.initialize(repeating: 0, count: Self.capacity) }
    deinit { bytes.deallocate() }
}

/// The process callback's table of added MIDI output buffers, allocated once with the client.
final class PortBufferTable {
    static let capacity = 16
    let pointers = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: PortBufferTable.capacity)
    init() { pointers.initialize(repeating: nil, count: Self.capacity) }
    deinit { pointers.deallocate() }
}
