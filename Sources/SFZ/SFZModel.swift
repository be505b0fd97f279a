/// A low-high range as SFZ writes it (`lokey`/`hikey`, `lovel`/`hivel`...). Unlike a Swift
/// `ClosedRange` it may be empty (low above high), which a file can ask for: such a range
/// contains nothing.
public struct SFZRange<Bound: Comparable & Hashable & Sendable>: Hashable, Sendable {
    /// The lowest value that matches.
    public var low: Bound
    /// The highest value that matches.
    public var high: Bound

    /// A range from `low` to `high`, both included.
    public init(_ low: Bound, _ high: Bound) {
        self.low = low
        self.high = high
    }

    /// True when `value` lies between ``low`` and ``high``, both included.
    public func contains(_ value: Bound) -> Bool { low <= value && value <= high }
}

/// Where a region's audio comes from.
public enum SFZSampleSource: Hashable, Sendable {
    /// A file: the path as resolved against the instrument's folder and `default_path`
    /// (``SFZInstrument/locateSamples()`` replaces it with the file's real name on disk).
    case file(String)
    /// One of sfizz's built-in generators, such as `*sine`, `*saw` or `*silence`.
    case generator(String)
    /// A sample carried inside the SFZ file in a `<sample>` header (an sfizz extension), by name.
    case embedded(String)
}

/// What starts a region (`trigger`).
public enum SFZTrigger: String, Hashable, Sendable, CaseIterable {
    /// On note-on (the default).
    case attack
    /// On note-off.
    case release
    /// On note-off, even while the sustain pedal is down.
    case releaseKey = "release_key"
    /// On note-on when no other note is down.
    case first
    /// On note-on while another note is down.
    case legato
}

/// How a region's voices are stopped when another region's `off_by` names their group (`off_mode`).
public enum SFZOffMode: String, Hashable, Sendable, CaseIterable {
    /// At once, with a very short fade (the default).
    case fast
    /// Through the amplitude envelope's release.
    case normal
    /// With an exponential fade of ``SFZRegion/offTime`` seconds.
    case time
}

/// How a sample loops (`loop_mode`).
public enum SFZLoopMode: String, Hashable, Sendable, CaseIterable {
    /// Plays once, stopping at note-off.
    case noLoop = "no_loop"
    /// Plays to its end whatever note-off does.
    case oneShot = "one_shot"
    /// Loops for as long as the voice sounds.
    case loopContinuous = "loop_continuous"
    /// Loops until note-off, then plays on to the end.
    case loopSustain = "loop_sustain"
}

/// The filter types the playback phase implements (`fil_type`).
public enum SFZFilterType: String, Hashable, Sendable, CaseIterable {
    /// One-pole low-pass.
    case lowPassOnePole = "lpf_1p"
    /// Two-pole (resonant) low-pass, the default.
    case lowPassTwoPole = "lpf_2p"
    /// One-pole high-pass.
    case highPassOnePole = "hpf_1p"
    /// Two-pole (resonant) high-pass.
    case highPassTwoPole = "hpf_2p"
}

/// A DAHDSR envelope as SFZ describes it (`ampeg_*`, `fileg_*`): times in seconds, levels in
/// percent, and how velocity moves each (`*_vel2*`: added at full velocity, scaled by
/// velocity / 127).
public struct SFZEnvelope: Hashable, Sendable {
    /// Seconds before the attack starts (`_delay`).
    public var delay = 0.0
    /// Level the delay holds and the attack starts from, percent (`_start`): of full amplitude
    /// for `ampeg_start`, of ``depth`` for `fileg_start`.
    public var start = 0.0
    /// Attack time, seconds (`_attack`).
    public var attack = 0.0
    /// Time held at full level after the attack, seconds (`_hold`).
    public var hold = 0.0
    /// Decay time to the sustain level, seconds (`_decay`).
    public var decay = 0.0
    /// Sustain level, percent (`_sustain`, 100 by default).
    public var sustain = 100.0
    /// Release time after note-off, seconds (`_release`; 0.001 for the amplitude envelope by
    /// default, as sfizz).
    public var release = 0.0
    /// Seconds added to ``delay`` at full velocity (`_vel2delay`).
    public var velocityToDelay = 0.0
    /// Seconds added to ``attack`` at full velocity (`_vel2attack`).
    public var velocityToAttack = 0.0
    /// Seconds added to ``hold`` at full velocity (`_vel2hold`).
    public var velocityToHold = 0.0
    /// Seconds added to ``decay`` at full velocity (`_vel2decay`).
    public var velocityToDecay = 0.0
    /// Percent added to ``sustain`` at full velocity (`_vel2sustain`).
    public var velocityToSustain = 0.0
    /// Seconds added to ``release`` at full velocity (`_vel2release`).
    public var velocityToRelease = 0.0
    /// How far the envelope moves its target at full level, cents (`fileg_depth`; unused for
    /// the amplitude envelope).
    public var depth = 0.0

    /// An envelope with SFZ's defaults (no delay, instant attack, full sustain, no release).
    public init() {}
}

/// One point of a region's `amp_velcurve_N` velocity curve: the gain (0-1) at a velocity.
public struct SFZVelocityPoint: Hashable, Sendable {
    /// The velocity, 0-127 (the `N` of `amp_velcurve_N`).
    public var velocity: Int
    /// The gain at that velocity, 0-1.
    public var gain: Double

    /// A point.
    public init(velocity: Int, gain: Double) {
        self.velocity = velocity
        self.gain = gain
    }
}

/// A `<curve>` header: 128 values, one for each controller or velocity value.
public struct SFZCurve: Hashable, Sendable {
    /// The curve's number (`curve_index`), by which opcodes such as `amp_veltrack_curveccN` name it.
    public var index: Int
    /// The 128 values: the points given (`v000`...`v127`), the ends 0 and 1 unless given, and
    /// straight lines between them, as sfizz fills them.
    public var values: [Double]

    /// A curve.
    public init(index: Int, values: [Double]) {
        self.index = index
        self.values = values
    }

    /// Fills 128 values from the points given: `points[i]` is the value at `i` or nil; the first
    /// and last default to `first` and `last`, the gaps are joined by straight lines.
    static func linearFill(_ points: [Double?], first: Double, last: Double) -> [Double] {
        var known = points
        if known[0] == nil { known[0] = first }
        if known[127] == nil { known[127] = last }
        var values = [Double](repeating: 0, count: 128)
        var previous = 0
        values[0] = known[0]!
        for i in 1..<128 {
            guard let value = known[i] else { continue }
            let from = values[previous]
            for j in previous + 1...i {
                values[j] = from + (value - from) * Double(j - previous) / Double(i - previous)
            }
            values[i] = value
            previous = i
        }
        return values
    }
}

/// One region with everything its headers gave it: the `<global>`, `<master>` and `<group>`
/// opcodes above it and its own, applied in that order (later ones win), with SFZ's defaults for
/// the rest. Units are SFZ's own (dB, percent, cents, seconds, sample frames), so a value reads
/// as the file wrote it.
public struct SFZRegion: Hashable, Sendable {
    /// The sample (`sample`, resolved against the instrument's folder and `default_path`), or
    /// nil when the region names none (it cannot sound).
    public var sample: SFZSampleSource?
    /// Where the region was declared: its `<region>` header's file and 1-based line.
    public var path: String
    /// The `<region>` header's line.
    public var line: Int

    /// Keys that start the region (`lokey`, `hikey`, `key`; 0-127), after `note_offset` and
    /// `octave_offset`.
    public var keyRange = SFZRange(0, 127)
    /// False when `hikey` or `key` is -1 (or not a key): then no note starts the region, as sfizz.
    public var triggersOnNote = true
    /// The key at which the sample plays unshifted (`pitch_keycenter`, `key`; 60 by default).
    public var pitchKeycenter = 60
    /// True for `pitch_keycenter=sample`: the key comes from the sample file.
    public var pitchKeycenterFromSample = false
    /// Velocities that start the region (`lovel`, `hivel`; 0-127).
    public var velocityRange = SFZRange(0, 127)
    /// MIDI channels that start the region (`lochan`, `hichan`; 1-16).
    public var channelRange = SFZRange(1, 16)
    /// Controller conditions (`loccN`, `hiccN`): controller number to the values (0-127) at
    /// which the region plays.
    public var controllerRanges: [Int: SFZRange<Double>] = [:]
    /// The random draw (0-1) at which the region plays (`lorand`, `hirand`), for round-robins.
    public var randomRange = SFZRange(0.0, 1.0)
    /// Notes in a round-robin cycle (`seq_length`, 1-100).
    public var sequenceLength = 1
    /// This region's place in the cycle (`seq_position`, 1-100).
    public var sequencePosition = 1
    /// What starts the region (`trigger`).
    public var trigger = SFZTrigger.attack
    /// How much quieter a release-triggered region gets per second the note was held, dB
    /// (`rt_decay`).
    public var releaseTriggerDecay = 0.0

    /// The region's polyphony group (`group`, also `polyphony_group`).
    public var group = 0
    /// The group whose voices this region's start stops (`off_by`), if any.
    public var offBy: Int?
    /// How those voices stop (`off_mode`).
    public var offMode = SFZOffMode.fast
    /// Seconds over which ``SFZOffMode/time`` fades the voices out (`off_time`, which also sets
    /// ``offMode`` to `time`, as sfizz; 0.006 by default).
    public var offTime = 0.006
    /// The most voices of this region at once (`polyphony`), nil for no limit.
    public var polyphony: Int?
    /// The most voices of this region on one key at once (`note_polyphony`), nil for no limit.
    public var notePolyphony: Int?
    /// True (`note_selfmask=on`, the default) when ``notePolyphony`` lets a note stop only the
    /// voices struck no louder than itself, quietest first; false (`off`) for the oldest first.
    public var noteSelfmask = true

    /// The keys that act as key switches (`sw_lokey`, `sw_hikey`), if given.
    public var keyswitchRange: SFZRange<Int>?
    /// The key switch that enables the region (`sw_last`): the last key pressed in the range.
    public var keyswitchLast: Int?
    /// The key switch in force before any is pressed (`sw_default`).
    public var keyswitchDefault: Int?

    /// Gain, dB (`volume`, also `gain`).
    public var volume = 0.0
    /// Gain, percent (`amplitude`).
    public var amplitude = 100.0
    /// Pan, -100 (left) to 100 (right) (`pan`).
    public var pan = 0.0
    /// Stereo width, percent; 0 is mono, negative swaps the sides (`width`).
    public var width = 100.0
    /// Where a stereo sample's image sits after ``width`` narrows it, -100 (left) to 100
    /// (right) (`position`); a mono sample ignores it.
    public var position = 0.0
    /// Fine tuning, cents (`tune`, also `pitch`).
    public var tune = 0.0
    /// Transposition, semitones (`transpose`).
    public var transpose = 0.0
    /// Cents per key away from ``pitchKeycenter`` (`pitch_keytrack`, 100 by default).
    public var pitchKeytrack = 100.0
    /// How much velocity changes the gain, percent (`amp_veltrack`, 100 by default).
    public var ampVeltrack = 100.0
    /// The velocity curve's points (`amp_velcurve_N`), in the order given; empty for the
    /// default curve.
    public var ampVelocityCurve: [SFZVelocityPoint] = []
    /// The amplitude envelope (`ampeg_*`).
    public var amplitudeEnvelope: SFZEnvelope = {
        var envelope = SFZEnvelope()
        envelope.release = 0.001
        return envelope
    }()

    /// The filter's type (`fil_type`); it only acts when ``cutoff`` is set.
    public var filterType = SFZFilterType.lowPassTwoPole
    /// The filter's cutoff, Hz (`cutoff`), or nil for no filter.
    public var cutoff: Double?
    /// The filter's resonance, dB (`resonance`).
    public var resonance = 0.0
    /// Cents the cutoff moves per key away from ``filterKeycenter`` (`fil_keytrack`).
    public var filterKeytrack = 0.0
    /// The key at which ``filterKeytrack`` does nothing (`fil_keycenter`, 60).
    public var filterKeycenter = 60
    /// Cents the cutoff moves at full velocity (`fil_veltrack`).
    public var filterVeltrack = 0.0
    /// The filter envelope (`fileg_*`), moving the cutoff by its ``SFZEnvelope/depth``.
    public var filterEnvelope = SFZEnvelope()

    /// The first sample frame played (`offset`).
    public var offset = 0
    /// The last sample frame played (`end`), nil for the sample's end.
    public var end: Int?
    /// The loop mode (`loop_mode`), nil to use the sample file's (no loop when it has none).
    public var loopMode: SFZLoopMode?
    /// The loop's first frame (`loop_start`), nil to use the sample file's.
    public var loopStart: Int?
    /// The loop's last frame (`loop_end`), nil to use the sample file's.
    public var loopEnd: Int?

    /// A region with SFZ's defaults, declared at `path`:`line`.
    public init(path: String, line: Int) {
        self.path = path
        self.line = line
    }

    /// The gain (0-1) for each velocity 0-127 given by ``ampVelocityCurve``: the points in the
    /// order given (a later point at the same velocity wins), 0 at velocity 0 and 1 at 127 unless
    /// given, straight lines between, as sfizz builds it (points outside 0-127 are left out). Nil
    /// when there are no points.
    public func velocityCurveTable() -> [Double]? {
        guard !ampVelocityCurve.isEmpty else { return nil }
        var points = [Double?](repeating: nil, count: 128)
        for point in ampVelocityCurve where (0...127).contains(point.velocity) { points[point.velocity] = point.gain }
        return SFZCurve.linearFill(points, first: 0, last: 1)
    }
}
