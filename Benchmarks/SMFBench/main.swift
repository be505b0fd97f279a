// smf-bench: load and write speed of the Tactus SMF codec on one file, for the comparison
// with symusic in Benchmarks/smf_vs_symusic.sh (a release-build tool, not a test).
//
//   smf-bench FILE [--runs N] [--mode both|load|write|none] [--out PATH]
//
// "load" reads the file into a StandardMIDIFile and splits it into a MusicSequence (notes
// paired), like symusic's Score.from_file. "write" encodes that sequence with running status
// and writes it to PATH, like symusic's dump_midi. Each is timed N times; the medians go to
// stdout as one JSON object, with the medians of the process's CPU time next to them. Mode "load" with one run is what the memory measurement uses;
// "none" reads nothing (the process's own baseline).
// FoundationEssentials only, like the codec: the process's memory is part of the result.
import FoundationEssentials
import Glibc
import MIDIFile
import Sequencing

struct Options {
    var file = ""
    var runs = 9
    var mode = "both"
    var out = "/dev/shm/tactus-smf-bench-\(getpid()).mid"

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            switch argument {
            case "--runs": runs = max(1, Int(rest.popFirst() ?? "") ?? runs)
            case "--mode": mode = rest.popFirst() ?? mode
            case "--out": out = rest.popFirst() ?? out
            case "-h", "--help":
                print("usage: smf-bench FILE [--runs N] [--mode both|load|write|none] [--out PATH]")
                exit(0)
            default: file = argument
            }
        }
        if file.isEmpty && mode != "none" {
            printError("smf-bench: no input file (see --help)")
            exit(64)
        }
    }
}

/// Writes a line to standard error (the C `stderr` global is off limits in Swift 6 mode).
func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

func now(_ clock: clockid_t = CLOCK_MONOTONIC) -> Double {
    var t = timespec()
    clock_gettime(clock, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
}

/// CPU time of the process (unlike wall time, not inflated when other jobs share the cores).
func cpuNow() -> Double { now(CLOCK_PROCESS_CPUTIME_ID) }

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    return s.isEmpty ? 0 : s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Events as stored in the file, end of track included (the count mido and the anchors use).
func storedEventCount(_ sequence: MusicSequence) -> Int {
    let file = StandardMIDIFile(sequence: sequence, layout: .asRead)
    var n = file.tracks.count
    for track in file.tracks { track.forEachFileEvent { _, _ in n += 1 } }
    return n
}

func load(_ path: String) -> MusicSequence {
    do {
        return try SMFReader.read(contentsOf: path).makeSequence()
    } catch {
        printError("smf-bench: \(error)")
        exit(65)
    }
}

let options = Options(CommandLine.arguments)
var fields: [(String, String)] = [("tool", "\"tactus\""), ("mode", "\"\(options.mode)\""), ("runs", "\(options.runs)")]
if options.mode != "none" {
    var sequence = MusicSequence()
    var events = 0
    if options.mode == "both" || options.mode == "load" {
        var times: [Double] = []
        var cpuTimes: [Double] = []
        for _ in 0..<options.runs {
            sequence = MusicSequence()  // free the previous load outside the timed part
            let start = now(), cpuStart = cpuNow()
            sequence = load(options.file)
            times.append(now() - start)
            cpuTimes.append(cpuNow() - cpuStart)
        }
        events = storedEventCount(sequence)
        fields += [("events", "\(events)"), ("load_s", "\(median(times))"), ("load_min_s", "\(times.min() ?? 0)"),
                   ("load_cpu_s", "\(median(cpuTimes))"), ("load_ev_per_s", "\(Double(events) / median(times))")]
    }
    if options.mode == "both" || options.mode == "write" {
        if options.mode == "write" {
            sequence = load(options.file)
            events = storedEventCount(sequence)
            fields.append(("events", "\(events)"))
        }
        var times: [Double] = []
        var cpuTimes: [Double] = []
        var size = 0
        for _ in 0..<options.runs {
            let start = now(), cpuStart = cpuNow()
            let bytes = SMFWriter.bytes(of: sequence, layout: .asRead)
            let fd = open(options.out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if fd < 0 || written != bytes.count || close(fd) != 0 {
                printError("smf-bench: cannot write \(options.out): \(String(cString: strerror(errno)))")
                exit(73)
            }
            times.append(now() - start)
            cpuTimes.append(cpuNow() - cpuStart)
            size = bytes.count
        }
        unlink(options.out)
        fields += [("write_s", "\(median(times))"), ("write_min_s", "\(times.min() ?? 0)"), ("write_cpu_s", "\(median(cpuTimes))"),
                   ("write_ev_per_s", "\(Double(events) / median(times))"), ("written_bytes", "\(size)")]
    }
    withExtendedLifetime(sequence) {}
}
print("{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
