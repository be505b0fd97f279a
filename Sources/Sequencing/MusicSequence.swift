import MIDI

/// A key signature change.
public struct KeySignature: Hashable, Sendable {
    /// Sharps (positive) or flats (negative), normally -7...7.
    public var sharpsOrFlats: Int8
    /// True for a minor key.
    public var isMinor: Bool

    /// Creates a key signature.
    public init(sharpsOrFlats: Int8, isMinor: Bool) {
        self.sharpsOrFlats = sharpsOrFlats
        self.isMinor = isMinor
    }
}

/// A musical sequence, like Apple's MusicSequence: a tempo track (tempo changes, time and key
/// signatures, SMPTE offset) and any number of event tracks, at one time base.
///
/// Tempo, time signature and key signature events are honoured wherever they are, in the
/// tempo track or in an event track (many files put them in a track with notes), so a file
/// loads and saves without moving any event.
public struct MusicSequence: Hashable, Sendable {
    /// Resolution and kind of time.
    public var timeBase: TimeBase
    /// The conductor track: tempo, time signatures, key signatures, markers.
    public var tempoTrack: MusicTrack
    /// The event tracks.
    public var tracks: [MusicTrack]
    /// The SMF format (0, 1 or 2) the sequence was read from; writers use it by default.
    public var sourceFormat: UInt16?

    /// An empty sequence at `timeBase`.
    public init(timeBase: TimeBase = .standard, tempoTrack: MusicTrack = MusicTrack(), tracks: [MusicTrack] = []) {
        self.timeBase = timeBase
        self.tempoTrack = tempoTrack
        self.tracks = tracks
    }

    /// Ticks per quarter note used for beats and bars.
    public var ticksPerQuarter: Int { timeBase.ticksPerQuarterForBeats }

    /// The tempo track followed by the event tracks.
    public var allTracks: [MusicTrack] { [tempoTrack] + tracks }

    /// Every tempo change of the sequence, tempo track first, then tracks in order.
    public var tempoChanges: [TempoChange] {
        var result: [TempoChange] = []
        for track in allTracks {
            for e in track.events {
                if case .meta(let m) = e.event, let us = m.tempoMicrosecondsPerQuarter, us > 0 {
                    result.append(TempoChange(tick: e.tick, microsecondsPerQuarter: us))
                }
            }
        }
        return result.enumerated().sorted { a, b in
            a.element.tick != b.element.tick ? a.element.tick < b.element.tick : a.offset < b.offset
        }.map(\.element)
    }

    /// Every time signature change, sorted by tick.
    public var timeSignatures: [(tick: Int64, signature: TimeSignature)] {
        var result: [(tick: Int64, signature: TimeSignature)] = []
        for track in allTracks {
            for e in track.events {
                if case .meta(let m) = e.event, let sig = m.timeSignature { result.append((e.tick, sig)) }
            }
        }
        return result.enumerated().sorted { a, b in
            a.element.tick != b.element.tick ? a.element.tick < b.element.tick : a.offset < b.offset
        }.map(\.element)
    }

    /// Every key signature change, sorted by tick.
    public var keySignatures: [(tick: Int64, key: KeySignature)] {
        var result: [(tick: Int64, key: KeySignature)] = []
        for track in allTracks {
            for e in track.events {
                if case .meta(let m) = e.event, m.type == MetaType.keySignature, m.data.count >= 2 {
                    result.append((e.tick, KeySignature(sharpsOrFlats: Int8(bitPattern: m.data[0]), isMinor: m.data[1] != 0)))
                }
            }
        }
        return result.sorted { $0.tick < $1.tick }
    }

    /// The SMPTE offset meta event of the tempo track (or the first track holding one).
    public var smpteOffset: MetaEvent? {
        for track in allTracks {
            for e in track.events {
                if case .meta(let m) = e.event, m.type == MetaType.smpteOffset { return m }
            }
        }
        return nil
    }

    /// The tempo map for converting ticks and seconds.
    public func makeTempoMap() -> TempoMap {
        TempoMap(timeBase: timeBase, changes: tempoChanges)
    }

    /// The meter map for converting ticks and bar:beat:tick.
    public func makeMeterMap() -> MeterMap {
        MeterMap(ticksPerQuarter: ticksPerQuarter, changes: timeSignatures)
    }

    /// The end of the longest track, in ticks.
    public var length: Int64 {
        allTracks.reduce(0) { max($0, $1.length) }
    }

    /// A copy whose tracks each hold one MIDI channel. Each track's channel events go to a new
    /// track per channel (in channel order); events without a channel (meta, sysex,
    /// automation) stay in a track of their own in place of the original, dropped if empty.
    public func splittingChannelsToTracks() -> MusicSequence {
        var copy = self
        var newTracks: [MusicTrack] = []
        for track in tracks {
            var shared = MusicTrack()
            shared.isMuted = track.isMuted
            shared.isSoloed = track.isSoloed
            shared.offset = track.offset
            shared.loop = track.loop
            shared.explicitLength = track.explicitLength
            shared.destination = track.destination
            var perChannel: [UInt8: [TimedEvent]] = [:]
            var sharedEvents: [TimedEvent] = []
            for e in track.events {
                switch e.event {
                case .note(let n): perChannel[n.channel, default: []].append(e)
                case .message(let m) where m.isChannelMessage: perChannel[m.channel, default: []].append(e)
                default: sharedEvents.append(e)
                }
            }
            if !sharedEvents.isEmpty || perChannel.isEmpty {
                shared.append(contentsOf: sharedEvents)
                newTracks.append(shared)
            }
            for channel in perChannel.keys.sorted() {
                var t = MusicTrack(events: perChannel[channel]!)
                t.isMuted = track.isMuted
                t.isSoloed = track.isSoloed
                t.offset = track.offset
                t.loop = track.loop
                t.destination = track.destination
                newTracks.append(t)
            }
        }
        copy.tracks = newTracks
        return copy
    }
}
