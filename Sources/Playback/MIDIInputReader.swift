import Foundation
import Locking
import Synchronization

/// The monotonic clock (`CLOCK_MONOTONIC`) in nanoseconds: the host time of the engine's
/// anchors and of input stamps.
public func monotonicNanoseconds() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
}

/// Why a raw MIDI input could not be opened.
public struct MIDIInputDeviceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path given.
    public var path: String
    /// The system's reason.
    public var reason: String

    public var description: String { "MIDI input device \(path): \(reason)" }
}

/// Reads a raw MIDI byte stream (a `/dev/snd/midiC*D*` device, a FIFO, a serial port) on a
/// thread of its own, stamps each piece with the monotonic clock as it arrives, parses it
/// (running status, real-time bytes inside messages, sysex) and hands every message to a
/// callback on that thread.
///
/// The thread waits in poll(2) with a 50 ms timeout, so ``stop()`` returns promptly. A FIFO
/// whose writer closes is read on: the next writer's bytes are recorded too.
public final class MIDIByteStreamReader: @unchecked Sendable {
    /// The path read.
    public let path: String
    private let fd: Int32
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let failure = Locked<String?>(nil)

    /// Opens `path` for reading; throws with the system's reason (no such file, permission
    /// denied, a directory...).
    public init(path: String) throws(MIDIInputDeviceError) {
        self.path = path
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw MIDIInputDeviceError(path: path, reason: "is a directory")
        }
        // Non-blocking: opening a FIFO must not wait for a writer, and reads never hang.
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            var reason = String(cString: strerror(code))
            // Sound devices belong to the audio group on Debian and most distributions.
            if code == EACCES && path.hasPrefix("/dev/snd/") { reason += " (add your user to the 'audio' group and log in again)" }
            throw MIDIInputDeviceError(path: path, reason: reason)
        }
    }

    deinit {
        stop()
        close(fd)
    }

    /// The read error that ended the thread, if one did.
    public var error: String? { failure.withLock { $0 } }

    /// Starts the reading thread; `deliver` gets every message in order, on that thread.
    public func start(_ deliver: @escaping @Sendable (MIDIInputEvent) -> Void) {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        // A sound card's raw MIDI input starts capturing at its first poll or read (a VirMIDI
        // port drops what arrives before): poll once here, so that everything sent after this
        // call returns is read, however late the thread gets to run.
        var first = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&first, 1, 0)
        let thread = Thread { [self] in
            var input = MIDIByteStreamInput()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !stopping.load(ordering: .relaxed) {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&p, 1, 50)
                if ready <= 0 { continue }
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                let now = monotonicNanoseconds()
                if n > 0 {
                    for event in input.receive(buffer[0..<n], atHostTime: now) { deliver(event) }
                } else if n == 0 || errno == EAGAIN || errno == EINTR {
                    // End of file on a FIFO with no writer: poll reports it at once, so pause.
                    usleep(10_000)
                } else {
                    let reason = String(cString: strerror(errno))
                    failure.withLock { $0 = reason }
                    break
                }
            }
            finished.signal()
        }
        thread.name = "tactus-midi-in"
        thread.start()
    }

    /// Stops the thread and waits for it (at most a poll timeout).
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed), started.load(ordering: .relaxed) else { return }
        _ = finished.wait(timeout: .now() + .seconds(1))
    }
}
