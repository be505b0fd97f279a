import MIDI

extension MusicSequence {
    // MARK: Track access

    /// Applies `body` to each track in scope; -1 is the tempo track.
    mutating func forEachTrack(_ scope: EditScope, includeTempoTrack: Bool, _ body: (Int, inout MusicTrack) -> Void) {
        if includeTempoTrack && scope.tracks == nil { body(-1, &tempoTrack) }
        for i in tracks.indices where scope.includesTrack(i) { body(i, &tracks[i]) }
    }

    // MARK: Notes and velocities

    /// Transposes notes (and note-related messages) by `semitones`. Channel 10 (drums) is left
    /// alone unless the scope names it, since transposing a drum part changes its instruments;
    /// when the sequence's MPE zones make it a member channel it is melodic and moves too.
    @discardableResult
    public mutating func transpose(by semitones: Int, scope: EditScope = .all, policy: TransposeOverflowPolicy = .clamp) -> EditReport {
        var report = EditReport()
        let includeDrums = (scope.channels?.contains(9) ?? false) || mpeZones.isMember(9)
        func moved(_ key: UInt8) -> UInt8? {
            var k = Int(key) + semitones
            if (0...127).contains(k) { return UInt8(k) }
            switch policy {
            case .clamp: return UInt8(min(max(k, 0), 127))
            case .drop: return nil
            case .foldOctave:
                while k > 127 { k -= 12 }
                while k < 0 { k += 12 }
                return UInt8(k)
            }
        }
        forEachTrack(scope, includeTempoTrack: false) { index, track in
            var removals: Set<Int> = []
            var touched = 0
            track.mapEvents { e in
                guard scope.includes(e) else { return }
                switch e.event {
                case .note(var n) where n.channel != 9 || includeDrums:
                    if let k = moved(n.key) { n.key = k; e.event = .note(n) } else { removals.insert(Int(e.order)) }
                    touched += 1
                case .message(var m) where m.isChannelMessage && (m.channel != 9 || includeDrums) && (m.status & 0xE0 == 0x80 || m.status & 0xF0 == 0xA0):
                    if let k = moved(m.data1) { m.data1 = k; e.event = .message(m) } else { removals.insert(Int(e.order)) }
                    touched += 1
                default: break
                }
            }
            if !removals.isEmpty { track.removeAll { removals.contains(Int($0.order)) } }
            report.add(index, touched)
        }
        return report
    }

    /// Changes note-on velocities: `transform` gets the old velocity and returns the new one,
    /// which is clamped to 1...127.
    @discardableResult
    public mutating func changeVelocities(scope: EditScope = .all, _ transform: (Int) -> Int) -> EditReport {
        var report = EditReport()
        forEachTrack(scope, includeTempoTrack: false) { index, track in
            var touched = 0
            track.mapEvents { e in
                guard scope.includes(e) else { return }
                if case .note(var n) = e.event {
                    n.velocity = UInt8(min(max(transform(Int(n.velocity)), 1), 127))
                    e.event = .note(n)
                    touched += 1
                }
            }
            report.add(index, touched)
        }
        return report
    }

    /// Sets every note velocity in scope to `value`.
    @discardableResult
    public mutating func setVelocity(_ value: Int, scope: EditScope = .all) -> EditReport {
        changeVelocities(scope: scope) { _ in value }
    }

    /// Scales velocities by `percent` (100 leaves them).
    @discardableResult
    public mutating func scaleVelocity(percent: Double, scope: EditScope = .all) -> EditReport {
        changeVelocities(scope: scope) { Int((Double($0) * percent / 100).rounded()) }
    }

    /// Maps velocities 1...127 linearly into `range`, narrowing the dynamics.
    @discardableResult
    public mutating func compressVelocity(into range: ClosedRange<Int>, scope: EditScope = .all) -> EditReport {
        changeVelocities(scope: scope) { v in
            range.lowerBound + Int((Double(v - 1) / 126 * Double(range.upperBound - range.lowerBound)).rounded())
        }
    }

    // MARK: Quantize

    /// Moves note starts (and/or ends) toward the grid by `strength` (0...1). `swing` (0...1)
    /// delays every second grid line by up to half a step.
    ///
    /// A note's expression at its start goes with it: pitch bend, channel pressure and CC 74 on
    /// the note's channel at the note's tick move to an earlier start too, so they still come
    /// before the note-on (MPE sends a note's initial bend, pressure and timbre that way). A
    /// later start needs nothing: they already precede it.
    @discardableResult
    public mutating func quantize(grid: QuantizeGrid, strength: Double = 1, swing: Double = 0, starts: Bool = true, ends: Bool = false, scope: EditScope = .all) -> EditReport {
        let step = grid.ticks(ticksPerQuarter: ticksPerQuarter)
        let strength = min(max(strength, 0), 1)
        let swingOffset = Int64((min(max(swing, 0), 1) * Double(step) / 2).rounded())
        func target(_ tick: Int64) -> Int64 {
            // Nearest grid line, where odd lines are pushed late by the swing.
            let index = (tick + step / 2) / step
            var candidates = [index - 1, index, index + 1].filter { $0 >= 0 }.map { i in i * step + (i % 2 == 1 ? swingOffset : 0) }
            candidates.sort { abs($0 - tick) < abs($1 - tick) }
            let line = candidates.first ?? 0
            return tick + Int64((Double(line - tick) * strength).rounded())
        }
        struct ChannelTick: Hashable { var channel: UInt8, tick: Int64 }
        var report = EditReport()
        forEachTrack(scope, includeTempoTrack: false) { index, track in
            var touched = 0
            // Where the notes starting on a channel at a tick moved to, when that is earlier.
            var movedEarlier: [ChannelTick: Int64] = [:]
            track.mapEvents { e in
                guard scope.includes(e), case .note(var n) = e.event else { return }
                let start = starts ? target(e.tick) : e.tick
                var end = ends ? target(e.tick + n.duration) : e.tick + n.duration
                if end <= start { end = start + max(1, min(n.duration, step / 2)) }
                if start != e.tick || end != e.tick + n.duration { touched += 1 }
                if start < e.tick { movedEarlier[ChannelTick(channel: n.channel, tick: e.tick)] = start }
                n.duration = end - start
                e.tick = start
                e.event = .note(n)
            }
            if !movedEarlier.isEmpty {
                track.mapEvents { e in
                    guard case .message(let m) = e.event, m.isNoteExpression, scope.includes(e),
                          let start = movedEarlier[ChannelTick(channel: m.channel, tick: e.tick)] else { return }
                    e.tick = start
                }
            }
            report.add(index, touched)
        }
        return report
    }


    // MARK: Time ranges

    /// Copies the events that start in `range` (ticks relative to its start). Notes keep their
    /// full length, so a cut followed by a paste at the same place gives the sequence back.
    public func copy(_ range: Range<Int64>, scope: EditScope = .all) -> SequenceClip {
        func take(_ track: MusicTrack) -> [TimedEvent] {
            track.events(in: range).compactMap { e in
                guard scope.includes(e) else { return nil }
                var c = e
                c.tick -= range.lowerBound
                return c
            }
        }
        var clip = SequenceClip(length: range.upperBound - range.lowerBound, includesTempoTrack: scope.tracks == nil, tempoEvents: [], trackEvents: [:])
        if clip.includesTempoTrack { clip.tempoEvents = take(tempoTrack) }
        for i in tracks.indices where scope.includesTrack(i) { clip.trackEvents[i] = take(tracks[i]) }
        return clip
    }

    /// Removes the events that start in `range`, leaving a silent gap. A note that starts
    /// before the range keeps its length (it is a single event, never split).
    @discardableResult
    public mutating func clear(_ range: Range<Int64>, scope: EditScope = .all) -> EditReport {
        var report = EditReport()
        forEachTrack(scope, includeTempoTrack: true) { index, track in
            let before = track.count
            track.removeAll { range.contains($0.tick) && scope.includes($0) }
            report.add(index, before - track.count)
        }
        return report
    }

    /// Deletes `range` and closes the gap: later events move earlier by its length. The
    /// tempo and time signature in force at the end of the range are kept at its start.
    @discardableResult
    public mutating func delete(_ range: Range<Int64>, scope: EditScope = .all) -> EditReport {
        let length = range.upperBound - range.lowerBound
        guard length > 0 else { return EditReport() }
        let carriedTempo = scope.tracks == nil ? lastMeta(MetaType.tempo, before: range.upperBound, after: range.lowerBound) : nil
        let carriedMeter = scope.tracks == nil ? lastMeta(MetaType.timeSignature, before: range.upperBound, after: range.lowerBound) : nil
        var report = clear(range, scope: scope)
        forEachTrack(scope, includeTempoTrack: true) { index, track in
            var touched = 0
            track.mapEvents { e in
                if e.tick >= range.upperBound && scope.includes(TimedEvent(tick: range.lowerBound, event: e.event)) {
                    e.tick -= length
                    touched += 1
                }
            }
            if let end = track.explicitLength, end > range.lowerBound {
                track.explicitLength = max(range.lowerBound, end - length)
            }
            report.add(index, touched)
        }
        for carried in [carriedTempo, carriedMeter].compactMap({ $0 }) where !hasMeta(carried.type, at: range.lowerBound) {
            tempoTrack.add(.meta(carried), at: range.lowerBound)
        }
        return report
    }

    /// Cuts `range`: copies it, then deletes it closing the gap.
    public mutating func cut(_ range: Range<Int64>, scope: EditScope = .all) -> SequenceClip {
        let clip = copy(range, scope: scope)
        delete(range, scope: scope)
        return clip
    }

    /// Inserts `length` ticks of silence at `tick`: events at or after it move later. Notes
    /// sounding across `tick` keep their length.
    @discardableResult
    public mutating func insertSilence(at tick: Int64, length: Int64, scope: EditScope = .all) -> EditReport {
        var report = EditReport()
        guard length > 0 else { return report }
        forEachTrack(scope, includeTempoTrack: true) { index, track in
            var touched = 0
            track.mapEvents { e in
                if e.tick >= tick && scope.includes(TimedEvent(tick: tick, event: e.event)) {
                    e.tick += length
                    touched += 1
                }
            }
            if let end = track.explicitLength, end >= tick { track.explicitLength = end + length }
            report.add(index, touched)
        }
        return report
    }

    /// How ``paste(_:at:mode:)`` makes room.
    public enum PasteMode: String, Hashable, Sendable {
        /// Move later events on by the clip's length.
        case insert
        /// Replace whatever starts in the clip's span.
        case overwrite
    }

    /// Pastes a clip at `tick`.
    @discardableResult
    public mutating func paste(_ clip: SequenceClip, at tick: Int64, mode: PasteMode = .insert) -> EditReport {
        let scope = EditScope(tracks: clip.includesTempoTrack ? nil : Set(clip.trackEvents.keys))
        var report: EditReport
        switch mode {
        case .insert: report = insertSilence(at: tick, length: clip.length, scope: scope)
        case .overwrite: report = clear(tick..<(tick + clip.length), scope: scope)
        }
        func place(_ events: [TimedEvent], into track: inout MusicTrack) {
            for e in events { track.add(e.event, at: e.tick + tick) }
        }
        if !clip.tempoEvents.isEmpty { place(clip.tempoEvents, into: &tempoTrack); report.add(-1, clip.tempoEvents.count) }
        for (i, events) in clip.trackEvents where tracks.indices.contains(i) {
            place(events, into: &tracks[i])
            report.add(i, events.count)
        }
        return report
    }

    /// Moves events in scope by `offset` ticks (negative is earlier; nothing goes before 0).
    @discardableResult
    public mutating func move(by offset: Int64, scope: EditScope = .all) -> EditReport {
        var report = EditReport()
        forEachTrack(scope, includeTempoTrack: false) { index, track in
            var touched = 0
            track.mapEvents { e in
                if scope.includes(e) { e.tick = max(0, e.tick + offset); touched += 1 }
            }
            report.add(index, touched)
        }
        return report
    }

    func lastMeta(_ type: UInt8, before end: Int64, after start: Int64) -> MetaEvent? {
        var found: (Int64, MetaEvent)?
        for track in allTracks {
            for e in track.events(in: start..<end) {
                if case .meta(let m) = e.event, m.type == type, found == nil || e.tick >= found!.0 { found = (e.tick, m) }
            }
        }
        return found?.1
    }

    func hasMeta(_ type: UInt8, at tick: Int64) -> Bool {
        allTracks.contains { $0.events(in: tick..<(tick + 1)).contains { if case .meta(let m) = $0.event { return m.type == type }; return false } }
    }

    // MARK: Tracks

    /// Merges the tracks at `indices` into the first of them, in time order.
    public mutating func mergeTracks(_ indices: [Int]) {
        let sorted = Array(Set(indices)).sorted().filter { tracks.indices.contains($0) }
        guard let first = sorted.first, sorted.count > 1 else { return }
        for i in sorted.dropFirst() {
            for e in tracks[i].events { tracks[first].add(e.event, at: e.tick) }
        }
        for i in sorted.dropFirst().reversed() { tracks.remove(at: i) }
    }

    /// Splits track `index` into one track per MIDI channel, in its place.
    public mutating func splitTrackByChannel(_ index: Int) {
        guard tracks.indices.contains(index) else { return }
        var single = MusicSequence(timeBase: timeBase)
        single.tracks = [tracks[index]]
        let parts = single.splittingChannelsToTracks().tracks
        tracks.replaceSubrange(index...index, with: parts)
    }

    /// Splits track `index` at `key`: notes below it stay, notes at or above it move to a new
    /// track right after (for drum parts: kick and snare apart from cymbals, say).
    public mutating func splitTrackByKey(_ index: Int, at key: UInt8) {
        guard tracks.indices.contains(index) else { return }
        var upper = MusicTrack()
        upper.destination = tracks[index].destination
        for e in tracks[index].events {
            if case .note(let n) = e.event, n.key >= key { upper.add(e.event, at: e.tick) }
        }
        tracks[index].removeAll { if case .note(let n) = $0.event { return n.key >= key }; return false }
        tracks.insert(upper, at: index + 1)
    }

    /// Appends a copy of track `index`.
    public mutating func duplicateTrack(_ index: Int) {
        guard tracks.indices.contains(index) else { return }
        tracks.insert(tracks[index], at: index + 1)
    }

    /// Moves track `from` to position `to`.
    public mutating func moveTrack(from: Int, to: Int) {
        guard tracks.indices.contains(from), tracks.indices.contains(to) else { return }
        let t = tracks.remove(at: from)
        tracks.insert(t, at: to)
    }

    /// Adds a channel message to track `index` at `tick`, before the other events of that tick
    /// play (program and controller changes must precede the notes they affect).
    public mutating func addChannelMessage(_ message: MIDIMessage, track index: Int, at tick: Int64) {
        guard tracks.indices.contains(index) else { return }
        tracks[index].add(.message(message), at: tick)
    }

    /// Removes events of `kind` in scope.
    @discardableResult
    public mutating func removeEvents(_ kind: RemovableEventKind, scope: EditScope = .all) -> EditReport {
        var report = EditReport()
        forEachTrack(scope, includeTempoTrack: true) { index, track in
            let before = track.count
            track.removeAll { kind.matches($0.event) && scope.includes($0) }
            report.add(index, before - track.count)
        }
        return report
    }

    // MARK: Signatures

    /// Sets a time signature from `tick` on (replacing one at the same tick).
    public mutating func setTimeSignature(_ signature: TimeSignature, at tick: Int64) {
        replaceMeta(.timeSignature(signature), at: tick)
    }

    /// Sets a key signature from `tick` on (replacing one at the same tick).
    public mutating func setKeySignature(_ key: KeySignature, at tick: Int64) {
        replaceMeta(.keySignature(sharpsOrFlats: key.sharpsOrFlats, minor: key.isMinor), at: tick)
    }

    mutating func replaceMeta(_ meta: MetaEvent, at tick: Int64) {
        tempoTrack.removeAll { if case .meta(let m) = $0.event { return m.type == meta.type && $0.tick == tick }; return false }
        for i in tracks.indices {
            tracks[i].removeAll { if case .meta(let m) = $0.event { return m.type == meta.type && $0.tick == tick }; return false }
        }
        tempoTrack.add(.meta(meta), at: tick)
    }

    // MARK: Tempo

    /// Replaces the tempo map by `changes` (ticks in the current sequence). With
    /// ``TempoEditKeeps/seconds``, every event is re-timed so it sounds when it did before
    /// (within a tick), and the changes themselves take effect at the moments their ticks had.
    public mutating func replaceTempo(with changes: [TempoChange], keep: TempoEditKeeps) {
        let sortedChanges = changes.sorted { $0.tick < $1.tick }
        func removeTempos(_ track: inout MusicTrack) {
            track.removeAll { if case .meta(let m) = $0.event { return m.type == MetaType.tempo }; return false }
        }
        if keep == .beats || !timeBase.isUsable {
            removeTempos(&tempoTrack)
            for i in tracks.indices { removeTempos(&tracks[i]) }
            for c in sortedChanges { tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: c.microsecondsPerQuarter)), at: c.tick) }
            return
        }
        guard case .ticksPerQuarter(let ppq) = timeBase else { return }
        let old = makeTempoMap()
        // Place each change at the moment its old tick had, walking the new tempos in order.
        var placed: [TempoChange] = []
        var lastSeconds = 0.0
        var lastTick = 0.0
        var tempo = Double(TempoMap.defaultMicrosecondsPerQuarter)
        for c in sortedChanges {
            let seconds = old.seconds(atTick: c.tick)
            let tick = lastTick + (seconds - lastSeconds) * 1e6 * Double(ppq) / tempo
            placed.append(TempoChange(tick: Int64(tick.rounded()), microsecondsPerQuarter: c.microsecondsPerQuarter))
            lastSeconds = seconds
            lastTick = tick
            tempo = Double(c.microsecondsPerQuarter)
        }
        let new = TempoMap(timeBase: timeBase, changes: placed)
        func retime(_ tick: Int64) -> Int64 { Int64(new.tick(atSeconds: old.seconds(atTick: tick)).rounded()) }
        func convert(_ track: inout MusicTrack) {
            removeTempos(&track)
            track.mapEvents { e in
                let start = retime(e.tick)
                if case .note(var n) = e.event {
                    n.duration = max(0, retime(e.tick + n.duration) - start)
                    e.event = .note(n)
                }
                e.tick = start
            }
            if let end = track.explicitLength { track.explicitLength = retime(end) }
        }
        convert(&tempoTrack)
        for i in tracks.indices { convert(&tracks[i]) }
        for c in placed { tempoTrack.add(.meta(.tempo(microsecondsPerQuarter: c.microsecondsPerQuarter)), at: c.tick) }
    }

    /// One tempo for the whole sequence.
    public mutating func setConstantTempo(bpm: Double, keep: TempoEditKeeps) {
        replaceTempo(with: [TempoChange(tick: 0, microsecondsPerQuarter: Int((60_000_000 / bpm).rounded()))], keep: keep)
    }

    /// Multiplies every tempo by `factor` (2 is twice as fast).
    public mutating func scaleTempo(by factor: Double, keep: TempoEditKeeps) {
        var changes = tempoChanges
        if changes.first?.tick != 0 { changes.insert(TempoChange(tick: 0, microsecondsPerQuarter: TempoMap.defaultMicrosecondsPerQuarter), at: 0) }
        replaceTempo(with: changes.map { TempoChange(tick: $0.tick, microsecondsPerQuarter: max(1, Int((Double($0.microsecondsPerQuarter) / factor).rounded()))) }, keep: keep)
    }

    /// Sets the tempo from `tick` on, up to the next tempo change.
    public mutating func insertTempo(bpm: Double, at tick: Int64, keep: TempoEditKeeps) {
        var changes = tempoChanges.filter { $0.tick != tick }
        changes.append(TempoChange(tick: tick, microsecondsPerQuarter: Int((60_000_000 / bpm).rounded())))
        replaceTempo(with: changes, keep: keep)
    }

    /// A gradual tempo change across `range`, in `steps` equal steps from `from` to `to` BPM;
    /// `to` holds from the end of the range until the next change after it.
    public mutating func tempoRamp(from: Double, to: Double, over range: Range<Int64>, steps: Int = 16, keep: TempoEditKeeps) {
        let n = max(1, steps)
        let after = tempoChanges.filter { $0.tick >= range.upperBound }
        var changes = tempoChanges.filter { $0.tick < range.lowerBound }
        for i in 0...n {
            let tick = range.lowerBound + (range.upperBound - range.lowerBound) * Int64(i) / Int64(n)
            let bpm = from + (to - from) * Double(i) / Double(n)
            changes.append(TempoChange(tick: tick, microsecondsPerQuarter: Int((60_000_000 / bpm).rounded())))
        }
        changes.append(contentsOf: after.filter { $0.tick > range.upperBound })
        replaceTempo(with: changes, keep: keep)
    }
}
