import Foundation
import Testing

/// Signals a parent left blocked: the mask survives exec, so without unblocking them `tactus`
/// would never see a scheduler's SIGTERM or Ctrl-C.
@Suite struct SignalMaskTests {
    @Test("a render started with SIGTERM blocked by its parent still stops on SIGTERM: one line, exit 143 (128 + SIGTERM)")
    func renderStopsWhenItsParentBlockedSIGTERM() throws {
        var output: [Int32] = [0, 0], errors: [Int32] = [0, 0]
        #expect(pipe(&output) == 0 && pipe(&errors) == 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        posix_spawn_file_actions_addclose(&actions, output[0])
        posix_spawn_file_actions_addclose(&actions, errors[0])
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        posix_spawnattr_setsigmask(&attributes, &blocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        // Standard output is a pipe nobody reads yet: the render fills it and waits there,
        // so the signal surely arrives mid-render.
        let arguments = [CLI.binary.path, "render", CLI.song("morning-steps.mid"), "-o", "-", "--instrument", "builtin", "--quiet"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        #expect(posix_spawn(&child, CLI.binary.path, &actions, &attributes, &argv, environ) == 0)
        close(output[1])
        close(errors[1])
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(read(output[0], &buffer, buffer.count) > 0, "the render started writing")
        usleep(200_000)
        kill(child, SIGTERM)
        while read(output[0], &buffer, buffer.count) > 0 {}
        var message = Data()
        while true {
            let n = read(errors[0], &buffer, buffer.count)
            if n <= 0 { break }
            message.append(contentsOf: buffer[0..<n])
        }
        close(output[0])
        close(errors[0])
        var status: Int32 = 0
        waitpid(child, &status, 0)
        let exitCode = (status >> 8) & 0xFF
        let text = String(decoding: message, as: UTF8.self)
        #expect(status & 0x7F == 0 && exitCode == 143, "exit \(exitCode), signal \(status & 0x7F): \(text)")
        #expect(text == "-: interrupted; nothing written\n")
    }
}
