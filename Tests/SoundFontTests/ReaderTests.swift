import Foundation
import Testing
@testable import SoundFont

enum Banks {
    static let timGM6mb = "/usr/share/sounds/sf2/TimGM6mb.sf2"
    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

    /// The path of an installed bank, or a failure that says which package installs it.
    static func require(_ path: String, package: String) throws -> String {
        try #require(FileManager.default.fileExists(atPath: path),
                     "\(path) is missing: install the Debian package \(package) (apt-get install \(package))")
        return path
    }

    static func timGM6mbBytes() throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: try require(timGM6mb, package: "timgm6mb-soundfont"))))
    }
}

/// What the sampler relies on in any bank the reader accepts: every region names a sample
/// whose points, loop included, lie inside the sample data, and links stay inside the bank.
func invariantViolation(_ bank: SoundFontBank) -> String? {
    let words = bank.sampleData.words.count
    if let low = bank.sampleData.lowBytes, low.count != words { return "low bytes \(low.count) != words \(words)" }
    for (i, s) in bank.samples.enumerated() {
        guard 0 <= s.start, s.start <= s.loopStart, s.loopStart <= s.loopEnd, s.loopEnd <= s.end, s.end <= words else {
            return "sample \(i) '\(s.name)' points \(s.start) \(s.loopStart) \(s.loopEnd) \(s.end) outside \(words) words"
        }
        if let link = s.link, !(0..<bank.samples.count).contains(link) { return "sample \(i) links to \(link)" }
        if s.sampleRate <= 0 { return "sample \(i) rate \(s.sampleRate)" }
    }
    for preset in bank.presets {
        guard (0...127).contains(preset.program) else { return "preset program \(preset.program)" }
        for region in preset.regions {
            guard (0..<bank.samples.count).contains(region.sampleIndex) else { return "region sample \(region.sampleIndex)" }
            let s = bank.samples[region.sampleIndex]
            guard s.start < s.end else { return "region plays empty sample \(region.sampleIndex)" }
            guard region.keyRange.upperBound <= 127, region.velocityRange.upperBound <= 127 else { return "range past 127" }
            guard region.generators.values.count == SoundFontGenerator.count else { return "generator count" }
            guard region.modulators.allSatisfy({ Int($0.destination) < SoundFontGenerator.count }) else { return "modulator destination" }
        }
    }
    return nil
}

@Suite("SoundFont reader")
struct ReaderTests {
    @Test("TimGM6mb: every GM program and the standard drum kit, with sane regions", .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/TimGM6mb.sf2"), "needs /usr/share/sounds/sf2/TimGM6mb.sf2 (Debian package timgm6mb-soundfont)"))
    func timGM6mb() throws {
        let path = try Banks.require(Banks.timGM6mb, package: "timgm6mb-soundfont")
        let file = try SoundFontReader.read(contentsOf: path)
        #expect(file.warnings.isEmpty, "\(file.warnings.prefix(5))")
        #expect(file.info.version == SoundFontVersion(major: 2, minor: 1))
        #expect(file.bank.name == "TimGM6mb1.sf2")
        #expect(!file.is24Bit)
        #expect(file.bank.samples.count == 520)
        #expect(file.sampleDataByteCount == 5_764_336)
        #expect(file.bank.sampleData.words.count == 5_764_336 / 2)
        #expect(invariantViolation(file.bank) == nil)
        for program in 0..<128 {
            let preset = try #require(file.bank.preset(bank: 0, program: program), "GM program \(program)")
            #expect(!preset.regions.isEmpty, "\(preset.name) has regions")
        }
        let piano = try #require(file.bank.preset(bank: 0, program: 0))
        for key in UInt8(21)...108 {
            #expect(piano.regions.contains { $0.keyRange.contains(key) && $0.velocityRange.contains(100) }, "piano plays key \(key)")
        }
        let drums = try #require(file.bank.preset(bank: 128, program: 0))
        #expect(drums.regions.contains { $0.keyRange.contains(38) }, "the standard kit has a snare")
        // The sample memory is the file's own bytes, mapped, not a copy.
        let smplOffset = 120
        let raw = try Data(contentsOf: URL(fileURLWithPath: path))
        let words = file.bank.sampleData.words
        for i in stride(from: 0, to: words.count, by: 99_991) {
            #expect(words[i] == Int16(bitPattern: UInt16(raw[smplOffset + 2 * i]) | UInt16(raw[smplOffset + 2 * i + 1]) << 8))
        }
    }

    @Test("FluidR3_GM: 189 presets over 1418 samples; its one-sided stereo links are dropped", .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/sounds/sf2/FluidR3_GM.sf2"), "needs /usr/share/sounds/sf2/FluidR3_GM.sf2 (Debian package fluid-soundfont-gm)"))
    func fluidR3() throws {
        let path = try Banks.require(Banks.fluidR3, package: "fluid-soundfont-gm")
        let file = try SoundFontReader.read(contentsOf: path)
        #expect(file.bank.name == "Fluid R3 GM")
        #expect(file.bank.presets.count == 189)
        #expect(file.bank.samples.count == 1418)
        #expect(file.sampleDataByteCount == 148_196_112)
        #expect(invariantViolation(file.bank) == nil)
        // FluidR3 marks stereo halves left and right but links every one of them to sample 0.
        #expect(file.warnings.count == 1)
        #expect(file.warnings.first?.location.chunk == "pdta/shdr")
        #expect(file.warnings.first?.message.contains("not their other half; played unlinked") == true)
        let piano = try #require(file.bank.preset(bank: 0, program: 0))
        #expect(piano.name == "Yamaha Grand Piano")
        let kinds = Set(piano.regions.map { file.bank.samples[$0.sampleIndex].kind })
        #expect(kinds == [.left, .right])
        #expect(piano.regions.allSatisfy { file.bank.samples[$0.sampleIndex].link == nil })
        // Every region of every preset pans its half of a pair to its side, as FluidSynth plays them.
        let left = piano.regions.filter { file.bank.samples[$0.sampleIndex].kind == .left }
        #expect(left.allSatisfy { $0.generators[.pan] < 0 })
    }

    @Test("Sample points outside the sample are repaired, unusable samples silence their zones")
    func samplePointsRepaired() throws {
        var writer = W.minimal()
        let points = W.sinePoints(100)
        writer.samples = [
            W.Sample(name: "reversed", points: points, loop: (80, 20)),
            W.Sample(name: "outside", points: points, loop: (-5 + 5, 100), rawPoints: nil),
            W.Sample(name: "rom", points: points, type: 0x8001),
            W.Sample(name: "past-end", points: points, rawPoints: (0, 1_000_000, 0, 10)),
            W.Sample(name: "no-rate", points: points, sampleRate: 0, originalPitch: 200),
        ]
        let starts = writer.sampleStarts
        writer.samples[1].rawPoints = (starts[1], starts[1] + 100, starts[1] - 30, starts[1] + 130)
        writer.instruments = [W.Instrument(name: "I", zones: (0..<5).map { W.Zone([W.sample($0)]) })]
        let file = try read(writer)
        let samples = file.bank.samples
        #expect(samples[0].loopStart == starts[0] + 20 && samples[0].loopEnd == starts[0] + 80, "reversed loop swapped")
        #expect(samples[1].loopStart == starts[1] && samples[1].loopEnd == starts[1] + 100, "loop moved inside the sample")
        #expect(samples[4].sampleRate == 44_100)
        #expect(samples[4].originalPitch == 60)
        #expect(allRegions(file.bank).map(\.sampleIndex) == [0, 1, 4], "ROM and out-of-bounds samples play nothing")
        #expect(invariantViolation(file.bank) == nil)
        let messages = file.warnings.map(\.description)
        for expected in ["pdta/shdr record 0", "swapped", "moved to the sample start", "moved to the sample end", "ROM sample",
                         "pdta/shdr record 3", "not inside the", "sample rate of 0", "original pitch 200",
                         "plays unusable sample 'rom'", "plays unusable sample 'past-end'"] {
            #expect(messages.contains { $0.contains(expected) }, "a warning mentions \(expected): \(messages)")
        }
    }

    @Test("24-bit samples: sm24 is used from version 2.04 and ignored, with a warning, before")
    func sm24() throws {
        var writer = W.minimal()
        writer.lowByte = { UInt8($0 % 251) }
        let file = try read(writer)
        #expect(file.is24Bit)
        #expect(file.warnings.isEmpty)
        let low = try #require(file.bank.sampleData.lowBytes)
        #expect(low.count == file.bank.sampleData.words.count)
        #expect((0..<low.count).allSatisfy { low[$0] == UInt8($0 % 251) })
        #expect(file.sampleDataByteCount == low.count * 3)
        writer.version = (2, 1)
        let old = try read(writer)
        #expect(!old.is24Bit)
        #expect(old.warnings.first?.location.chunk == "sdta/sm24")
        #expect(old.warnings.first?.message.contains("needs 2.04") == true)
    }

    @Test("A file whose smpl data starts at an odd offset is read correctly through a copy")
    func oddSampleOffset() throws {
        var writer = W.minimal()
        writer.unpaddedOddInfoChunk = true
        let bytes = writer.bytes()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("odd-\(UUID().uuidString).sf2")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try SoundFontReader.read(contentsOf: url.path)
        let expected = W.sinePoints(100)
        let words = file.bank.sampleData.words
        #expect(Int(bitPattern: words.baseAddress) % 2 == 0)
        #expect((0..<100).allSatisfy { words[$0] == expected[$0] })
        #expect(file.info.comments == "odd")
    }

    @Test("Refused banks name the chunk, record and reason")
    func errors() throws {
        func reason(_ bytes: [UInt8], options: SoundFontReadOptions = SoundFontReadOptions()) -> SoundFontError? {
            do {
                _ = try SoundFontReader.read(bytes, options: options)
                return nil
            } catch {
                return error
            }
        }
        #expect(reason([])?.reason == .emptyFile)
        #expect(reason(Array("MThd\0\0\0\u{6}\0\u{1}\0\u{1}".utf8))?.reason == .notASoundFont(found: "'MThd' ... '\\x00\\x01\\x00\\x01'"))
        let good = W.minimal().bytes()

        // The version: SoundFont 4 (no such thing yet) and 1 are refused; 3 is read.
        var v4 = W.minimal()
        v4.version = (4, 0)
        #expect(reason(v4.bytes())?.reason == .unsupportedVersion(major: 4, minor: 0))
        #expect(reason(v4.bytes())?.description.contains("2.x and 3.x banks are read") == true)
        var v1 = W.minimal()
        v1.version = (1, 0)
        #expect(reason(v1.bytes())?.reason == .unsupportedVersion(major: 1, minor: 0))

        // A hydra chunk missing: its id renamed.
        var missing = good
        let shdr = try #require(find("shdr", in: good))
        missing.replaceSubrange(shdr..<shdr + 4, with: Array("xhdr".utf8))
        #expect(reason(missing)?.reason == .missingChunk("pdta/shdr"))

        // A record size that does not divide the chunk: phdr one byte shorter, the rest moved up.
        var badSize = good
        let phdr = try #require(find("phdr", in: good))
        let phdrSize = Int(good[phdr + 4]) | Int(good[phdr + 5]) << 8
        badSize.replaceSubrange(phdr + 4..<phdr + 8, with: le32(UInt32(phdrSize - 2)))
        let error = try #require(reason(badSize))
        #expect(error.reason == .badChunkSize(size: phdrSize - 2, recordSize: 38))
        #expect(error.location.chunk == "pdta/phdr")

        // Bag indices that decrease.
        var twoPresets = W.minimal()
        twoPresets.presets.append(W.Preset(name: "Second", program: 1, zones: [W.Zone([W.instrument(0)])]))
        var decreasing = twoPresets.bytes()
        let phdr2 = try #require(find("phdr", in: decreasing)) + 8
        decreasing.replaceSubrange(phdr2 + 38 + 24..<phdr2 + 38 + 26, with: le16(0))
        decreasing.replaceSubrange(phdr2 + 24..<phdr2 + 26, with: le16(1))
        let monotonic = try #require(reason(decreasing))
        #expect(monotonic.reason == .indexNotMonotonic(field: "wPresetBagNdx", previous: 1, value: 0))
        #expect(monotonic.location.chunk == "pdta/phdr" && monotonic.location.record == 1)
        #expect(monotonic.description.contains("pdta/phdr record 1 (byte "))

        // A terminal bag index past the bags.
        var pastEnd = good
        let phdr3 = try #require(find("phdr", in: good)) + 8
        pastEnd.replaceSubrange(phdr3 + 38 + 24..<phdr3 + 38 + 26, with: le16(500))
        #expect(reason(pastEnd)?.reason == .indexOutOfRange(field: "wPresetBagNdx", value: 500, count: 2))

        // The region limit.
        var options = SoundFontReadOptions()
        options.maximumRegionCount = 1
        #expect(reason(twoPresets.bytes(), options: options)?.reason == .limitExceeded("presets resolve to more than 1 regions"))

        // A missing file names its path and counts as unreadable input.
        do {
            _ = try SoundFontReader.read(contentsOf: "/nonexistent/bank.sf2")
            Issue.record("a missing file was read")
        } catch {
            #expect(error.isUnreadableInput)
            #expect(error.description == "/nonexistent/bank.sf2: cannot open: no such file")
        }
    }

    @Test("Strict reading turns the first warning into an error")
    func strict() throws {
        var writer = W.minimal()
        writer.instruments[0].zones[0].generators.insert(W.gen(.pan, 10), at: 0)
        writer.instruments[0].zones[0].generators.insert(W.keys(0, 10), at: 1)
        #expect(try read(writer).warnings.count == 1)
        var options = SoundFontReadOptions()
        options.strict = true
        #expect(throws: SoundFontError.self) { try read(writer, options: options) }
        do {
            _ = try read(writer, options: options)
        } catch {
            guard case .strict(let warning) = error.reason else { Issue.record("\(error)"); return }
            #expect(warning.location.chunk == "pdta/igen")
            #expect(error.description.contains("(strict mode)"))
        }
    }
}

/// Offset of the first chunk header with id `id`.
func find(_ id: String, in bytes: [UInt8]) -> Int? {
    let needle = Array(id.utf8)
    return (0...(bytes.count - 4)).first { bytes[$0..<$0 + 4].elementsEqual(needle) }
}
