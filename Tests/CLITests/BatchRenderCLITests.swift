import Foundation
import MIDIFile
import Sequencing
import Testing

/// `tactus render` over many files: sharding, resuming, the manifest, signals.
@Suite("tactus render: batches")
struct BatchRenderCLITests {
    /// A short song of `notes` notes starting at `key`, so a debug build renders it in well under a second.
    static func writeSong(_ path: String, key: UInt8, notes: Int = 6) throws {
        var sequence = MusicSequence(timeBase: .ticksPerQuarter(480))
        var track = MusicTrack()
        for i in 0..<notes {
            track.addNote(at: Int64(i * 240), channel: UInt8(i % 3), key: key &+ UInt8(i % 24), velocity: 100, duration: 200)
        }
        sequence.tracks = [track]
        try SMFWriter.writeAtomically(SMFWriter.bytes(of: sequence), to: path)
    }

    /// Good files in nested folders, a file the reader refuses, one it repairs, a text file
    /// named .mid and a text file it leaves alone. Each good song has `notes` notes, a quarter
    /// apart (6 make 1.7 s with the tail).
    static func corpus(notes: Int = 6) throws -> URL {
        let dir = try CLI.temporaryDirectory()
        let input = dir.appendingPathComponent("in")
        for sub in ["", "a", "a/b", "c"] {
            try FileManager.default.createDirectory(at: input.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let good = ["one.mid", "a/two.mid", "a/b/three.mid", "c/four.midi", "c/five.MID", "six.mid", "a/seven.mid", "c/eight.mid"]
        for (i, name) in good.enumerated() {
            try writeSong(input.appendingPathComponent(name).path, key: UInt8(40 + 5 * i), notes: notes)
        }
        // Refused (a data byte over 127 in a note-on) and repaired with a warning (a track
        // chunk whose length runs past the end of the file, without an end of track).
        let header = Data("MThd".utf8) + Data([0, 0, 0, 6, 0, 0, 0, 1, 0, 96]) + Data("MTrk".utf8)
        let refused = header + Data([0, 0, 0, 8, 0, 0x90, 0xC0, 0x40, 0, 0xFF, 0x2F, 0])
        try refused.write(to: input.appendingPathComponent("a/damaged.mid"))
        let repaired = header + Data([0, 0, 0, 0x40, 0, 0x90, 60, 100, 0x60, 0x80, 60, 0])
        try repaired.write(to: input.appendingPathComponent("c/repaired.mid"))
        try Data("not a MIDI file\n".utf8).write(to: input.appendingPathComponent("fake.mid"))
        try Data("notes\n".utf8).write(to: input.appendingPathComponent("readme.txt"))
        return dir
    }

    /// Every regular file under `folder` except manifests, by relative path.
    static func outputs(_ folder: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let root = folder.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [:] }
        for case let relative as String in walker {
            let path = root + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            if relative.hasSuffix(".jsonl") { continue }
            result[relative] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return result
    }

    /// The manifest records of every manifest under `folder`.
    static func records(_ folder: URL) throws -> [[String: Any]] {
        var all: [[String: Any]] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".jsonl") {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            for line in text.split(separator: "\n") {
                all.append(try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]))
            }
        }
        return all
    }

    static let common = ["--instrument", "builtin", "--quiet", "--tail", "0.25"]

    static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in ["SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "JOB_COMPLETION_INDEX"] {
            environment[key] = nil
        }
        environment.merge(extra) { $1 }
        return environment
    }

    @Test("Shards run as Slurm and Kubernetes run them add up to the unsharded run, every input once")
    func shardsAddUp() throws {
        // Seven runs of the whole folder: two notes a song keep them short.
        let dir = try Self.corpus(notes: 2)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in").path
        let whole = dir.appendingPathComponent("whole")
        let unsharded = try CLI.run(["render", input, "-o", whole.path, "--jobs", "2"] + Self.common, environment: Self.environment([:]))
        #expect(unsharded.status == 65, "two inputs fail: \(unsharded.stderr)")
        let expected = try Self.outputs(whole)
        #expect(expected.count == 9, "eight good files and the repaired one: \(expected.keys.sorted())")
        #expect(expected["a/b/three.wav"] != nil && expected["c/five.wav"] != nil && expected["fake.wav"] == nil)
        let wholeRecords = try Self.records(whole).filter { $0["status"] as? String != "started" }
        #expect(wholeRecords.count == 11, "every input once, the text file not taken")

        for count in [1, 3, 7] {
            for engine in ["slurm", "kubernetes"] {
                let out = dir.appendingPathComponent("\(engine)-\(count)")
                var processes: [Process] = []
                for index in 0..<count {
                    let process = Process()
                    process.executableURL = CLI.binary
                    var arguments = ["render", input, "-o", out.path, "--jobs", "1"] + Self.common
                    if engine == "slurm" {
                        arguments += ["--shard", "auto"]
                        // Slurm numbers an --array=1-N job from 1.
                        process.environment = Self.environment(["SLURM_ARRAY_TASK_ID": "\(index + 1)", "SLURM_ARRAY_TASK_MIN": "1",
                                                                "SLURM_ARRAY_TASK_MAX": "\(count)", "SLURM_ARRAY_TASK_COUNT": "\(count)"])
                    } else {
                        arguments += ["--shard", "auto/\(count)"]
                        process.environment = Self.environment(["JOB_COMPLETION_INDEX": "\(index)"])
                    }
                    process.arguments = arguments
                    process.standardOutput = FileHandle.nullDevice
                    process.standardError = FileHandle.nullDevice
                    try process.run()
                    processes.append(process)
                }
                for process in processes {
                    process.waitUntilExit()
                    #expect([0, 65].contains(process.terminationStatus), "\(engine) \(count): exit \(process.terminationStatus)")
                }
                let got = try Self.outputs(out)
                #expect(got == expected, "\(engine) \(count): the shards' outputs are the unsharded run's, byte for byte")
                let records = try Self.records(out)
                let started = records.filter { $0["status"] as? String == "started" }.compactMap { $0["relative_path"] as? String }
                #expect(started.count == Set(started).count, "\(engine) \(count): no input rendered twice")
                let finals = records.filter { $0["status"] as? String != "started" }.compactMap { $0["relative_path"] as? String }
                #expect(finals.sorted() == wholeRecords.compactMap { $0["relative_path"] as? String }.sorted(),
                        "\(engine) \(count): the manifests list every input once")
                let manifests = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".jsonl") }
                #expect(manifests.count == count)
            }
        }
    }

    @Test("--dry-run prints the assignment, which does not depend on other files or their order")
    func dryRunAssignment() throws {
        let dir = try Self.corpus()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in").path
        let out = dir.appendingPathComponent("out").path
        func assigned() throws -> [String] {
            let r = try CLI.run(["render", input, "-o", out, "--shard", "1/3", "--dry-run"] + Self.common)
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout.split(separator: "\n").filter { $0.hasPrefix("render\t") }.map(String.init)
        }
        let before = try assigned()
        #expect(!before.isEmpty)
        try Self.writeSong(dir.appendingPathComponent("in/a/new-one.mid").path, key: 30)
        try Self.writeSong(dir.appendingPathComponent("in/zzz.mid").path, key: 31)
        let after = try assigned()
        #expect(Set(before).isSubset(of: Set(after)), "added files move nothing between shards")
        #expect(!FileManager.default.fileExists(atPath: out), "a dry run creates nothing")
        let bad = try CLI.run(["render", input, "-o", out, "--shard", "3/3"] + Self.common)
        #expect(bad.status == 64 && bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
        let noCluster = try CLI.run(["render", input, "-o", out, "--shard", "auto"] + Self.common, environment: Self.environment([:]))
        #expect(noCluster.status == 64 && noCluster.stderr.contains("SLURM_ARRAY_TASK_ID"), "\(noCluster.stderr)")
    }

    @Test("An input whose render killed the process twice is recorded as crashed and skipped")
    func crashedTwiceIsSkipped() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        try Self.writeSong(input.appendingPathComponent("killer.mid").path, key: 50)
        try Self.writeSong(input.appendingPathComponent("fine.mid").path, key: 60)
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        // What two runs that died inside killer.mid leave behind: a started record each.
        let started = #"{"input":"x","relative_path":"killer.mid","status":"started"}"# + "\n"
        try Data((started + started).utf8).write(to: out.appendingPathComponent("tactus-manifest.jsonl"))
        let r = try CLI.run(["render", input.path, "-o", out.path] + Self.common)
        #expect(r.status == 65, "a crashed input counts as failed: \(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("fine.wav").path))
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("killer.wav").path))
        let records = try Self.records(out)
        #expect(records.contains { $0["relative_path"] as? String == "killer.mid" && $0["status"] as? String == "crashed" })
        let retried = try CLI.run(["render", input.path, "-o", out.path, "--retry-failed"] + Self.common)
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("killer.wav").path))
    }

    /// Waits until `condition` holds, up to `seconds`.
    static func wait(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    /// A folder with short songs and one long one, and a process rendering it one file at a time.
    static func startLongBatch(_ dir: URL, output: URL) throws -> Process {
        let input = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        try Self.writeSong(input.appendingPathComponent("a-short.mid").path, key: 50)
        // Long enough (25 s) to be caught half-written even by a fast machine polling every 20 ms.
        try Self.writeSong(input.appendingPathComponent("m-long.mid").path, key: 40, notes: 100)
        try Self.writeSong(input.appendingPathComponent("z-short.mid").path, key: 70)
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["render", input.path, "-o", output.path, "--jobs", "1"] + Self.common
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// True while m-long.wav is being written (its temporary file exists and has data).
    static func longIsBeingWritten(_ output: URL) -> Bool {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: output.path) else { return false }
        return names.contains { name in
            guard name.hasPrefix(".m-long.wav.partial-") else { return false }
            let size = (try? FileManager.default.attributesOfItem(atPath: output.appendingPathComponent(name).path)[.size] as? Int) ?? 0
            return size > 100_000
        }
    }

    @Test("SIGKILL in the middle of a file, then a rerun: nothing partial under a final name, the same outputs")
    func killAndResume() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out")
        let process = try Self.startLongBatch(dir, output: out)
        let caught = Self.wait(seconds: 120) { Self.longIsBeingWritten(out) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try #require(caught, "the long file was never seen half-written")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("m-long.wav").path), "no partial output under the final name")
        let rerun = try CLI.run(["render", dir.appendingPathComponent("in").path, "-o", out.path, "--jobs", "1"] + Self.common)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let reference = dir.appendingPathComponent("reference")
        let straight = try CLI.run(["render", dir.appendingPathComponent("in").path, "-o", reference.path, "--jobs", "2"] + Self.common)
        #expect(straight.status == 0, "\(straight.stderr)")
        let resumed = try Self.outputs(out)
        #expect(resumed == (try Self.outputs(reference)), "complete and identical to an uninterrupted run")
        #expect(!resumed.keys.contains { $0.contains(".partial-") }, "the dead run's temporary file is gone")
    }

    @Test("SIGTERM stops cleanly: exit 143, no temporary or partial file, every record flushed; a rerun finishes")
    func terminate() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out")
        let process = try Self.startLongBatch(dir, output: out)
        let caught = Self.wait(seconds: 120) { Self.longIsBeingWritten(out) }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        try #require(caught, "the long file was never seen half-written")
        #expect(process.terminationReason == .exit && process.terminationStatus == 143)
        let names = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(!names.contains { $0.contains(".partial-") }, "\(names)")
        #expect(!names.contains("m-long.wav") && !names.contains("z-short.wav"), "\(names)")
        let records = try Self.records(out)
        #expect(records.last?["relative_path"] as? String == "m-long.mid" && records.last?["status"] as? String == "interrupted")
        #expect(records.contains { $0["relative_path"] as? String == "a-short.mid" && $0["status"] as? String == "ok" })
        let rerun = try CLI.run(["render", dir.appendingPathComponent("in").path, "-o", out.path] + Self.common)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasSuffix(".wav") }.count == 3)
    }

    @Test("Guards: --max-duration stops a runaway render, --max-failures stops the run, both recorded")
    func guards() throws {
        let dir = try Self.corpus()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in").path
        let out = dir.appendingPathComponent("out")
        let r = try CLI.run(["render", input, "-o", out.path, "--max-duration", "1", "--jobs", "1"] + Self.common)
        #expect(r.status == 65)
        let records = try Self.records(out)
        #expect(records.filter { $0["status"] as? String == "too long" }.count == 8, "every good song lasts 1.7 s")
        #expect(try Self.outputs(out).keys.sorted() == ["c/repaired.wav"], "nothing written for a render cut short")
        let limited = dir.appendingPathComponent("limited")
        let l = try CLI.run(["render", input, "-o", limited.path, "--max-duration", "1", "--max-failures", "2", "--jobs", "1"] + Self.common)
        #expect(l.status == 65 && l.stderr.contains("--max-failures"), "\(l.stderr)")
        #expect(try Self.records(limited).filter { $0["status"] as? String != "started" }.count == 2)
    }
}
