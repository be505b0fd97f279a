// soundfont-bench: how long opening a SoundFont bank takes (map the file, parse and validate
// the hydra, resolve every preset into regions), in a release build (a tool, not a test).
//
//   soundfont-bench [FILE...] [--runs N]
//
// Defaults to FluidR3_GM.sf2 and TimGM6mb.sf2 from /usr/share/sounds/sf2. Each file is opened
// N times (default 21) after one untimed warm-up open; prints the minimum, median and maximum
// wall time per open, with the bank's preset, region and sample counts.
import Glibc
import SoundFont

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

var files: [String] = []
var runs = 21
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--runs": runs = max(1, Int(arguments.popFirst() ?? "") ?? runs)
    case "-h", "--help":
        print("usage: soundfont-bench [FILE...] [--runs N]")
        exit(0)
    default: files.append(argument)
    }
}
if files.isEmpty { files = ["/usr/share/sounds/sf2/FluidR3_GM.sf2", "/usr/share/sounds/sf2/TimGM6mb.sf2"] }

for file in files {
    let first: SoundFontFile
    do {
        first = try SoundFontReader.read(contentsOf: file)
    } catch {
        printError(error.description)
        exit(error.isUnreadableInput ? 66 : 65)
    }
    var times: [Double] = []
    for _ in 0..<runs {
        let start = now()
        let bank = try? SoundFontReader.read(contentsOf: file)
        times.append(now() - start)
        precondition(bank != nil, "the bank read once must read again")
    }
    times.sort()
    let regions = first.bank.presets.reduce(0) { $0 + $1.regions.count }
    print("\(file): \(first.bank.presets.count) presets, \(regions) regions, \(first.bank.samples.count) samples, \(first.sampleDataByteCount) bytes of sample data, \(first.warnings.count) warnings")
    print("  open: min \(milliseconds(times.first!)) ms, median \(milliseconds(times[times.count / 2])) ms, max \(milliseconds(times.last!)) ms over \(runs) runs")
}

/// Seconds as milliseconds with two decimals.
func milliseconds(_ seconds: Double) -> String {
    let hundredths = Int((seconds * 100_000).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}
