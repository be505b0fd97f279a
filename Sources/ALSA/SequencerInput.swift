import CALSA
import Foundation
import Synchronization

/// Receives what arrives at a ``SequencerClient``'s input port, on a thread of its own.
///
/// Events are stamped by the kernel as they reach the port, with the time of an ALSA queue
/// this input runs, so the stamp does not depend on when the thread gets to read them. By
/// default the stamp is the queue's tick count (10 us ticks), as arecordmidi records: it
/// advances at the sequencer timer's interrupts by their nominal period, so an event another
/// program scheduled on a queue is stamped with the time it was scheduled for even when the
/// interrupt that delivers it runs late; a live keyboard's events are placed on the timer's
/// grid (1 ms with the high-resolution timer). ``SequencerInputStamps/realTime`` stamps the
/// exact arrival instead. The queue's time is turned into monotonic host time through an
/// offset measured when the queue starts. Every event is decoded to MIDI bytes (channel messages,
/// sysex, system common and real-time; active sensing, and timing clock unless asked for, are
/// left out).
public final class SequencerInput: @unchecked Sendable {
    private let client: SequencerClient
    private let queue: Int32
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Monotonic host time minus queue time, in nanoseconds.
    public let hostOffsetNanos: Int64

    /// Nanoseconds per queue tick when stamping with ticks (see ``SequencerInputStamps``).
    static let tickNanoseconds: Int64 = 10_000
    private let stamps: SequencerInputStamps

    fileprivate init(client: SequencerClient, stamps: SequencerInputStamps) throws(SequencerError) {
        self.client = client
        self.stamps = stamps
        let handle = client.handle
        let q = snd_seq_alloc_named_queue(handle, "Tactus input")
        if q < 0 { throw .failed(operation: "allocate a queue", code: q) }
        queue = q
        if stamps == .queueTicks {
            // 10 us ticks: a quarter note of 1 s in 100,000 ticks (32-bit ticks last 11.9 hours).
            var tempoPointer: OpaquePointer?
            // Read first: the kernel refuses a tempo whose skew fields are not the queue's.
            if snd_seq_queue_tempo_malloc(&tempoPointer) >= 0, let tempo = tempoPointer {
                _ = snd_seq_get_queue_tempo(handle, q, tempo)
                snd_seq_queue_tempo_set_tempo(tempo, 1_000_000)
                snd_seq_queue_tempo_set_ppq(tempo, Int32(1_000_000_000 / SequencerInput.tickNanoseconds))
                let rc = snd_seq_set_queue_tempo(handle, q, tempo)
                snd_seq_queue_tempo_free(tempo)
                if rc < 0 {
                    snd_seq_free_queue(handle, q)
                    throw .failed(operation: "set the input queue's tempo", code: rc)
                }
            }
        }
        var infoPointer: OpaquePointer?
        guard tactus_seq_port_info_malloc(&infoPointer) >= 0, let info = infoPointer else {
            snd_seq_free_queue(handle, q)
            throw .failed(operation: "allocate port info", code: -ENOMEM)
        }
        defer { snd_seq_port_info_free(info) }
        var rc = snd_seq_get_port_info(handle, client.inputPort, info)
        if rc >= 0 {
            snd_seq_port_info_set_timestamping(info, 1)
            snd_seq_port_info_set_timestamp_real(info, stamps == .realTime ? 1 : 0)
            snd_seq_port_info_set_timestamp_queue(info, q)
            rc = snd_seq_set_port_info(handle, client.inputPort, info)
        }
        if rc >= 0 { rc = tactus_seq_start_queue(handle, q) }
        if rc >= 0 { rc = snd_seq_drain_output(handle) }
        if rc < 0 {
            snd_seq_free_queue(handle, q)
            throw .failed(operation: "set up input timestamps", code: rc)
        }
        // The narrowest of a few brackets of the queue's time between two monotonic readings.
        var best: (width: Int64, offset: Int64) = (.max, 0)
        for _ in 0..<8 {
            let before = SequencerInput.monotonic()
            let queueTime = tactus_seq_queue_real_time(handle, q)
            let after = SequencerInput.monotonic()
            if queueTime >= 0 && after - before < best.width { best = (after - before, (before + after) / 2 - queueTime) }
        }
        hostOffsetNanos = best.offset
    }

    deinit {
        stop()
        _ = tactus_seq_stop_queue(client.handle, queue)
        snd_seq_free_queue(client.handle, queue)
    }

    static func monotonic() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }

    fileprivate func start(timingClock: Bool, _ deliver: @escaping @Sendable (_ hostNanos: Int64, _ bytes: [UInt8]) -> Void) {
        let thread = Thread { [self] in
            run(timingClock: timingClock, deliver)
            finished.signal()
        }
        thread.name = "tactus-seq-in"
        thread.start()
    }

    private func run(timingClock: Bool, _ deliver: @Sendable (Int64, [UInt8]) -> Void) {
        let handle = client.handle
        var decoderPointer: OpaquePointer?
        guard snd_midi_event_new(1 << 16, &decoderPointer) >= 0, let decoder = decoderPointer else { return }
        defer { snd_midi_event_free(decoder) }
        // Every message with its status byte: a recorder stores messages, not a wire stream.
        snd_midi_event_no_status(decoder, 1)
        snd_seq_nonblock(handle, 1)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        let count = snd_seq_poll_descriptors_count(handle, Int16(POLLIN))
        var descriptors = [pollfd](repeating: pollfd(), count: Int(max(1, count)))
        let filled = snd_seq_poll_descriptors(handle, &descriptors, UInt32(descriptors.count), Int16(POLLIN))
        while !stopping.load(ordering: .relaxed) {
            if poll(&descriptors, nfds_t(filled), 50) <= 0 { continue }
            while true {
                var received: UnsafeMutablePointer<snd_seq_event_t>?
                let rc = snd_seq_event_input(handle, &received)
                if rc < 0 { break }
                guard let event = received else { continue }
                let now = SequencerInput.monotonic()
                let stamped: Int64
                if stamps == .realTime {
                    let real = event.pointee.time.time
                    stamped = Int64(real.tv_sec) * 1_000_000_000 + Int64(real.tv_nsec)
                } else {
                    stamped = Int64(event.pointee.time.tick) * SequencerInput.tickNanoseconds
                }
                // Events the kernel did not stamp (none should reach this port) take the time they were read.
                let host = stamped > 0 ? stamped + hostOffsetNanos : now
                snd_midi_event_reset_decode(decoder)
                let n = buffer.withUnsafeMutableBufferPointer { snd_midi_event_decode(decoder, $0.baseAddress, $0.count, event) }
                guard n > 0 else { continue }
                let bytes = Array(buffer[0..<n])
                if (bytes[0] == 0xF8 && !timingClock) || bytes[0] == 0xFE { continue }
                deliver(host, bytes)
            }
        }
    }

    /// Stops the reading thread and waits for it (at most a poll timeout).
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        _ = finished.wait(timeout: .now() + .seconds(1))
    }
}

extension SequencerClient {
    /// The input port's address, `CLIENT:PORT`, for other programs to send to.
    public var inputAddress: String { "\(clientID):\(inputPort)" }

    /// Starts receiving on the input port: `deliver` gets every message with its monotonic
    /// host time, in order, on the input's thread. Keep the returned input alive while
    /// recording; stop it before the client goes. Timing clock (0xF8) is left out unless
    /// `timingClock` asks for it (a clock follower or a test of clock output).
    public func startInput(stamps: SequencerInputStamps = .queueTicks, timingClock: Bool = false,
                           _ deliver: @escaping @Sendable (_ hostNanos: Int64, _ bytes: [UInt8]) -> Void) throws(SequencerError) -> SequencerInput {
        let input = try SequencerInput(client: self, stamps: stamps)
        input.start(timingClock: timingClock, deliver)
        return input
    }
}

/// How the kernel stamps events arriving at the input port.
public enum SequencerInputStamps: String, Sendable, CaseIterable {
    /// The queue's real time at the moment of arrival, including how late the interrupt
    /// that delivered the event ran.
    case realTime = "real"
    /// The queue's tick count (10 us ticks), which advances by the timer's nominal period at
    /// each interrupt: what arecordmidi records.
    case queueTicks = "tick"
}
