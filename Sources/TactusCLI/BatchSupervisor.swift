import CProcessControl
import Foundation
import Synchronization

/// The worker's process, for the supervisor's signal handlers (0 when none runs).
private let supervisedWorker = Atomic<Int32>(0)
/// The first stop signal the supervisor passed on (0 when none).
private let forwardedSignal = Atomic<Int32>(0)

/// Keeps a batch that renders through LV2 plugins going when a plugin crashes the process.
///
/// A plugin is code Tactus does not control, running in Tactus's process: a crash in it kills
/// the batch. So a batch with plugins runs as a worker process (this same command, marked by
/// ``workerVariable``) under a supervisor, which starts it again when it dies by a signal it
/// was not sent. The manifest already records which input each start was rendering, so the
/// next run renders an input that was in flight once more, alone, and one that was in flight
/// twice is recorded as crashed and skipped: the crash costs that file, not the batch.
enum BatchSupervisor {
    /// Set in the worker's environment.
    static let workerVariable = "TACTUS_BATCH_WORKER"

    /// True in a worker (which must not supervise again).
    static var isWorker: Bool { ProcessInfo.processInfo.environment[workerVariable] != nil }

    /// In a worker: ties its life to the supervisor's (a supervisor killed with SIGKILL takes
    /// the worker with it, as a batch killed without supervision would stop).
    static func becomeWorker() {
        _ = tactus_signal_when_parent_dies(SIGKILL)
        // The supervisor may have died before the call: then nothing would ever stop us.
        if getppid() == 1 { exit(128 + SIGKILL) }
    }

    /// Runs this command as a worker until it ends by itself (or by a signal passed on to it),
    /// starting it again after each crash, at most `maximumRestarts` times; returns the exit
    /// status for the command. Stop signals (SIGINT, SIGTERM, SIGHUP) are passed to the worker,
    /// which stops as an unsupervised batch does.
    static func supervise(maximumRestarts: Int) -> Int32 {
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber) { number in
                _ = forwardedSignal.compareExchange(expected: 0, desired: number, ordering: .relaxed)
                let worker = supervisedWorker.load(ordering: .relaxed)
                if worker > 0 { kill(worker, number) }
            }
        }
        var restarts = 0
        while true {
            let worker: pid_t
            do {
                worker = try spawnWorker()
            } catch {
                printError("tactus: cannot start the batch's worker process: \(error)")
                return ExitStatus.unavailable
            }
            supervisedWorker.store(worker, ordering: .relaxed)
            // A signal that came while the worker was being started reaches it now.
            let early = forwardedSignal.load(ordering: .relaxed)
            if early != 0 { kill(worker, early) }
            var status: Int32 = 0
            while waitpid(worker, &status, 0) < 0 && errno == EINTR {}
            supervisedWorker.store(0, ordering: .relaxed)
            let signalNumber = status & 0x7F
            if signalNumber == 0 { return (status >> 8) & 0xFF }
            let forwarded = forwardedSignal.load(ordering: .relaxed)
            if forwarded != 0 { return 128 + forwarded }
            restarts += 1
            let name = String(cString: strsignal(signalNumber))
            guard restarts <= maximumRestarts else {
                printError("tactus: the batch's worker died by signal \(signalNumber) (\(name)) \(restarts) times; giving up (the manifest records each file in flight)")
                return 128 + signalNumber
            }
            printError("tactus: the batch's worker died by signal \(signalNumber) (\(name)), a plugin's crash as far as Tactus can tell; resuming "
                       + "(a file in flight renders once more alone, then counts as crashed)")
        }
    }

    /// Starts this executable with the same arguments, marked as a worker, with this process's
    /// standard streams.
    private static func spawnWorker() throws -> pid_t {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let arguments = [executable] + CommandLine.arguments.dropFirst()
        var environment = ProcessInfo.processInfo.environment
        environment[workerVariable] = "1"
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The worker handles the stop signals itself: none blocked, each at its default until
        // it installs its handlers.
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, signalNumber) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, nil, &attributes, argv, envp)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EINVAL) }
        return pid
    }
}
