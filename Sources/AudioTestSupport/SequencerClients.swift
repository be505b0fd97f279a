import Foundation

/// The ALSA sequencer's own account of its clients (`/proc/asound/seq/clients`), for tests
/// that must wait on what the kernel has done rather than for a fixed time: whether a program
/// has subscribed to a port yet, and whether a client has read every event delivered to it.
public struct SequencerClients: Sendable {
    /// One client's block of the file: its number, name, and the lines under it.
    public struct Client: Sendable {
        public var number: Int
        public var name: String
        public var lines: [String]

        /// Whether one of its ports is subscribed to `address` (`CLIENT:PORT`).
        public func isConnected(from address: String) -> Bool {
            lines.contains { line in
                guard let range = line.range(of: "Connected From:") else { return false }
                // "14:0, 20:0[real:0]": addresses, each with the subscription's stamping.
                return line[range.upperBound...].split(separator: ",").contains {
                    $0.trimmingCharacters(in: .whitespaces).split(separator: "[").first.map(String.init) == address
                }
            }
        }

        /// Events delivered to the client that it has not read yet (its input pool's cells in
        /// use); nil when the file shows no input pool (the client opened no input).
        public var unreadEvents: Int? {
            guard let pool = lines.firstIndex(where: { $0.contains("Input pool") }) else { return nil }
            for line in lines[(pool + 1)...] {
                if line.contains(" pool") { break }
                if line.contains("Cells in use"), let value = line.split(separator: ":").last {
                    return Int(value.trimmingCharacters(in: .whitespaces))
                }
            }
            return nil
        }
    }

    public var clients: [Client]

    /// Reads the file now; nil when it cannot be read (no sequencer, or no procfs).
    public static func read(path: String = "/proc/asound/seq/clients") -> SequencerClients? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var clients: [Client] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            // `Client 128 : "arecordmidi" [User Legacy]`
            if line.hasPrefix("Client "), let colon = line.firstIndex(of: ":"),
               let number = Int(line[line.index(line.startIndex, offsetBy: 7)..<colon].trimmingCharacters(in: .whitespaces)),
               let open = line.firstIndex(of: "\""), let close = line.lastIndex(of: "\""), open < close {
                clients.append(Client(number: number, name: String(line[line.index(after: open)..<close]), lines: []))
            } else if !clients.isEmpty {
                clients[clients.count - 1].lines.append(line)
            }
        }
        return SequencerClients(clients: clients)
    }

    /// Waits until `condition` holds for the file as read, or `seconds` pass; true when it held.
    public static func waitUntil(seconds: Double = 30, _ condition: (SequencerClients) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if let now = read(), condition(now) { return true }
            usleep(2_000)
        } while Date() < deadline
        return false
    }

    /// Waits until a client named `name` is subscribed to `address`; true when it was within
    /// `seconds`. A recorder that is started does not record until then.
    public static func waitForSubscription(of name: String, from address: String, seconds: Double = 30) -> Bool {
        waitUntil(seconds: seconds) { $0.clients.contains { $0.name == name && $0.isConnected(from: address) } }
    }

    /// Waits until every client named `name` (or numbered `number`) has read every event
    /// delivered to it; true when they had within `seconds`. Whatever was sent to them
    /// before is then in their hands, however late the machine ran them.
    public static func waitUntilRead(byClientNamed name: String? = nil, number: Int? = nil, seconds: Double = 30) -> Bool {
        waitUntil(seconds: seconds) { table in
            let chosen = table.clients.filter { ($0.name == name || $0.number == number) }
            return !chosen.isEmpty && chosen.allSatisfy { ($0.unreadEvents ?? 0) == 0 }
        }
    }
}
