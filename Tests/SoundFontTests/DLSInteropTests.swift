import Foundation
import SoundFont
import Testing

/// The libinstpatch dumper (`Tests/Support/libinstpatch_dls_dump.c`), compiled once per test
/// process; libinstpatch is the DLS reader Debian's FluidSynth links.
struct LibInstPatchDumper: Sendable {
    let tool: String?
    let unavailableReason: Comment

    static let shared = LibInstPatchDumper()

    private init() {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Support/libinstpatch_dls_dump.c").path
        let headerPresent = FileManager.default.fileExists(atPath: "/usr/include/libinstpatch-2/libinstpatch/libinstpatch.h")
        guard headerPresent, FileManager.default.isExecutableFile(atPath: "/usr/bin/pkg-config") else {
            tool = nil
            unavailableReason = "libinstpatch's headers or pkg-config are missing: install libinstpatch-dev and pkg-config to compare DLS readings with libinstpatch"
            return
        }
        let directory = NSTemporaryDirectory() + "tactus-instpatch-\(getpid())"
        let output = directory + "/libinstpatch_dls_dump"
        let status = run("/bin/sh", ["-c", "mkdir -p '\(directory)' && cc -w -O1 -o '\(output)' '\(source)' $(pkg-config --cflags --libs libinstpatch-1.0) 2>&1"])
        tool = status.status == 0 ? output : nil
        unavailableReason = "libinstpatch_dls_dump.c did not compile: \(status.output)"
    }
}

/// Runs a program to its end; its standard output and error together.
func run(_ program: String, _ arguments: [String]) -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    do { try process.run() } catch { return (-1, "\(error)") }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Tactus's reading in the dumper's form; blocks and connection lines sorted, since
/// libinstpatch keeps lists in an order of its own.
func tactusDump(_ dls: DLSCollection) -> String {
    func info(_ i: DLSSampleInfo?) -> String {
        guard let i else { return " info=none" }
        let loop = i.loops.first
        let mode = loop == nil ? 0 : (loop!.type == 1 ? 2 : 1)
        return " info=\(UInt8(truncatingIfNeeded: i.unityNote)),\(i.fineTune),\(i.gain),\(mode),\(loop?.start ?? 0),\((loop?.start ?? 0) &+ (loop?.length ?? 0))"
    }
    func conns(_ list: [DLSConnection]) -> [String] {
        list.map { "  conn \($0.source) \($0.control) \($0.destination) \($0.transform) \($0.scale)" }.sorted()
    }
    var blocks: [String] = []
    for inst in dls.instruments {
        var lines = ["inst bank=\(inst.bank) program=\(inst.program) drum=\(inst.isDrumKit ? 1 : 0) name=\(inst.name)"]
        lines += conns(inst.connections)
        for r in inst.regions {
            let wave = Int(r.waveIndex) < dls.poolTable.count ? dls.poolTable[Int(r.waveIndex)].map { dls.waves[$0].name } : nil
            lines.append(" region keys=\(r.keyLow)-\(r.keyHigh) vel=\(r.velocityLow)-\(r.velocityHigh) group=\(r.keyGroup) phase=\(r.phaseGroup) channel=\(r.channel) sample=\(wave ?? "(none)")" + info(r.sampleInfo))
            lines += conns(r.connections)
        }
        blocks.append(lines.joined(separator: "\n"))
    }
    for wave in dls.waves {
        blocks.append("sample name=\(wave.name) rate=\(wave.sampleRate) frames=\(wave.frameCount)" + info(wave.sampleInfo))
    }
    return blocks.sorted().joined(separator: "\n")
}

/// The dumper's output with its blocks sorted as ``tactusDump(_:)`` sorts them.
func normalised(_ dump: String) -> String {
    var blocks: [[String]] = []
    for line in dump.split(separator: "\n").map(String.init) {
        if line.hasPrefix(" ") && !blocks.isEmpty {
            blocks[blocks.count - 1].append(line)
        } else {
            blocks.append([line])
        }
    }
    return blocks.map { block -> String in
        // Connection lines sort within their owner (instrument or region).
        var out: [String] = [], pending: [String] = []
        for line in block {
            if line.hasPrefix("  conn") { pending.append(line); continue }
            out += pending.sorted(); pending = []
            out.append(line)
        }
        out += pending.sorted()
        return out.joined(separator: "\n")
    }.sorted().joined(separator: "\n")
}

@Suite struct DLSInteropTests {
    static let dumper = LibInstPatchDumper.shared

    @Test(.enabled(if: dumper.tool != nil, dumper.unavailableReason), arguments: [true, false])
    func libinstpatchReadsTheSameRegions(level2: Bool) throws {
        let tool = try #require(Self.dumper.tool)
        let directory = NSTemporaryDirectory() + "tactus-dls-interop-\(getpid())-\(level2)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let original = directory + "/made.dls", copy = directory + "/written-by-libinstpatch.dls"
        _ = FileManager.default.createFile(atPath: original, contents: Data(exampleDLS(level2: level2).bytes()))

        // A bank made here: libinstpatch and Tactus read the same instruments, regions,
        // samples, loops and articulation.
        let theirs = run(tool, ["-w", copy, original])
        try #require(theirs.status == 0, "\(theirs.output)")
        // TACTUS_DLS_KEEP=DIR keeps both banks (Fuzz/seeds/fuzz-dls holds copies).
        if let keep = ProcessInfo.processInfo.environment["TACTUS_DLS_KEEP"] {
            for path in [original, copy] {
                try? FileManager.default.copyItem(atPath: path, toPath: keep + "/level\(level2 ? 2 : 1)-" + (path as NSString).lastPathComponent)
            }
            _ = FileManager.default.createFile(atPath: keep + "/level\(level2 ? 2 : 1)-plain.dls", contents: Data(exampleDLS(level2: level2, articulation: false).bytes()))
        }
        let ours = try DLSReader.collection(readBytes(original))
        #expect(tactusDump(ours) == normalised(theirs.output))

        // The bank libinstpatch wrote back (a file Tactus did not write): the same reading
        // by both, and the same sampler regions as the original.
        let theirsAgain = run(tool, [copy])
        try #require(theirsAgain.status == 0, "\(theirsAgain.output)")
        let copied = try DLSReader.collection(readBytes(copy))
        #expect(tactusDump(copied) == normalised(theirsAgain.output))
        let a = try SoundFontReader.read(contentsOf: original), b = try SoundFontReader.read(contentsOf: copy)
        #expect(b.warnings.isEmpty, "\(b.warnings)")
        #expect(a.bank.presets.map(\.regions.count) == b.bank.presets.map(\.regions.count))
        for (pa, pb) in zip(a.bank.presets, b.bank.presets) {
            #expect(pa.bank == pb.bank && pa.program == pb.program && pa.name == pb.name)
            for (ra, rb) in zip(pa.regions, pb.regions) {
                #expect(ra.keyRange == rb.keyRange && ra.velocityRange == rb.velocityRange)
                #expect(ra.generators == rb.generators && ra.modulators == rb.modulators)
                let sa = a.bank.samples[ra.sampleIndex], sb = b.bank.samples[rb.sampleIndex]
                // libinstpatch 1.1.6 writes every wave's format at 44,100 Hz whatever it read (both
                // readers agree on the copy's rate, above), so the rate is not compared here.
                #expect(sa.originalPitch == sb.originalPitch)
                #expect(sa.loopStart - sa.start == sb.loopStart - sb.start && sa.loopEnd - sa.start == sb.loopEnd - sb.start)
                let pointsA = (sa.start..<sa.end).map { a.bank.sampleData.words[$0] }
                let pointsB = (sb.start..<sb.end).map { b.bank.sampleData.words[$0] }
                #expect(pointsA == pointsB)
            }
        }
    }
}

func readBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

extension DLSReader {
    static func collection(_ bytes: [UInt8]) throws -> DLSCollection {
        try bytes.withUnsafeBytes { try collection($0) }
    }
}

/// A DLS bank made from a SoundFont bank's presets, without articulation and gain (FluidSynth's
/// DLS path ignores both): each region's keys, velocities, sample, root key, tuning and loop.
/// Made from TimGM6mb (or `TACTUS_DLS_FROM_SF2`), it is a General MIDI bank libinstpatch must
/// read as Tactus does; `TACTUS_DLS_KEEP=DIR` keeps it as `DIR/from-soundfont.dls` for comparing
/// Tactus and FluidSynth (BENCHMARKS.md).
@Suite struct DLSFromSoundFont {
    static let source = ProcessInfo.processInfo.environment["TACTUS_DLS_FROM_SF2"] ?? "/usr/share/sounds/sf2/TimGM6mb.sf2"

    @Test(.enabled(if: FileManager.default.fileExists(atPath: source), "needs \(source) (Debian package timgm6mb-soundfont)"))
    func generalMIDIBank() throws {
        let environment = ProcessInfo.processInfo.environment
        let source = try SoundFontReader.read(contentsOf: Self.source)
        let bank = source.bank
        var w = DLSWriter()
        w.name = bank.name
        var waveOf: [Int: UInt32] = [:]
        for preset in bank.presets where preset.bank == 0 || preset.bank == 128 {
            var regions: [DLSRegion] = []
            for region in preset.regions {
                let s = bank.samples[region.sampleIndex]
                guard !s.isCompressed, s.end > s.start else { continue }
                let wave: UInt32
                if let known = waveOf[region.sampleIndex] {
                    wave = known
                } else {
                    wave = UInt32(w.waves.count)
                    waveOf[region.sampleIndex] = wave
                    w.waves.append(DLSWriter.Wave(name: "\(s.name) \(region.sampleIndex)", points: Array(bank.sampleData.words[s.start..<s.end]),
                                                  sampleRate: s.sampleRate, info: nil))
                }
                let g = region.generators
                let root = g[.overridingRootKey] >= 0 ? Int(g[.overridingRootKey]) : Int(s.originalPitch)
                let modes = g[.sampleModes]
                let loops = modes == 1 || modes == 3
                    ? [DLSLoop(type: modes == 3 ? 1 : 0, start: UInt32(s.loopStart - s.start), length: UInt32(s.loopEnd - s.loopStart))] : []
                // libinstpatch reads fine tune as an unsigned byte and ignores the gain: whole
                // semitones go into the unity note, the rest is 0...99 cents, the gain 0.
                let tune = Int(g[.fineTune]) + Int(g[.coarseTune]) * 100 + Int(s.pitchCorrection)
                let semitones = tune >= 0 ? tune / 100 : -((-tune + 99) / 100)
                let unity = max(0, min(127, root - semitones))
                let info = DLSSampleInfo(unityNote: UInt16(unity), fineTune: Int16(tune - semitones * 100), gain: 0, loops: loops)
                regions.append(DLSRegion(keyLow: UInt16(region.keyRange.lowerBound), keyHigh: UInt16(region.keyRange.upperBound),
                                         velocityLow: UInt16(region.velocityRange.lowerBound), velocityHigh: UInt16(region.velocityRange.upperBound),
                                         keyGroup: UInt16(max(0, g[.exclusiveClass])), waveIndex: wave, sampleInfo: info))
            }
            w.instruments.append(DLSInstrument(name: preset.name, bank: 0, isDrumKit: preset.bank == 128, program: UInt32(preset.program), regions: regions))
        }
        let directory = environment["TACTUS_DLS_KEEP"] ?? NSTemporaryDirectory() + "tactus-dls-gm-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { if environment["TACTUS_DLS_KEEP"] == nil { try? FileManager.default.removeItem(atPath: directory) } }
        let path = directory + "/from-soundfont.dls"
        _ = FileManager.default.createFile(atPath: path, contents: Data(w.bytes()))
        let ours = try SoundFontReader.read(contentsOf: path)
        #expect(ours.warnings.isEmpty, "\(ours.warnings.prefix(3))")
        #expect(ours.bank.presets.count == w.instruments.count)
        // The whole bank read by libinstpatch and by Tactus: the same regions.
        if let tool = LibInstPatchDumper.shared.tool {
            let theirs = run(tool, [path])
            try #require(theirs.status == 0, "\(theirs.output)")
            #expect(tactusDump(try DLSReader.collection(readBytes(path))) == normalised(theirs.output))
        }
    }
}
