/// One `name=value` as written, after `$` expansion, with where it came from.
struct SFZParsedOpcode: Sendable {
    var name: String
    /// The name in lower case with sfizz's aliases resolved (`SFZOpcodeName.canonical`).
    var key: String
    var value: String
    /// Index into the parse's file list.
    var file: Int
    var line: Int
}

/// A header and the opcodes under it, up to the next header (across `#include`s, as sfizz).
struct SFZParsedBlock: Sendable {
    var header: String
    var file: Int
    var line: Int
    var opcodes: [SFZParsedOpcode] = []
}

/// Warnings kept up to a cap, the rest counted.
struct SFZWarningLog: Sendable {
    var kept: [SFZWarning] = []
    var dropped = 0
    let maximum: Int

    /// Keeps the warning, or only counts it past the cap (without building its text: instruments
    /// full of unsupported opcodes warn thousands of times).
    mutating func add(_ warning: @autoclosure () -> SFZWarning) {
        if kept.count < maximum { kept.append(warning()) } else { dropped += 1 }
    }
}

/// Turns SFZ text into header blocks the way sfizz's parser does: comments, `#define` and `$`
/// expansion, `#include`, headers and opcodes whose values may hold spaces. What sfizz reports
/// and skips (a malformed line, an unknown directive) is a warning here and the rest of the line
/// is skipped; what would make the result unbounded or incomplete (a missing include, a limit)
/// is an ``SFZError``. An `#include` that would close a loop (a file including a file that is
/// including it) is skipped with a warning, as sfizz's include guard skips it.
struct SFZParser {
    let source: any SFZFileSource
    let options: SFZReadOptions
    var log: SFZWarningLog
    /// Every file read, in the order first read; opcodes point into it.
    var files: [String] = []
    var blocks: [SFZParsedBlock] = []
    var definitions: [String: String] = [:]
    var longestDefinitionName = 0

    private var top: Frame
    private var suspended: [Frame] = []
    private var current: SFZParsedBlock?
    private var totalBytes = 0
    private var expandedBytes = 0
    private var regionCount = 0
    /// Includes are looked for in the instrument file's folder first, as sfizz does.
    private let rootDirectory: String

    private struct Frame {
        var bytes: [UInt8]
        var pos = 0
        var line = 1
        var file: Int
        var path: String
    }

    init(path: String, source: any SFZFileSource, options: SFZReadOptions) throws(SFZError) {
        self.source = source
        self.options = options
        self.log = SFZWarningLog(maximum: options.maximumWarningCount)
        let normalized = SFZPath.normalize(path)
        rootDirectory = SFZPath.directory(of: normalized)
        let bytes = try source.contents(of: normalized, maximumSize: options.maximumFileSize)
        totalBytes = bytes.count
        files = [normalized]
        top = Frame(bytes: bytes, file: 0, path: normalized)
    }

    /// Reads the instrument file and everything it includes into ``blocks``.
    mutating func parse() throws(SFZError) {
        while true {
            skipBlanksAndComments()
            if top.pos >= top.bytes.count {
                guard let outer = suspended.popLast() else { break }
                top = outer
                continue
            }
            switch top.bytes[top.pos] {
            case UInt8(ascii: "#"): try directive()
            case UInt8(ascii: "<"): try header()
            default: try opcode()
            }
        }
        flush()
    }

    // MARK: Characters

    // The loops below read a local copy of the array (a reference, not a copy of the bytes):
    // going through `top` for each byte costs an exclusivity check per byte in debug builds.

    private mutating func advance(to end: Int) {
        let bytes = top.bytes
        var p = top.pos
        var lines = 0
        while p < end {
            if bytes[p] == 0x0A { lines += 1 }
            p += 1
        }
        top.line += lines
        top.pos = end
    }

    private func scan(from start: Int, while predicate: (UInt8) -> Bool) -> Int {
        let bytes = top.bytes
        var p = start
        while p < bytes.count && predicate(bytes[p]) { p += 1 }
        return p
    }

    private func text(_ range: Range<Int>) -> String {
        String(decoding: top.bytes[range], as: UTF8.self)
    }

    private mutating func warn(_ line: Int, _ message: String, opcode: String? = nil) {
        log.add(SFZWarning(path: top.path, line: line, opcode: opcode, message: message))
    }

    /// Skips the rest of a line sfizz would refuse.
    private mutating func recover() {
        advance(to: scan(from: top.pos) { $0 != 0x0A })
    }

    private mutating func skipBlanksAndComments() {
        let bytes = top.bytes
        var p = top.pos
        while p < bytes.count {
            let c = bytes[p]
            if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
                p += 1
                continue
            }
            guard c == UInt8(ascii: "/"), p + 1 < bytes.count else { break }
            let next = bytes[p + 1]
            if next == UInt8(ascii: "/") {
                p += 2
                while p < bytes.count && bytes[p] != 0x0A && bytes[p] != 0x0D { p += 1 }
                p = min(p + 1, bytes.count)
            } else if next == UInt8(ascii: "*") {
                advance(to: p)
                let line = top.line
                p += 2
                while p + 1 < bytes.count && !(bytes[p] == UInt8(ascii: "*") && bytes[p + 1] == UInt8(ascii: "/")) { p += 1 }
                if p + 1 < bytes.count {
                    p += 2
                } else {
                    warn(line, "unterminated block comment: the rest of the file is a comment")
                    p = bytes.count
                }
            } else {
                break
            }
        }
        advance(to: p)
    }

    // MARK: Directives

    private mutating func directive() throws(SFZError) {
        let line = top.line
        let nameEnd = scan(from: top.pos + 1, while: SFZCharacters.isIdentifier)
        let name = text(top.pos + 1..<nameEnd)
        advance(to: nameEnd)
        switch name {
        case "define":
            advance(to: scan(from: top.pos, while: SFZCharacters.isSpace))
            guard top.pos < top.bytes.count, top.bytes[top.pos] == UInt8(ascii: "$") else {
                warn(line, "expected $NAME after #define (line skipped)")
                return recover()
            }
            let idEnd = scan(from: top.pos + 1, while: SFZCharacters.isIdentifier)
            guard idEnd > top.pos + 1 else {
                warn(line, "expected $NAME after #define (line skipped)")
                return recover()
            }
            let id = text(top.pos + 1..<idEnd)
            let valueStart = scan(from: idEnd, while: SFZCharacters.isSpace)
            // ARIA (and sfizz): the value is the first word; the rest of the line goes on
            // being read as opcodes.
            var end = valueStart
            let bytes = top.bytes
            while end < bytes.count, !SFZCharacters.isSpace(bytes[end]), bytes[end] != 0x0A, bytes[end] != 0x0D,
                  !(bytes[end] == UInt8(ascii: "/") && end + 1 < bytes.count && (bytes[end + 1] == UInt8(ascii: "/") || bytes[end + 1] == UInt8(ascii: "*"))) {
                end += 1
            }
            definitions[id] = text(valueStart..<end)
            longestDefinitionName = max(longestDefinitionName, id.utf8.count)
            advance(to: end)
        case "include":
            advance(to: scan(from: top.pos, while: SFZCharacters.isSpace))
            guard top.pos < top.bytes.count, top.bytes[top.pos] == UInt8(ascii: "\"") else {
                warn(line, "expected \"file.sfz\" after #include (line skipped)")
                return recover()
            }
            let pathEnd = scan(from: top.pos + 1) { $0 != UInt8(ascii: "\"") && $0 != 0x0A && $0 != 0x0D }
            guard pathEnd < top.bytes.count, top.bytes[pathEnd] == UInt8(ascii: "\"") else {
                warn(line, "expected \"file.sfz\" after #include (line skipped)")
                return recover()
            }
            let written = text(top.pos + 1..<pathEnd)
            advance(to: pathEnd + 1)
            let expanded = try expand(written, line: line, opcode: nil)
            // Paths written on Windows.
            let forwardSlashes = String(expanded.map { $0 == "\\" ? "/" : $0 })
            try include(forwardSlashes, line: line)
        default:
            warn(line, "unknown directive #\(SFZWarning.shortened(name)) (line skipped)")
            recover()
        }
    }

    private mutating func include(_ written: String, line: Int) throws(SFZError) {
        var chosen = SFZPath.join(rootDirectory, written)
        // sfizz resolves includes against the instrument's folder only; a file next to the
        // including file is taken when that finds nothing.
        let besideIncluder = SFZPath.join(SFZPath.directory(of: top.path), written)
        if besideIncluder != chosen, !source.fileExists(chosen), source.fileExists(besideIncluder) { chosen = besideIncluder }
        let chain = suspended.map(\.path) + [top.path]
        if chain.contains(chosen) {
            let names = (chain.drop { $0 != chosen } + [chosen]).joined(separator: " -> ")
            if options.refusesIncludeCycles {
                throw SFZError(path: top.path, line: line, kind: .includeCycle, reason: "#include cycle: \(names)")
            }
            // sfizz's include guard: a file being read is not read again inside itself, so a
            // loop ends where it closes and what each file holds is read once along the chain.
            warn(line, "#include cycle skipped: \(names)")
            return
        }
        guard chain.count <= options.maximumIncludeDepth else {
            throw SFZError(path: top.path, line: line, kind: .includeTooDeep,
                           reason: "#include \"\(written)\" nests \(chain.count) files deep, more than the \(options.maximumIncludeDepth) allowed (SFZReadOptions.maximumIncludeDepth)")
        }
        let bytes: [UInt8]
        do {
            bytes = try source.contents(of: chosen, maximumSize: options.maximumFileSize)
        } catch {
            throw SFZError(path: top.path, line: line, kind: error.kind, reason: "#include \"\(written)\": \(chosen): \(error.reason)")
        }
        totalBytes += bytes.count
        guard totalBytes <= options.maximumTotalSize else {
            throw SFZError(path: top.path, line: line, kind: .tooMuchText,
                           reason: "#include \"\(written)\" brings the text read to \(totalBytes) bytes, more than the \(options.maximumTotalSize) allowed (SFZReadOptions.maximumTotalSize)")
        }
        var index = files.count
        if let known = files.firstIndex(of: chosen) { index = known } else { files.append(chosen) }
        suspended.append(top)
        top = Frame(bytes: bytes, file: index, path: chosen)
    }

    // MARK: Headers and opcodes

    private mutating func flush() {
        if let current { blocks.append(current) }
        current = nil
    }

    private mutating func header() throws(SFZError) {
        let line = top.line
        let nameEnd = scan(from: top.pos + 1) { $0 != 0x0A && $0 != 0x0D && $0 != UInt8(ascii: ">") }
        guard nameEnd < top.bytes.count, top.bytes[nameEnd] == UInt8(ascii: ">") else {
            warn(line, "expected `>` at the end of the header (line skipped)")
            return recover()
        }
        let name = text(top.pos + 1..<nameEnd)
        advance(to: nameEnd + 1)
        guard !name.isEmpty, name.utf8.allSatisfy(SFZCharacters.isIdentifier) else {
            warn(line, "the header name `\(SFZWarning.shortened(name))` is not a valid identifier (line skipped)")
            return recover()
        }
        flush()
        if name == "region" {
            regionCount += 1
            guard regionCount <= options.maximumRegionCount else {
                throw SFZError(path: top.path, line: line, kind: .tooManyRegions,
                               reason: "more than \(options.maximumRegionCount) regions (SFZReadOptions.maximumRegionCount)")
            }
        }
        current = SFZParsedBlock(header: name, file: top.file, line: line)
    }

    private mutating func opcode() throws(SFZError) {
        let line = top.line
        let nameEnd = scan(from: top.pos) { SFZCharacters.isIdentifier($0) || $0 == UInt8(ascii: "$") }
        guard nameEnd > top.pos else {
            warn(line, "expected an opcode name (line skipped)")
            return recover()
        }
        let rawName = text(top.pos..<nameEnd)
        guard nameEnd < top.bytes.count, top.bytes[nameEnd] == UInt8(ascii: "=") else {
            warn(line, "expected `=` after `\(SFZWarning.shortened(rawName))` (line skipped)", opcode: rawName)
            advance(to: nameEnd)
            return recover()
        }
        let name = try expand(rawName, line: line, opcode: rawName)
        guard !name.isEmpty, name.utf8.allSatisfy(SFZCharacters.isIdentifier) else {
            warn(line, "the opcode name `\(SFZWarning.shortened(name))` is not a valid identifier (line skipped)", opcode: name)
            advance(to: nameEnd)
            return recover()
        }
        let valueStart = nameEnd + 1
        let valueEnd: Int
        if name == "base64data" {
            // Embedded sample data runs to the next header or directive, comments included.
            valueEnd = scan(from: valueStart) { $0 != UInt8(ascii: "<") && $0 != UInt8(ascii: "#") }
        } else {
            valueEnd = endOfValue(from: valueStart)
        }
        let value = try expand(text(valueStart..<valueEnd), line: line, opcode: name)
        advance(to: valueEnd)
        guard current != nil else {
            warn(line, "opcode `\(SFZWarning.shortened(name))` is not under any header (ignored)", opcode: name)
            return
        }
        current!.opcodes.append(SFZParsedOpcode(name: name, key: SFZOpcodeName.canonical(name), value: Self.trimmed(value),
                                                  file: top.file, line: line))
    }

    /// sfizz's rule for values with spaces: the value runs to the end of the line (or a
    /// comment) unless, after a space, a header, an `#include`/`#define` or another `name=`
    /// begins. The line's end is found on the way rather than first: a line of many opcodes would
    /// otherwise be scanned to its end once per opcode.
    private func endOfValue(from start: Int) -> Int {
        let bytes = top.bytes
        func atLineEnd(_ p: Int) -> Bool {
            guard p < bytes.count else { return true }
            let c = bytes[p]
            if c == 0x0A || c == 0x0D { return true }
            return c == UInt8(ascii: "/") && p + 1 < bytes.count && (bytes[p + 1] == UInt8(ascii: "/") || bytes[p + 1] == UInt8(ascii: "*"))
        }
        var end = start
        while !atLineEnd(end) {
            var i = end + 1
            let c = bytes[end]
            if c == UInt8(ascii: "<") { break }
            if SFZCharacters.isSpace(c) {
                while !atLineEnd(i) && SFZCharacters.isSpace(bytes[i]) { i += 1 }
                if atLineEnd(i) || bytes[i] == UInt8(ascii: "<") { break }
                if bytes[i] == UInt8(ascii: "#") {
                    var wordEnd = i + 1
                    while !atLineEnd(wordEnd) && SFZCharacters.isIdentifier(bytes[wordEnd]) { wordEnd += 1 }
                    let word = text(i + 1..<wordEnd)
                    if word == "define" || word == "include" { break }
                } else if SFZCharacters.isIdentifier(bytes[i]) {
                    i += 1
                    while !atLineEnd(i) && (SFZCharacters.isIdentifier(bytes[i]) || bytes[i] == UInt8(ascii: "$")) { i += 1 }
                    if !atLineEnd(i) && bytes[i] == UInt8(ascii: "=") { break }
                }
            }
            end = i
        }
        return end
    }

    static func trimmed(_ value: String) -> String {
        let bytes = Array(value.utf8)
        var start = 0
        var end = bytes.count
        func isBlank(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D || c == 0x0B || c == 0x0C }
        while start < end && isBlank(bytes[start]) { start += 1 }
        while end > start && isBlank(bytes[end - 1]) { end -= 1 }
        return start == 0 && end == bytes.count ? value : String(decoding: bytes[start..<end], as: UTF8.self)
    }

    // MARK: $ expansion

    /// Replaces `$NAME` by its definition as sfizz does (ARIA's rule: the shortest defined name
    /// that the letters after `$` begin with; an unknown name is dropped with a warning), again
    /// and again until no `$` is left, within ``SFZReadOptions/maximumExpandedLength``.
    mutating func expand(_ written: String, line: Int, opcode: String?) throws(SFZError) -> String {
        guard written.utf8.contains(UInt8(ascii: "$")) else { return written }
        var source = Array(written.utf8)
        var rounds = 0
        while true {
            var output: [UInt8] = []
            output.reserveCapacity(source.count)
            var expansions = 0
            var i = 0
            while i < source.count {
                let c = source[i]
                i += 1
                guard c == UInt8(ascii: "$") else {
                    output.append(c)
                    continue
                }
                expansions += 1
                let nameStart = i
                var found: String?
                while i < source.count && SFZCharacters.isIdentifier(source[i]) && found == nil {
                    i += 1
                    // No definition is longer than this: skip the lookups (a long run of
                    // letters would otherwise cost a lookup per letter, quadratic in its length).
                    if i - nameStart <= longestDefinitionName {
                        found = definitions[String(decoding: source[nameStart..<i], as: UTF8.self)]
                    }
                }
                if nameStart == i {
                    warn(line, "expected a variable name after `$` (the `$` is dropped)", opcode: opcode)
                    continue
                }
                guard let found else {
                    warn(line, "$\(SFZWarning.shortened(String(decoding: source[nameStart..<i], as: UTF8.self))) is not defined (dropped)", opcode: opcode)
                    continue
                }
                output.append(contentsOf: found.utf8)
                guard output.count <= options.maximumExpandedLength else {
                    throw SFZError(path: top.path, line: line, kind: .expansionTooLong,
                                   reason: "`$` expansion grows past \(options.maximumExpandedLength) bytes (SFZReadOptions.maximumExpandedLength)")
                }
            }
            if expansions == 0 { return String(decoding: output, as: UTF8.self) }
            expandedBytes += output.count
            guard expandedBytes <= options.maximumExpandedTotal else {
                throw SFZError(path: top.path, line: line, kind: .expansionTooLong,
                               reason: "`$` expansion produces more than \(options.maximumExpandedTotal) bytes in all (SFZReadOptions.maximumExpandedTotal)")
            }
            rounds += 1
            guard rounds <= 64 else {
                throw SFZError(path: top.path, line: line, kind: .expansionTooLong,
                               reason: "`$` expansion still finds variables after 64 rounds: a definition refers to itself")
            }
            source = output
        }
    }
}

/// The character classes of sfizz's parser.
enum SFZCharacters {
    static func isIdentifier(_ c: UInt8) -> Bool {
        c == UInt8(ascii: "_") || (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39)
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 }
}
