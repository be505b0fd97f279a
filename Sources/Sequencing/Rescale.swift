extension MusicSequence {
    /// A copy at a new resolution: every tick, duration, length, offset and loop length is
    /// scaled by `new / old` and rounded to the nearest tick. Tempo is in microseconds per
    /// quarter note, so the music keeps its timing.
    public func rescaled(toTicksPerQuarter new: Int, from old: Int) -> MusicSequence {
        func scale(_ t: Int64) -> Int64 {
            // Round half up with a 128-bit intermediate, so long files cannot overflow.
            let product = t.multipliedFullWidth(by: Int64(new))
            let (q, r) = Int64(old).dividingFullWidth(product)
            return r * 2 >= Int64(old) ? q + 1 : q
        }
        func convert(_ track: MusicTrack) -> MusicTrack {
            var copy = track
            copy.mapEvents { e in
                let start = scale(e.tick)
                if case .note(var n) = e.event {
                    n.duration = scale(e.tick + n.duration) - start
                    e.event = .note(n)
                }
                e.tick = start
            }
            copy.explicitLength = track.explicitLength.map(scale)
            copy.offset = scale(track.offset)
            if var loop = track.loop {
                loop.length = max(1, scale(loop.length))
                copy.loop = loop
            }
            return copy
        }
        var copy = self
        copy.timeBase = .ticksPerQuarter(new)
        copy.tempoTrack = convert(tempoTrack)
        copy.tracks = tracks.map(convert)
        return copy
    }
}
