import MIDIFile
import Playback
import Sequencing
import Synchronization

// Training data from a score: its stems, each rendered as `tactus render --stems` renders it,
// and its note labels, as `tactus render --labels` writes them. Track numbers here are the
// file's track indices (those of `tactus_score_track_notes`), not the sequence's.

/// `TACTUS_STEMS_BY_TRACK` and `TACTUS_STEMS_BY_CLASS`: the CLI's `--stems-by track|class`.
private func stemGrouping(_ by: Int32) throws(CFailure) -> StemGrouping {
    switch by {
    case 0: return .track
    case 1: return .instrumentClass
    default: throw CFailure(.invalidArgument, "stems by \(by) is not 0 (track) or 1 (class)")
    }
}

extension ScoreBox {
    /// The song as it plays: the first track is the conductor when it holds only meta and
    /// system exclusive events, as `tactus render` reads the file.
    func playedSequence() throws(CFailure) -> MusicSequence {
        guard file.timeBase.isUsable else {
            throw CFailure(.invalidFile, "\(name): division is 0, so the file has no timing and cannot be rendered")
        }
        return file.makeSequence()
    }

    /// How many file tracks come before the sequence's first event track (1 when the first
    /// track became the conductor, else 0).
    func fileTrackOffset(of sequence: MusicSequence) -> Int { file.tracks.count - sequence.tracks.count }

    /// The stems `by` groups the song into, made once per grouping.
    func stems(by: Int32) throws(CFailure) -> [Stem] {
        let grouping = try stemGrouping(by)
        if let made = cachedStems.withLock({ $0[grouping] }) { return made }
        let made = try playedSequence().stems(by: grouping)
        cachedStems.withLock { $0[grouping] = made }
        return made
    }

    func stem(by: Int32, _ index: Int64) throws(CFailure) -> Stem {
        let all = try stems(by: by)
        guard index >= 0, index < Int64(all.count) else { throw CFailure(.invalidArgument, "stem \(index) is outside 0..<\(all.count)") }
        return all[Int(index)]
    }
}

/// The number of stems the score splits into `by` track (0) or by General MIDI class (1): one
/// per track with notes, or one per program family and one for the drums.
@_cdecl("tactus_score_stem_count")
public func tactus_score_stem_count(_ score: OpaquePointer?, _ by: Int32, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let stems = try scores.object(score).stems(by: by)
        guard let out else { throw CFailure(.invalidArgument, "the output pointer is NULL") }
        out.pointee = Int64(stems.count)
    }
}

/// Copies the name of stem `stem` (the file name `tactus render --stems` gives it, without
/// the extension) as `tactus_score_track_name` copies a track's name.
@_cdecl("tactus_score_stem_name")
public func tactus_score_stem_name(_ score: OpaquePointer?, _ by: Int32, _ stem: Int64, _ buffer: UnsafeMutablePointer<CChar>?,
                                   _ capacity: Int64, _ needed: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        try copyCString(try scores.object(score).stem(by: by, stem).name, into: buffer, capacity: capacity, needed: needed)
    }
}

/// The file tracks whose notes stem `stem` plays: `count` gets how many, `tracks` (room for
/// `capacity`, or NULL to ask the count) their indices. Fewer than the stem's tracks gives
/// `TACTUS_ERROR_BUFFER_TOO_SMALL` and writes nothing.
@_cdecl("tactus_score_stem_tracks")
public func tactus_score_stem_tracks(_ score: OpaquePointer?, _ by: Int32, _ stem: Int64, _ tracks: UnsafeMutablePointer<Int64>?,
                                     _ capacity: Int64, _ count: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let box = try scores.object(score)
        let chosen = try box.stem(by: by, stem)
        let rows = try checkedCount(capacity, "the capacity")
        count?.pointee = Int64(chosen.tracks.count)
        guard let tracks else { return }
        guard rows >= chosen.tracks.count else { throw CFailure(.bufferTooSmall, "the stem has \(chosen.tracks.count) tracks, the buffer holds \(rows)") }
        let offset = box.fileTrackOffset(of: chosen.sequence)
        for (i, track) in chosen.tracks.enumerated() { tracks[i] = Int64(track + offset) }
    }
}

/// Renders stem `stem` with the options of `tactus_render_score` through a fresh instrument,
/// exactly `frames` frames long: pass the mix's frame count, and the stem lines up with the
/// mix frame for frame (its own tail is cut there, or padded with silence), as
/// `tactus render --stems` writes it. With the sampler's effects off the stems add up to the
/// mix to float rounding (see `MusicSequence.stems(by:)` for where they cannot).
@_cdecl("tactus_render_stem")
public func tactus_render_stem(_ score: OpaquePointer?, _ by: Int32, _ stem: Int64, _ frames: Int64,
                               _ soundFont: UnsafePointer<CChar>?, _ sampleRate: Int32, _ gainDecibels: Float, _ flags: UInt32,
                               _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(CFailure) in
        let out = try checkedOut(out)
        let box = try scores.object(score)
        let chosen = try box.stem(by: by, stem)
        let frameCount = try checkedCount(frames, "the frame count")
        var request = try RenderRequest(soundFont: soundFont, sampleRate: sampleRate, gainDecibels: gainDecibels,
                                        tailSeconds: 0, flags: flags)
        request.apply(box.augmentation)
        // A tail reaching past the last frame wanted (the sink cuts the rest): from the song's
        // end, which every stem shares with the mix, plus a margin for the graph's latency.
        let songEnd = Schedule(sequence: chosen.sequence, sampleRate: request.sampleRate, defaultNode: DefaultGraph.instrumentID).endFrame
        let tailSeconds = Double(max(0, Int64(frameCount) - songEnd)) / Double(request.sampleRate) + 0.1
        let rendered = try request.render(chosen.sequence, name: "\(box.name) stem \(chosen.name)", tail: .seconds(tailSeconds),
                                          frameCount: Int64(frameCount))
        out.pointee = renders.insert(rendered)
    }
}

/// The number of notes `tactus_score_labels` gives (notes that start; one never released ends
/// at the song's end).
@_cdecl("tactus_score_label_count")
public func tactus_score_label_count(_ score: OpaquePointer?, _ sampleRate: Int32, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        let labels = try noteLabels(try scores.object(score), sampleRate: sampleRate, by: -1)
        guard let out else { throw CFailure(.invalidArgument, "the output pointer is NULL") }
        out.pointee = Int64(labels.count)
    }
}

/// Every note as the engine plays it at `sample_rate`, in the order it starts them, into
/// caller-owned columns of `capacity` rows (a NULL column is skipped): the file track, channel
/// (0...15), key, velocity, the channel's program and bank (CC 0 × 128 + CC 32) when the note
/// starts, the index of its stem when `stems_by` is 0 or 1 (-1 for none), and its onset and
/// release frames: a render from the start at rate 1 has the note's first sample at its onset
/// frame. The values of `tactus render --labels`. Fewer rows than notes gives
/// `TACTUS_ERROR_BUFFER_TOO_SMALL` and writes nothing.
@_cdecl("tactus_score_labels")
public func tactus_score_labels(_ score: OpaquePointer?, _ sampleRate: Int32, _ stemsBy: Int32,
                                _ track: UnsafeMutablePointer<Int64>?, _ channel: UnsafeMutablePointer<UInt8>?,
                                _ key: UnsafeMutablePointer<UInt8>?, _ velocity: UnsafeMutablePointer<UInt8>?,
                                _ program: UnsafeMutablePointer<UInt8>?, _ bank: UnsafeMutablePointer<Int32>?,
                                _ stem: UnsafeMutablePointer<Int64>?, _ onsetFrame: UnsafeMutablePointer<Int64>?,
                                _ offsetFrame: UnsafeMutablePointer<Int64>?, _ capacity: Int64) -> Int32 {
    guarded { () throws(CFailure) in
        let box = try scores.object(score)
        let labels = try noteLabels(box, sampleRate: sampleRate, by: stemsBy)
        let rows = try checkedCount(capacity, "the capacity")
        guard rows >= labels.count else { throw CFailure(.bufferTooSmall, "the song has \(labels.count) notes, the buffers hold \(rows)") }
        let stems = stemsBy < 0 ? [] : try box.stems(by: stemsBy)
        var stemIndex: [String: Int64] = [:]
        for (i, s) in stems.enumerated() { stemIndex[s.name] = Int64(i) }
        let offset = box.fileTrackOffset(of: try box.playedSequence())
        for (i, label) in labels.enumerated() {
            track?[i] = Int64(label.track + offset)
            channel?[i] = label.channel
            key?[i] = label.key
            velocity?[i] = label.velocity
            program?[i] = label.program
            bank?[i] = Int32(label.bank)
            stem?[i] = label.stem.flatMap { stemIndex[$0] } ?? -1
            onsetFrame?[i] = label.onsetFrame
            offsetFrame?[i] = label.offsetFrame
        }
    }
}

/// A new score: this one varied as `tactus render --augment SPEC --seed SEED` varies a file
/// (see `AugmentationSpec`), its draw keyed by `key`, or by the score's file name when `key`
/// is NULL (what a single-file render uses). Its renders add the drawn gain.
/// `TACTUS_ERROR_INVALID_ARGUMENT` for a malformed spec, with the part and the reason.
@_cdecl("tactus_score_augment")
public func tactus_score_augment(_ score: OpaquePointer?, _ spec: UnsafePointer<CChar>?, _ seed: UInt64, _ key: UnsafePointer<CChar>?,
                                 _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(CFailure) in
        let out = try checkedOut(out)
        let box = try scores.object(score)
        guard let spec else { throw CFailure(.invalidArgument, "the spec is NULL") }
        let parsed: AugmentationSpec
        do {
            parsed = try AugmentationSpec(parsing: String(cString: spec))
        } catch {
            throw CFailure(.invalidArgument, "\(error)")
        }
        let drawKey = key.map { String(cString: $0) } ?? String(box.name.split(separator: "/").last ?? "")
        let draw = parsed.draw(seed: seed, key: drawKey)
        let varied = try box.playedSequence().augmented(by: draw)
        out.pointee = scores.insert(ScoreBox(file: StandardMIDIFile(sequence: varied), name: box.name, augmentation: draw))
    }
}

/// The draw an augmented score was made with, as a spec of fixed values (`transpose=2,...`;
/// "" for a score as loaded), copied as `tactus_score_track_name` copies a name.
@_cdecl("tactus_score_augmentation")
public func tactus_score_augmentation(_ score: OpaquePointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int64,
                                      _ needed: UnsafeMutablePointer<Int64>?) -> Int32 {
    guarded { () throws(CFailure) in
        try copyCString(try scores.object(score).augmentation?.description ?? "", into: buffer, capacity: capacity, needed: needed)
    }
}

/// The labels `tactus render --labels` writes for the score at `sampleRate`, with stem names
/// when `by` is a grouping (negative: none).
private func noteLabels(_ box: ScoreBox, sampleRate: Int32, by: Int32) throws(CFailure) -> [NoteLabel] {
    try RenderRequest.checkSampleRate(sampleRate)
    let stems = by >= 0 ? try box.stems(by: by) : []
    let schedule = Schedule(sequence: try box.playedSequence(), sampleRate: Int(sampleRate), defaultNode: DefaultGraph.instrumentID)
    return schedule.noteLabels(stems: stems)
}
