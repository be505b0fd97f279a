#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A patch that is not usable, with the file and the place in it.
public struct AudioFilePatchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file the problem is in: the JSON patch or one of its WAV files.
    public var path: String
    /// Where in the JSON document, such as `zones[2].keyRange`, or nil.
    public var field: String?
    /// What is wrong.
    public var reason: String
    /// True when a file could not be read at all (missing, unreadable), as opposed to content
    /// that was refused; the CLI exits 66 for these and 65 for the rest.
    public var isUnreadableInput: Bool

    /// Creates an error.
    public init(path: String, field: String? = nil, reason: String, isUnreadableInput: Bool = false) {
        self.path = path
        self.field = field
        self.reason = reason
        self.isUnreadableInput = isUnreadableInput
    }

    public var description: String {
        "\(path): " + (field.map { "\($0): " } ?? "") + reason
    }
}

/// Builds a playable bank from audio files described by a JSON patch, as AUSampler builds
/// instruments from audio files.
///
/// The document:
/// ```json
/// {
///   "name": "Felt piano",
///   "zones": [
///     { "file": "c3.wav", "rootKey": 48, "keyRange": [0, 53] },
///     { "file": "c5.wav", "rootKey": 72, "keyRange": [54, 127], "velocityRange": [1, 100],
///       "loopStart": 4410, "loopEnd": 88200, "loopMode": "untilRelease",
///       "tuning": -8, "gain": -3.5 }
///   ]
/// }
/// ```
/// Per zone: `file` (required; relative to the JSON file's folder), `rootKey` (0-127, the key
/// at which the file plays unshifted; default 60), `keyRange` and `velocityRange` (`[low, high]`
/// within 0-127; default all), `loopStart` and `loopEnd` (frames; both or neither, start before
/// end, end at most the file's length), `loopMode` (`"none"`, `"continuous"` or
/// `"untilRelease"`; default `"continuous"` with loop points, `"none"` without), `tuning` (cents,
/// -12000...12000; default 0) and `gain` (dB, -144...0: SoundFont attenuation cannot amplify;
/// default 0). `name` is optional (default: the file name without extension). Unknown keys are
/// errors, so a typo is not silently ignored.
///
/// WAV files may be PCM 8, 16, 24 or 32-bit integer or 32-bit float, mono or stereo. A stereo
/// file becomes a left and a right sample linked to each other, with one region each, panned
/// hard left and right, as SoundFont editors store stereo samples. The bank has one preset,
/// bank 0 program 0, whose regions carry the zone's settings as generators: key and velocity
/// ranges, `overridingRootKey`, `coarseTune`/`fineTune`, `initialAttenuation`, `sampleModes`,
/// with the loop as the sample header's absolute points, and the default modulators. Samples
/// are 24-bit when any file has more than 16 bits per sample.
public enum AudioFilePatch {
    /// Reads the patch at `path` and the WAV files it names, and builds its bank.
    public static func load(contentsOf path: String) throws(AudioFilePatchError) -> SoundFontBank {
        let bytes: [UInt8]
        do {
            bytes = try readWholeFile(path)
        } catch {
            throw AudioFilePatchError(path: path, reason: error.reason, isUnreadableInput: error.isUnreadableInput)
        }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        return try load(json: bytes, path: path, resolvingFilesAgainst: directory)
    }

    /// Builds the bank of a patch document whose `file` paths are relative to `directory`;
    /// `path` names the document in errors and gives the default name.
    public static func load(json: [UInt8], path: String, resolvingFilesAgainst directory: String) throws(AudioFilePatchError) -> SoundFontBank {
        let document: PatchJSON
        do {
            document = try JSONDecoder().decode(PatchJSON.self, from: Data(json))
        } catch {
            throw AudioFilePatchError(path: path, reason: "not valid JSON: \(describe(error))")
        }
        var builder = PatchBuilder(path: path, directory: directory)
        return try builder.build(document)
    }

    static func describe(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            if let underlying = context.underlyingError { return "\(underlying)" }
            return context.debugDescription
        }
        return "\(error)"
    }
}

/// Any JSON value.
enum PatchJSON: Decodable {
    case object([String: PatchJSON])
    case array([PatchJSON])
    case number(Double)
    case string(String)
    case bool(Bool)
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([PatchJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: PatchJSON].self))
        }
    }

    var kind: String {
        switch self {
        case .object: return "an object"
        case .array: return "an array"
        case .number: return "a number"
        case .string: return "a string"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }
}

/// A zone's settings as read from the document.
struct PatchZone {
    var file: String
    var rootKey = 60
    var keys = 0...127
    var velocities = 0...127
    var loop: (start: Int, end: Int)?
    var loopMode = 0
    var tuning = 0
    var gain = 0.0
}

struct PatchBuilder {
    let path: String
    let directory: String
    var storage = SoundFontBankBuilder()
    var samples: [SoundFontSample] {
        get { storage.samples }
        set { storage.samples = newValue }
    }
    /// First sample index and frame count of each loaded file, by resolved path.
    var loaded: [String: LoadedFile] = [:]

    /// Where a loaded file's samples are.
    struct LoadedFile {
        /// Index of its first sample header (the left one for stereo files).
        var first: Int
        var channels: Int
        var frames: Int
        /// True the first time the file is asked for, when no zone has set its headers yet.
        var isNew: Bool
    }

    init(path: String, directory: String) {
        self.path = path
        self.directory = directory
    }

    func fail(_ field: String?, _ reason: String) -> AudioFilePatchError {
        AudioFilePatchError(path: path, field: field, reason: reason)
    }

    mutating func build(_ document: PatchJSON) throws(AudioFilePatchError) -> SoundFontBank {
        guard case .object(let top) = document else { throw fail(nil, "the document must be an object, not \(document.kind)") }
        for key in top.keys.sorted() where !["name", "zones"].contains(key) {
            throw fail(key, "unknown key (known: name, zones)")
        }
        var name = String((path.split(separator: "/").last ?? Substring(path)).split(separator: ".").first ?? "patch")
        if let value = top["name"] {
            guard case .string(let given) = value else { throw fail("name", "must be a string, not \(value.kind)") }
            name = given
        }
        guard let zonesValue = top["zones"] else { throw fail("zones", "missing: a patch needs at least one zone") }
        guard case .array(let zoneValues) = zonesValue, !zoneValues.isEmpty else {
            throw fail("zones", "must be a non-empty array of zones")
        }
        var regions: [SoundFontRegion] = []
        for (i, value) in zoneValues.enumerated() {
            let zone = try parseZone(value, field: "zones[\(i)]")
            try appendRegions(for: zone, field: "zones[\(i)]", to: &regions)
        }
        let preset = SoundFontPreset(name: name, bank: 0, program: 0, regions: regions)
        return storage.makeBank(name: name, presets: [preset])
    }

    func parseZone(_ value: PatchJSON, field: String) throws(AudioFilePatchError) -> PatchZone {
        guard case .object(let object) = value else { throw fail(field, "a zone must be an object, not \(value.kind)") }
        let known = ["file", "rootKey", "keyRange", "velocityRange", "loopStart", "loopEnd", "loopMode", "tuning", "gain"]
        for key in object.keys.sorted() where !known.contains(key) {
            throw fail("\(field).\(key)", "unknown key (known: \(known.joined(separator: ", ")))")
        }
        guard case .string(let file)? = object["file"], !file.isEmpty else {
            throw fail("\(field).file", object["file"] == nil ? "missing: every zone names a WAV file" : "must be a non-empty string")
        }
        var zone = PatchZone(file: file)
        if let v = object["rootKey"] { zone.rootKey = try integer(v, "\(field).rootKey", in: 0...127) }
        if let v = object["keyRange"] { zone.keys = try range(v, "\(field).keyRange") }
        if let v = object["velocityRange"] { zone.velocities = try range(v, "\(field).velocityRange") }
        switch (object["loopStart"], object["loopEnd"]) {
        case (nil, nil): break
        case let (start?, end?):
            let s = try integer(start, "\(field).loopStart", in: 0...Int(Int32.max))
            let e = try integer(end, "\(field).loopEnd", in: 0...Int(Int32.max))
            guard s < e else { throw fail("\(field).loopEnd", "loop end \(e) must be after loop start \(s)") }
            zone.loop = (s, e)
            zone.loopMode = 1
        default:
            throw fail(object["loopStart"] == nil ? "\(field).loopStart" : "\(field).loopEnd", "missing: give both loopStart and loopEnd, or neither")
        }
        if let v = object["loopMode"] {
            let modes = ["none": 0, "continuous": 1, "untilRelease": 3]
            guard case .string(let mode) = v, let code = modes[mode] else {
                throw fail("\(field).loopMode", "must be \"none\", \"continuous\" or \"untilRelease\"")
            }
            if code != 0 && zone.loop == nil { throw fail("\(field).loopMode", "\"\(mode)\" needs loopStart and loopEnd") }
            zone.loopMode = code
        }
        if let v = object["tuning"] { zone.tuning = try integer(v, "\(field).tuning", in: -12_000...12_000) }
        if let v = object["gain"] {
            guard case .number(let dB) = v, dB.isFinite else { throw fail("\(field).gain", "must be a number of dB, not \(v.kind)") }
            guard (-144...0).contains(dB) else {
                throw fail("\(field).gain", "\(dB) dB is outside -144...0 (a SoundFont zone can attenuate, not amplify)")
            }
            zone.gain = dB
        }
        return zone
    }

    func integer(_ value: PatchJSON, _ field: String, in allowed: ClosedRange<Int>) throws(AudioFilePatchError) -> Int {
        guard case .number(let n) = value, n.isFinite, n.rounded() == n else {
            throw fail(field, "must be a whole number, not \(value.kind == "a number" ? "a fraction" : value.kind)")
        }
        guard n >= Double(allowed.lowerBound), n <= Double(allowed.upperBound) else {
            throw fail(field, "\(Int(exactly: n).map(String.init) ?? String(n)) is outside \(allowed.lowerBound)...\(allowed.upperBound)")
        }
        return Int(n)
    }

    func range(_ value: PatchJSON, _ field: String) throws(AudioFilePatchError) -> ClosedRange<Int> {
        guard case .array(let bounds) = value, bounds.count == 2 else {
            throw fail(field, "must be [low, high] with 0 <= low <= high <= 127")
        }
        let low = try integer(bounds[0], "\(field)[0]", in: 0...127)
        let high = try integer(bounds[1], "\(field)[1]", in: 0...127)
        guard low <= high else { throw fail(field, "low \(low) is above high \(high)") }
        return low...high
    }

    /// The samples of `file`, loading it the first time it is named.
    mutating func samplesOf(_ file: String, field: String) throws(AudioFilePatchError) -> LoadedFile {
        let resolved = file.hasPrefix("/") ? file : "\(directory)/\(file)"
        if var known = loaded[resolved] {
            known.isNew = false
            return known
        }
        let audio: WAVAudio
        do {
            audio = try WAVReader.read(contentsOf: resolved)
        } catch {
            throw AudioFilePatchError(path: resolved, field: nil, reason: "\(error.reason) (named by \(path), \(field).file)",
                                      isUnreadableInput: error.isUnreadableInput)
        }
        guard audio.frameCount > 0 else {
            throw AudioFilePatchError(path: resolved, reason: "no audio frames (named by \(path), \(field).file)")
        }
        let baseName = String(file.split(separator: "/").last ?? Substring(file))
        guard let first = storage.append(PCMAudio(sampleRate: audio.sampleRate, channels: audio.channels, hasLowBytes: audio.hasLowBytes),
                                          name: baseName) else {
            throw fail("\(field).file", "the patch's audio exceeds \(Int32.max) sample points")
        }
        let entry = LoadedFile(first: first, channels: audio.channels.count, frames: audio.frameCount, isNew: true)
        loaded[resolved] = entry
        return entry
    }

    mutating func appendRegions(for zone: PatchZone, field: String, to regions: inout [SoundFontRegion]) throws(AudioFilePatchError) {
        let source = try samplesOf(zone.file, field: field)
        if let loop = zone.loop, loop.end > source.frames {
            throw fail("\(field).loopEnd", "loop end \(loop.end) is past the \(source.frames) frames of \(zone.file)")
        }
        var headers: [SoundFontSample] = []
        for c in 0..<source.channels {
            var sample = samples[source.first + c]
            sample.originalPitch = UInt8(zone.rootKey)
            if let loop = zone.loop {
                sample.loopStart = sample.start + loop.start
                sample.loopEnd = sample.start + loop.end
            } else {
                (sample.loopStart, sample.loopEnd) = (sample.start, sample.end)
            }
            headers.append(sample)
        }
        // The first zone of a file sets its headers; a later zone with another root key or loop
        // gets headers of its own over the same sample points.
        var first = source.first
        if !source.isNew && headers.indices.contains(where: { headers[$0] != samples[source.first + $0] }) {
            first = samples.count
            for (c, var header) in headers.enumerated() {
                if header.link != nil { header.link = first + 1 - c }
                samples.append(header)
            }
        } else {
            for (c, header) in headers.enumerated() { samples[source.first + c] = header }
        }
        for c in 0..<source.channels {
            var generators = SoundFontGenerators.defaults
            generators[.overridingRootKey] = Int32(zone.rootKey)
            generators[.coarseTune] = Int32(zone.tuning / 100)
            generators[.fineTune] = Int32(zone.tuning % 100)
            generators[.initialAttenuation] = Int32((-zone.gain * 10).rounded())
            generators[.sampleModes] = Int32(zone.loopMode)
            if source.channels == 2 { generators[.pan] = c == 0 ? -500 : 500 }
            regions.append(SoundFontRegion(
                keyRange: UInt8(zone.keys.lowerBound)...UInt8(zone.keys.upperBound),
                velocityRange: UInt8(zone.velocities.lowerBound)...UInt8(zone.velocities.upperBound),
                sampleIndex: first + c, generators: generators, modulators: SoundFontModulator.defaults))
        }
    }
}
