import CALSA
import Foundation

/// Why the ALSA sequencer cannot be used, worded for the person at the terminal.
public enum SequencerError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The ALSA library is not installed.
    case libraryUnavailable(ALSALibraryUnavailable)
    /// The kernel has no sequencer device.
    case missing
    /// The device exists but this user may not open it.
    case permissionDenied
    /// A port name or address that matches no port; lists what there is.
    case unknownPort(String, available: [String])
    /// Any other ALSA failure.
    case failed(operation: String, code: Int32)

    public var description: String {
        switch self {
        case .libraryUnavailable(let problem):
            return problem.description
        case .missing:
            return "no ALSA sequencer: /dev/snd/seq does not exist (load the kernel module: sudo modprobe snd-seq)"
        case .permissionDenied:
            return "no permission to open the ALSA sequencer /dev/snd/seq (add your user to the 'audio' group and log in again)"
        case .unknownPort(let name, let available):
            let list = available.isEmpty ? "there are no ports" : "ports: " + available.joined(separator: ", ")
            return "no MIDI port '\(name)' (\(list))"
        case .failed(let operation, let code):
            return "ALSA sequencer: \(operation) failed: \(String(cString: snd_strerror(code)))"
        }
    }
}

/// A sequencer port as `tactus ports` lists it.
public struct SequencerPort: Hashable, Sendable, CustomStringConvertible {
    /// The client number (the part before the colon of `20:0`).
    public var client: Int
    /// The port number within the client.
    public var port: Int
    /// The client's name (the program or the device).
    public var clientName: String
    /// The port's name.
    public var portName: String
    /// Other programs can send to it (it is an input of its client).
    public var acceptsInput: Bool
    /// Other programs can receive from it (it is an output of its client).
    public var providesOutput: Bool

    /// `CLIENT:PORT`.
    public var address: String { "\(client):\(port)" }

    public var description: String {
        let caps = [acceptsInput ? "in" : nil, providesOutput ? "out" : nil].compactMap { $0 }.joined(separator: ",")
        return "\(address) \(clientName): \(portName) [\(caps)]"
    }
}

/// A client of the ALSA sequencer, named "Tactus", with an input and an output port that
/// other programs connect to.
public final class SequencerClient: @unchecked Sendable {
    let handle: OpaquePointer
    /// The client number the kernel gave.
    public let clientID: Int
    /// The port other programs send to.
    public private(set) var inputPort: Int32 = -1
    /// The port Tactus sends from.
    public private(set) var outputPort: Int32 = -1

    /// Opens the sequencer as a client called `name`, with an input and an output port.
    public init(name: String = "Tactus", createPorts: Bool = true) throws(SequencerError) {
        do { try ALSALibrary.load() } catch { throw .libraryUnavailable(error) }
        tactus_alsa_silence_errors()
        if !FileManager.default.fileExists(atPath: "/dev/snd/seq") { throw .missing }
        var seq: OpaquePointer?
        let rc = snd_seq_open(&seq, "default", Int32(SND_SEQ_OPEN_DUPLEX), 0)
        guard rc >= 0, let seq else {
            if rc == -EACCES || rc == -EPERM { throw .permissionDenied }
            if rc == -ENOENT || rc == -ENODEV { throw .missing }
            throw .failed(operation: "open", code: rc)
        }
        handle = seq
        snd_seq_set_client_name(seq, name)
        clientID = Int(snd_seq_client_id(seq))
        if createPorts {
            let application = UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION)
            inputPort = snd_seq_create_simple_port(seq, "\(name) in", UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE), application)
            outputPort = snd_seq_create_simple_port(seq, "\(name) out", UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ), application)
            if inputPort < 0 || outputPort < 0 {
                snd_seq_close(seq)
                throw .failed(operation: "create ports", code: min(inputPort, outputPort))
            }
        }
    }

    deinit {
        snd_seq_close(handle)
    }

    /// Every port of every client, in client then port order.
    public func ports() -> [SequencerPort] {
        var clientInfo: OpaquePointer?
        var portInfo: OpaquePointer?
        guard tactus_seq_client_info_malloc(&clientInfo) >= 0, let clientInfo,
              tactus_seq_port_info_malloc(&portInfo) >= 0, let portInfo else { return [] }
        defer {
            snd_seq_client_info_free(clientInfo)
            snd_seq_port_info_free(portInfo)
        }
        var result: [SequencerPort] = []
        snd_seq_client_info_set_client(clientInfo, -1)
        while snd_seq_query_next_client(handle, clientInfo) >= 0 {
            let client = snd_seq_client_info_get_client(clientInfo)
            let clientName = String(cString: snd_seq_client_info_get_name(clientInfo))
            snd_seq_port_info_set_client(portInfo, client)
            snd_seq_port_info_set_port(portInfo, -1)
            while snd_seq_query_next_port(handle, portInfo) >= 0 {
                let caps = snd_seq_port_info_get_capability(portInfo)
                if caps & UInt32(SND_SEQ_PORT_CAP_NO_EXPORT) != 0 { continue }
                result.append(SequencerPort(
                    client: Int(client), port: Int(snd_seq_port_info_get_port(portInfo)),
                    clientName: clientName, portName: String(cString: snd_seq_port_info_get_name(portInfo)),
                    acceptsInput: caps & UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE) == UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE),
                    providesOutput: caps & UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ) == UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ)))
            }
        }
        return result
    }

    /// Resolves `CLIENT:PORT`, a client number, or a client name or its prefix, as aplaymidi
    /// and aconnect accept them.
    public func resolve(_ name: String) throws(SequencerError) -> (client: Int, port: Int) {
        var address = snd_seq_addr_t()
        if snd_seq_parse_address(handle, &address, name) < 0 {
            throw .unknownPort(name, available: ports().filter { $0.client != clientID }.map(\.description))
        }
        return (Int(address.client), Int(address.port))
    }

    /// Subscribes `port` (by name or address) to Tactus's output port.
    public func connectOutput(to port: String) throws(SequencerError) {
        let target = try resolve(port)
        let rc = snd_seq_connect_to(handle, outputPort, Int32(target.client), Int32(target.port))
        if rc < 0 { throw .failed(operation: "connect to \(port)", code: rc) }
    }

    /// Subscribes Tactus's input port to `port` (by name or address).
    public func connectInput(from port: String) throws(SequencerError) {
        let source = try resolve(port)
        let rc = snd_seq_connect_from(handle, inputPort, Int32(source.client), Int32(source.port))
        if rc < 0 { throw .failed(operation: "connect from \(port)", code: rc) }
    }
}
