import SoundFont

/// Writes small SoundFont 2 files for tests: the hydra exactly as described, generators in the
/// order given (so tests can break the ordering rules), terminal records added.
struct SF2Writer {
    struct Sample {
        var name: String
        var points: [Int16]
        /// Loop points relative to the sample's first point.
        var loop: (start: Int, end: Int)? = nil
        var sampleRate = 22_050
        var originalPitch: UInt8 = 60
        var pitchCorrection: Int8 = 0
        /// `sfSampleType`: 1 mono, 2 right, 4 left, 8 linked, 0x8000 ROM.
        var type: UInt16 = 1
        var link: UInt16 = 0
        /// Absolute header points to write instead of the computed ones (for damaged headers).
        var rawPoints: (start: Int, end: Int, loopStart: Int, loopEnd: Int)? = nil
    }

    /// A zone: raw generator records (operator, amount) and modulators, in file order.
    struct Zone {
        var generators: [(UInt16, UInt16)] = []
        var modulators: [SoundFontModulator] = []

        init(_ generators: [(UInt16, UInt16)] = [], modulators: [SoundFontModulator] = []) {
            self.generators = generators
            self.modulators = modulators
        }
    }

    struct Instrument {
        var name: String
        var zones: [Zone]
    }

    struct Preset {
        var name: String
        var program: UInt16 = 0
        var bank: UInt16 = 0
        var zones: [Zone]
    }

    var name: String? = "Test bank"
    var version: (major: UInt16, minor: UInt16)? = (2, 4)
    var samples: [Sample] = []
    var instruments: [Instrument] = []
    var presets: [Preset] = []
    /// Low bytes of 24-bit samples: `sm24` gets one per point of `smpl`.
    var lowByte: ((Int) -> UInt8)? = nil
    /// An extra INFO chunk of odd size written without its pad byte, to misalign `smpl`.
    var unpaddedOddInfoChunk = false
    /// SoundFont 3: each sample's Ogg Vorbis stream, back to back in `smpl`; the headers give
    /// byte ranges and loops relative to the decoded sample, and the type gets bit 0x10.
    var vorbisStreams: [[UInt8]]? = nil
    /// Write odd-sized `smpl` data and its `sdta` list without pad bytes (as MuseScore's
    /// SoundFont 3 banks are), adding one stray byte after the streams when needed.
    var unpaddedOddSampleData = false

    // MARK: Generator helpers

    static func gen(_ g: SoundFontGenerator, _ value: Int) -> (UInt16, UInt16) {
        (UInt16(g.rawValue), UInt16(bitPattern: Int16(value)))
    }

    static func keys(_ lo: Int, _ hi: Int) -> (UInt16, UInt16) {
        (UInt16(SoundFontGenerator.keyRange.rawValue), UInt16(lo | hi << 8))
    }

    static func velocities(_ lo: Int, _ hi: Int) -> (UInt16, UInt16) {
        (UInt16(SoundFontGenerator.velocityRange.rawValue), UInt16(lo | hi << 8))
    }

    static func instrument(_ i: Int) -> (UInt16, UInt16) { (UInt16(SoundFontGenerator.instrument.rawValue), UInt16(i)) }
    static func sample(_ i: Int) -> (UInt16, UInt16) { (UInt16(SoundFontGenerator.sampleID.rawValue), UInt16(i)) }

    // MARK: Writing

    /// Where each sample's points start in `smpl` (each sample is followed by 46 zero points).
    var sampleStarts: [Int] {
        var starts: [Int] = []
        var at = 0
        for s in samples {
            starts.append(at)
            at += s.points.count + 46
        }
        return starts
    }

    func bytes() -> [UInt8] {
        var info: [UInt8] = []
        if let version { info += chunk("ifil", le16(version.major) + le16(version.minor)) }
        if let name { info += chunk("INAM", zeroTerminated(name)) }
        info += chunk("isng", zeroTerminated("EMU8000"))
        if unpaddedOddInfoChunk {
            info += Array("ICMT".utf8) + le32(3) + Array("odd".utf8)
        }
        var points: [Int16] = []
        for s in samples { points += s.points + [Int16](repeating: 0, count: 46) }
        var sdta = chunk("smpl", points.flatMap { le16(UInt16(bitPattern: $0)) })
        var streamStarts: [Int] = []
        if let vorbisStreams {
            var data: [UInt8] = []
            for stream in vorbisStreams {
                streamStarts.append(data.count)
                data += stream
            }
            streamStarts.append(data.count)
            if unpaddedOddSampleData {
                if data.count % 2 == 0 { data.append(0x55) }
                sdta = Array("smpl".utf8) + le32(UInt32(data.count)) + data
            } else {
                sdta = chunk("smpl", data)
            }
        }
        if let lowByte { sdta += chunk("sm24", (0..<points.count).map(lowByte)) }

        var phdr: [UInt8] = [], pbag: [UInt8] = [], pmod: [UInt8] = [], pgen: [UInt8] = []
        for p in presets {
            phdr += name20(p.name) + le16(p.program) + le16(p.bank) + le16(UInt16(pbag.count / 4)) + le32(0) + le32(0) + le32(0)
            for z in p.zones {
                pbag += le16(UInt16(pgen.count / 4)) + le16(UInt16(pmod.count / 10))
                for (op, amount) in z.generators { pgen += le16(op) + le16(amount) }
                for m in z.modulators { pmod += modulator(m) }
            }
        }
        phdr += name20("EOP") + le16(0) + le16(0) + le16(UInt16(pbag.count / 4)) + le32(0) + le32(0) + le32(0)
        pbag += le16(UInt16(pgen.count / 4)) + le16(UInt16(pmod.count / 10))
        pmod += [UInt8](repeating: 0, count: 10)
        pgen += [UInt8](repeating: 0, count: 4)

        var inst: [UInt8] = [], ibag: [UInt8] = [], imod: [UInt8] = [], igen: [UInt8] = []
        for i in instruments {
            inst += name20(i.name) + le16(UInt16(ibag.count / 4))
            for z in i.zones {
                ibag += le16(UInt16(igen.count / 4)) + le16(UInt16(imod.count / 10))
                for (op, amount) in z.generators { igen += le16(op) + le16(amount) }
                for m in z.modulators { imod += modulator(m) }
            }
        }
        inst += name20("EOI") + le16(UInt16(ibag.count / 4))
        ibag += le16(UInt16(igen.count / 4)) + le16(UInt16(imod.count / 10))
        imod += [UInt8](repeating: 0, count: 10)
        igen += [UInt8](repeating: 0, count: 4)

        var shdr: [UInt8] = []
        for (i, (s, start)) in zip(samples, sampleStarts).enumerated() {
            let end = start + s.points.count
            var p = (start: start, end: end, loopStart: start + (s.loop?.start ?? 0), loopEnd: start + (s.loop?.end ?? s.points.count))
            var type = s.type
            if vorbisStreams != nil {
                p = (streamStarts[i], streamStarts[i + 1], s.loop?.start ?? 0, s.loop?.end ?? s.points.count)
                type |= 0x10
            }
            if let raw = s.rawPoints { p = raw }
            shdr += name20(s.name) + le32(UInt32(p.start)) + le32(UInt32(p.end)) + le32(UInt32(p.loopStart)) + le32(UInt32(p.loopEnd))
            shdr += le32(UInt32(s.sampleRate)) + [s.originalPitch, UInt8(bitPattern: s.pitchCorrection)] + le16(s.link) + le16(type)
        }
        shdr += name20("EOS") + [UInt8](repeating: 0, count: 26)

        let pdta = chunk("phdr", phdr) + chunk("pbag", pbag) + chunk("pmod", pmod) + chunk("pgen", pgen)
            + chunk("inst", inst) + chunk("ibag", ibag) + chunk("imod", imod) + chunk("igen", igen) + chunk("shdr", shdr)
        let sdtaList = unpaddedOddSampleData ? Array("LIST".utf8) + le32(UInt32(4 + sdta.count)) + Array("sdta".utf8) + sdta
            : list("sdta", sdta)
        let body = Array("sfbk".utf8) + list("INFO", info) + sdtaList + list("pdta", pdta)
        return Array("RIFF".utf8) + le32(UInt32(body.count)) + body
    }

    func modulator(_ m: SoundFontModulator) -> [UInt8] {
        le16(m.source) + le16(m.destination) + le16(UInt16(bitPattern: m.amount)) + le16(m.amountSource) + le16(m.transform)
    }

    func chunk(_ id: String, _ data: [UInt8]) -> [UInt8] {
        Array(id.utf8) + le32(UInt32(data.count)) + data + (data.count % 2 == 1 ? [0] : [])
    }

    func list(_ type: String, _ data: [UInt8]) -> [UInt8] { chunk("LIST", Array(type.utf8) + data) }

    func zeroTerminated(_ s: String) -> [UInt8] {
        var bytes = Array(s.utf8) + [0]
        if bytes.count % 2 == 1 { bytes.append(0) }
        return bytes
    }

    func name20(_ s: String) -> [UInt8] {
        let bytes = Array(s.utf8.prefix(20))
        return bytes + [UInt8](repeating: 0, count: 20 - bytes.count)
    }
}

func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }

extension SF2Writer {
    /// A bank with one 100-point sine sample, one instrument playing it over all keys and one
    /// preset (0:0) playing that instrument: the base most tests change one thing in.
    static func minimal() -> SF2Writer {
        var writer = SF2Writer()
        writer.samples = [Sample(name: "sine", points: sinePoints(100), loop: (10, 90))]
        writer.instruments = [Instrument(name: "Sine", zones: [Zone([sample(0)])])]
        writer.presets = [Preset(name: "Sine", zones: [Zone([instrument(0)])])]
        return writer
    }

    static func sinePoints(_ count: Int, amplitude: Double = 12_000) -> [Int16] {
        (0..<count).map { Int16((amplitude * sin(Double($0) * 2 * .pi / 25)).rounded()) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
