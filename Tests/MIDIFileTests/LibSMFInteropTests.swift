import Foundation
import MIDI
import MIDIFile
import Sequencing
import Testing

/// Interop: every file Tactus writes loads in libsmf with identical events.
///
/// libsmf runs in a child process (`Tests/Support/libsmf_dump.c`, compiled at test time),
/// because it aborts on some inputs. The dumper prints `track tick hex` per event; the test
/// prints the same lines from Tactus's own reading of the written file and compares them
/// track by track: same ticks, same bytes, same order, end of track included.
///
/// libsmf 1.3 cannot take some valid files (DESIGN.md section 8): format 2, SMPTE division,
/// F7 packets (it asserts), meta events of 128 bytes or more (it reads one length byte), no
/// tracks, division 0. Written files with those features are counted as out of libsmf's reach and not sent
/// to it; everything else must match exactly.
@Suite("libsmf interop")
struct LibSMFInteropTests {
    @Test("every corpus file Tactus reads, written in each layout, loads in libsmf with identical events",
          .enabled(if: LibSMFDumper.shared.tool != nil, LibSMFDumper.shared.unavailableReason),
          .enabled(if: InteropCorpus.directory != nil, "../shared/corpus/files not found next to the repository"))
    func corpusFilesWrittenByTactusLoadInLibSMF() throws {
        let tool = try #require(LibSMFDumper.shared.tool)
        let root = try #require(InteropCorpus.directory)
        let scratch = try ScratchDirectory()
        var readable = 0
        var compared = 0
        var outOfReach: [String: Int] = [:]
        for path in InteropCorpus.midiFiles(under: root) {
            guard let file = try? SMFReader.read(contentsOf: path) else { continue }
            readable += 1
            let sequence = file.makeSequence()
            var written: Set<[UInt8]> = []
            let outputs: [(String, [UInt8])] = [
                ("file as read", SMFWriter.bytes(of: file)),
                ("asRead", SMFWriter.bytes(of: sequence, layout: .asRead)),
                ("format0", SMFWriter.bytes(of: sequence, layout: .format0)),
                ("format1", SMFWriter.bytes(of: sequence, layout: .format1)),
            ]
            for (label, bytes) in outputs where written.insert(bytes).inserted {
                let name = "\(path.dropFirst(root.count + 1)) [\(label)]"
                switch try compare(bytes, name: name, tool: tool, scratch: scratch) {
                case .identical: compared += 1
                case .outOfReach(let reason): outOfReach[reason, default: 0] += 1
                }
            }
        }
        // The corpus holds well over a hundred readable files; most are plain PPQ files
        // without F7 packets, so most written files must have reached libsmf.
        print("interop: \(readable) readable, \(compared) compared, out of reach \(outOfReach)")
        #expect(readable >= 100, "only \(readable) corpus files were readable")
        #expect(compared >= readable, "only \(compared) written files compared (out of libsmf's reach: \(outOfReach))")
    }

    @Test("sequences built with the API load in libsmf with identical events in every layout",
          .enabled(if: LibSMFDumper.shared.tool != nil, LibSMFDumper.shared.unavailableReason))
    func builtSequencesLoadInLibSMF() throws {
        let tool = try #require(LibSMFDumper.shared.tool)
        let scratch = try ScratchDirectory()
        for (name, sequence) in BuiltSequences.all {
            for layout in [SMFLayout.asRead, .format0, .format1] {
                let bytes = SMFWriter.bytes(of: sequence, layout: layout)
                let result = try compare(bytes, name: "\(name) [\(layout)]", tool: tool, scratch: scratch)
                #expect(result == .identical, "\(name) [\(layout)]: \(result)")
                // Nothing the file format can hold may be lost on the way.
                let reread = try SMFReader.read(bytes)
                #expect(reread.warnings.isEmpty, "\(name) [\(layout)]: Tactus warns on its own output: \(reread.warnings)")
                let intended = StandardMIDIFile(sequence: sequence, layout: layout)
                #expect(EventLines.fileEventCount(reread) == EventLines.fileEventCount(intended),
                        "\(name) [\(layout)]: event count changed in writing")
                if layout != .format0 || intended.tracks.count == 1 {
                    #expect(EventLines.lines(of: reread) == EventLines.lines(of: intended),
                            "\(name) [\(layout)]: written events differ from the sequence's")
                }
            }
        }
    }

    @Test("edited sequences (every kind of edit `tactus edit` offers) load in libsmf with identical events",
          .enabled(if: LibSMFDumper.shared.tool != nil, LibSMFDumper.shared.unavailableReason))
    func editedSequencesLoadInLibSMF() throws {
        let tool = try #require(LibSMFDumper.shared.tool)
        let scratch = try ScratchDirectory()
        let songs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Songs")
        var compared = 0
        for name in ["morning-steps.mid", "little-waltz.mid", "seven-eight.mid"] {
            let original = try SMFReader.read(contentsOf: songs.appendingPathComponent(name).path).makeSequence()
            var edits: [(String, MusicSequence)] = []
            var s = original
            s.transpose(by: -5); s.scaleVelocity(percent: 80); edits.append(("transpose+velocity", s))
            s = original; s.quantize(grid: QuantizeGrid(noteValue: 8, triplet: true), strength: 0.7, swing: 0.3, ends: true); edits.append(("quantize", s))
            s = original; let clip = s.cut(1920..<5760); s.paste(clip, at: 960); edits.append(("cut+paste", s))
            s = original; s.delete(3840..<7680); s.insertSilence(at: 480, length: 333); edits.append(("delete+silence", s))
            s = original; s.tempoRamp(from: 70, to: 150, over: 0..<9600, steps: 12, keep: .seconds); edits.append(("tempo ramp", s))
            s = original; s.setTimeSignature(TimeSignature(5, 8), at: 1920); s.setKeySignature(KeySignature(sharpsOrFlats: 3, isMinor: false), at: 0); edits.append(("signatures", s))
            s = original; if s.tracks.count >= 2 { s.mergeTracks([0, 1]) }; s.splitTrackByChannel(0); s.removeEvents(.controller(nil)); edits.append(("tracks", s))
            for (label, edited) in edits {
                for layout in [SMFLayout.asRead, .format0, .format1] {
                    switch try compare(SMFWriter.bytes(of: edited, layout: layout), name: "\(name) [\(label), \(layout)]", tool: tool, scratch: scratch) {
                    case .identical: compared += 1
                    case .outOfReach(let reason): Issue.record("\(name) [\(label)]: out of libsmf's reach: \(reason)")
                    }
                }
            }
        }
        #expect(compared == 3 * 7 * 3)
    }

    @Test("a file libsmf reads differently is reported",
          .enabled(if: LibSMFDumper.shared.tool != nil, LibSMFDumper.shared.unavailableReason))
    func differencesAreReported() throws {
        let tool = try #require(LibSMFDumper.shared.tool)
        let scratch = try ScratchDirectory()
        let bytes = SMFWriter.bytes(of: BuiltSequences.singleTrack(), layout: .format0)
        let view = try SMFReader.read(bytes)
        #expect(try Self.differences(libsmfLoads: bytes, tactusView: view, tool: tool, scratch: scratch).isEmpty)
        // Change the key of the first note-on (delta 0, status 0x90, key) behind Tactus's back.
        var patched = bytes
        let noteOn = try #require((22..<patched.count - 2).first { patched[$0] == 0x90 && patched[$0 - 1] == 0 })
        patched[noteOn + 1] ^= 0x01
        let found = try Self.differences(libsmfLoads: patched, tactusView: view, tool: tool, scratch: scratch)
        #expect(found.count == 1 && found[0].contains("track 0 differs at event 1"), "\(found)")
    }

    enum Outcome: Equatable, CustomStringConvertible {
        case identical
        case outOfReach(String)

        var description: String {
            switch self {
            case .identical: return "identical"
            case .outOfReach(let reason): return "out of libsmf's reach: \(reason)"
            }
        }
    }

    /// Reads `bytes` with Tactus, checks libsmf loads them with identical events, and
    /// records every difference as an issue.
    func compare(_ bytes: [UInt8], name: String, tool: String, scratch: ScratchDirectory) throws -> Outcome {
        let file: StandardMIDIFile
        do {
            file = try SMFReader.read(bytes)
        } catch {
            Issue.record("\(name): Tactus cannot read what it wrote: \(error)")
            return .identical
        }
        if let reason = LibSMFLimits.reasonOutOfReach(file) { return .outOfReach(reason) }
        for problem in try Self.differences(libsmfLoads: bytes, tactusView: file, tool: tool, scratch: scratch) {
            Issue.record("\(name): \(problem)")
        }
        return .identical
    }

    /// Loads `bytes` with libsmf in a child process and lists how its events differ from
    /// `view`, Tactus's reading of the same bytes.
    static func differences(libsmfLoads bytes: [UInt8], tactusView view: StandardMIDIFile, tool: String,
                            scratch: ScratchDirectory) throws -> [String] {
        let path = scratch.path("written.mid")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let run = try ChildProcess.run(tool, [path])
        guard run.status == 0, let first = run.lines.first, first.hasPrefix("HEADER ") else {
            return ["libsmf failed to load the file (exit \(run.status), output \(run.lines.prefix(3)))"]
        }
        var problems: [String] = []
        let header = first.split(separator: " ").compactMap { Int($0) }
        // libsmf turns a format 0 file with several tracks (which Tactus writes when it read
        // one) into format 1 as it adds the second track.
        let format = view.format == 0 && view.tracks.count > 1 ? 1 : Int(view.format)
        if header != [format, view.tracks.count, Int(view.divisionWord)] {
            problems.append("libsmf header \(header), Tactus \(view.format) \(view.tracks.count) \(view.divisionWord)")
        }
        var theirs = Array(repeating: [String](), count: view.tracks.count)
        for line in run.lines.dropFirst() {
            guard let space = line.firstIndex(of: " "), let track = Int(line[..<space]), theirs.indices.contains(track) else {
                problems.append("unexpected libsmf line \(line)")
                continue
            }
            theirs[track].append(line)
        }
        let ours = EventLines.lines(of: view, endOfTrack: true)
        for t in ours.indices {
            if let d = EventLines.firstDifference(ours[t], theirs[t]) {
                problems.append("track \(t) differs at event \(d.index): Tactus \(d.ours), libsmf \(d.theirs) (\(ours[t].count) vs \(theirs[t].count) events)")
            }
        }
        return problems
    }
}

/// Event lines in the dumper's format: `track tick hex`.
enum EventLines {
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var s = ""
        for b in bytes {
            let digits = String(b, radix: 16)
            s += digits.count == 1 ? "0" + digits : digits
        }
        return s
    }

    static func bytes(of event: FileEvent) -> [UInt8] {
        switch event {
        case .message(let m): return m.bytes
        case .sysex(let s): return [s.status] + s.payload
        case .meta(let m): return [0xFF, m.type] + m.data
        }
    }

    /// Per track, its events as a file holds them; with `endOfTrack`, the final end of track
    /// at the written track's end, as libsmf lists it.
    static func lines(of file: StandardMIDIFile, endOfTrack: Bool = false) -> [[String]] {
        file.tracks.enumerated().map { index, track in
            var lines: [String] = []
            track.forEachFileEvent { tick, event in
                lines.append("\(index) \(tick) \(hex(bytes(of: event)))")
            }
            if endOfTrack {
                let last = lines.last.flatMap { Int64($0.split(separator: " ")[1]) } ?? 0
                lines.append("\(index) \(max(track.explicitLength ?? track.length, last)) ff2f")
            }
            return lines
        }
    }

    static func fileEventCount(_ file: StandardMIDIFile) -> Int {
        var n = 0
        for track in file.tracks { track.forEachFileEvent { _, _ in n += 1 } }
        return n
    }

    static func firstDifference(_ ours: [String], _ theirs: [String]) -> (index: Int, ours: String, theirs: String)? {
        for i in 0..<max(ours.count, theirs.count) {
            let a = i < ours.count ? ours[i] : "(none)"
            let b = i < theirs.count ? theirs[i] : "(none)"
            if a != b { return (i, a, b) }
        }
        return nil
    }
}

/// Valid SMF features libsmf 1.3 cannot load (DESIGN.md section 8).
enum LibSMFLimits {
    static func reasonOutOfReach(_ file: StandardMIDIFile) -> String? {
        if file.tracks.isEmpty { return "no tracks" }
        if file.format == 2 { return "format 2" }
        if file.divisionWord & 0x8000 != 0 { return "SMPTE division" }
        if file.divisionWord == 0 { return "division 0" }
        for track in file.tracks {
            var reason: String?
            track.forEachFileEvent { _, event in
                guard reason == nil else { return }
                switch event {
                case .sysex(let s) where s.status == 0xF7: reason = "F7 packet (libsmf asserts)"
                case .meta(let m) where m.data.count >= 128: reason = "meta event of 128 bytes or more (libsmf reads one length byte)"
                default: break
                }
            }
            if let reason { return reason }
        }
        return nil
    }
}

/// The libsmf dumper, compiled once per test process.
struct LibSMFDumper: Sendable {
    /// Path of the compiled dumper, nil when it cannot be built.
    let tool: String?
    /// Why there is no dumper.
    let unavailableReason: Comment

    static let shared = LibSMFDumper()

    private init() {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Support/libsmf_dump.c").path
        // Decided without starting a process when libsmf's header or pkg-config is absent:
        // traits are evaluated for every test, also where child processes cannot be reaped
        // (the test bundle runs inside the QEMU VM for the real-kernel tests).
        let headerPresent = FileManager.default.fileExists(atPath: "/usr/include/smf.h")
        let pkgConfigPresent = FileManager.default.isExecutableFile(atPath: "/usr/bin/pkg-config")
        guard headerPresent, pkgConfigPresent,
              let probe = try? ChildProcess.run("/bin/sh", ["-c", "pkg-config --exists smf"]), probe.status == 0 else {
            tool = nil
            unavailableReason = "pkg-config cannot find smf: install libsmf-dev and pkg-config to run the libsmf interop test"
            return
        }
        let directory = NSTemporaryDirectory() + "tactus-libsmf-\(getpid())"
        let output = directory + "/libsmf_dump"
        let command = "mkdir -p '\(directory)' && cc -O1 -o '\(output)' '\(source)' $(pkg-config --cflags --libs smf)"
        let build = try? ChildProcess.run("/bin/sh", ["-c", command + " 2>&1"])
        // pkg-config found libsmf, so a failing compile is a real failure: the tests run
        // and report it through `#require(tool)`.
        tool = build?.status == 0 ? output : nil
        unavailableReason = "libsmf_dump.c did not compile: \(build?.lines.joined(separator: "\n") ?? "cc not found")"
    }
}

/// The shared corpus next to the repository, when present.
enum InteropCorpus {
    static let directory: String? = {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let files = repository.deletingLastPathComponent().appendingPathComponent("shared/corpus/files").standardizedFileURL.path
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: files, isDirectory: &isDirectory) && isDirectory.boolValue ? files : nil
    }()

    /// Every regular file under `root`, sorted.
    static func midiFiles(under root: String) -> [String] {
        guard let names = FileManager.default.subpaths(atPath: root) else { return [] }
        return names.sorted().compactMap { name in
            let path = root + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { return nil }
            let lower = name.lowercased()
            return lower.hasSuffix(".mid") || lower.hasSuffix(".midi") || lower.hasSuffix(".rmi") || lower.hasSuffix(".smf") || lower.hasSuffix(".kar") ? path : nil
        }
    }
}

/// A temporary directory removed when the value goes away.
final class ScratchDirectory {
    let root: String

    init() throws {
        root = NSTemporaryDirectory() + "tactus-interop-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { root + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: root) }
}

/// Runs a program and collects its standard output lines; standard error is discarded
/// (libsmf logs through GLib there).
enum ChildProcess {
    struct Result {
        var status: Int32
        var lines: [String]
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let status = process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
        let text = String(decoding: data, as: UTF8.self)
        return Result(status: status, lines: text.split(separator: "\n").map(String.init))
    }
}

/// Sequences built with the API that exercise what a file can hold.
enum BuiltSequences {
    static var all: [(String, MusicSequence)] {
        [("multitrack", multitrack()), ("single track", singleTrack()), ("long gaps and lengths", longGaps())]
    }

    /// A tempo track with tempo, meter, key and text; three event tracks with overlapping
    /// notes, both release encodings, every channel message kind, sysex and same-tick events.
    static func multitrack() -> MusicSequence {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        sequence.tempoTrack.add(.meta(.text(MetaType.trackName, "conductor")), at: 0)
        sequence.tempoTrack.add(.meta(.timeSignature(TimeSignature(3, 4))), at: 0)
        sequence.tempoTrack.add(.meta(.keySignature(sharpsOrFlats: -3, minor: true)), at: 0)
        for i in 0..<40 {
            sequence.tempoTrack.add(.meta(.tempo(bpm: 60 + Double(i) * 3.5)), at: Int64(i) * 240)
        }
        sequence.tempoTrack.add(.meta(.timeSignature(TimeSignature(7, 8))), at: 1440)
        sequence.tempoTrack.add(.meta(.text(MetaType.marker, String(repeating: "m", count: 127))), at: 1440)

        var piano = MusicTrack()
        piano.name = "piano"
        piano.add(.message(.programChange(channel: 0, program: 0)), at: 0)
        piano.add(.message(.controlChange(channel: 0, controller: MIDIController.volume, value: 100)), at: 0)
        for i in 0..<200 {
            let tick = Int64(i) * 37 % 5000
            piano.addNote(at: tick, channel: 0, key: UInt8(36 + i % 60), velocity: UInt8(1 + i % 127),
                          duration: Int64(i % 7) * 60, releaseVelocity: UInt8(i % 128))
        }
        // The same key held twice at once, and a zero-length note.
        piano.addNote(at: 100, channel: 0, key: 60, velocity: 90, duration: 500)
        piano.addNote(at: 200, channel: 0, key: 60, velocity: 91, duration: 50)
        piano.addNote(at: 300, channel: 0, key: 61, velocity: 92, duration: 0)
        piano.add(.note(NoteEvent(channel: 0, key: 62, velocity: 93, duration: 120, releasedByZeroVelocityNoteOn: true)), at: 400)
        piano.add(.message(.pitchBend(channel: 0, value: 0x3FFF)), at: 400)
        piano.add(.message(.pitchBend(channel: 0, value: 0)), at: 400)
        piano.add(.message(.channelPressure(channel: 0, pressure: 77)), at: 410)
        piano.add(.message(.polyPressure(channel: 0, key: 60, pressure: 12)), at: 410)
        piano.add(.parameter(ParameterEvent(node: 1, parameter: 2, value: 0.5)), at: 420)
        piano.add(.user(UserEvent(data: [1, 2, 3])), at: 430)

        var strings = MusicTrack()
        strings.name = "strings"
        strings.add(.sysex(SysexEvent(payload: [0x7E, 0x7F, 0x09, 0x01, 0xF7])), at: 0)
        for i in 0..<300 {
            // Alternating channels defeat running status; runs on one channel use it.
            let channel = UInt8(i % 40 < 20 ? 1 : 1 + i % 3)
            strings.addNote(at: Int64(i) * 15, channel: channel, key: UInt8(48 + i % 24), velocity: 64, duration: 240)
            strings.add(.message(.controlChange(channel: channel, controller: MIDIController.expression, value: UInt8(i % 128))), at: Int64(i) * 15)
        }
        strings.add(.meta(.text(MetaType.lyric, "la")), at: 600)

        var drums = MusicTrack()
        drums.name = "drums"
        for i in 0..<128 {
            drums.addNote(at: Int64(i) * 120, channel: 9, key: UInt8(35 + i % 12), velocity: 127, duration: 0)
        }
        sequence.tracks = [piano, strings, drums, MusicTrack()]
        return sequence
    }

    /// One track, written as format 0 when the layout is as read.
    static func singleTrack() -> MusicSequence {
        var track = MusicTrack()
        track.add(.meta(.tempo(bpm: 100)), at: 0)
        for i in 0..<64 {
            track.addNote(at: Int64(i) * 96, channel: UInt8(i % 16), key: UInt8(i + 30), velocity: 100, duration: 96)
        }
        track.add(.sysex(SysexEvent(payload: Array(repeating: 0x11, count: 200) + [0xF7])), at: 96)
        return MusicSequence(timeBase: .ticksPerQuarter(96), tracks: [track])
    }

    /// Deltas needing three- and four-byte lengths, a note longer than the gap, and an
    /// explicit track end after the last event.
    static func longGaps() -> MusicSequence {
        var track = MusicTrack()
        track.addNote(at: 0, channel: 2, key: 64, velocity: 80, duration: 3_000_000)
        track.add(.message(.controlChange(channel: 2, controller: 64, value: 127)), at: 20_000)
        track.add(.message(.controlChange(channel: 2, controller: 64, value: 0)), at: 5_000_000)
        track.addNote(at: 200_000_000, channel: 2, key: 65, velocity: 81, duration: 1)
        track.explicitLength = 210_000_000
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(1920))
        sequence.tempoTrack.add(.meta(.tempo(bpm: 90)), at: 0)
        sequence.tracks = [track]
        return sequence
    }
}
