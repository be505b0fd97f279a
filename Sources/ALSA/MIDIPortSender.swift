import CALSA
import Foundation

/// Sends MIDI messages from a ``SequencerClient``'s output port to chosen ports, each at a
/// monotonic host time, through an ALSA queue: the sender for MIDI out during audio playback,
/// where the control side decides the times (see `MIDIPortScheduler` in Playback).
///
/// The queue's real time is related to the monotonic clock by an offset measured when the
/// queue starts. ``dropScheduled()`` forgets everything not yet delivered by replacing the
/// queue (freeing a queue removes its events).
public final class MIDIPortSender {
    private let client: SequencerClient
    private var queue: Int32 = -1
    private var hostOffsetNanos: Int64 = 0
    private let encoder: OpaquePointer
    /// The destinations, as resolved addresses.
    public let destinations: [(client: Int, port: Int)]

    /// A sender to `ports` (names or addresses, resolved now; their index is the
    /// destination number).
    public init(client: SequencerClient, ports: [String]) throws(SequencerError) {
        self.client = client
        var resolved: [(client: Int, port: Int)] = []
        for p in ports { resolved.append(try client.resolve(p)) }
        destinations = resolved
        var encoderPointer: OpaquePointer?
        let rc = snd_midi_event_new(1 << 16, &encoderPointer)
        guard rc >= 0, let encoderPointer else { throw .failed(operation: "create a MIDI encoder", code: rc) }
        encoder = encoderPointer
        try startQueue()
    }

    deinit {
        if queue >= 0 { snd_seq_free_queue(client.handle, queue) }
        snd_midi_event_free(encoder)
    }

    private func startQueue() throws(SequencerError) {
        let handle = client.handle
        let q = snd_seq_alloc_named_queue(handle, "Tactus MIDI out")
        if q < 0 { throw .failed(operation: "allocate a queue", code: q) }
        var rc = tactus_seq_start_queue(handle, q)
        if rc >= 0 { rc = snd_seq_drain_output(handle) }
        if rc < 0 {
            snd_seq_free_queue(handle, q)
            throw .failed(operation: "start the queue", code: rc)
        }
        queue = q
        var best: (width: Int64, offset: Int64) = (.max, 0)
        for _ in 0..<8 {
            let before = SequencerInput.monotonic()
            let queueTime = tactus_seq_queue_real_time(handle, q)
            let after = SequencerInput.monotonic()
            if queueTime >= 0 && after - before < best.width { best = (after - before, (before + after) / 2 - queueTime) }
        }
        hostOffsetNanos = best.offset
    }

    /// Encodes `bytes` into `event`; false for bytes that are not one complete message.
    private func encode(_ bytes: [UInt8], into event: inout snd_seq_event_t, storage: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty, let base = storage.baseAddress else { return false }
        tactus_seq_ev_clear(&event)
        snd_midi_event_reset_encode(encoder)
        var offset = 0
        while offset < bytes.count {
            let used = snd_midi_event_encode(encoder, base + offset, bytes.count - offset, &event)
            if used <= 0 { return false }
            offset += used
            if tactus_seq_ev_is_complete(&event) != 0 { return true }
        }
        return false
    }

    private func output(_ bytes: [UInt8], destination: Int, hostNanos: Int64?) {
        guard destinations.indices.contains(destination) else { return }
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = storage.initialize(from: bytes)
        defer { storage.deallocate() }
        var event = snd_seq_event_t()
        guard encode(bytes, into: &event, storage: storage) else { return }
        let target = destinations[destination]
        tactus_seq_ev_address(&event, client.outputPort, Int32(target.client), Int32(target.port))
        if let hostNanos {
            let at = max(0, hostNanos - hostOffsetNanos)
            tactus_seq_ev_schedule_real(&event, queue, UInt32(at / 1_000_000_000), UInt32(at % 1_000_000_000))
        } else {
            tactus_seq_ev_direct(&event)
        }
        // The event's data is copied into the output buffer here.
        snd_seq_event_output(client.handle, &event)
    }

    /// Schedules `bytes` to reach `destination` at monotonic `hostNanos` (at once if past).
    public func send(_ bytes: [UInt8], to destination: Int, atHostTime hostNanos: Int64) {
        output(bytes, destination: destination, hostNanos: hostNanos)
    }

    /// Sends `bytes` to `destination` at once, ahead of anything scheduled.
    public func sendNow(_ bytes: [UInt8], to destination: Int) {
        output(bytes, destination: destination, hostNanos: nil)
    }

    /// Hands what is buffered to the kernel.
    public func flush() {
        snd_seq_drain_output(client.handle)
    }

    /// Forgets everything scheduled and not yet delivered.
    public func dropScheduled() {
        snd_seq_drop_output(client.handle)
        if queue >= 0 {
            _ = tactus_seq_stop_queue(client.handle, queue)
            snd_seq_free_queue(client.handle, queue)
            queue = -1
        }
        try? startQueue()
    }
}
