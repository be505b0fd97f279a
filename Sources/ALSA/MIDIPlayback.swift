import CALSA
import Foundation

/// How MIDI-only playback ended.
public enum MIDIPlaybackEnd: Sendable, Equatable {
    /// Every message was delivered and the end of the timeline was reached.
    case finished
    /// `shouldStop` asked for the stop before the end.
    case stopped
}

extension SequencerClient {
    /// Time between starting the queue and the timeline's zero, so the first events are
    /// queued before they are due.
    static let lead: UInt64 = 50_000_000

    /// Plays `timeline` from the output port to every port subscribed to it (see
    /// ``connectOutput(to:)``), scheduled on an ALSA queue at each message's absolute real
    /// time, and returns at its end or once `shouldStop` returns true.
    ///
    /// Messages are encoded with `snd_midi_event_encode` and fed to the queue ahead of time
    /// in bounded batches; when the kernel's pool is full the call waits in `poll` for room,
    /// and the end is detected by an echo event the queue delivers back to this client. So
    /// `shouldStop` is asked at least every 50 ms, and a signal wakes the wait at once.
    ///
    /// In every case the queue is stopped, pending output is dropped, and note-offs for the
    /// notes still sounding, All Sound Off (CC 120) and All Notes Off (CC 123) go out directly
    /// on every channel the timeline uses.
    public func play(_ timeline: MIDITimeline, shouldStop: () -> Bool) throws(SequencerError) -> MIDIPlaybackEnd {
        let queue = snd_seq_alloc_named_queue(handle, "Tactus playback")
        if queue < 0 { throw .failed(operation: "allocate a queue", code: queue) }
        defer { snd_seq_free_queue(handle, queue) }
        let largestSysex = timeline.messages.lazy.filter(\.isSysex).map(\.bytes.count).max() ?? 0
        var encoderPointer: OpaquePointer?
        let rc = snd_midi_event_new(max(256, largestSysex + 1), &encoderPointer)
        guard rc >= 0, let encoder = encoderPointer else { throw .failed(operation: "create a MIDI encoder", code: rc) }
        defer { snd_midi_event_free(encoder) }
        snd_seq_nonblock(handle, 1)
        defer { snd_seq_nonblock(handle, 0) }

        var end = MIDIPlaybackEnd.finished
        do {
            end = try feed(timeline, queue: queue, encoder: encoder, shouldStop: shouldStop)
        } catch {
            silence(timeline, queue: queue, stoppedEarly: true)
            throw error
        }
        silence(timeline, queue: queue, stoppedEarly: end == .stopped)
        return end
    }

    /// Feeds the queue, starts it after the first batch, and waits for the echo at the end.
    private func feed(_ timeline: MIDITimeline, queue: Int32, encoder: OpaquePointer,
                      shouldStop: () -> Bool) throws(SequencerError) -> MIDIPlaybackEnd {
        let batch = 64
        // Start first: a queue's START removes the events its client had queued on it.
        let rc = tactus_seq_start_queue(handle, queue)
        if rc < 0 { throw .failed(operation: "start the queue", code: rc) }
        guard try drainOrStop(shouldStop: shouldStop) else { return .stopped }
        var started = true
        var sent = 0
        // Starts the queue once the first batch is in the kernel; false when stopped first.
        func start() throws(SequencerError) -> Bool {
            guard try drainOrStop(shouldStop: shouldStop) else { return false }
            let rc = tactus_seq_start_queue(handle, queue)
            if rc < 0 { throw .failed(operation: "start the queue", code: rc) }
            started = true
            return try drainOrStop(shouldStop: shouldStop)
        }
        for message in timeline.messages {
            if shouldStop() { return .stopped }
            var event = snd_seq_event_t()
            // The bytes live until the event has been copied into the output buffer.
            let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, message.bytes.count))
            _ = bytes.initialize(from: message.bytes)
            defer { bytes.deallocate() }
            let complete = encode(message, bytes: bytes, encoder: encoder, into: &event)
            guard complete else { continue }
            tactus_seq_ev_address(&event, outputPort, -1, 0)
            tactus_seq_ev_schedule_real(&event, queue, UInt32((message.nanoseconds + Self.lead) / 1_000_000_000), UInt32((message.nanoseconds + Self.lead) % 1_000_000_000))
            while true {
                // The event's data (a sysex in `bytes` or the encoder's buffer) is copied here.
                let rc = snd_seq_event_output(handle, &event)
                if rc >= 0 { break }
                if rc != -EAGAIN { throw .failed(operation: "send an event", code: rc) }
                if !started ? !(try start()) : !waitForRoom(shouldStop: shouldStop) { return .stopped }
            }
            sent += 1
            if sent % batch == 0 {
                if !started ? !(try start()) : !(try drainOrStop(shouldStop: shouldStop)) { return .stopped }
            }
        }
        if !started, !(try start()) { return .stopped }
        // The echo comes back when the queue reaches the end.
        var echo = snd_seq_event_t()
        tactus_seq_ev_clear(&echo)
        tactus_seq_ev_set_echo(&echo)
        tactus_seq_ev_address(&echo, outputPort, Int32(clientID), inputPort)
        tactus_seq_ev_schedule_real(&echo, queue, UInt32((timeline.endNanoseconds + Self.lead) / 1_000_000_000), UInt32((timeline.endNanoseconds + Self.lead) % 1_000_000_000))
        while true {
            let rc = snd_seq_event_output(handle, &echo)
            if rc >= 0 { break }
            if rc != -EAGAIN { throw .failed(operation: "send the end marker", code: rc) }
            if !waitForRoom(shouldStop: shouldStop) { return .stopped }
        }
        if !(try drainOrStop(shouldStop: shouldStop)) { return .stopped }
        while !shouldStop() {
            if !wait(events: Int16(POLLIN), timeoutMilliseconds: 50) { continue }
            while true {
                var received: UnsafeMutablePointer<snd_seq_event_t>?
                let rc = snd_seq_event_input(handle, &received)
                if rc < 0 { break }
                if let received, tactus_seq_ev_is_echo_from(received, Int32(clientID)) != 0 { return .finished }
            }
        }
        return .stopped
    }

    /// Turns one message into a sequencer event: complete messages through the MIDI encoder,
    /// a packet of a split sysex as it is. The event may point into `bytes` or the encoder.
    private func encode(_ message: TimedMIDIMessage, bytes: UnsafeMutableBufferPointer<UInt8>,
                        encoder: OpaquePointer, into event: inout snd_seq_event_t) -> Bool {
        let count = message.bytes.count
        guard count > 0, let base = bytes.baseAddress else { return false }
        tactus_seq_ev_clear(&event)
        if message.isSysex && !(message.bytes.first == 0xF0 && message.bytes.last == 0xF7) {
            tactus_seq_ev_set_sysex(&event, UInt32(count), base)
            return true
        }
        snd_midi_event_reset_encode(encoder)
        var offset = 0
        while offset < count {
            let used = snd_midi_event_encode(encoder, base + offset, count - offset, &event)
            if used <= 0 { return false }
            offset += used
            if tactus_seq_ev_is_complete(&event) != 0 { return true }
        }
        return false
    }

    /// Writes the output buffer to the kernel, waiting for room; false when stopped first.
    private func drainOrStop(shouldStop: () -> Bool) throws(SequencerError) -> Bool {
        while true {
            let rc = snd_seq_drain_output(handle)
            if rc == 0 { return true }
            if rc > 0 || rc == -EAGAIN {
                if !waitForRoom(shouldStop: shouldStop) { return false }
                continue
            }
            throw .failed(operation: "send events", code: rc)
        }
    }

    /// Waits until the kernel takes more events; false when `shouldStop` says so first.
    private func waitForRoom(shouldStop: () -> Bool) -> Bool {
        while !shouldStop() {
            if wait(events: Int16(POLLOUT), timeoutMilliseconds: 50) { return true }
        }
        return false
    }

    /// Polls the sequencer's descriptors for `events`; true when one is ready.
    private func wait(events: Int16, timeoutMilliseconds: Int32) -> Bool {
        let count = snd_seq_poll_descriptors_count(handle, events)
        guard count > 0 else { usleep(UInt32(timeoutMilliseconds) * 1000); return true }
        var descriptors = [pollfd](repeating: pollfd(), count: Int(count))
        let filled = snd_seq_poll_descriptors(handle, &descriptors, UInt32(count), events)
        return poll(&descriptors, nfds_t(filled), timeoutMilliseconds) > 0
    }

    /// Stops the queue, drops what is still scheduled, and silences every channel used:
    /// note-offs for the notes sounding at the queue's time, then CC 120 and CC 123, and Stop
    /// for clock followers when the end was not reached.
    private func silence(_ timeline: MIDITimeline, queue: Int32, stoppedEarly: Bool) {
        let now = tactus_seq_queue_real_time(handle, queue) - Int64(Self.lead)
        snd_seq_drop_output(handle)
        snd_seq_nonblock(handle, 0)
        _ = tactus_seq_stop_queue(handle, queue)
        var sounding = [Int](repeating: 0, count: 16 * 128)
        if now >= 0 {
            for message in timeline.messages {
                guard message.nanoseconds <= UInt64(now) else { break }
                guard message.bytes.count == 3 else { continue }
                let kind = message.bytes[0] & 0xF0, index = Int(message.bytes[0] & 0x0F) * 128 + Int(message.bytes[1] & 0x7F)
                if kind == 0x90 && message.bytes[2] > 0 {
                    sounding[index] += 1
                } else if kind == 0x80 || kind == 0x90 {
                    sounding[index] = max(0, sounding[index] - 1)
                }
            }
        }
        var messages: [[UInt8]] = timeline.sendsClock && stoppedEarly ? [[0xFC]] : []
        for index in sounding.indices where sounding[index] > 0 {
            messages.append([0x80 | UInt8(index / 128), UInt8(index % 128), 0])
        }
        for channel in timeline.channelsUsed {
            messages.append([0xB0 | channel, 120, 0])
            messages.append([0xB0 | channel, 123, 0])
        }
        var encoderPointer: OpaquePointer?
        guard snd_midi_event_new(16, &encoderPointer) >= 0, let encoder = encoderPointer else { return }
        defer { snd_midi_event_free(encoder) }
        for var bytes in messages {
            var event = snd_seq_event_t()
            tactus_seq_ev_clear(&event)
            snd_midi_event_reset_encode(encoder)
            let used = snd_midi_event_encode(encoder, &bytes, bytes.count, &event)
            guard used == bytes.count, tactus_seq_ev_is_complete(&event) != 0 else { continue }
            tactus_seq_ev_address(&event, outputPort, -1, 0)
            tactus_seq_ev_direct(&event)
            snd_seq_event_output(handle, &event)
        }
        snd_seq_drain_output(handle)
    }
}
