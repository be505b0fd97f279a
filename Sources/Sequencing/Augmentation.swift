#if canImport(Glibc)
import Glibc
#endif
import MIDI

/// Random but reproducible changes for training data: what to vary and how far
/// (``AugmentationSpec``), drawn per file from a seed and the file's name
/// (``AugmentationSpec/draw(seed:key:)``) into fixed values (``AugmentationDraw``).
///
/// A spec is written `knob=VALUE` or `knob=LOW..HIGH`, comma-separated:
/// - `transpose`: semitones, whole numbers in -24...24 (channel 10, the drums, stays);
/// - `tempo`: a factor on every tempo, 0.25...4 (2 plays twice as fast);
/// - `velocity`: a curve's exponent, 0.25...4: a velocity `v` becomes
///   `127 × (v / 127)^exponent`, so 1 leaves it, more than 1 softens the middle, less hardens it;
/// - `gain`: decibels added to the render's gain, -24...24;
/// - `reverb` and `chorus`: factors on the instrument's reverb and chorus levels, 0...1 (0 dry,
///   1 as without the knob; the built-in synthesizer has no chorus);
/// - `programs`: the chance, 0...1, that each program (instrument) of the song is swapped for
///   another of its General MIDI family (a different piano, a different bass); the drums stay.
///
/// Each knob's value comes from its own stream, keyed by the seed, the file's key and the knob's
/// name: the same seed and key give the same draw on any machine, in any order and any shard,
/// and adding a knob leaves the others' values as they were. A draw written back as a spec
/// (``AugmentationDraw/description``) holds fixed values that reproduce it exactly.
public struct AugmentationSpec: Hashable, Sendable, CustomStringConvertible {
    /// The knobs a spec can vary, in the order a draw lists them.
    public enum Knob: String, CaseIterable, Sendable {
        /// Semitones the notes move by (whole numbers; not channel 10).
        case transpose
        /// A factor on every tempo.
        case tempo
        /// The exponent of the velocity curve.
        case velocity
        /// Decibels added to the render's gain.
        case gain
        /// A factor on the instrument's reverb level.
        case reverb
        /// A factor on the instrument's chorus level.
        case chorus
        /// The chance that each program is swapped for another of its family.
        case programs

        /// The values the knob accepts.
        public var bounds: ClosedRange<Double> {
            switch self {
            case .transpose: -24...24
            case .tempo: 0.25...4
            case .velocity: 0.25...4
            case .gain: -24...24
            case .reverb, .chorus, .programs: 0...1
            }
        }
    }

    /// Each knob's range (a fixed value is a range of one point).
    public private(set) var ranges: [Knob: ClosedRange<Double>] = [:]

    /// An empty spec: a draw that changes nothing.
    public init() {}

    /// Parses `transpose=-3..3,tempo=0.9..1.1,gain=-2`.
    /// - Throws: ``AugmentationError`` naming the part at fault.
    public init(parsing text: String) throws(AugmentationError) {
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let words = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingWhitespace() }
            guard words.count == 2, !words[0].isEmpty else { throw .malformed(String(part), "expected knob=VALUE or knob=LOW..HIGH") }
            guard let knob = Knob(rawValue: words[0]) else {
                throw .malformed(String(part), "unknown knob '\(words[0])' (use \(Knob.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            guard ranges[knob] == nil else { throw .malformed(String(part), "\(knob.rawValue) is given twice") }
            let ends = words[1].split(separator: "..", omittingEmptySubsequences: false)
            let numbers = ends.compactMap { Double($0.trimmingWhitespace()) }
            guard (1...2).contains(ends.count), numbers.count == ends.count, numbers.allSatisfy(\.isFinite) else {
                throw .malformed(String(part), "'\(words[1])' is not a number or LOW..HIGH")
            }
            guard numbers[0] <= numbers[numbers.count - 1] else { throw .malformed(String(part), "the low end is above the high end") }
            let range = numbers[0]...numbers[numbers.count - 1]
            guard knob.bounds.contains(range.lowerBound), knob.bounds.contains(range.upperBound) else {
                throw .malformed(String(part), "\(knob.rawValue) must lie in \(format(knob.bounds.lowerBound))...\(format(knob.bounds.upperBound))")
            }
            if knob == .transpose, range.lowerBound.rounded() != range.lowerBound || range.upperBound.rounded() != range.upperBound {
                throw .malformed(String(part), "transpose takes whole semitones")
            }
            ranges[knob] = range
        }
    }

    /// The spec as it parses, knobs in ``Knob`` order.
    public var description: String {
        Knob.allCases.compactMap { knob in
            ranges[knob].map { $0.lowerBound == $0.upperBound ? "\(knob.rawValue)=\(format($0.lowerBound))"
                                                               : "\(knob.rawValue)=\(format($0.lowerBound))..\(format($0.upperBound))" }
        }.joined(separator: ",")
    }

    /// The values for the file `key` (a batch uses the input's path relative to its folder)
    /// under `seed`.
    public func draw(seed: UInt64, key: String) -> AugmentationDraw {
        var values: [Knob: Double] = [:]
        for (knob, range) in ranges {
            var stream = SplitMix64(seed: seed ^ stableHash(key + "\u{0}" + knob.rawValue))
            if knob == .transpose {
                let low = Int(range.lowerBound), count = Int(range.upperBound) - low + 1
                values[knob] = Double(low + Int(stream.next() % UInt64(count)))
            } else {
                values[knob] = range.lowerBound + (range.upperBound - range.lowerBound) * stream.nextUnit()
            }
        }
        return AugmentationDraw(values: values)
    }
}

/// The values one file was augmented with; its description is a spec of fixed values.
public struct AugmentationDraw: Hashable, Sendable, CustomStringConvertible {
    /// Each knob's value; a knob not drawn leaves its part of the song as it was.
    public var values: [AugmentationSpec.Knob: Double]

    /// Semitones the notes move by (0 when not drawn).
    public var transpose: Int { Int(values[.transpose] ?? 0) }
    /// Decibels to add to the render's gain (0 when not drawn).
    public var gainDecibels: Double { values[.gain] ?? 0 }
    /// The factor on the instrument's reverb level (1 when not drawn).
    public var reverbFactor: Double { values[.reverb] ?? 1 }
    /// The factor on the instrument's chorus level (1 when not drawn).
    public var chorusFactor: Double { values[.chorus] ?? 1 }

    /// The program that plays instead of `program` (0...127): with the drawn chance, another
    /// program of the same General MIDI family (eight programs from a multiple of 8), else
    /// `program`. A function of the drawn value alone, so the draw written back as a spec
    /// swaps the same programs.
    public func swappedProgram(_ program: UInt8) -> UInt8 {
        guard let chance = values[.programs], chance > 0 else { return program }
        var stream = SplitMix64(seed: chance.bitPattern ^ stableHash("programs\u{0}\(program)"))
        guard stream.nextUnit() < chance else { return program }
        let family = program & ~7
        return family | ((program & 7) + 1 + UInt8(stream.next() % 7)) & 7
    }

    /// A render's gain `base` (dB) with the drawn gain added, held to the -24...24 dB every
    /// render accepts.
    public func gain(addedTo base: Float) -> Float {
        Float(min(24, max(-24, Double(base) + gainDecibels)))
    }

    /// `transpose=2,tempo=1.0371...`: exact, so passing it back as a spec redraws these values.
    public var description: String {
        AugmentationSpec.Knob.allCases.compactMap { knob in values[knob].map { "\(knob.rawValue)=\(format($0))" } }.joined(separator: ",")
    }
}

extension MusicSequence {
    /// The song changed as `draw` says: notes transposed (not the drums), tempos scaled
    /// (events keep their beats, so the music plays faster or slower), velocities curved. The
    /// gain is the render's to apply.
    public func augmented(by draw: AugmentationDraw) -> MusicSequence {
        var copy = self
        if draw.transpose != 0 { copy.transpose(by: draw.transpose) }
        if let factor = draw.values[.tempo], factor != 1 { copy.scaleTempo(by: factor, keep: .beats) }
        if let exponent = draw.values[.velocity], exponent != 1 {
            copy.changeVelocities { v in Int((127 * pow(Double(v) / 127, exponent)).rounded()) }
        }
        if let chance = draw.values[.programs], chance > 0 { copy.swapPrograms(draw.swappedProgram) }
        return copy
    }

    /// Every program change on a channel other than 10 plays `swap(program)` instead; a channel
    /// whose first note sounds before any program change (so with program 0) gets a program
    /// change to `swap(0)` at tick 0 when that differs.
    mutating func swapPrograms(_ swap: (UInt8) -> UInt8) {
        var firstNote: [UInt8: (tick: Int64, track: Int)] = [:]
        var firstProgram: [UInt8: Int64] = [:]
        for index in tracks.indices {
            tracks[index].mapEvents { e in
                switch e.event {
                case .message(var m) where m.status & 0xF0 == 0xC0 && m.channel != 9:
                    firstProgram[m.channel] = min(firstProgram[m.channel] ?? .max, e.tick)
                    m.data1 = swap(m.data1 & 0x7F)
                    e.event = .message(m)
                case .note(let n) where n.channel != 9:
                    if e.tick < firstNote[n.channel]?.tick ?? .max { firstNote[n.channel] = (e.tick, index) }
                default:
                    break
                }
            }
        }
        for (channel, note) in firstNote.sorted(by: { $0.key < $1.key }) where note.tick < firstProgram[channel] ?? .max {
            let program = swap(0)
            if program != 0 { tracks[note.track].add(.message(MIDIMessage(status: 0xC0 | channel, data1: program, data2: 0)), at: 0) }
        }
    }
}

/// Why a spec was refused.
public enum AugmentationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The part of the spec at fault, and why.
    case malformed(String, String)

    public var description: String {
        switch self {
        case .malformed(let part, let reason): "augmentation '\(part)': \(reason)"
        }
    }
}

/// Shortest text that reads back as the same value ("2" for whole numbers).
private func format(_ value: Double) -> String {
    value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
}

private extension StringProtocol {
    func trimmingWhitespace() -> String {
        var text = self[...]
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return String(text)
    }
}
