import MIDI
import Sequencing

/// One MIDI message and the time it leaves, counted from the start of playback.
public struct TimedMIDIMessage: Hashable, Sendable {
    /// Nanoseconds after the start of playback.
    public var nanoseconds: UInt64
    /// The message's bytes: a channel or system message, or a sysex message or packet
    /// (starting with 0xF0, or a continuation packet without a status byte).
    public var bytes: [UInt8]

    /// Creates a message at a time.
    public init(nanoseconds: UInt64, bytes: [UInt8]) {
        self.nanoseconds = nanoseconds
        self.bytes = bytes
    }

    /// True for a sysex message or packet rather than a short message.
    public var isSysex: Bool { bytes.first.map { $0 == 0xF0 || $0 < 0x80 || $0 == 0xF7 } ?? false }
}

/// A sequence flattened into the MIDI messages it sends, each at its real time from the
/// tempo map: what `tactus play --port` schedules on an ALSA queue.
///
/// Every audible track (mute and solo apply; the conductor track always plays) contributes
/// its notes as note-on and note-off, its other messages, and its sysex; meta, automation and
/// application events stay behind. Track offsets and track loops apply as in audio playback.
/// Within a tick, messages come in the playback order of `SequenceEvent.playbackRank`.
public struct MIDITimeline: Hashable, Sendable {
    /// The messages in the order they are sent, times never decreasing.
    public private(set) var messages: [TimedMIDIMessage]
    /// When playback ends: the end of the sequence (or `toTick`), after the last message.
    public private(set) var endNanoseconds: UInt64
    /// True when the timeline carries MIDI clock and transport messages (see ``init(sequence:fromTick:toTick:rate:clock:)``).
    public private(set) var sendsClock = false

    /// Flattens `sequence` from `fromTick` up to (not including) `toTick`, or the end, played
    /// at `rate` (2 plays in half the time).
    ///
    /// Notes that start before `fromTick` are left out; notes still sounding at `toTick` end
    /// there. Controllers, program changes, pitch bends and sysex from before `fromTick` are
    /// sent at the start, in their order, so instruments are set up as they would be there.
    ///
    /// With `clock`, the timeline also drives MIDI clock followers (drum machines,
    /// arpeggiators, other sequencers): Start (or, from a later tick, a Song Position Pointer
    /// naming the first sixteenth at or after `fromTick`, then Continue) at the start, 24 clocks
    /// per quarter note at their exact times through the tempo map and `rate`, and Stop at the
    /// end, last. At equal times clock messages go before the song's own messages.
    public init(sequence: MusicSequence, fromTick: Int64 = 0, toTick: Int64? = nil, rate: Double = 1, clock: Bool = false) {
        precondition(rate > 0 && rate.isFinite, "rate must be positive")
        let tempo = sequence.makeTempoMap()
        let anySolo = sequence.tracks.contains { $0.isSoloed }
        let horizon = toTick ?? max(2 * sequence.length, 1)
        let startNumerator = tempo.timeNumerator(atTick: fromTick)
        let scale = 1e9 / Double(tempo.timeDenominator) / rate
        func time(_ tick: Int64) -> UInt64 {
            UInt64(max(0, (Double(tempo.timeNumerator(atTick: tick) - startNumerator) * scale).rounded()))
        }
        struct Entry {
            var sortTick: Int64
            var rank: UInt8
            var tick: Int64
            var track: Int
            var order: UInt32
            var bytes: [UInt8]
        }
        var entries: [Entry] = []
        var lastTick: Int64 = 0
        for (trackIndex, track) in sequence.allTracks.enumerated() {
            let isTempoTrack = trackIndex == 0
            guard isTempoTrack || !(track.isMuted || (anySolo && !track.isSoloed)) else { continue }
            // The passes of the track, as the audio schedule makes them: (shift added to
            // every tick, end of the looped region for note clipping, looped-region pass).
            let loop = isTempoTrack ? nil : track.loop
            var passes: [(shift: Int64, regionEnd: Int64?, looped: Bool)] = []
            if let loop {
                let count: Int64
                switch loop.count {
                case .times(let n): count = Int64(max(1, n))
                case .forever: count = max(1, (max(1, horizon - track.offset) + loop.length - 1) / loop.length)
                }
                for k in 0..<count { passes.append((k * loop.length, (k + 1) * loop.length, true)) }
                let restShift = (count - 1) * loop.length
                if case .times = loop.count { passes.append((restShift, nil, false)) }
                lastTick = max(lastTick, track.offset + (loop.count == .forever ? count * loop.length : max(track.length + restShift, count * loop.length)))
            } else {
                passes.append((0, nil, false))
                lastTick = max(lastTick, track.length + track.offset)
            }
            for pass in passes {
                for e in track.events {
                    if let loop, pass.looped != (e.tick < loop.length) { continue }
                    let tick = max(0, e.tick + pass.shift + track.offset)
                    if let toTick, tick >= toTick { continue }
                    let rank = e.event.playbackRank
                    switch e.event {
                    case .note(let n):
                        guard tick >= fromTick else { continue }
                        var endTick = max(tick, e.tick + n.duration + pass.shift + track.offset)
                        if let regionEnd = pass.regionEnd { endTick = min(endTick, max(tick, regionEnd + track.offset)) }
                        if let toTick { endTick = min(endTick, toTick) }
                        entries.append(Entry(sortTick: tick, rank: rank, tick: tick, track: trackIndex, order: e.order, bytes: n.onMessage.bytes))
                        // A zero-length note must still start before it stops.
                        let offRank: UInt8 = endTick == tick ? 9 : SequenceEvent.message(n.offMessage).playbackRank
                        entries.append(Entry(sortTick: endTick, rank: offRank, tick: endTick, track: trackIndex, order: n.releaseOrder, bytes: n.offMessage.bytes))
                    case .message(let m):
                        if tick < fromTick {
                            // Chase the state, not the notes.
                            guard m.isChannelMessage, !m.isNoteOn, !m.isNoteOff else { continue }
                        }
                        entries.append(Entry(sortTick: max(tick, fromTick), rank: rank, tick: tick, track: trackIndex, order: e.order, bytes: m.bytes))
                    case .sysex(let s):
                        entries.append(Entry(sortTick: max(tick, fromTick), rank: rank, tick: tick, track: trackIndex, order: e.order,
                                             bytes: s.status == 0xF0 ? [0xF0] + s.payload : s.payload))
                    case .meta, .parameter, .user:
                        continue
                    }
                }
            }
        }
        entries.sort { a, b in
            if a.sortTick != b.sortTick { return a.sortTick < b.sortTick }
            if a.tick != b.tick { return a.tick < b.tick }
            if a.rank != b.rank { return a.rank < b.rank }
            if a.track != b.track { return a.track < b.track }
            return a.order < b.order
        }
        messages = entries.filter { !$0.bytes.isEmpty }.map { TimedMIDIMessage(nanoseconds: time($0.sortTick), bytes: $0.bytes) }
        let endTick = toTick ?? max(lastTick, sequence.length)
        endNanoseconds = max(time(max(endTick, fromTick)), messages.last?.nanoseconds ?? 0)
        if clock {
            let transport = MIDIClockTimeline(tempo: tempo, fromTick: fromTick, endTick: max(endTick, fromTick), rate: rate)
            var clockMessages = transport.messages(endNanoseconds: endNanoseconds)
            // Stop goes after everything, the song's last note-offs included.
            let stop = clockMessages.removeLast()
            messages = Self.merge(clock: clockMessages, song: messages) + [stop]
            sendsClock = true
        }
    }

    /// Merges two time-ordered lists; at equal times the clock's messages come first.
    private static func merge(clock: [TimedMIDIMessage], song: [TimedMIDIMessage]) -> [TimedMIDIMessage] {
        var merged: [TimedMIDIMessage] = []
        merged.reserveCapacity(clock.count + song.count)
        var i = 0, j = 0
        while i < clock.count || j < song.count {
            if j == song.count || (i < clock.count && clock[i].nanoseconds <= song[j].nanoseconds) {
                merged.append(clock[i]); i += 1
            } else {
                merged.append(song[j]); j += 1
            }
        }
        return merged
    }

    /// The channels (0...15) that some channel message uses.
    public var channelsUsed: [UInt8] {
        var used = Set<UInt8>()
        for m in messages {
            if let status = m.bytes.first, status >= 0x80, status < 0xF0 { used.insert(status & 0x0F) }
        }
        return used.sorted()
    }
}
