import Foundation
import JACK
import Testing

/// A private `jackd -d dummy` server for one test: no sound card needed, root is fine.
final class JACKServer {
    static let executable = "/usr/bin/jackd"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) && JACKLibrary.isAvailable }
    static let missing = "needs jackd and libjack (Debian package jackd2)"

    let name: String
    let sampleRate: Int
    let period: Int
    private let process = Process()

    /// Starts `jackd -n tactus-test-NAME`. Names are reused from run to run on purpose: JACK's
    /// registry holds eight servers, and reclaims the entry of a killed server only when a
    /// server of the same name starts again.
    init(_ label: String, sampleRate: Int = 48_000, period: Int = 256) throws {
        _ = Self.staleRegistryRemoved
        let name = "tactus-test-\(label)"
        self.name = name
        self.sampleRate = sampleRate
        self.period = period
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = ["-n", name, "-d", "dummy", "-r", "\(sampleRate)", "-p", "\(period)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The server accepts clients within about 0.2 s here.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? JACKClient(name: "probe-start", server: name)) != nil { return }
            usleep(20_000)
        }
        // Stopped as its user would, so it leaves its registry entry behind only if it does not
        // answer: JACK's registry holds eight servers, and killed ones keep their places.
        stop()
        throw JACKError.serverUnavailable(server: name, status: 0)
    }

    /// Waits until a client with ports whose names match `pattern` runs on this server, besides
    /// the ports in `existing`; true when it did within `seconds`. Running is observed, not
    /// assumed after a delay: JACK connects only the ports of active clients, so the first new
    /// audio output it lets the probe connect to a playback port shows the client active. That
    /// connection is left in place (a test server's dummy playback goes nowhere). A process under
    /// a sanitizer takes seconds to start, so a fixed sleep would kill the server too early.
    func waitForClient(matching pattern: String, besides existing: Set<String> = [], seconds: Double = 30) -> Bool {
        guard let probe = try? JACKClient(name: "probe-wait", server: name) else { return false }
        // jack/types.h's JackPortFlags.
        let isInput: Int32 = 0x1, isOutput: Int32 = 0x2, isPhysical: Int32 = 0x4
        guard let target = probe.ports(flags: isInput | isPhysical).first else { return false }
        return waitUntil(seconds: seconds) {
            probe.ports(matching: pattern, flags: isOutput)
                .filter { !existing.contains($0) }
                .contains { (try? probe.connect($0, to: target)) != nil }
        }
    }

    /// The full names of the ports (audio and MIDI) matching `pattern` on this server now.
    func portNames(matching pattern: String) -> Set<String> {
        guard let probe = try? JACKClient(name: "probe-names", server: name) else { return [] }
        return Set(probe.ports(matching: pattern) + probe.ports(matching: pattern, midi: true))
    }

    /// Kills the server at once, as a crash or `killall -9 jackd` would.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Freezes the server (SIGSTOP), as a hung driver or a debugger would: it answers nothing.
    func freeze() { if process.isRunning { Foundation.kill(process.processIdentifier, SIGSTOP) } }

    /// Lets a frozen server run again.
    func thaw() { if process.isRunning { Foundation.kill(process.processIdentifier, SIGCONT) } }

    /// Stops the server as its user would (it unregisters itself).
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(3)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        kill()
    }

    deinit { stop() }

    /// Done once per test process, before its first server starts (a lazy static runs once,
    /// and other threads wait for it).
    static let staleRegistryRemoved: Void = removeStaleRegistry()

    /// When no JACK server runs on the machine at all, removes what killed test servers left
    /// in /dev/shm (their registry entries fill JACK's eight places).
    static func removeStaleRegistry() {
        let running = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.contains { entry in
            // /proc/PID/stat: "PID (comm) STATE ..."; a zombie (Z) is no server.
            guard entry.allSatisfy(\.isNumber), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return false }
            let comm = String(stat[stat.index(after: open)..<close])
            let state = stat[stat.index(close, offsetBy: 2)...].first
            return state != "Z" && ["jackd", "jackdbus", "pipewire"].contains(comm)
        } ?? true
        guard !running, let names = try? FileManager.default.contentsOfDirectory(atPath: "/dev/shm") else { return }
        for name in names where name == "jack-shm-registry" || name.hasPrefix("jack_sem.") || name.hasPrefix("jack_tactus-test-")
            || name.hasPrefix("jack-") || name.hasPrefix("jack_db") {
            try? FileManager.default.removeItem(atPath: "/dev/shm/" + name)
        }
    }
}

extension JACKClient {
    /// Waits until this client has processed `count` more periods, however slowly the machine
    /// runs: two are enough for what a client it listens to wrote in the period under way to
    /// have reached it, or for a new connection to be in the server's graph.
    func waitForMorePeriods(_ count: Int64 = 2) {
        let seen = periodCount
        #expect(waitUntil(seconds: 30) { periodCount >= seen + count }, "the client \(name) stopped processing")
    }
}

/// Waits until `condition` holds or `seconds` pass; true when it held.
func waitUntil(seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// A real-time capture on a loaded machine can miss a server period (an xrun), which drops or
/// shifts the frames it captured: such a run says nothing about the code under test. `run` is
/// played up to three times and the first run without an xrun is returned; three runs with one
/// each are recorded as an issue (nil).
func withoutXruns<Result>(_ run: () throws -> (Result, Int)) rethrows -> Result? {
    var total = 0
    for _ in 0..<3 {
        let (result, xruns) = try run()
        if xruns == 0 { return result }
        total += xruns
    }
    Issue.record("an xrun in each of three runs (\(total) in all): the captured frames would not compare")
    return nil
}

/// `withoutXruns(_:)` for a capture that awaits the session's end.
func withoutXruns<Result>(_ run: () async throws -> (Result, Int)) async rethrows -> Result? {
    var total = 0
    for _ in 0..<3 {
        let (result, xruns) = try await run()
        if xruns == 0 { return result }
        total += xruns
    }
    Issue.record("an xrun in each of three runs (\(total) in all): the captured frames would not compare")
    return nil
}
