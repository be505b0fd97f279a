import Foundation
import Testing

/// What a rerun of a batch owes its user (issue 24): it counts the failures it skips, and a
/// run stopped by a full disk renders everything once there is space again.
@Suite("tactus render: reruns after failures and a full disk")
struct BatchRerunCLITests {
    @Test("A rerun that skips earlier failures exits 65 and says how many failed before")
    func rerunCountsEarlierFailures() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        try BatchRenderCLITests.writeSong(input.appendingPathComponent("good.mid").path, key: 60)
        try Data("not a MIDI file\n".utf8).write(to: input.appendingPathComponent("fake.mid"))
        let out = dir.appendingPathComponent("out").path
        let options = ["--instrument", "builtin", "--tail", "0.25"]
        let first = try CLI.run(["render", input.path, "-o", out] + options)
        #expect(first.status == 65, "\(first.stderr)")
        let rerun = try CLI.run(["render", input.path, "-o", out] + options)
        #expect(rerun.status == 65, "the earlier failure still has no output: \(rerun.stderr)")
        #expect(rerun.stdout.contains("0 of 0 rendered (0 failed), 2 skipped (1 failed before)"), "\(rerun.stdout)")
        #expect(rerun.stderr.split(separator: "\n").count == 1, "\(rerun.stderr)")
        #expect(rerun.stderr.contains("1 failed in an earlier run and was not retried (--retry-failed renders it again)"), "\(rerun.stderr)")
        // Retried, it fails again, now as this run's failure.
        let retried = try CLI.run(["render", input.path, "-o", out, "--retry-failed", "--quiet"] + options)
        #expect(retried.status == 65 && retried.stderr.contains("1 input failed;"), "\(retried.stderr)")
    }

    @Test("A full disk stops the batch at once (74); once space is freed the rerun renders every missing file and exits 0",
          .enabled(if: getuid() == 0, "mounts a small tmpfs in a private mount namespace, which needs root"))
    func fullDiskThenSpace() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        for i in 0..<6 {
            try BatchRenderCLITests.writeSong(input.appendingPathComponent("song\(i).mid").path, key: UInt8(40 + 5 * i))
        }
        // How big one output is, to size the disk for two and a half of them.
        let probe = dir.appendingPathComponent("probe.wav").path
        let single = try CLI.run(["render", input.appendingPathComponent("song0.mid").path, "-o", probe, "--instrument", "builtin", "--quiet", "--tail", "0.25"])
        #expect(single.status == 0, "\(single.stderr)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: probe)[.size] as? Int)
        let disk = dir.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let options = "--instrument builtin --quiet --tail 0.25 --jobs 1"
        // The disk and both runs live in one private mount namespace: the files stay on the
        // tmpfs between the runs, and nothing outside the namespace sees the mount.
        let script = """
            mount -t tmpfs -o size=\((size * 5 / 2 + 4095) / 4096 * 4096) tactus-full "$DISK" || exit 99
            "$TACTUS" render "$IN" -o "$DISK/out" \(options) 2>"$DISK/../first.err"; echo "first $?"
            ls -a "$DISK/out" > "$DISK/../first.ls"
            mount -o remount,size=64m "$DISK" || exit 99
            "$TACTUS" render "$IN" -o "$DISK/out" \(options) 2>"$DISK/../second.err"; echo "second $?"
            ls -a "$DISK/out" > "$DISK/../second.ls"
            cp "$DISK/out/tactus-manifest.jsonl" "$DISK/../manifest.jsonl"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["--mount", "--propagation", "private", "sh", "-c", script]
        var environment = ProcessInfo.processInfo.environment
        environment["DISK"] = disk
        environment["IN"] = input.path
        environment["TACTUS"] = CLI.binary.path
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let said = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(said)")
        func text(_ name: String) throws -> String { try String(contentsOfFile: dir.appendingPathComponent(name).path, encoding: .utf8) }

        // The first run stops at the first file that does not fit, naming the reason, instead
        // of failing every file after it.
        let firstError = try text("first.err"), secondError = try text("second.err")
        #expect(said.contains("first 74"), "\(said) \(firstError)")
        #expect(firstError.split(separator: "\n").count == 1 && firstError.contains("No space left on device")
                && firstError.contains("which a rerun renders"), "\(firstError)")
        let firstListing = try text("first.ls")
        let firstOutputs = firstListing.split(separator: "\n").filter { $0.hasSuffix(".wav") }
        #expect(firstOutputs.count == 2, "\(firstListing) \(firstError) size \(size)")

        // The rerun renders the rest, and exits 0 because every output is there.
        #expect(said.contains("second 0"), "\(said) \(secondError)")
        let names = try text("second.ls").split(separator: "\n").map(String.init)
        #expect(names.filter { $0.hasSuffix(".wav") }.sorted() == (0..<6).map { "song\($0).wav" }, "\(names)")
        #expect(!names.contains { $0.contains(".partial-") }, "no temporary left: \(names)")
        // Every manifest line is a whole record (a torn line would swallow the next).
        let lines = try text("manifest.jsonl").split(separator: "\n")
        for line in lines { #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "torn: \(line)") }
        #expect(lines.contains { $0.contains(#""status":"not written""#) }, "the file that did not fit is recorded as not written")
    }
}
