import CJACK
import Foundation
import Synchronization

/// The JACK library (`libjack.so.0`), loaded when a JACK client is first opened.
///
/// Tactus does not link libjack, so it runs on machines without JACK; under PipeWire,
/// `pw-jack tactus ...` points the loader at PipeWire's libjack and the same code runs.
public enum JACKLibrary {
    /// The shared object Tactus loads.
    public static let soname = "libjack.so.0"
    /// The Debian package that provides it (PipeWire's is `pipewire-jack`, used through `pw-jack`).
    public static let debianPackage = "libjack-jackd2-0"

    /// Loads the library once per process.
    public static func load() throws(JACKError) {
        if tactus_jack_load() == 0 {
            throw .libraryUnavailable(reason: tactus_jack_load_error().map { String(cString: $0) } ?? "cannot be loaded")
        }
    }

    /// True when the library is installed and loads.
    public static var isAvailable: Bool { tactus_jack_load() != 0 }
}

/// Why JACK cannot be used, worded for the person at the terminal.
public enum JACKError: Error, Sendable, CustomStringConvertible, Equatable {
    /// libjack is not installed.
    case libraryUnavailable(reason: String)
    /// No server answered (JACK's status bits are kept for the curious).
    case serverUnavailable(server: String?, status: Int32)
    /// The server refused a port.
    case portRegistration(name: String)
    /// The server refused to activate the client.
    case activation
    /// A connection could not be made.
    case connection(from: String, to: String)
    /// A port name that matches no port; lists what there is.
    case unknownPort(String, available: [String])
    /// The server shut down or threw the client out while it ran.
    case shutdown(reason: String)
    /// A server name (`--jack-server`, `$JACK_DEFAULT_SERVER`) libjack cannot take safely.
    case invalidServerName(String, reason: String)

    /// The longest server name accepted, in UTF-8 bytes. libjack copies the name, and paths
    /// built from it, into fixed buffers without checking: a name of about 270 bytes overran
    /// its stack. Real names are a word or two.
    public static let maximumServerNameBytes = 64

    /// A server name as an error line shows it: a name too long for JACK is one of the errors.
    static func shortened(_ name: String) -> String { name.count > 40 ? String(name.prefix(40)) + "…" : name }

    /// Why libjack could not safely take `name` as a server name, or nil when it can.
    public static func serverNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name.utf8.count > maximumServerNameBytes {
            return "is \(name.utf8.count) bytes long; a JACK server name has at most \(maximumServerNameBytes)"
        }
        // The name becomes a folder name under /dev/shm and /tmp.
        if name.contains("/") || name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "contains a slash or a control character"
        }
        return nil
    }

    public var description: String {
        switch self {
        case .libraryUnavailable(let reason):
            return "JACK library unavailable (\(reason)); install the package \(JACKLibrary.debianPackage), or run under PipeWire with pw-jack"
        case .serverUnavailable(let server, _):
            return "no JACK server \(server.map { "'\($0)' " } ?? "")is running (start one, e.g. jackd -d alsa, or run under PipeWire with pw-jack)"
        case .portRegistration(let name):
            return "the JACK server refused the port '\(name)'"
        case .activation:
            return "the JACK server refused to activate the client"
        case .connection(let from, let to):
            return "cannot connect JACK port '\(from)' to '\(to)'"
        case .unknownPort(let name, let available):
            let list = available.isEmpty ? "there are no ports" : "ports: " + available.joined(separator: ", ")
            return "no JACK port '\(name)' (\(list))"
        case .shutdown(let reason):
            return "the JACK server stopped the client: \(reason)"
        case .invalidServerName(let name, let reason):
            let shown = Self.shortened(name)
            return "the JACK server name '\(shown.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : String($0) }.joined())' \(reason)"
        }
    }
}

/// Where a client's audio outputs go when it starts.
public enum JACKConnections: Sendable, Equatable {
    /// The first two physical playback ports (`system:playback_1` and `_2` on jackd).
    case systemPlayback
    /// Nowhere: the user or a patchbay connects them.
    case none
    /// These ports, left then right (one port takes both channels).
    case ports([String])
}

/// Produces a period of audio (and MIDI) for JACK. Called on JACK's real-time thread: it must
/// not allocate, lock or do I/O.
public protocol JACKProcessSource: AnyObject {
    /// Fills `cycle`'s buffers; reads its MIDI input and writes its MIDI output.
    func process(_ cycle: JACKCycle)
}

/// One period of the JACK graph, as the process callback sees it.
public struct JACKCycle {
    /// Frames in this period.
    public let frameCount: Int
    /// The left output port's buffer.
    public let left: UnsafeMutablePointer<Float>
    /// The right output port's buffer.
    public let right: UnsafeMutablePointer<Float>
    /// The left input port's signal, when the client has audio inputs.
    public let inputLeft: UnsafePointer<Float>?
    /// The right input port's signal, when the client has audio inputs.
    public let inputRight: UnsafePointer<Float>?
    /// JACK's frame time of the period's first frame (wraps at 2^32).
    public let firstFrameTime: UInt32
    /// The time of the period's first frame on CLOCK_MONOTONIC, in nanoseconds (converted from
    /// JACK's clock, which runs on CLOCK_MONOTONIC_RAW).
    public let hostNanoseconds: Int64
    let midiIn: UnsafeMutableRawPointer?
    let midiOut: UnsafeMutableRawPointer?
    let portMIDIOut: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    /// How many MIDI outputs were added with ``JACKClient/addMIDIOutputPort(named:)``.
    public let portMIDIOutCount: Int

    /// MIDI messages that arrived during the previous period, each with its frame offset.
    public var midiInputCount: Int { midiIn.map { Int(jack_midi_get_event_count($0)) } ?? 0 }

    /// The `index`th input message: its frame offset in this period and its bytes (valid only
    /// during this call).
    public func midiInput(at index: Int) -> (frame: Int, bytes: UnsafeBufferPointer<UInt8>)? {
        guard let midiIn else { return nil }
        var event = jack_midi_event_t()
        guard jack_midi_event_get(&event, midiIn, UInt32(index)) == 0, let data = event.buffer else { return nil }
        return (Int(event.time), UnsafeBufferPointer(start: data, count: event.size))
    }

    /// Writes a MIDI message to the output port at `frame` (0..<frameCount, not before an
    /// earlier write); false when there is no output port or no room.
    @discardableResult
    public func writeMIDI(_ bytes: UnsafeBufferPointer<UInt8>, atFrame frame: Int) -> Bool {
        guard let midiOut, let base = bytes.baseAddress, frame >= 0, frame < frameCount else { return false }
        return jack_midi_event_write(midiOut, UInt32(frame), base, bytes.count) == 0
    }
    /// Writes a MIDI message to the added MIDI output `port` (an index from
    /// ``JACKClient/addMIDIOutputPort(named:)``) at `frame`, not before an earlier write to
    /// that port; false when there is no such port or no room.
    @discardableResult
    public func writeMIDI(_ bytes: UnsafeBufferPointer<UInt8>, atFrame frame: Int, port: Int) -> Bool {
        guard port >= 0, port < portMIDIOutCount, let buffer = portMIDIOut[port], let base = bytes.baseAddress,
              frame >= 0, frame < frameCount else { return false }
        return jack_midi_event_write(buffer, UInt32(frame), base, bytes.count) == 0
    }
}

/// The transport as JACK reports it.
public struct JACKTransportState: Sendable, Equatable {
    /// Rolling (or starting) rather than stopped.
    public var isRolling: Bool
    /// The transport frame.
    public var frame: UInt32
    /// Bar, beat and tick when the timebase master publishes them (bar and beat from 1).
    public var barBeatTick: (bar: Int32, beat: Int32, tick: Int32)?
    /// Beats per minute when published.
    public var beatsPerMinute: Double?

    public static func == (a: Self, b: Self) -> Bool {
        a.isRolling == b.isRolling && a.frame == b.frame && a.beatsPerMinute == b.beatsPerMinute
            && a.barBeatTick?.bar == b.barBeatTick?.bar && a.barBeatTick?.beat == b.barBeatTick?.beat
            && a.barBeatTick?.tick == b.barBeatTick?.tick
    }
}

/// What a timebase master publishes for a transport frame.
public struct JACKBarBeatTick: Sendable, Equatable {
    /// The bar, counted from 1.
    public var bar: Int32
    /// The beat in the bar, counted from 1.
    public var beat: Int32
    /// The tick in the beat, from 0 to `ticksPerBeat - 1`.
    public var tick: Int32
    /// Ticks from the song's start to the bar's first beat.
    public var barStartTick: Double
    /// The time signature's numerator.
    public var beatsPerBar: Float
    /// The time signature's denominator (4 for quarter-note beats).
    public var beatType: Float
    /// Ticks in one beat.
    public var ticksPerBeat: Double
    /// The tempo, in beats per minute.
    public var beatsPerMinute: Double

    /// A position with its time signature and tempo.
    public init(bar: Int32, beat: Int32, tick: Int32, barStartTick: Double, beatsPerBar: Float, beatType: Float,
                ticksPerBeat: Double, beatsPerMinute: Double) {
        self.bar = bar; self.beat = beat; self.tick = tick; self.barStartTick = barStartTick
        self.beatsPerBar = beatsPerBar; self.beatType = beatType; self.ticksPerBeat = ticksPerBeat
        self.beatsPerMinute = beatsPerMinute
    }
}

/// Computes bar, beat and tick for a transport frame; called on JACK's real-time thread.
public protocol JACKTimebaseProvider: AnyObject {
    /// The bar, beat and tick, time signature and tempo at transport frame `frame`. Must not
    /// allocate, lock or do I/O.
    func barBeatTick(atFrame frame: UInt32, sampleRate: UInt32) -> JACKBarBeatTick
}
