/// Reads Downloadable Sounds banks (DLS Level 1 and 2, the RIFF `DLS ` form) and the DLS bank
/// an RMI file (RIFF `RMID`) may carry, and converts them into the sampler's
/// ``SoundFontBank``, as FluidSynth (through libinstpatch) and Apple's AUSampler play them.
///
/// The reader is bounded like ``SoundFontReader``: every access is checked against the chunk
/// being read, counts from the file are checked against the bytes present and the limits of
/// ``SoundFontReadOptions`` before anything is allocated, and damage becomes a
/// ``SoundFontWarning`` (repaired) or a ``SoundFontError`` (refused), never a trap.
///
/// ``SoundFontReader`` hands DLS forms here, so every place that opens a SoundFont opens a DLS
/// bank as well: open a bank file or an array with ``SoundFontReader``, which maps the file
/// and names it in errors once for both formats.
public enum DLSReader {
    /// True when `raw` starts with a RIFF `DLS ` form.
    public static func isDLS(_ raw: UnsafeRawBufferPointer) -> Bool {
        raw.count >= 12 && raw.fourCCEquals(0, "RIFF") && raw.fourCCEquals(8, "DLS ")
    }

    /// True when `raw` starts with a RIFF `RMID` form (a MIDI file wrapped in RIFF).
    public static func isRMID(_ raw: UnsafeRawBufferPointer) -> Bool {
        raw.count >= 12 && raw.fourCCEquals(0, "RIFF") && raw.fourCCEquals(8, "RMID")
    }

    /// The byte range of the DLS form an RMI file embeds (a `RIFF DLS ` chunk, or a `LIST DLS `
    /// as some writers store it), nil when it embeds none.
    public static func embeddedBankRange(_ raw: UnsafeRawBufferPointer) -> Range<Int>? {
        guard isRMID(raw) else { return nil }
        let end = min(raw.count, 8 + raw.u32le(4))
        var offset = 12
        while end - offset >= 12 {
            let size = raw.u32le(offset + 4)
            if (raw.fourCCEquals(offset, "RIFF") || raw.fourCCEquals(offset, "LIST")) && raw.fourCCEquals(offset + 8, "DLS ") {
                return offset..<min(end, offset + 8 + size)
            }
            let next = offset + 8 + size + (size & 1)
            guard next > offset else { break }
            offset = next
        }
        return nil
    }

    /// True when the file at `path` is an RMI file carrying a DLS bank; false when it is not,
    /// or cannot be read (reading it as a MIDI file reports that).
    public static func hasEmbeddedBank(contentsOf path: String) -> Bool {
        guard let mapping = try? MappedFile(path: path, maximumSize: 1 << 32) else { return false }
        return embeddedBankRange(mapping.bytes) != nil
    }

    /// Reads the DLS collection in `raw` (a DLS form, or an RMI file carrying one) as stored,
    /// without converting it.
    public static func collection(_ raw: UnsafeRawBufferPointer, options: SoundFontReadOptions = SoundFontReadOptions()) throws(SoundFontError) -> DLSCollection {
        let whole = SoundFontLocation(chunk: nil, offset: 0)
        guard raw.count > 0 else { throw SoundFontError(location: whole, reason: .emptyFile) }
        guard raw.count <= options.maximumFileSize else {
            throw SoundFontError(location: whole, reason: .limitExceeded("file is \(raw.count) bytes, more than the \(options.maximumFileSize) allowed"))
        }
        if isRMID(raw) {
            guard let range = embeddedBankRange(raw) else {
                throw SoundFontError(location: SoundFontLocation(chunk: "RIFF", offset: 0), reason: .malformed(what: "an RMI file without a DLS bank: it holds a MIDI song only"))
            }
            // Offsets stay relative to the whole file, so messages point at the right bytes.
            var parser = DLSParser(bytes: raw, options: options, start: range.lowerBound, end: range.upperBound)
            return try parser.parse()
        }
        guard isDLS(raw) else {
            let found = raw.count >= 12 ? "'\(raw.printableFourCC(0))' ... '\(raw.printableFourCC(8))'" : "only \(raw.count) bytes"
            throw SoundFontError(location: whole, reason: .notASoundFont(found: found))
        }
        var parser = DLSParser(bytes: raw, options: options, start: 0, end: raw.count)
        return try parser.parse()
    }

    /// Reads and converts a DLS bank (or an RMI file carrying one) from bytes in memory; the
    /// samples are copied into the bank. `name` is the bank's name when it has no `INAM`.
    public static func read(_ raw: UnsafeRawBufferPointer, name: String = "DLS", options: SoundFontReadOptions = SoundFontReadOptions()) throws(SoundFontError) -> SoundFontFile {
        let dls = try collection(raw, options: options)
        return try DLSConverter.convert(dls, bytes: raw, defaultName: name, options: options)
    }
}

extension UnsafeRawBufferPointer {
    func fourCCEquals(_ at: Int, _ id: StaticString) -> Bool {
        guard at >= 0, at + 4 <= count else { return false }
        let p = id.utf8Start
        return (0..<4).allSatisfy { self[at + $0] == p[$0] }
    }

    func printableFourCC(_ at: Int) -> String {
        var s = ""
        for i in 0..<4 {
            let b = self[at + i]
            s += (0x20..<0x7F).contains(b) ? String(UnicodeScalar(b)) : "\\x" + (b < 16 ? "0" : "") + String(b, radix: 16)
        }
        return s
    }
}

/// Walks a DLS form with the SoundFont reader's bounded chunk walker (and its warnings).
struct DLSParser {
    var riff: BankParser
    let start: Int
    let end: Int
    var regionCount = 0
    var isLevel2 = false

    init(bytes: UnsafeRawBufferPointer, options: SoundFontReadOptions, start: Int, end: Int) {
        riff = BankParser(bytes: bytes, options: options)
        self.start = start
        self.end = end
    }

    var bytes: UnsafeRawBufferPointer { riff.bytes }
    var options: SoundFontReadOptions { riff.options }

    func location(_ chunk: Chunk) -> SoundFontLocation { SoundFontLocation(chunk: chunk.path, offset: chunk.dataOffset - 8) }

    /// The children of a LIST chunk, or nil (with a warning) when it is too short for a type.
    mutating func listChildren(_ list: Chunk) throws(SoundFontError) -> (type: String, children: [Chunk])? {
        guard list.size >= 4 else {
            try riff.warn(location(list), "LIST chunk of \(list.size) bytes has no type; ignored")
            return nil
        }
        let type = riff.fourCC(list.dataOffset)
        let children = try riff.chunks(from: list.dataOffset + 4, to: list.dataOffset + list.size, parent: list.path == "LIST" ? type : "\(list.path.dropLast(4))\(type)")
        return (type, children)
    }

    mutating func parse() throws(SoundFontError) -> DLSCollection {
        var formEnd = start + 8 + riff.u32(start + 4)
        if formEnd > end {
            try riff.warn(SoundFontLocation(chunk: "RIFF", offset: start),
                          "RIFF chunk declares \(formEnd - start - 8) bytes but \(end - start - 8) are present: the file is truncated")
            formEnd = end
        }
        let top = try riff.chunks(from: start + 12, to: formEnd, parent: "")
        var collection = DLSCollection(version: nil, name: nil, copyright: nil, software: nil, comments: nil,
                                       instruments: [], waves: [], poolTable: [], isLevel2: false, warnings: [])
        var cueOffsets: [Int] = []
        var sawPool = false, sawInstruments = false, sawTable = false
        for chunk in top {
            switch chunk.id {
            case "colh", "msyn", "dlid", "pgal": break
            case "vers":
                if chunk.size >= 8 {
                    collection.version = (UInt32(riff.u32(chunk.dataOffset)), UInt32(riff.u32(chunk.dataOffset + 4)))
                }
            case "ptbl":
                guard !sawTable else { try riff.warn(location(chunk), "second pool table ignored"); continue }
                sawTable = true
                cueOffsets = try poolTable(chunk)
            case "LIST":
                guard let (type, children) = try listChildren(chunk) else { continue }
                switch type {
                case "lins":
                    guard !sawInstruments else { try riff.warn(location(chunk), "second instrument list ignored"); continue }
                    sawInstruments = true
                    for child in children {
                        guard child.id == "LIST", let (childType, parts) = try listChildren(child), childType == "ins " else {
                            try riff.warn(location(child), "unexpected chunk in the instrument list ignored")
                            continue
                        }
                        if let instrument = try instrument(child, parts) { collection.instruments.append(instrument) }
                    }
                case "wvpl":
                    guard !sawPool else { try riff.warn(location(chunk), "second wave pool ignored"); continue }
                    sawPool = true
                    let poolStart = chunk.dataOffset + 4
                    for child in children {
                        guard child.id == "LIST", let (childType, parts) = try listChildren(child), childType == "wave" else {
                            try riff.warn(location(child), "unexpected chunk in the wave pool ignored")
                            continue
                        }
                        if var wave = try wave(child, parts) {
                            wave.poolOffset = child.dataOffset - 8 - poolStart
                            collection.waves.append(wave)
                        } else {
                            // Keep the pool's numbering: an unusable wave still takes its place.
                            collection.waves.append(DLSWave(name: "", formatTag: 0, channels: 0, sampleRate: 0, bitsPerSample: 0, frameCount: 0,
                                                            dataOffset: 0, poolOffset: child.dataOffset - 8 - poolStart, sampleInfo: nil))
                        }
                    }
                case "INFO":
                    for child in children where child.size > 0 {
                        let text = riff.string(at: child.dataOffset, length: child.size)
                        switch child.id {
                        case "INAM": collection.name = text
                        case "ICOP": collection.copyright = text
                        case "ISFT": collection.software = text
                        case "ICMT": collection.comments = text
                        default: break
                        }
                    }
                default:
                    try riff.warn(location(chunk), "unknown list '\(type)' ignored")
                }
            default:
                try riff.warn(location(chunk), "unknown chunk '\(chunk.id)' ignored")
            }
        }
        guard sawInstruments else { throw SoundFontError(location: SoundFontLocation(chunk: "RIFF", offset: start), reason: .missingChunk("LIST lins")) }
        guard sawPool else { throw SoundFontError(location: SoundFontLocation(chunk: "RIFF", offset: start), reason: .missingChunk("LIST wvpl")) }
        if !sawTable {
            // FluidSynth refuses such banks; the waves in order are the only sensible reading.
            try riff.warn(SoundFontLocation(chunk: "RIFF", offset: start), "no pool table (ptbl): regions index the waves in file order")
            cueOffsets = collection.waves.map(\.poolOffset)
        }
        var byOffset: [Int: Int] = [:]
        for (i, wave) in collection.waves.enumerated() where byOffset[wave.poolOffset] == nil { byOffset[wave.poolOffset] = i }
        collection.poolTable = cueOffsets.map { byOffset[$0] }
        collection.isLevel2 = isLevel2
        collection.warnings = riff.warnings
        if riff.suppressedWarnings > 0 {
            collection.warnings.append(SoundFontWarning(location: SoundFontLocation(chunk: nil, offset: 0), message: "\(riff.suppressedWarnings) more warnings not shown"))
        }
        return collection
    }

    mutating func poolTable(_ chunk: Chunk) throws(SoundFontError) -> [Int] {
        guard chunk.size >= 8 else { throw SoundFontError(location: location(chunk), reason: .badChunkSize(size: chunk.size, recordSize: 8)) }
        let headerSize = riff.u32(chunk.dataOffset)
        let cues = riff.u32(chunk.dataOffset + 4)
        guard headerSize >= 8, headerSize <= chunk.size else {
            throw SoundFontError(location: location(chunk), reason: .malformed(what: "pool table header size \(headerSize) is outside 8...\(chunk.size)"))
        }
        guard cues <= (chunk.size - headerSize) / 4 else {
            throw SoundFontError(location: location(chunk), reason: .malformed(what: "pool table declares \(cues) cues, room for \((chunk.size - headerSize) / 4)"))
        }
        guard cues <= options.maximumRecordsPerChunk else { throw SoundFontError(location: location(chunk), reason: .limitExceeded("\(cues) pool table cues")) }
        return (0..<cues).map { riff.u32(chunk.dataOffset + headerSize + $0 * 4) }
    }

    mutating func instrument(_ list: Chunk, _ parts: [Chunk]) throws(SoundFontError) -> DLSInstrument? {
        guard let header = parts.first(where: { $0.id == "insh" }) else {
            try riff.warn(location(list), "instrument without a header (insh) ignored")
            return nil
        }
        guard header.size >= 12 else {
            try riff.warn(location(header), "instrument header of \(header.size) bytes (12 expected); instrument ignored")
            return nil
        }
        let ulBank = UInt32(riff.u32(header.dataOffset + 4))
        var instrument = DLSInstrument(name: "", bank: ulBank & 0x3FFF, isDrumKit: ulBank & 0x8000_0000 != 0,
                                       program: UInt32(riff.u32(header.dataOffset + 8)), regions: [])
        for part in parts where part.id == "LIST" {
            guard let (type, children) = try listChildren(part) else { continue }
            switch type {
            case "lrgn":
                for child in children {
                    guard child.id == "LIST", let (regionType, pieces) = try listChildren(child), regionType == "rgn " || regionType == "rgn2" else {
                        try riff.warn(location(child), "unexpected chunk in the region list ignored")
                        continue
                    }
                    if regionType == "rgn2" { isLevel2 = true }
                    if let region = try region(child, pieces) {
                        regionCount += 1
                        guard regionCount <= options.maximumRegionCount else {
                            throw SoundFontError(location: location(child), reason: .limitExceeded("more than \(options.maximumRegionCount) regions"))
                        }
                        instrument.regions.append(region)
                    }
                }
            case "lart", "lar2":
                instrument.connections += try articulation(type, children)
            case "INFO":
                if let name = children.first(where: { $0.id == "INAM" }) { instrument.name = riff.string(at: name.dataOffset, length: name.size) }
            default: break
            }
        }
        return instrument
    }

    mutating func region(_ list: Chunk, _ pieces: [Chunk]) throws(SoundFontError) -> DLSRegion? {
        guard let header = pieces.first(where: { $0.id == "rgnh" }), header.size >= 12 else {
            try riff.warn(location(list), "region without a 12-byte header (rgnh) ignored")
            return nil
        }
        guard let link = pieces.first(where: { $0.id == "wlnk" }), link.size >= 12 else {
            try riff.warn(location(list), "region without a 12-byte wave link (wlnk) ignored")
            return nil
        }
        let h = header.dataOffset, l = link.dataOffset
        var region = DLSRegion(keyLow: UInt16(riff.u16(h)), keyHigh: UInt16(riff.u16(h + 2)),
                               velocityLow: UInt16(riff.u16(h + 4)), velocityHigh: UInt16(riff.u16(h + 6)),
                               options: UInt16(riff.u16(h + 8)), keyGroup: UInt16(riff.u16(h + 10)),
                               layer: header.size >= 14 ? UInt16(riff.u16(h + 12)) : 0,
                               waveIndex: UInt32(riff.u32(l + 8)), linkOptions: UInt16(riff.u16(l)),
                               phaseGroup: UInt16(riff.u16(l + 2)), channel: UInt32(riff.u32(l + 4)))
        for piece in pieces {
            if piece.id == "wsmp" {
                region.sampleInfo = try sampleInfo(piece)
            } else if piece.id == "LIST", let (type, children) = try listChildren(piece), type == "lart" || type == "lar2" {
                region.connections += try articulation(type, children)
            }
        }
        return region
    }

    /// The connection blocks of an articulation list's `art1`/`art2` chunks.
    mutating func articulation(_ type: String, _ children: [Chunk]) throws(SoundFontError) -> [DLSConnection] {
        if type == "lar2" { isLevel2 = true }
        var connections: [DLSConnection] = []
        for chunk in children {
            guard chunk.id == "art1" || chunk.id == "art2" else {
                try riff.warn(location(chunk), "unexpected chunk '\(chunk.id)' in an articulation list ignored")
                continue
            }
            if chunk.id == "art2" { isLevel2 = true }
            guard chunk.size >= 8 else { throw SoundFontError(location: location(chunk), reason: .badChunkSize(size: chunk.size, recordSize: 8)) }
            let headerSize = riff.u32(chunk.dataOffset)
            let count = riff.u32(chunk.dataOffset + 4)
            guard headerSize >= 8, headerSize <= chunk.size else {
                throw SoundFontError(location: location(chunk), reason: .malformed(what: "articulation header size \(headerSize) is outside 8...\(chunk.size)"))
            }
            guard count <= (chunk.size - headerSize) / 12 else {
                throw SoundFontError(location: location(chunk), reason: .malformed(what: "articulation declares \(count) connection blocks, room for \((chunk.size - headerSize) / 12)"))
            }
            let base = chunk.dataOffset + headerSize
            for i in 0..<count {
                let p = base + i * 12
                connections.append(DLSConnection(source: UInt16(riff.u16(p)), control: UInt16(riff.u16(p + 2)),
                                                 destination: UInt16(riff.u16(p + 4)), transform: UInt16(riff.u16(p + 6)),
                                                 scale: Int32(truncatingIfNeeded: riff.u32(p + 8))))
            }
        }
        return connections
    }

    mutating func sampleInfo(_ chunk: Chunk) throws(SoundFontError) -> DLSSampleInfo? {
        guard chunk.size >= 20 else {
            try riff.warn(location(chunk), "wsmp chunk of \(chunk.size) bytes (20 at least) ignored")
            return nil
        }
        let p = chunk.dataOffset
        let headerSize = riff.u32(p)
        guard headerSize >= 20, headerSize <= chunk.size else {
            try riff.warn(location(chunk), "wsmp header size \(headerSize) is outside 20...\(chunk.size); chunk ignored")
            return nil
        }
        var info = DLSSampleInfo(unityNote: UInt16(riff.u16(p + 4)), fineTune: Int16(truncatingIfNeeded: riff.u16(p + 6)),
                                 gain: Int32(truncatingIfNeeded: riff.u32(p + 8)), options: UInt32(riff.u32(p + 12)))
        let loops = riff.u32(p + 16)
        let room = (chunk.size - headerSize) / 16
        if loops > room {
            try riff.warn(location(chunk), "wsmp declares \(loops) loops, room for \(room); the ones present are read")
        }
        for i in 0..<min(loops, room, 16) {
            let q = p + headerSize + i * 16
            info.loops.append(DLSLoop(type: UInt32(riff.u32(q + 4)), start: UInt32(riff.u32(q + 8)), length: UInt32(riff.u32(q + 12))))
        }
        return info
    }

    mutating func wave(_ list: Chunk, _ parts: [Chunk]) throws(SoundFontError) -> DLSWave? {
        guard let format = parts.first(where: { $0.id == "fmt " }), format.size >= 16 else {
            try riff.warn(location(list), "wave without a format (fmt ) chunk; regions using it are ignored")
            return nil
        }
        guard let data = parts.first(where: { $0.id == "data" }) else {
            try riff.warn(location(list), "wave without a data chunk; regions using it are ignored")
            return nil
        }
        let f = format.dataOffset
        let tag = UInt16(riff.u16(f)), channels = riff.u16(f + 2), rate = riff.u32(f + 4), bits = riff.u16(f + 14)
        var wave = DLSWave(name: "", formatTag: tag, channels: channels, sampleRate: rate, bitsPerSample: bits,
                           frameCount: 0, dataOffset: data.dataOffset, poolOffset: 0, sampleInfo: nil)
        guard tag == 1, bits == 8 || bits == 16, (1...8).contains(channels) else {
            try riff.warn(location(format), "wave format \(tag) with \(bits) bits and \(channels) channels is not 8 or 16-bit PCM; regions using it are ignored")
            return nil
        }
        if rate == 0 {
            try riff.warn(location(format), "sample rate 0 read as 44,100 Hz")
            wave.sampleRate = 44_100
        }
        wave.frameCount = data.size / (channels * bits / 8)
        for part in parts {
            if part.id == "wsmp" {
                wave.sampleInfo = try sampleInfo(part)
            } else if part.id == "LIST", let (type, children) = try listChildren(part), type == "INFO",
                      let name = children.first(where: { $0.id == "INAM" }) {
                wave.name = riff.string(at: name.dataOffset, length: name.size)
            }
        }
        return wave
    }
}
