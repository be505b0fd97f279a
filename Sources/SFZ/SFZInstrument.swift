#if canImport(Glibc)
import Glibc
#endif

/// An SFZ instrument read into regions: its `<global>`, `<master>`, `<group>` and `<region>`
/// headers flattened so that each ``SFZRegion`` carries every value it plays with, its
/// `<curve>`s, and the warnings about what was skipped.
///
/// ```swift
/// var instrument = try SFZInstrument.load(contentsOf: "Piano/piano.sfz")
/// try instrument.locateSamples()          // throws naming the first missing sample
/// for warning in instrument.warnings { print(warning) }
/// ```
///
/// Reading follows sfizz: comments (`//`, `/* */`), `#define $NAME value` and `$NAME`,
/// `#include "file"` (looked for in the instrument's folder, then beside the including file),
/// `<control>`'s `default_path` (reset by each `<control>`), `note_offset` and `octave_offset`,
/// values with spaces (sample paths), `\` in paths, opcode names in any case. An opcode this
/// model does not know is a warning naming the file, line and opcode, never an error; so is a
/// line sfizz would skip. Errors (``SFZError``) are for what cannot be read or goes over a limit
/// (``SFZReadOptions``).
public struct SFZInstrument: Sendable {
    /// The instrument file, as given (normalized).
    public var path: String
    /// The regions, in the order of their `<region>` headers.
    public var regions: [SFZRegion]
    /// The `<curve>` headers, by their index.
    public var curves: [Int: SFZCurve]
    /// Names of the samples carried inside the file (`<sample> name=...`, an sfizz extension).
    public var embeddedSampleNames: Set<String>
    /// Every file read: the instrument first, then the included files.
    public var files: [String]
    /// What was skipped or repaired, up to ``SFZReadOptions/maximumWarningCount``.
    public var warnings: [SFZWarning]
    /// Warnings beyond those kept.
    public var droppedWarningCount: Int

    /// Reads the instrument at `path` from the file system.
    public static func load(contentsOf path: String, options: SFZReadOptions = SFZReadOptions()) throws(SFZError) -> SFZInstrument {
        try load(contentsOf: path, from: SFZDiskFiles(), options: options)
    }

    /// Reads the instrument at `path`, and what it includes, from `source`.
    public static func load<Source: SFZFileSource>(contentsOf path: String, from source: Source,
                                                   options: SFZReadOptions = SFZReadOptions()) throws(SFZError) -> SFZInstrument {
        var parser = try SFZParser(path: path, source: source, options: options)
        try parser.parse()
        var resolver = SFZResolver(files: parser.files, log: parser.log, options: options)
        let regions = resolver.resolve(parser.blocks)
        return SFZInstrument(path: parser.files[0], regions: regions, curves: resolver.curves,
                             embeddedSampleNames: resolver.embeddedSampleNames, files: parser.files,
                             warnings: resolver.log.kept, droppedWarningCount: resolver.log.dropped)
    }

    /// Checks that every region's sample file exists, and replaces each path by the file's real
    /// name: a path that does not match exactly is looked for ignoring case, folder by folder, as
    /// sfizz does on case-sensitive file systems (`REGIONS/Dummy.WAV` finds `Regions/dummy.wav`).
    /// Generators and embedded samples need no file. Throws ``SFZErrorKind/missingSample`` naming
    /// the first sample that is not found and the region that names it.
    public mutating func locateSamples() throws(SFZError) {
        var found: [String: String] = [:]
        for index in regions.indices {
            guard case .file(let path) = regions[index].sample else { continue }
            if let known = found[path] {
                regions[index].sample = .file(known)
                continue
            }
            guard let real = Self.findIgnoringCase(path) else {
                throw SFZError(path: path, kind: .missingSample,
                               reason: "sample not found (named by the region at \(regions[index].path):\(regions[index].line))")
            }
            found[path] = real
            regions[index].sample = .file(real)
        }
    }

    static func isFile(_ path: String) -> Bool { SFZDiskFiles().fileExists(path) }

    /// `path` itself when it exists, else the path whose components match it ignoring ASCII case.
    static func findIgnoringCase(_ path: String) -> String? {
        if isFile(path) { return path }
        let isAbsolute = path.hasPrefix("/")
        var resolved = isAbsolute ? "/" : ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        for part in parts {
            let directory = resolved.isEmpty ? "." : resolved
            let candidate = resolved.isEmpty || resolved == "/" ? resolved + part : resolved + "/" + part
            var exact = stat()
            if part == "." || part == ".." || stat(candidate, &exact) == 0 {
                resolved = candidate
                continue
            }
            guard let match = entry(in: directory, matchingIgnoringCase: String(part)) else { return nil }
            resolved = resolved.isEmpty || resolved == "/" ? resolved + match : resolved + "/" + match
        }
        return isFile(resolved) ? resolved : nil
    }

    private static func entry(in directory: String, matchingIgnoringCase name: String) -> String? {
        guard let handle = opendir(directory) else { return nil }
        defer { closedir(handle) }
        let wanted = name.lowercased()
        var best: String?
        while let entry = readdir(handle) {
            // In place, up to its NUL: readdir's entry is only d_reclen bytes long, so copying
            // the whole 256-byte d_name (or the dirent) reads past the end of the last one.
            let entryName = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            // The first match in name order, so the choice does not depend on the directory's order.
            if entryName.lowercased() == wanted, best.map({ entryName < $0 }) ?? true { best = entryName }
        }
        return best
    }
}

/// Flattens header blocks into regions as sfizz's synth does: `<global>` starts over (clearing
/// `<master>` and `<group>`), `<master>` clears `<group>`, each `<region>` takes the global,
/// master, group and its own opcodes in that order.
struct SFZResolver {
    let files: [String]
    var log: SFZWarningLog
    let options: SFZReadOptions
    var curves: [Int: SFZCurve] = [:]
    var embeddedSampleNames: Set<String> = []
    private var curvesExplicitlyIndexed = false

    init(files: [String], log: SFZWarningLog, options: SFZReadOptions) {
        self.files = files
        self.log = log
        self.options = options
    }

    private mutating func warn(_ opcode: SFZParsedOpcode, _ message: String) {
        log.add(SFZWarning(path: files[opcode.file], line: opcode.line, opcode: opcode.name, message: message))
    }

    mutating func resolve(_ blocks: [SFZParsedBlock]) -> [SFZRegion] {
        var global: [SFZParsedOpcode] = []
        var master: [SFZParsedOpcode] = []
        var group: [SFZParsedOpcode] = []
        var defaultPath = ""
        var noteOffset = 0
        var octaveOffset = 0
        var regions: [SFZRegion] = []
        var template: SFZRegion?
        for block in blocks {
            switch block.header {
            case "global":
                global = check(block.opcodes, defaultPath: defaultPath)
                master = []
                group = []
                template = nil
            case "master":
                master = check(block.opcodes, defaultPath: defaultPath)
                group = []
                template = nil
            case "group":
                group = check(block.opcodes, defaultPath: defaultPath)
                template = nil
            case "region":
                // What the headers above give every region is worked out once per header, not per
                // region: a group of thousands of opcodes over thousands of regions stays linear.
                // Their problems were reported once, at their header (check).
                if template == nil {
                    var inherited = SFZRegion(path: "", line: 0)
                    for opcode in global + master + group {
                        var reader = SFZValueReader(name: opcode.name, value: opcode.value)
                        _ = inherited.apply(opcode.key, reader: &reader, defaultPath: defaultPath)
                    }
                    template = inherited
                }
                var region = template!
                region.path = files[block.file]
                region.line = block.line
                for opcode in block.opcodes { apply(opcode, to: &region, defaultPath: defaultPath) }
                let keyOffset = octaveOffset * 12 + noteOffset
                if keyOffset != 0 { region.offsetKeys(by: keyOffset) }
                regions.append(region)
            case "control":
                defaultPath = ""
                template = nil
                for opcode in block.opcodes {
                    var reader = SFZValueReader(name: opcode.name, value: opcode.value)
                    switch opcode.key {
                    case "default_path":
                        defaultPath = String(opcode.value.map { $0 == "\\" ? "/" : $0 })
                    case "note_offset":
                        // sfizz keeps any offset; beyond ±1000 every key is clamped to 0 or 127 anyway, and
                        // the bound keeps the sum from overflowing.
                        noteOffset = Swift.max(-1000, Swift.min(1000, reader.integer(-127...127, low: .keep, high: .keep, default: 0)))
                    case "octave_offset":
                        octaveOffset = Swift.max(-1000, Swift.min(1000, reader.integer(-10...10, low: .keep, high: .keep, default: 0)))
                    default:
                        warn(opcode, "opcode `\(SFZWarning.shortened(opcode.name))` is not supported in <control> (ignored)")
                    }
                    for problem in reader.problems { warn(opcode, problem) }
                }
            case "curve":
                addCurve(block)
            case "sample":
                for opcode in block.opcodes where opcode.key == "name" {
                    embeddedSampleNames.insert(String(opcode.value.map { $0 == "\\" ? "/" : $0 }))
                }
            default:
                let path = files[block.file]
                let known = ["effect", "midi"].contains(block.header)
                log.add(SFZWarning(path: path, line: block.line,
                                   message: known ? "<\(block.header)> is not supported (its opcodes are ignored)"
                                                  : "unknown header <\(block.header)> (its opcodes are ignored)"))
            }
        }
        let directory = SFZPath.directory(of: files[0])
        for index in regions.indices {
            guard case .file(let written) = regions[index].sample else { continue }
            regions[index].sample = embeddedSampleNames.contains(written) ? .embedded(written) : .file(SFZPath.join(directory, written))
        }
        return regions
    }

    /// Applies an opcode to `region`, warning about an unknown opcode or a bad value; false
    /// when the opcode is unknown.
    @discardableResult
    private mutating func apply(_ opcode: SFZParsedOpcode, to region: inout SFZRegion, defaultPath: String) -> Bool {
        var reader = SFZValueReader(name: opcode.name, value: opcode.value)
        let known = region.apply(opcode.key, reader: &reader, defaultPath: defaultPath)
        if !known { warn(opcode, "unknown or unsupported opcode `\(SFZWarning.shortened(opcode.name))` (ignored)") }
        for problem in reader.problems { warn(opcode, problem) }
        return known
    }

    /// Warns once about the opcodes of a `<global>`, `<master>` or `<group>` header, and returns
    /// the known ones, which are applied again, silently, to each region below it.
    private mutating func check(_ opcodes: [SFZParsedOpcode], defaultPath: String) -> [SFZParsedOpcode] {
        var scratch = SFZRegion(path: "", line: 0)
        return opcodes.filter { apply($0, to: &scratch, defaultPath: defaultPath) }
    }

    private mutating func addCurve(_ block: SFZParsedBlock) {
        var points = [Double?](repeating: nil, count: 128)
        var index: Int?
        for opcode in block.opcodes {
            let name = opcode.key
            var reader = SFZValueReader(name: opcode.name, value: opcode.value)
            if name == "curve_index" {
                index = reader.integer(0...255, default: 0)
            } else if let point = SFZOpcodeName.number(after: "v", in: name), point < 128 {
                points[point] = reader.number(-1e16...1e16, default: 0)
            } else {
                warn(opcode, "unknown opcode `\(SFZWarning.shortened(opcode.name))` in <curve> (ignored)")
            }
            for problem in reader.problems { warn(opcode, problem) }
        }
        let values = SFZCurve.linearFill(points, first: 0, last: 1)
        if let index {
            curvesExplicitlyIndexed = true
            curves[index] = SFZCurve(index: index, values: values)
        } else if curvesExplicitlyIndexed {
            log.add(SFZWarning(path: files[block.file], line: block.line,
                               message: "<curve> without curve_index after curves with one (ignored, as sfizz)"))
        } else {
            // sfizz numbers curves without an index after its 7 predefined ones (0-6).
            let next = max(7, (curves.keys.max() ?? 6) + 1)
            guard next <= 255 else { return }
            curves[next] = SFZCurve(index: next, values: values)
        }
    }
}

extension SFZRegion {
    /// Moves every key by `offset` semitones, clamped to 0-127, as sfizz applies `note_offset`
    /// and `octave_offset`: the key range (unless it is all keys), the pitch center and the key
    /// switch.
    mutating func offsetKeys(by offset: Int) {
        func moved(_ key: Int) -> Int { Swift.min(127, Swift.max(0, key + Swift.max(-1000, Swift.min(1000, offset)))) }
        if keyRange != SFZRange(0, 127) { keyRange = SFZRange(moved(keyRange.low), moved(keyRange.high)) }
        pitchKeycenter = moved(pitchKeycenter)
        if let key = keyswitchLast { keyswitchLast = moved(key) }
    }
}
