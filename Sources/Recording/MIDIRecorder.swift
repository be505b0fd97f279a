import MIDI
import Playback
import Sequencing

/// What happens to a track's existing events where a take lands in it.
public enum RecordingMode: String, Hashable, Sendable {
    /// The take is added to what the track holds.
    case overdub
    /// Channel events of the track inside the recorded span are removed first.
    case replace
}

/// How a take is recorded: where it goes, which span counts, loop passes and input quantize.
/// Positions are ticks of the recorded sequence (the backing's timeline).
public struct RecordingSettings: Hashable, Sendable {
    /// Overdub or replace, for a take that lands in an existing track.
    public var mode: RecordingMode
    /// Only events at or after this tick are kept (nil: from the start of the take).
    public var punchIn: Int64?
    /// Only events before this tick are kept; notes still held there end there (nil: no end).
    public var punchOut: Int64?
    /// Loop recording: playback repeats this span and every pass becomes a take of its own.
    public var loop: Range<Int64>?
    /// Input quantize: note starts move to the nearest line of this grid, keeping their length.
    public var quantize: QuantizeGrid?
    /// The track (index into `MusicSequence.tracks`) the take goes into; nil makes a new one.
    /// Loop takes always get tracks of their own.
    public var targetTrack: Int?
    /// Where the take starts (ticks): the start of the span `replace` clears when there is no
    /// punch-in.
    public var startTick: Int64

    /// Creates settings; by default a new track, overdub, no punch, no loop, no quantize.
    public init(mode: RecordingMode = .overdub, punchIn: Int64? = nil, punchOut: Int64? = nil, loop: Range<Int64>? = nil,
                quantize: QuantizeGrid? = nil, targetTrack: Int? = nil, startTick: Int64 = 0) {
        self.mode = mode
        self.punchIn = punchIn
        self.punchOut = punchOut
        self.loop = loop
        self.quantize = quantize
        self.targetTrack = targetTrack
        self.startTick = startTick
    }
}

/// Turns stamped live MIDI into tracks of a sequence, like a sequencer's record button.
///
/// The recorder works in the *take's time*: seconds of the song at play rate 1, counted on the
/// song's own timeline, unwrapped (a loop pass continues past the loop's end rather than
/// jumping back) and negative during a count-in. A `RecordingClock` (Playback) gives that time for a
/// host time; the recorder turns it into ticks through the tempo map, so tempo changes and
/// the play rate are already accounted for when an event gets here.
///
/// Notes are paired first in, first out per channel and key into note events with a
/// duration. Events before the start (count-in) or outside the punch span are dropped; a note
/// held across the punch-out or a loop's end is ended there. Input quantize moves note starts
/// and keeps lengths. No ALSA here: any source that can stamp bytes can feed it.
public struct MIDIRecorder: Sendable {
    /// The tempo map ticks are computed with.
    public let tempoMap: TempoMap
    /// Ticks per quarter note of the recorded sequence.
    public let ticksPerQuarter: Int
    /// The settings of this take.
    public let settings: RecordingSettings

    private struct OpenNote {
        var pass: Int
        var tick: Int64
        var velocity: UInt8
        var index: Int
    }

    /// Events per pass (one pass without a loop), as they will be placed; only passes that
    /// received something are held, so a time far past the start (a journal's, say) does not
    /// make room for every pass before it.
    private var passes: [Int: [TimedEvent]] = [:]
    private var open: [Int: [OpenNote]] = [:]
    private var loopSeconds: (start: Double, length: Double)?
    /// The furthest tick (and pass) recording has reached.
    private var reached: (pass: Int, tick: Int64) = (0, 0)
    private var finished = false

    /// Messages received, kept or not.
    public private(set) var receivedCount = 0
    /// Messages kept in a take.
    public private(set) var keptCount = 0
    /// Messages dropped: before the start, outside the punch span, note-offs of dropped notes,
    /// or messages a MIDI file cannot hold (counted in ``malformedCount`` too).
    public private(set) var droppedCount = 0
    /// Messages dropped because a Standard MIDI File track cannot hold them: a status-less or
    /// truncated message, a data byte over 127, a sysex without its F7, system common and
    /// real-time bytes (F1-F6, F8-FF; an FF would be read back as a meta event). A take holds
    /// only what reads back.
    public private(set) var malformedCount = 0

    /// True when `bytes` is one message a Standard MIDI File track can hold as an event: a
    /// whole channel message or a whole sysex (F0 ... F7).
    public static func isStorable(_ bytes: [UInt8]) -> Bool {
        guard let status = bytes.first, status >= 0x80 else { return false }
        if status == 0xF0 {
            return bytes.count >= 2 && bytes.last == 0xF7 && bytes.dropFirst().dropLast().allSatisfy { $0 < 0x80 }
        }
        guard status < 0xF0 else { return false }
        // Program change and channel pressure (C0, D0) carry one data byte, the rest two.
        let length = status & 0xE0 == 0xC0 ? 2 : 3
        return bytes.count == length && bytes.dropFirst().allSatisfy { $0 < 0x80 }
    }

    /// A recorder for a sequence with `tempoMap` at `ticksPerQuarter`.
    public init(tempoMap: TempoMap, ticksPerQuarter: Int, settings: RecordingSettings = RecordingSettings()) {
        self.tempoMap = tempoMap
        self.ticksPerQuarter = max(1, ticksPerQuarter)
        self.settings = settings
        if let loop = settings.loop, loop.upperBound > loop.lowerBound {
            let start = tempoMap.seconds(atTick: loop.lowerBound)
            loopSeconds = (start, tempoMap.seconds(atTick: loop.upperBound) - start)
        }
        reached = (0, settings.loop?.lowerBound ?? settings.startTick)
    }

    /// A recorder for `sequence`'s tempo map and resolution.
    public init(sequence: MusicSequence, settings: RecordingSettings = RecordingSettings()) {
        self.init(tempoMap: sequence.makeTempoMap(), ticksPerQuarter: sequence.ticksPerQuarter, settings: settings)
    }

    /// Where take time `seconds` lands: the loop pass (0 without a loop) and the tick in it;
    /// nil before the start of the take, or past the furthest tick or loop pass a take holds.
    public func position(atSeconds seconds: Double) -> (pass: Int, tick: Int64)? {
        guard seconds.isFinite, seconds >= 0 else { return nil }
        if let loopSeconds, let loop = settings.loop {
            guard seconds >= loopSeconds.start - 1e-9 else { return nil }
            let along = max(0, seconds - loopSeconds.start)
            let passCount = (along / loopSeconds.length).rounded(.down)
            // Past what a take can reach (a loop too short for Double, a time scribbled in a journal).
            guard passCount < 1e18 else { return nil }
            var pass = Int(passCount)
            let folded = loopSeconds.start + (along - Double(pass) * loopSeconds.length)
            guard let ticks = Self.tick(tempoMap.tick(atSeconds: folded)) else { return nil }
            var tick = ticks
            if tick >= loop.upperBound {
                pass += 1
                tick = loop.lowerBound
            }
            return (pass, max(loop.lowerBound, tick))
        }
        guard let tick = Self.tick(tempoMap.tick(atSeconds: seconds)) else { return nil }
        return (0, tick)
    }

    /// `ticks` rounded, or nil past what a tick holds.
    private static func tick(_ ticks: Double) -> Int64? {
        let rounded = ticks.rounded()
        return rounded > -9.2e18 && rounded < 9.2e18 ? Int64(rounded) : nil
    }

    private func inPunch(_ tick: Int64) -> Bool {
        if let punchIn = settings.punchIn, tick < punchIn { return false }
        if let punchOut = settings.punchOut, tick >= punchOut { return false }
        return true
    }

    /// The tick a note held from `from` ends at when released at `to`: the punch-out or the
    /// end of its loop pass when it is held past them.
    private func endTick(of note: OpenNote, releasedAt to: (pass: Int, tick: Int64)) -> Int64 {
        var end = to.tick
        if to.pass > note.pass, let loop = settings.loop { end = loop.upperBound }
        if let punchOut = settings.punchOut { end = min(end, punchOut) }
        if let loop = settings.loop { end = min(end, loop.upperBound) }
        return max(note.tick, end)
    }

    /// Records one message at take time `seconds`. Only what a Standard MIDI File track holds
    /// is kept: a channel message with all its data bytes (each below 0x80), or a system
    /// exclusive message; anything else (a stray data byte, a message cut short, system common
    /// or real-time bytes) is dropped, since written to the take's file it would make the file
    /// unreadable.
    public mutating func record(_ bytes: [UInt8], atSeconds seconds: Double) {
        guard !finished, let status = bytes.first else { return }
        receivedCount += 1
        guard Self.isStorable(bytes) else {
            malformedCount += 1
            droppedCount += 1
            return
        }
        guard let at = position(atSeconds: seconds) else { droppedCount += 1; return }
        if at.pass > reached.pass || (at.pass == reached.pass && at.tick > reached.tick) { reached = at }
        let kind = status & 0xF0
        if (kind == 0x80 || kind == 0x90) && bytes.count >= 3 {
            let key = Int(status & 0x0F) << 7 | Int(bytes[1] & 0x7F)
            if kind == 0x90 && bytes[2] > 0 {
                guard inPunch(at.tick) else { droppedCount += 1; return }
                let note = NoteEvent(channel: status & 0x0F, key: bytes[1], velocity: bytes[2], duration: 0)
                passes[at.pass, default: []].append(TimedEvent(tick: at.tick, order: UInt32(passes[at.pass]?.count ?? 0), event: .note(note)))
                open[key, default: []].append(OpenNote(pass: at.pass, tick: at.tick, velocity: bytes[2], index: passes[at.pass]!.count - 1))
                keptCount += 1
            } else {
                guard var waiting = open[key], !waiting.isEmpty else { droppedCount += 1; return }
                let note = waiting.removeFirst()
                open[key] = waiting
                close(note, at: at, releaseVelocity: kind == 0x80 ? bytes[2] : 0, byZeroVelocity: kind == 0x90)
                keptCount += 1
            }
            return
        }
        guard inPunch(at.tick) else { droppedCount += 1; return }
        let event: SequenceEvent
        if status == 0xF0 {
            event = .sysex(SysexEvent(status: 0xF0, payload: Array(bytes.dropFirst())))
        } else {
            let m = MIDIMessage(status: status, data1: bytes.count > 1 ? bytes[1] : 0, data2: bytes.count > 2 ? bytes[2] : 0)
            event = .message(m)
        }
        passes[at.pass, default: []].append(TimedEvent(tick: at.tick, order: UInt32(passes[at.pass]?.count ?? 0), event: event))
        keptCount += 1
    }

    private mutating func close(_ note: OpenNote, at: (pass: Int, tick: Int64), releaseVelocity: UInt8, byZeroVelocity: Bool) {
        guard case .note(var n) = passes[note.pass]?[note.index].event else { return }
        n.duration = endTick(of: note, releasedAt: at) - note.tick
        n.releaseVelocity = releaseVelocity & 0x7F
        n.releasedByZeroVelocityNoteOn = byZeroVelocity
        passes[note.pass]?[note.index].event = .note(n)
    }

    /// Ends the take at take time `seconds` (or where the last event was, whichever is later):
    /// notes still held end there. Later messages are ignored.
    public mutating func finish(atSeconds seconds: Double) {
        guard !finished else { return }
        var end = reached
        if let at = position(atSeconds: seconds), at.pass > end.pass || (at.pass == end.pass && at.tick > end.tick) { end = at }
        reached = end
        for key in open.keys.sorted() {
            for note in open[key] ?? [] { close(note, at: end, releaseVelocity: 0, byZeroVelocity: false) }
        }
        open = [:]
        finished = true
    }

    /// The tick where the take ended, or the furthest one reached so far (in its loop pass).
    public var endTick: Int64 { reached.tick }

    /// The takes as tracks: one per loop pass that holds events (named "Take N" by pass
    /// number), or one track for a take without a loop. Input quantize is applied.
    /// Notes still held end at the furthest point reached; call ``finish(atSeconds:)`` first
    /// to end them at the stop.
    public var takes: [(pass: Int, track: MusicTrack)] {
        var copy = self
        if !copy.finished { copy.finish(atSeconds: -1) }
        var result: [(pass: Int, track: MusicTrack)] = []
        for (pass, events) in copy.passes.sorted(by: { $0.key < $1.key }) where !events.isEmpty {
            // Added one by one so every event and note release gets its own order, in the
            // order played.
            var track = MusicTrack()
            for e in copy.quantized(events).sorted(by: TrackOrdering.less) { track.add(e.event, at: e.tick) }
            result.append((pass, track))
        }
        return result
    }

    /// The take with its note starts on the grid. The expression played for a note's start
    /// (pitch bend, channel pressure, CC 74 on its channel at its tick) moves with a note
    /// pulled earlier, so it still comes before the note-on, as `MusicSequence.quantize` does.
    private func quantized(_ events: [TimedEvent]) -> [TimedEvent] {
        guard let grid = settings.quantize else { return events }
        let step = grid.ticks(ticksPerQuarter: ticksPerQuarter)
        struct ChannelTick: Hashable { var channel: UInt8, tick: Int64 }
        var movedEarlier: [ChannelTick: Int64] = [:]
        let notesOnGrid = events.map { e in
            guard case .note(let n) = e.event else { return e }
            var q = e
            var line = ((e.tick + step / 2) / step) * step
            // A start pulled onto the loop's end would belong to the next pass: keep it inside.
            if let loop = settings.loop, line >= loop.upperBound { line -= step }
            if let loop = settings.loop { line = max(loop.lowerBound, line) }
            q.tick = max(0, line)
            if q.tick < e.tick { movedEarlier[ChannelTick(channel: n.channel, tick: e.tick)] = q.tick }
            return q
        }
        guard !movedEarlier.isEmpty else { return notesOnGrid }
        return notesOnGrid.map { e in
            guard case .message(let m) = e.event, m.isNoteExpression,
                  let start = movedEarlier[ChannelTick(channel: m.channel, tick: e.tick)] else { return e }
            var moved = e
            moved.tick = start
            return moved
        }
    }

    /// `sequence` with the take(s) merged in: loop takes as new tracks "Take N"; a take without
    /// a loop into ``RecordingSettings/targetTrack`` (overdub, or replace: the track's channel
    /// events and sysex from the punch-in, or the start, up to the punch-out, or the take's
    /// end, are removed first) or, with no target, as a new track "Recorded".
    public func merged(into sequence: MusicSequence) -> MusicSequence {
        var result = sequence
        let takes = self.takes
        if settings.loop != nil {
            for take in takes {
                var track = take.track
                track.name = "Take \(take.pass + 1)"
                result.tracks.append(track)
            }
            return result
        }
        let recorded = takes.first?.track ?? MusicTrack()
        guard let target = settings.targetTrack, result.tracks.indices.contains(target) else {
            var track = recorded
            track.name = "Recorded"
            result.tracks.append(track)
            return result
        }
        var track = result.tracks[target]
        if settings.mode == .replace {
            let start = settings.punchIn ?? settings.startTick
            let end = settings.punchOut ?? max(start, endTick)
            track.removeAll { e in
                guard e.tick >= start && e.tick < end else { return false }
                switch e.event {
                case .note, .message, .sysex: return true
                case .meta, .parameter, .user: return false
                }
            }
        }
        for e in recorded.events {
            var event = e.event
            if case .note(var n) = event {
                n.releaseOrder = 0
                event = .note(n)
            }
            track.add(event, at: e.tick)
        }
        result.tracks[target] = track
        return result
    }
}
