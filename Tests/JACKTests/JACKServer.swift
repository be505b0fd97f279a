import Foundation
import JACK

/// A private `jackd -d dummy` server for one test: no sound card needed, root is fine.
final class JACKServer {
    static let executable = "/usr/bin/jackd"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) && JACKLibrary.isAvailable }
    static let missing = "needs jackd and libjack (Debian package jackd2)"

    let name: String
    let sampleRate: Int
    let period: Int
    private let process = Process()

    init(sampleRate: Int = 48_000, period: Int = 256) throws {
        name = "tactus-test-\(UUID().uuidString.prefix(8))"
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
        kill()
        throw JACKError.serverUnavailable(server: name, status: 0)
    }

    /// Kills the server at once, as a crash or `killall -9 jackd` would.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { kill() }
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
