import Foundation
import Locking

/// How an input ended.
public enum BatchStatus: String, Codable, Sendable, CaseIterable {
    /// Rendering began (the record written before each file).
    case started
    /// Rendered; the output is complete under its final name.
    case ok
    /// Refused or failed (unreadable, damaged, not MIDI, an output that could not be written).
    case failed
    /// Stopped by `--timeout`.
    case timedOut = "timed out"
    /// Longer than `--max-duration`.
    case tooLong = "too long"
    /// Killed the process twice: skipped from then on.
    case crashed
    /// Stopped half-way by SIGTERM or SIGINT: nothing written, redone by the next run.
    case interrupted
    /// The output could not be written for a reason outside the input (no space left, a
    /// quota, a read-only or unwritable folder): the run stopped there, and the next one
    /// renders it again.
    case notWritten = "not written"

    /// Statuses a rerun keeps (not redone without `--retry-failed`).
    public var isFailure: Bool { self == .failed || self == .timedOut || self == .tooLong || self == .crashed }
}

/// One line of the manifest (JSON Lines): a "started" record before each input, then one
/// with how it ended.
public struct ManifestRecord: Codable, Sendable, Equatable {
    /// The input as it was opened.
    public var input: String
    /// Its path relative to the batch (what the output layout and sharding use).
    public var relativePath: String
    /// What happened.
    public var status: BatchStatus
    /// SHA-256 of the input's bytes (hex).
    public var inputSHA256: String?
    /// The output's final path.
    public var output: String?
    /// SHA-256 of the output's bytes (hex).
    public var outputSHA256: String?
    /// For a failure: the exit code a single-file render would have given (65 bad data, 66
    /// unreadable input, 73 cannot create the output, 74 I/O error), and the one-line reason.
    public var errorCode: Int?
    /// The one-line reason of a failure.
    public var message: String?
    /// Warnings about the input (repairs of a damaged file) and the output (silence).
    public var warnings: [String]?
    /// Frames and seconds of audio written.
    public var frames: Int64?
    /// Seconds of audio written.
    public var seconds: Double?
    /// The largest sample in dBFS, and the loudness as the RMS level of the whole output in dBFS.
    public var peakDBFS: Double?
    /// The RMS level of the whole output in dBFS.
    public var rmsDBFS: Double?
    /// Wall-clock and CPU (this render's thread) seconds.
    public var wallSeconds: Double?
    /// CPU seconds of this render's thread.
    public var cpuSeconds: Double?
    /// The Tactus version, the instrument (bank) and the options that shape the output.
    public var tactusVersion: String?
    /// The instrument (the bank's path, or the built-in synthesizer).
    public var instrument: String?
    /// The options that shape the output, by name.
    public var options: [String: String]?
    /// The shard (`I/N`) and the process id that wrote the record.
    public var shard: String?
    /// The id of the process that wrote the record.
    public var pid: Int32?
    /// When the record was written (ISO 8601, UTC).
    public var time: String?
    /// The augmentation drawn for the input, as a spec of fixed values
    /// (`AugmentationDraw.description`): `tactus render --augment` with it, on the input alone,
    /// renders the same output.
    public var augmentation: String?

    /// Creates a record.
    public init(input: String, relativePath: String, status: BatchStatus) {
        self.input = input
        self.relativePath = relativePath
        self.status = status
    }

    enum CodingKeys: String, CodingKey {
        case input, relativePath = "relative_path", status, inputSHA256 = "input_sha256", output
        case outputSHA256 = "output_sha256", errorCode = "error_code", message, warnings, frames, seconds
        case peakDBFS = "peak_dbfs", rmsDBFS = "rms_dbfs", wallSeconds = "wall_seconds", cpuSeconds = "cpu_seconds"
        case tactusVersion = "tactus_version", instrument, options, shard, pid, time, augmentation
    }
}

/// Why the manifest could not be used.
public enum ManifestError: Error, Equatable, CustomStringConvertible {
    /// It cannot be opened or appended to (path, reason).
    case cannotWrite(String, String)

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): return "\(path): cannot write the manifest: \(reason)"
        }
    }
}

/// The manifest of a shard: an append-only JSON Lines file, each record written whole with
/// one write(2) and flushed to disk before the next file starts, so a crash loses nothing
/// already recorded.
public final class Manifest: Sendable {
    /// Its path.
    public let path: String
    private let descriptor: Locked<Int32>

    /// Opens (creating) the manifest for appending.
    public init(path: String) throws(ManifestError) {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotWrite(path, String(cString: strerror(errno))) }
        descriptor = Locked(fd)
    }

    deinit {
        descriptor.withLock { fd in
            if fd >= 0 { close(fd) }
        }
    }

    /// Appends `record` and flushes it to disk.
    public func append(_ record: ManifestRecord) throws(ManifestError) {
        var stamped = record
        stamped.time = Self.timestamp()
        stamped.pid = getpid()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var line: [UInt8]
        do {
            line = Array(try encoder.encode(stamped))
        } catch {
            throw .cannotWrite(path, "\(error)")
        }
        line.append(0x0A)
        let failure: String? = descriptor.withLock { fd in
            // A line is whole or absent: a short write (a full disk) is cut back off, or the
            // torn line would swallow the next record when the manifest is read.
            let before = lseek(fd, 0, SEEK_END)
            var offset = 0
            while offset < line.count {
                let n = line.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    let reason = String(cString: strerror(n < 0 ? errno : EIO))
                    if before >= 0 { _ = ftruncate(fd, before) }
                    return reason
                }
                offset += n
            }
            if fdatasync(fd) != 0 { return String(cString: strerror(errno)) }
            return nil
        }
        if let failure { throw .cannotWrite(path, failure) }
    }

    /// The records of the manifest at `path` (none when it does not exist); lines that do not
    /// decode, like one torn by a crash, are skipped.
    public static func read(_ path: String) -> [ManifestRecord] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let decoder = JSONDecoder()
        return data.split(separator: 0x0A).compactMap { try? decoder.decode(ManifestRecord.self, from: Data($0)) }
    }

    /// What earlier runs left for each relative path: the last final status and the number
    /// of "started" records not followed by one (runs that died on it).
    public static func history(_ records: [ManifestRecord]) -> [String: (last: BatchStatus?, unfinishedStarts: Int)] {
        var result: [String: (last: BatchStatus?, unfinishedStarts: Int)] = [:]
        var open: [String: Bool] = [:]
        for record in records {
            var entry = result[record.relativePath] ?? (nil, 0)
            if record.status == .started {
                if open[record.relativePath] == true { entry.unfinishedStarts += 1 }
                open[record.relativePath] = true
            } else {
                open[record.relativePath] = false
                entry.last = record.status
                if record.status != .crashed && record.status != .interrupted { entry.unfinishedStarts = 0 }
            }
            result[record.relativePath] = entry
        }
        for (path, isOpen) in open where isOpen { result[path, default: (nil, 0)].unfinishedStarts += 1 }
        return result
    }

    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
