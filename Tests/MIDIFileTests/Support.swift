import Foundation
import MIDIFile
import Sequencing

/// Builds SMF bytes by hand for fixtures, independent of the writer under test.
enum SMFBytes {
    static func u32(_ v: Int) -> [UInt8] { [UInt8((v >> 24) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    static func u16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    static func header(format: Int = 0, tracks: Int = 1, division: Int = 96, length: Int = 6) -> [UInt8] {
        Array("MThd".utf8) + u32(length) + u16(format) + u16(tracks) + u16(division) + [UInt8](repeating: 0, count: max(0, length - 6))
    }

    static func chunk(_ id: String, _ body: [UInt8], declaredLength: Int? = nil) -> [UInt8] {
        Array(id.utf8) + u32(declaredLength ?? body.count) + body
    }

    static func track(_ body: [UInt8], declaredLength: Int? = nil) -> [UInt8] {
        chunk("MTrk", body, declaredLength: declaredLength)
    }

    /// Four notes of 96 ticks: C D E F, ending with end of track.
    static let fourNotes: [UInt8] = [
        0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0,
        0x00, 0x90, 62, 100, 0x60, 0x80, 62, 0,
        0x00, 0x90, 64, 100, 0x60, 0x80, 64, 0,
        0x00, 0x90, 65, 100, 0x60, 0x80, 65, 0,
        0x00, 0xFF, 0x2F, 0x00,
    ]

    static let eot: [UInt8] = [0x00, 0xFF, 0x2F, 0x00]
}

/// Locations of the shared material next to the repository.
enum SharedMaterial {
    static var root: URL? {
        if let env = ProcessInfo.processInfo.environment["TACTUS_SHARED"] { return URL(fileURLWithPath: env) }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let shared = repo.deletingLastPathComponent().appendingPathComponent("shared")
        return FileManager.default.fileExists(atPath: shared.appendingPathComponent("corpus/files").path) ? shared : nil
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Every corpus file (relative path, absolute URL), sorted.
    static func corpusFiles() -> [(String, URL)] {
        guard let root else { return [] }
        let files = root.appendingPathComponent("corpus/files")
        guard let walker = FileManager.default.enumerator(at: files, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        var result: [(String, URL)] = []
        for case let url as URL in walker {
            let name = url.lastPathComponent
            if name.hasSuffix(".md") || name.hasSuffix(".json") || name == "LICENSE" || name.hasSuffix(".txt") { continue }
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let relative = String(url.path.dropFirst(files.path.count + 1))
            result.append((relative, url))
        }
        return result.sorted { $0.0 < $1.0 }
    }

    static func expectedDocument(_ relative: String, notes: Bool = false) -> [String: Any]? {
        guard let root else { return nil }
        let url = root.appendingPathComponent("corpus/expected/\(relative)\(notes ? ".notes.json" : ".json")")
        guard let data = try? Data(contentsOf: url) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    static func songs() -> [URL] {
        let dir = repositoryRoot.appendingPathComponent("Songs")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { $0.hasSuffix(".mid") }.sorted().map { dir.appendingPathComponent($0) }
    }
}

/// Compares two JSON documents the way the corpus's tools/compare.py does: advisory keys
/// dropped, `length_seconds` within 1e-6. Returns the first differences.
enum OracleCompare {
    static let advisory: Set<String> = ["generator", "file", "chunks", "trailing_bytes", "features", "mido_view_notes",
                                        "length_seconds_mido", "length_seconds_mido_error", "fallbacks", "verdict"]

    static func differences(expected: [String: Any], actual: [String: Any], limit: Int = 5) -> [String] {
        var out: [String] = []
        let e = expected.filter { !advisory.contains($0.key) }
        let a = actual.filter { !advisory.contains($0.key) }
        diff(e, a, "$", &out, limit)
        return out
    }

    static func diff(_ a: Any, _ b: Any, _ path: String, _ out: inout [String], _ limit: Int) {
        if out.count >= limit { return }
        if let da = a as? [String: Any], let db = b as? [String: Any] {
            for key in Set(da.keys).union(db.keys).sorted() {
                guard let va = da[key] else { out.append("\(path).\(key): unexpected key"); continue }
                guard let vb = db[key] else { out.append("\(path).\(key): missing"); continue }
                if key == "length_seconds", let x = va as? NSNumber, let y = vb as? NSNumber {
                    if abs(x.doubleValue - y.doubleValue) > 1e-6 { out.append("\(path).\(key): expected \(x) got \(y)") }
                } else {
                    diff(va, vb, "\(path).\(key)", &out, limit)
                }
            }
        } else if let la = a as? [Any], let lb = b as? [Any] {
            for (i, (x, y)) in zip(la, lb).enumerated() {
                diff(x, y, "\(path)[\(i)]", &out, limit)
                if out.count >= limit { return }
            }
            if la.count != lb.count { out.append("\(path): expected \(la.count) items, got \(lb.count)") }
        } else if !(a is NSNull && b is NSNull) {
            let sa = "\(a)", sb = "\(b)"
            if (a is NSNull) != (b is NSNull) || sa != sb { out.append("\(path): expected \(sa.prefix(120)) got \(sb.prefix(120))") }
        }
    }

    static func parse(_ value: JSONValue) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(value.canonicalText().utf8))) as? [String: Any] ?? [:]
    }
}
