/// A MIDI message of a track sent to a MIDI port, at its song frame (at play rate 1).
public struct MIDIPortMessage: Hashable, Sendable {
    /// The song frame the message belongs to.
    public var songFrame: Int64
    /// The message (a short message or a whole sysex).
    public var bytes: [UInt8]
    /// Which destination (an index the caller gives meaning to: one per port).
    public var destination: Int

    /// Creates a message.
    public init(songFrame: Int64, bytes: [UInt8], destination: Int) {
        self.songFrame = songFrame
        self.bytes = bytes
        self.destination = destination
    }
}

/// What a ``MIDIPortScheduler`` asks its sender to do.
public enum MIDIPortAction: Hashable, Sendable {
    /// Send `bytes` to `destination` so they arrive at monotonic host time `hostNanos`.
    case send(hostNanos: Int64, bytes: [UInt8], destination: Int)
    /// Drop everything scheduled and not yet sent (the transport stopped or jumped).
    case dropScheduled
    /// Send `bytes` to `destination` at once: note-offs and All Sound Off after a drop.
    case sendNow(bytes: [UInt8], destination: Int)
}

/// Sends the tracks routed to MIDI ports in step with the audio clock during playback: the
/// control side's half of MIDI out (the audio thread plays only the audio graph).
///
/// Each ``service(anchor:latencyFrames:nowNanos:)`` call, from the player's control thread
/// every few tens of milliseconds, reads where the engine is (its anchor) and asks for the
/// messages the engine will render within ``lookaheadNanos`` to be scheduled at the host time
/// their frame is heard: the output frame they are rendered at plus the output latency,
/// converted with the earliest host time seen for an output frame (as
/// ``PlayerRecordingClock`` does, so driver wake-up jitter stays out; blocks rendered while
/// the driver fills the buffer at the start are not used, as they are asked for long before
/// they play). A sender (an ALSA queue) delivers them then.
///
/// When the anchor shows a stop, a locate, a loop jump or a rate change, what was scheduled
/// and not yet due is dropped, the notes already sounding on each port get their note-offs
/// followed by All Sound Off (CC 120) and All Notes Off (CC 123) on the channels that port
/// uses, and scheduling resumes from the new position. Messages between the heard and the
/// rendered position at a jump (at most the output latency) are not sent.
public final class MIDIPortScheduler {
    /// The messages, sorted by song frame.
    public let messages: [MIDIPortMessage]
    /// Frames per second of the player.
    public let sampleRate: Int
    /// How far ahead of the rendered position messages are scheduled.
    public var lookaheadNanos: Int64 = 100_000_000
    /// The transport loop in song frames, if any: nothing at or after its end is scheduled
    /// while playback is before it (the engine will jump back there).
    public var loopFrames: Range<Int64>?

    private var cursor = 0
    private var previous: PlaybackAnchor?
    private var frameZeroHost: Double?
    private var lastHost: Int64 = 0
    /// Scheduled messages whose time may not have come yet: host time and message index.
    private var inFlight: [(hostNanos: Int64, index: Int)] = []
    /// Unanswered note-ons per destination, channel and key, of messages already delivered.
    private var sounding: [Int: [Int]] = [:]
    private var channels: [Int: Set<UInt8>] = [:]

    /// A scheduler for `messages` (sorted here) played at `sampleRate`.
    public init(messages: [MIDIPortMessage], sampleRate: Int) {
        self.messages = messages.enumerated().sorted { a, b in
            a.element.songFrame != b.element.songFrame ? a.element.songFrame < b.element.songFrame : a.offset < b.offset
        }.map(\.element)
        self.sampleRate = sampleRate
        for m in messages {
            if let s = m.bytes.first, s >= 0x80, s < 0xF0 { channels[m.destination, default: []].insert(s & 0x0F) }
        }
    }

    /// The index of the first message at or after `frame`.
    private func firstIndex(atOrAfter frame: Int64) -> Int {
        var lo = 0, hi = messages.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if messages[mid].songFrame < frame { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Counts what has been delivered by `now` as sounding or released.
    private func retire(before now: Int64) {
        var kept: [(hostNanos: Int64, index: Int)] = []
        for f in inFlight {
            guard f.hostNanos <= now else { kept.append(f); continue }
            let m = messages[f.index]
            guard m.bytes.count == 3 else { continue }
            let kind = m.bytes[0] & 0xF0, slot = Int(m.bytes[0] & 0x0F) * 128 + Int(m.bytes[1] & 0x7F)
            var counts = sounding[m.destination] ?? [Int](repeating: 0, count: 2048)
            if kind == 0x90 && m.bytes[2] > 0 {
                counts[slot] += 1
            } else if kind == 0x80 || kind == 0x90 {
                counts[slot] = max(0, counts[slot] - 1)
            }
            sounding[m.destination] = counts
        }
        inFlight = kept
    }

    /// Drops what is scheduled and silences every port: note-offs for the notes sounding,
    /// then CC 120 and CC 123 on each channel the port's tracks use.
    public func silence(nowNanos now: Int64) -> [MIDIPortAction] {
        retire(before: now)
        var actions: [MIDIPortAction] = [.dropScheduled]
        inFlight = []
        for destination in Set(channels.keys).union(sounding.keys).sorted() {
            if let counts = sounding[destination] {
                for slot in counts.indices where counts[slot] > 0 {
                    for _ in 0..<counts[slot] {
                        actions.append(.sendNow(bytes: [0x80 | UInt8(slot / 128), UInt8(slot % 128), 0], destination: destination))
                    }
                }
            }
            for channel in (channels[destination] ?? []).sorted() {
                actions.append(.sendNow(bytes: [0xB0 | channel, 120, 0], destination: destination))
                actions.append(.sendNow(bytes: [0xB0 | channel, 123, 0], destination: destination))
            }
        }
        sounding = [:]
        return actions
    }

    /// Reads the engine's position and returns what to send, drop or silence now.
    public func service(anchor: PlaybackAnchor?, latencyFrames: Int, nowNanos now: Int64) -> [MIDIPortAction] {
        guard let anchor, PlayerRecordingClock.isSteady(anchor, latencyFrames: latencyFrames) else { return [] }
        let unit = Engine.positionUnitsPerFrame
        // The earliest host time per output frame: late wake-ups do not count.
        let zero = Double(anchor.hostNanos) - Double(anchor.outputFrame) * 1e9 / Double(sampleRate)
        if let f = frameZeroHost {
            frameZeroHost = min(zero, f + Double(max(0, anchor.hostNanos - lastHost)) * 200e-6)
        } else {
            frameZeroHost = zero
        }
        lastHost = anchor.hostNanos
        var actions: [MIDIPortAction] = []
        defer { previous = anchor }
        if anchor.rateStep == 0 {
            // Stopped (or ended): silence once.
            if let previous, previous.rateStep != 0 { actions += silence(nowNanos: now) }
            return actions
        }
        let continuous: Bool
        if let previous, previous.rateStep != 0 {
            let expected = previous.songPosition + (anchor.outputFrame - previous.outputFrame) * previous.rateStep
            continuous = expected == anchor.songPosition && previous.rateStep == anchor.rateStep
        } else {
            continuous = false
        }
        if !continuous {
            if let previous, previous.rateStep != 0 { actions += silence(nowNanos: now) }
            cursor = firstIndex(atOrAfter: (anchor.songPosition + unit - 1) / unit)
        }
        retire(before: now)
        guard let frameZeroHost else { return actions }
        let renderedNow = Double(anchor.outputFrame) + Double(max(0, now - anchor.hostNanos)) * Double(sampleRate) / 1e9
        let horizon = renderedNow + Double(lookaheadNanos) * Double(sampleRate) / 1e9
        let loopEnd: Int64? = loopFrames.flatMap { anchor.songPosition < $0.upperBound * unit ? $0.upperBound : nil }
        while cursor < messages.count {
            let m = messages[cursor]
            if let loopEnd, m.songFrame >= loopEnd { break }
            let output = Double(anchor.outputFrame) + Double(m.songFrame * unit - anchor.songPosition) / Double(anchor.rateStep)
            if output > horizon { break }
            let host = Int64((frameZeroHost + (output + Double(latencyFrames)) * 1e9 / Double(sampleRate)).rounded())
            actions.append(.send(hostNanos: host, bytes: m.bytes, destination: m.destination))
            inFlight.append((host, cursor))
            cursor += 1
        }
        return actions
    }
}
