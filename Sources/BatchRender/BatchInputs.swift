import MIDI
import Foundation

/// One file to render, with the path its output takes under the output folder.
public struct BatchInput: Sendable, Hashable {
    /// The file as it can be opened.
    public var path: String
    /// Its path relative to what was given (a folder argument, or the path as listed): the
    /// output layout mirrors it, and sharding hashes it.
    public var relativePath: String

    /// Creates an input.
    public init(path: String, relativePath: String) {
        self.path = path
        self.relativePath = relativePath
    }

    /// The output path under `folder` with the extension `fileExtension`.
    public func outputPath(in folder: String, fileExtension: String) -> String {
        let relative = (relativePath as NSString).deletingPathExtension + "." + fileExtension
        return (folder as NSString).appendingPathComponent(relative)
    }
}

/// Why the inputs of a batch could not be gathered.
public enum BatchInputError: Error, Equatable, CustomStringConvertible {
    /// A named file or folder does not exist or cannot be read (path, reason).
    case unreadable(String, String)
    /// A listed path climbs out of its folder with `..` (path).
    case escapesOutput(String)
    /// Two inputs would write the same output (first, second, relative output).
    case sameOutput(String, String, String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "\(path): \(reason)"
        case .escapesOutput(let path): return "\(path): a listed path with '..' would write outside the output folder"
        case .sameOutput(let a, let b, let relative):
            return "\(b): would write the same output as \(a) (\(relative)); rename one or list them from a common folder"
        }
    }
}

/// A file or folder a folder search passed over, and why: the batch names each, so nothing
/// is left out without a word.
public struct SkippedInput: Sendable, Hashable, CustomStringConvertible {
    /// Why it was passed over.
    public enum Reason: String, Sendable, Hashable {
        /// A MIDI file whose name starts with a dot.
        case hiddenFile = "a hidden file"
        /// A folder whose name starts with a dot: not searched.
        case hiddenFolder = "a hidden folder, not searched"
        /// A symbolic link to a folder: not followed, so a link cannot loop or leave the tree.
        case linkedFolder = "a symbolic link to a folder, not followed"
        /// A symbolic link to nothing.
        case brokenLink = "a symbolic link to nothing"
        /// A name that is not UTF-8, which the paths Tactus passes on cannot carry.
        case undecodableName = "its name is not UTF-8; rename it to render it"
        /// A folder that cannot be listed.
        case unreadableFolder = "a folder that cannot be listed"
    }

    /// The path as given under its folder (bytes that are not UTF-8 shown as `\xNN`).
    public var path: String
    /// Why.
    public var reason: Reason

    /// Creates a record of a skipped path.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): skipped, \(reason.rawValue)" }
}

/// Gathers the inputs of a batch.
public enum BatchInputs {
    /// Extensions taken from folders (case-insensitive); files named one by one are taken
    /// whatever their name.
    public static let midiExtensions: Set<String> = ["mid", "midi", "kar", "rmi", "smf"]

    /// The inputs named by `arguments` (files, taken by their file name, and folders, searched
    /// recursively for MIDI files, taken by their path inside the folder) and `listed` (paths
    /// read from a list, taken as written, without a leading `/` or `./`), sorted by relative
    /// path. Throws when a path is missing or two inputs would share an output.
    public static func gather(arguments: [String], listed: [String] = []) throws(BatchInputError) -> [BatchInput] {
        var skipped: [SkippedInput] = []
        return try gather(arguments: arguments, listed: listed, skipped: &skipped)
    }

    /// As ``gather(arguments:listed:)``, adding to `skipped` what the folder searches passed
    /// over: hidden files and folders, links to folders, broken links, names that are not
    /// UTF-8. A symbolic link to a MIDI file is an input like the file.
    public static func gather(arguments: [String], listed: [String] = [],
                              skipped: inout [SkippedInput]) throws(BatchInputError) -> [BatchInput] {
        var inputs: [BatchInput] = []
        for argument in arguments {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                throw .unreadable(argument, "no such file or folder")
            }
            if isDirectory.boolValue {
                try walk(folder: argument, into: &inputs, skipped: &skipped)
            } else {
                inputs.append(BatchInput(path: argument, relativePath: (argument as NSString).lastPathComponent))
            }
        }
        for line in listed {
            let path = line.trimmingCharacters(in: .whitespaces)
            if path.isEmpty || path.hasPrefix("#") { continue }
            let components = path.split(separator: "/").filter { $0 != "." }
            if components.contains("..") { throw .escapesOutput(path) }
            inputs.append(BatchInput(path: path, relativePath: components.joined(separator: "/")))
        }
        inputs.sort { $0.relativePath < $1.relativePath }
        skipped.sort { $0.path < $1.path }
        var seen: [String: String] = [:]
        for input in inputs {
            let key = (input.relativePath as NSString).deletingPathExtension
            if let first = seen[key] { throw .sameOutput(first, input.path, key) }
            seen[key] = input.path
        }
        return inputs
    }

    /// The lines of a list file (`-` for standard input).
    public static func readList(_ path: String) throws(BatchInputError) -> [String] {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw .unreadable(path, FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file")
            }
            data = contents
        }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
    }

    /// Searches `folder` with readdir(3), which sees names as bytes and links as links, where
    /// FileManager's enumerator silently dropped both.
    private static func walk(folder: String, into found: inout [BatchInput], skipped: inout [SkippedInput]) throws(BatchInputError) {
        let top = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        guard let stream = opendir(folder) else { throw .unreadable(folder, "cannot list the folder (\(String(cString: strerror(errno))))") }
        var pending: [(stream: OpaquePointer, path: String, relative: String)] = [(stream, top, "")]
        while let (stream, directory, relative) = pending.popLast() {
            defer { closedir(stream) }
            for (bytes, type) in entries(of: stream) {
                let isMIDIName = hasMIDIExtension(bytes)
                guard let name = String(validating: bytes, as: UTF8.self) else {
                    if isMIDIName || type == DT_DIR {
                        let shown = bytes.map { $0 < 0x80 ? String(UnicodeScalar($0)) : String(format: "\\x%02X", $0) }.joined()
                        skipped.append(SkippedInput(path: directory + "/" + shown, reason: .undecodableName))
                    }
                    continue
                }
                let path = directory + "/" + name
                let relativePath = relative.isEmpty ? name : relative + "/" + name
                var link = stat()
                guard lstat(path, &link) == 0 else { continue }
                let kind = link.st_mode & S_IFMT
                if name.hasPrefix(".") {
                    if kind == S_IFDIR {
                        skipped.append(SkippedInput(path: path, reason: .hiddenFolder))
                    } else if isMIDIName {
                        skipped.append(SkippedInput(path: path, reason: .hiddenFile))
                    }
                    continue
                }
                switch kind {
                case S_IFDIR:
                    if let inner = opendir(path) {
                        pending.append((inner, path, relativePath))
                    } else {
                        skipped.append(SkippedInput(path: path, reason: .unreadableFolder))
                    }
                case S_IFREG where isMIDIName:
                    found.append(BatchInput(path: path, relativePath: relativePath))
                case S_IFLNK:
                    var target = stat()
                    if stat(path, &target) != 0 {
                        if isMIDIName { skipped.append(SkippedInput(path: path, reason: .brokenLink)) }
                    } else if target.st_mode & S_IFMT == S_IFDIR {
                        skipped.append(SkippedInput(path: path, reason: .linkedFolder))
                    } else if target.st_mode & S_IFMT == S_IFREG && isMIDIName {
                        found.append(BatchInput(path: path, relativePath: relativePath))
                    }
                default:
                    break
                }
            }
        }
    }

    /// The names in a directory stream (without `.` and `..`) as bytes, with their d_type.
    private static func entries(of stream: OpaquePointer) -> [(name: [UInt8], type: Int)] {
        var result: [(name: [UInt8], type: Int)] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                Array(raw.prefix(while: { $0 != 0 }))
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            result.append((name, Int(entry.pointee.d_type)))
        }
        return result
    }

    /// True when `name` ends with one of ``midiExtensions`` (any case).
    private static func hasMIDIExtension(_ name: [UInt8]) -> Bool {
        guard let dot = name.lastIndex(of: 0x2E) else { return false }
        let suffix = String(decoding: name[(dot + 1)...], as: UTF8.self).lowercased()
        return midiExtensions.contains(suffix)
    }
}

/// A deterministic part of a batch: the inputs whose relative path hashes to `index` modulo
/// `count`, so the assignment depends neither on the order inputs are listed in nor on files
/// added for other shards.
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// From 0 to `count - 1`.
    public var index: Int
    /// How many shards share the batch.
    public var count: Int

    /// The whole batch.
    public static let whole = Shard(index: 0, count: 1)

    /// Creates a shard; `index` must be in `0..<count`.
    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    public var description: String { "\(index)/\(count)" }

    /// True when `input` belongs to this shard.
    public func contains(_ input: BatchInput) -> Bool {
        count <= 1 || Int(Self.hash(input.relativePath) % UInt64(count)) == index
    }

    /// The hash that places an input in a shard: `stableHash` (MIDI) of its relative path.
    public static func hash(_ text: String) -> UInt64 { stableHash(text) }

    /// Parses `I/N` (0-based), `auto` (Slurm's `SLURM_ARRAY_TASK_ID` less
    /// `SLURM_ARRAY_TASK_MIN`, over `SLURM_ARRAY_TASK_COUNT`) or `auto/N` (Kubernetes'
    /// `JOB_COMPLETION_INDEX` over N, since Kubernetes does not export the count; Slurm's
    /// variables win when both are set).
    public static func parse(_ text: String, environment: [String: String]) throws(ShardError) -> Shard {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2, !parts.isEmpty else { throw .malformed(text) }
        if parts[0] == "auto" {
            var explicitCount: Int?
            if parts.count == 2 {
                guard let n = Int(parts[1]), n >= 1 else { throw .malformed(text) }
                explicitCount = n
            }
            if let id = environment["SLURM_ARRAY_TASK_ID"].flatMap({ Int($0) }) {
                let minimum = environment["SLURM_ARRAY_TASK_MIN"].flatMap { Int($0) } ?? 0
                guard let count = explicitCount ?? environment["SLURM_ARRAY_TASK_COUNT"].flatMap({ Int($0) }) else {
                    throw .missingEnvironment("SLURM_ARRAY_TASK_COUNT is not set; give the count as --shard auto/N")
                }
                return try checked(Shard(index: id - minimum, count: count), text)
            }
            if let index = environment["JOB_COMPLETION_INDEX"].flatMap({ Int($0) }) {
                guard let count = explicitCount else {
                    throw .missingEnvironment("Kubernetes does not export the completion count; give it as --shard auto/N")
                }
                return try checked(Shard(index: index, count: count), text)
            }
            throw .missingEnvironment("--shard auto needs SLURM_ARRAY_TASK_ID (a Slurm array job) or JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)")
        }
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else { throw .malformed(text) }
        return try checked(Shard(index: index, count: count), text)
    }

    private static func checked(_ shard: Shard, _ text: String) throws(ShardError) -> Shard {
        guard shard.count >= 1, (0..<shard.count).contains(shard.index) else {
            throw .outOfRange("shard \(shard.index) of \(shard.count) (from '\(text)'): the index runs from 0 to the count less 1")
        }
        return shard
    }
}

/// A `--shard` that cannot be used.
public enum ShardError: Error, Equatable, CustomStringConvertible {
    /// Not `I/N`, `auto` or `auto/N`.
    case malformed(String)
    /// The index is not below the count.
    case outOfRange(String)
    /// `auto` without the variables a cluster sets.
    case missingEnvironment(String)

    public var description: String {
        switch self {
        case .malformed(let text): return "--shard '\(text)': use I/N (0-based), auto (Slurm) or auto/N (Kubernetes)"
        case .outOfRange(let message), .missingEnvironment(let message): return message
        }
    }
}
