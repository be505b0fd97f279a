import CALSA
import Foundation
import Synchronization

/// Reads a sound card's raw MIDI input (`/dev/snd/midiC1D0` is `hw:1,0`) with the kernel's
/// own timestamps: in the timestamped read mode (Linux 5.14 and later) the driver stamps the
/// bytes with the monotonic clock as they arrive, so how soon the reading thread gets to run
/// does not matter. Bytes are handed on raw, with their stamp, for the caller to parse.
public final class RawMIDIInput: @unchecked Sendable {
    private let handle: OpaquePointer
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    /// The device, as `hw:CARD,DEVICE`.
    public let device: String

    /// The `hw:CARD,DEVICE` name of a `/dev/snd/midiC*D*` path, or nil for anything else.
    public static func deviceName(forPath path: String) -> String? {
        guard let match = path.wholeMatch(of: /\/dev\/snd\/midiC(\d+)D(\d+)/) else { return nil }
        return "hw:\(match.1),\(match.2)"
    }

    /// Opens the raw MIDI device of `path` in timestamped mode; nil when the path is not a
    /// card's raw MIDI device or the device or kernel cannot stamp (the caller reads the path
    /// as a plain byte stream then).
    public init?(path: String) {
        guard let name = RawMIDIInput.deviceName(forPath: path), ALSALibrary.isAvailable else { return nil }
        tactus_alsa_silence_errors()
        var input: OpaquePointer?
        guard snd_rawmidi_open(&input, nil, name, Int32(SND_RAWMIDI_NONBLOCK)) >= 0, let input else { return nil }
        var paramsPointer: OpaquePointer?
        guard snd_rawmidi_params_malloc(&paramsPointer) >= 0, let params = paramsPointer else {
            snd_rawmidi_close(input)
            return nil
        }
        defer { snd_rawmidi_params_free(params) }
        guard snd_rawmidi_params_current(input, params) >= 0,
              snd_rawmidi_params_set_read_mode(input, params, SND_RAWMIDI_READ_TSTAMP) >= 0,
              snd_rawmidi_params_set_clock_type(input, params, SND_RAWMIDI_CLOCK_MONOTONIC) >= 0,
              snd_rawmidi_params(input, params) >= 0 else {
            snd_rawmidi_close(input)
            return nil
        }
        handle = input
        device = name
    }

    deinit {
        stop()
        snd_rawmidi_close(handle)
    }

    /// Starts the reading thread: `deliver` gets each run of bytes the kernel stamped alike,
    /// with the stamp in monotonic nanoseconds, in order, on that thread.
    public func start(_ deliver: @escaping @Sendable (_ hostNanos: Int64, _ bytes: [UInt8]) -> Void) {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        let count = snd_rawmidi_poll_descriptors_count(handle)
        var descriptors = [pollfd](repeating: pollfd(), count: Int(max(1, count)))
        let filled = snd_rawmidi_poll_descriptors(handle, &descriptors, UInt32(descriptors.count))
        // The kernel starts capturing a raw MIDI input at its first poll or read, and a VirMIDI
        // port drops what arrives before that: poll once here, so that everything sent after
        // this call returns is captured, however late the thread gets to run.
        _ = poll(&descriptors, nfds_t(filled), 0)
        let thread = Thread { [self, descriptors] in
            var descriptors = descriptors
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !stopping.load(ordering: .relaxed) {
                if poll(&descriptors, nfds_t(filled), 50) <= 0 { continue }
                while true {
                    var stamp = timespec()
                    let n = buffer.withUnsafeMutableBytes { snd_rawmidi_tread(handle, &stamp, $0.baseAddress, $0.count) }
                    if n <= 0 { break }
                    let host = Int64(stamp.tv_sec) * 1_000_000_000 + Int64(stamp.tv_nsec)
                    deliver(host > 0 ? host : SequencerInput.monotonic(), Array(buffer[0..<n]))
                }
            }
            finished.signal()
        }
        thread.name = "tactus-rawmidi-in"
        thread.start()
    }

    /// Stops the thread and waits for it (at most a poll timeout).
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed), started.load(ordering: .relaxed) else { return }
        _ = finished.wait(timeout: .now() + .seconds(1))
    }
}
