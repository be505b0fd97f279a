import Glibc

/// The pitch of each of the 128 MIDI keys, from a Scala scale laid out by a keyboard mapping:
/// what an instrument plays instead of equal temperament (see ``MIDITuningState``).
public struct KeyboardTuning: Hashable, Sendable {
    /// Cents above MIDI key 0 (8.18 Hz) for keys 0...127; key k in equal temperament is
    /// k × 100. A key the mapping leaves unmapped keeps its equal-tempered pitch.
    public var cents: [Double]

    /// Lowest and highest pitch a key may be given, in cents above key 0: from about 1 Hz to
    /// four octaves above key 127, which keeps a scale with a wide period from sending the
    /// outermost keys to absurd frequencies.
    public static let centsRange = -3600.0...17_600.0

    /// Creates a tuning from 128 pitches in cents above MIDI key 0.
    public init(cents: [Double]) {
        self.cents = cents
    }

    /// Lays `scale` out on the keyboard as `mapping` says (``KeyboardMapping/standard`` when
    /// nil: consecutive degrees, the unison on middle C at its equal-tempered pitch).
    ///
    /// Throws when the scale has no notes or a period not above the unison, when the mapping's
    /// keys are outside 0...127 or its reference frequency is not above 0 (a parsed file never
    /// has these; values built in code may), and when the reference key is itself unmapped,
    /// since its frequency then fixes nothing. `scalePath` and `mappingPath` name the two in
    /// those errors.
    public init(scale: ScalaScale, mapping: KeyboardMapping? = nil, scalePath: String = "scale",
                mappingPath: String = "keyboard mapping") throws(ScalaFileError) {
        guard (1...ScalaScale.maximumNoteCount).contains(scale.cents.count), scale.cents.allSatisfy(\.isFinite),
              let period = scale.cents.last, period > 0 else {
            throw ScalaFileError(path: scalePath, reason: "a scale needs 1...\(ScalaScale.maximumNoteCount) finite notes, the last above the unison")
        }
        let map = mapping ?? .standard
        let keys = [map.firstKey, map.lastKey, map.middleKey, map.referenceKey]
        guard keys.allSatisfy({ (0...127).contains($0) }), map.referenceFrequency.isFinite, map.referenceFrequency > 0,
              (0...KeyboardMapping.maximumSize).contains(map.size), (0...KeyboardMapping.maximumSize).contains(map.octaveDegree) else {
            throw ScalaFileError(path: mappingPath, reason: "keys must be within 0...127, the reference frequency above 0, "
                                 + "the size and octave degree within 0...\(KeyboardMapping.maximumSize)")
        }
        guard let reference = Self.relativeCents(key: map.referenceKey, scale: scale, mapping: map) else {
            throw ScalaFileError(path: mappingPath, reason: "reference key \(map.referenceKey) is not mapped to a scale degree")
        }
        // Cents above key 0 of the reference frequency: key 69 is 440 Hz, 6900 cents.
        let referenceCents = 6900 + 1200 * (log2(map.referenceFrequency) - log2(440))
        var cents = [Double](repeating: 0, count: 128)
        for key in 0..<128 {
            if key >= map.firstKey, key <= map.lastKey, let relative = Self.relativeCents(key: key, scale: scale, mapping: map) {
                let value = referenceCents + relative - reference
                cents[key] = min(max(value, Self.centsRange.lowerBound), Self.centsRange.upperBound)
            } else {
                cents[key] = Double(key) * 100
            }
        }
        self.init(cents: cents)
    }

    /// Reads a `.scl` file and, when given, a `.kbm` file, and lays the scale out.
    public static func load(scale scalePath: String, mapping mappingPath: String? = nil) throws(ScalaFileError) -> KeyboardTuning {
        let scale = try ScalaScale(text: readScalaFile(scalePath), path: scalePath)
        var mapping: KeyboardMapping?
        if let mappingPath { mapping = try KeyboardMapping(text: readScalaFile(mappingPath), path: mappingPath) }
        return try KeyboardTuning(scale: scale, mapping: mapping, scalePath: scalePath, mappingPath: mappingPath ?? scalePath)
    }

    /// A key's pitch in cents relative to the mapping's middle key, or nil when unmapped.
    static func relativeCents(key: Int, scale: ScalaScale, mapping: KeyboardMapping) -> Double? {
        let offset = key - mapping.middleKey
        guard mapping.size > 0 else { return scale.cents(ofDegree: offset) }
        let size = mapping.size
        let repeats = offset >= 0 ? offset / size : -((-offset + size - 1) / size)
        let index = offset - repeats * size
        guard index < mapping.degrees.count, let degree = mapping.degrees[index] else { return nil }
        let octave = mapping.octaveDegree == 0 ? scale.cents.last! : scale.cents(ofDegree: mapping.octaveDegree)
        return Double(repeats) * octave + scale.cents(ofDegree: degree)
    }
}

/// Most bytes a Scala file may have: real scales and mappings are a few kilobytes.
private let maximumScalaFileSize = 1 << 20

/// The text of a Scala file, or why it cannot be read (as the other instrument inputs say it).
func readScalaFile(_ path: String) throws(ScalaFileError) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else {
        let reason = errno == ENOENT ? "no such file" : "cannot open: \(String(cString: strerror(errno)))"
        throw ScalaFileError(path: path, reason: reason, isUnreadableInput: true)
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
        throw ScalaFileError(path: path, reason: "not a regular file", isUnreadableInput: true)
    }
    guard info.st_size <= maximumScalaFileSize else {
        throw ScalaFileError(path: path,
                             reason: "file is \(info.st_size) bytes, more than the \(maximumScalaFileSize) a Scala file may have")
    }
    var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
    var filled = 0
    while filled < bytes.count {
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else {
            if n == 0 { break }
            throw ScalaFileError(path: path, reason: "cannot read: \(String(cString: strerror(errno)))", isUnreadableInput: true)
        }
        filled += n
    }
    // Scala files are ASCII; stray bytes in a description become replacement characters
    // rather than refusing the file, since only the numbers matter.
    return String(decoding: bytes[0..<filled], as: UTF8.self)
}
