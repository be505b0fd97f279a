import Glibc

/// Why a Scala scale (`.scl`) or keyboard mapping (`.kbm`) cannot be used: the file, the line
/// (when one is at fault) and the reason.
public struct ScalaFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file's path as given.
    public var path: String
    /// The 1-based line at fault, or nil for the file as a whole (missing, too short).
    public var line: Int?
    /// What is wrong, in a few words.
    public var reason: String
    /// True when the file could not be read at all (missing, not a regular file).
    public var isUnreadableInput: Bool

    /// Creates an error.
    public init(path: String, line: Int? = nil, reason: String, isUnreadableInput: Bool = false) {
        self.path = path
        self.line = line
        self.reason = reason
        self.isUnreadableInput = isUnreadableInput
    }

    /// `path: line N: reason`, or `path: reason` without a line.
    public var description: String {
        "\(path): " + (line.map { "line \($0): " } ?? "") + reason
    }
}

/// A Scala scale (`.scl`): a description and the pitches of its degrees above the unison, the
/// last being the period (usually the octave) after which the scale repeats.
///
/// The format is the Scala program's: lines starting with `!` are comments, the first other
/// line is the description, the next the number of notes, then one pitch a line, in cents
/// when it contains a `.` (`701.955`), else a ratio (`3/2`) or a whole number (`2`, meaning
/// 2/1). Text after a pitch is ignored.
public struct ScalaScale: Hashable, Sendable {
    /// The description line.
    public var description: String
    /// The degrees' pitches in cents above the unison (degree 1 first; the unison is not
    /// listed, and the last entry is the period).
    public var cents: [Double]

    /// Most notes a scale may have.
    public static let maximumNoteCount = 1024
    /// Largest pitch, in cents either way, a degree may have (ten octaves).
    public static let maximumCents = 12_000.0

    /// Creates a scale from its degrees' pitches in cents (the last is the period).
    public init(description: String, cents: [Double]) {
        self.description = description
        self.cents = cents
    }

    /// Parses the text of a `.scl` file; `path` names the file in errors.
    public init(text: String, path: String) throws(ScalaFileError) {
        func fail(_ line: Int?, _ reason: String) -> ScalaFileError { ScalaFileError(path: path, line: line, reason: reason) }
        var description: String?
        var expected: Int?
        var pitches: [Double] = []
        for (index, raw) in scalaLines(text).enumerated() {
            let lineNumber = index + 1
            if raw.hasPrefix("!") { continue }
            if description == nil {
                description = raw.trimmingSpaces
                continue
            }
            let token = raw.firstToken
            guard let count = expected else {
                guard let n = Int(token) else { throw fail(lineNumber, "expected the number of notes, found '\(token)'") }
                guard (1...Self.maximumNoteCount).contains(n) else {
                    throw fail(lineNumber, "\(n) notes: a scale has 1...\(Self.maximumNoteCount)")
                }
                expected = n
                pitches.reserveCapacity(n)
                continue
            }
            // Lines after the last note are not part of the scale (some files keep notes there).
            guard pitches.count < count else { break }
            guard !token.isEmpty else { throw fail(lineNumber, "expected a pitch (cents with a '.', or a ratio), found an empty line") }
            let cents = try Self.pitch(token, line: lineNumber, path: path)
            pitches.append(cents)
        }
        guard let description else { throw fail(nil, "no description line: not a Scala scale") }
        guard let expected else { throw fail(nil, "no note count: not a Scala scale") }
        guard pitches.count == expected else { throw fail(nil, "\(expected) notes announced, \(pitches.count) found") }
        guard let period = pitches.last, period > 0 else {
            throw fail(nil, "the last note (the period the scale repeats at) must be above the unison")
        }
        self.init(description: description, cents: pitches)
    }

    /// One pitch in cents: `701.955`, `3/2` or `2`.
    private static func pitch(_ token: String, line: Int, path: String) throws(ScalaFileError) -> Double {
        func fail(_ reason: String) -> ScalaFileError { ScalaFileError(path: path, line: line, reason: reason) }
        let cents: Double
        if token.contains(".") {
            guard let value = Double(token), value.isFinite else { throw fail("'\(token)' is not a number of cents") }
            cents = value
        } else {
            let parts = token.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2, let numerator = UInt64(parts[0]),
                  let denominator = parts.count == 2 ? UInt64(parts[1]) : 1 else {
                throw fail("'\(token)' is not a ratio (such as 3/2) or cents (such as 701.955)")
            }
            guard numerator > 0, denominator > 0 else { throw fail("ratio \(token) is not above 0") }
            cents = 1200 * log2Ratio(Double(numerator), Double(denominator))
        }
        guard abs(cents) <= maximumCents else {
            throw fail("\(token) is \(cents) cents, beyond the ±\(Int(maximumCents)) allowed")
        }
        return cents
    }

    /// Cents above the unison of degree `degree` (0 is the unison; degrees past the last note
    /// continue into the next periods, negative ones into the previous).
    public func cents(ofDegree degree: Int) -> Double {
        guard let period = cents.last else { return 0 }
        let n = cents.count
        let periods = degree >= 0 ? degree / n : -((-degree + n - 1) / n)
        let step = degree - periods * n
        return Double(periods) * period + (step == 0 ? 0 : cents[step - 1])
    }
}

/// A Scala keyboard mapping (`.kbm`): which scale degree each MIDI key plays and which key
/// sounds at which frequency.
///
/// The lines, after `!` comments: the size of the mapping pattern (0 for a linear mapping),
/// the first and last keys retuned, the middle key (where the pattern starts, playing its first
/// entry), the reference key and its frequency in hertz, the scale degree that is the formal
/// octave (0 for the scale's period), then one entry a line for each key of the pattern: a
/// degree, or `x` for a key that is not mapped. Missing entries at the end are unmapped.
public struct KeyboardMapping: Hashable, Sendable {
    /// Keys in the repeating pattern; 0 maps keys to consecutive degrees.
    public var size: Int
    /// The first key retuned.
    public var firstKey: Int
    /// The last key retuned.
    public var lastKey: Int
    /// The key that plays the pattern's first entry.
    public var middleKey: Int
    /// The key whose frequency is given.
    public var referenceKey: Int
    /// The reference key's frequency in hertz.
    public var referenceFrequency: Double
    /// The degree that is the formal octave, each repetition of the pattern moving by its
    /// interval (0 for the scale's period).
    public var octaveDegree: Int
    /// The degree of each key of the pattern, nil for a key that is not mapped.
    public var degrees: [Int?]

    /// Creates a mapping from its fields.
    public init(size: Int, firstKey: Int, lastKey: Int, middleKey: Int, referenceKey: Int, referenceFrequency: Double,
                octaveDegree: Int, degrees: [Int?]) {
        self.size = size
        self.firstKey = firstKey
        self.lastKey = lastKey
        self.middleKey = middleKey
        self.referenceKey = referenceKey
        self.referenceFrequency = referenceFrequency
        self.octaveDegree = octaveDegree
        self.degrees = degrees
    }

    /// The mapping used without a `.kbm` file: consecutive degrees with the unison on key 60,
    /// which keeps its equal-tempered pitch (middle C, 261.63 Hz).
    public static let standard = KeyboardMapping(size: 0, firstKey: 0, lastKey: 127, middleKey: 60, referenceKey: 60,
                                                 referenceFrequency: 440 * 0.594_603_557_501_360_5, octaveDegree: 0, degrees: [])

    /// Most entries a mapping pattern may have.
    public static let maximumSize = 1024

    /// Parses the text of a `.kbm` file; `path` names the file in errors.
    public init(text: String, path: String) throws(ScalaFileError) {
        func fail(_ line: Int?, _ reason: String) -> ScalaFileError { ScalaFileError(path: path, line: line, reason: reason) }
        let names = ["map size", "first key", "last key", "middle key", "reference key", "reference frequency", "octave degree"]
        var header: [Double] = []
        var degrees: [Int?] = []
        var size = 0
        for (index, raw) in scalaLines(text).enumerated() {
            let lineNumber = index + 1
            if raw.hasPrefix("!") { continue }
            let token = raw.firstToken
            if header.count < names.count {
                let name = names[header.count]
                guard let value = Double(token), value.isFinite else { throw fail(lineNumber, "expected the \(name), found '\(token)'") }
                let whole = header.count != 5
                if whole && value != value.rounded() { throw fail(lineNumber, "the \(name) must be a whole number, not \(token)") }
                switch header.count {
                case 0:
                    guard (0...Self.maximumSize).contains(Int(value)) else {
                        throw fail(lineNumber, "map size \(token) is outside 0...\(Self.maximumSize)")
                    }
                    size = Int(value)
                case 1...4:
                    guard (0...127).contains(value) else { throw fail(lineNumber, "the \(name) \(token) is outside 0...127") }
                case 5:
                    guard value > 0, value <= 100_000 else {
                        throw fail(lineNumber, "reference frequency \(token) Hz is outside (0, 100000]")
                    }
                default:
                    guard (0...Self.maximumSize).contains(Int(value)) else {
                        throw fail(lineNumber, "octave degree \(token) is outside 0...\(Self.maximumSize)")
                    }
                }
                header.append(value)
                continue
            }
            guard degrees.count < size else { break }
            if token.isEmpty { continue }
            if token == "x" || token == "X" {
                degrees.append(nil)
            } else if let degree = Int(token), (0...100_000).contains(degree) {
                degrees.append(degree)
            } else {
                throw fail(lineNumber, "expected a scale degree or 'x', found '\(token)'")
            }
        }
        guard header.count == names.count else { throw fail(nil, "no \(names[header.count]) line: not a Scala keyboard mapping") }
        if header[1] > header[2] { throw fail(nil, "first key \(Int(header[1])) is above last key \(Int(header[2]))") }
        while degrees.count < size { degrees.append(nil) }
        self.init(size: size, firstKey: Int(header[1]), lastKey: Int(header[2]), middleKey: Int(header[3]),
                  referenceKey: Int(header[4]), referenceFrequency: header[5], octaveDegree: Int(header[6]), degrees: degrees)
    }
}

/// The lines of a Scala file, without line ends (LF, CRLF or CR).
func scalaLines(_ text: String) -> [String] {
    var lines: [String] = []
    var current = ""
    var afterCR = false
    for scalar in text.unicodeScalars {
        if scalar == "\n" && afterCR { afterCR = false; continue }
        afterCR = scalar == "\r"
        if scalar == "\n" || scalar == "\r" {
            lines.append(current)
            current = ""
        } else {
            current.unicodeScalars.append(scalar)
        }
    }
    if !current.isEmpty { lines.append(current) }
    return lines
}

/// log2(a / b), as a difference so that numerators and denominators too large for their
/// quotient to be exact keep their precision.
func log2Ratio(_ a: Double, _ b: Double) -> Double {
    Glibc.log2(a) - Glibc.log2(b)
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }

    /// The first run of characters that are not spaces or tabs ("" for a blank line).
    var firstToken: String {
        let trimmed = trimmingSpaces
        return String(trimmed.unicodeScalars.prefix { $0 != " " && $0 != "\t" })
    }
}
