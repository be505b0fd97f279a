#if canImport(Glibc)
import Glibc
#endif

/// Limits that keep memory and time bounded on hostile input, and the strictness of reading.
///
/// Record counts are derived from chunk sizes; a chunk may hold at most
/// ``maximumRecordsPerChunk`` records. Since bag, generator, instrument and sample indices are
/// 16-bit words in the file format, real banks stay below 65,536 records in the chunks they
/// index; the cap only matters for hand-made or damaged files.
public struct SoundFontReadOptions: Sendable {
    /// Refuse files larger than this many bytes (default 4 GiB, the most a RIFF file can hold).
    public var maximumFileSize: Int = 1 << 32
    /// Refuse a hydra chunk (`phdr`, `pbag`, `pmod`, `pgen`, `inst`, `ibag`, `imod`, `igen`,
    /// `shdr`) with more records than this (default 1,048,576).
    public var maximumRecordsPerChunk: Int = 1 << 20
    /// Refuse a bank whose presets resolve to more regions than this in total (default
    /// 1,048,576). A preset zone multiplies the zones of the instrument it names, so a small
    /// hostile file could otherwise ask for billions.
    public var maximumRegionCount: Int = 1 << 20
    /// Keep at most this many warnings; further ones are counted in a final summary warning.
    public var maximumWarningCount: Int = 1000
    /// Make every warning an error.
    public var strict = false
    /// Decode at most this many points of one compressed (SoundFont 3) sample (default 2^25,
    /// 12.7 minutes at 44.1 kHz); a longer stream is cut there, so a hostile stream cannot make
    /// the decoder allocate without bound.
    public var maximumDecodedFramesPerSample: Int = 1 << 25
    /// Threads that decode compressed samples at once (default: one per online core).
    public var decodingThreadCount: Int?

    /// Default limits, tolerant reading.
    public init() {}
}

/// A SoundFont version number (`ifil`, `iver`).
public struct SoundFontVersion: Hashable, Sendable, CustomStringConvertible {
    /// Major version: 2 for SoundFont 2 banks.
    public var major: Int
    /// Minor version: 1 for 2.01, 4 for 2.04.
    public var minor: Int

    /// Creates a version.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public var description: String {
        minor < 10 ? "\(major).0\(minor)" : "\(major).\(minor)"
    }
}

/// The bank's `INFO` list: its version and descriptive strings.
public struct SoundFontInfo: Hashable, Sendable {
    /// The format version (`ifil`); 2.01 is assumed when the chunk is missing.
    public var version = SoundFontVersion(major: 2, minor: 1)
    /// The bank's name (`INAM`).
    public var name: String?
    /// The sound engine the bank was made for (`isng`), such as "EMU8000".
    public var soundEngine: String?
    /// The ROM the bank's ROM samples live in (`irom`).
    public var romName: String?
    /// The ROM's version (`iver`).
    public var romVersion: SoundFontVersion?
    /// Creation date (`ICRD`).
    public var creationDate: String?
    /// Sound designers and engineers (`IENG`).
    public var engineers: String?
    /// The product the bank was made for (`IPRD`).
    public var product: String?
    /// Copyright notice (`ICOP`).
    public var copyright: String?
    /// Comments (`ICMT`).
    public var comments: String?
    /// The tools that created and last edited the bank (`ISFT`).
    public var software: String?

    /// An empty description (version 2.01, no strings).
    public init() {}
}

/// A bank as read from a file: the resolved bank, its `INFO` list, and what the reader
/// repaired on the way.
public struct SoundFontFile: Sendable {
    /// The presets, resolved regions, sample headers and sample memory.
    public let bank: SoundFontBank
    /// Version and descriptive strings.
    public let info: SoundFontInfo
    /// Everything the reader tolerated or repaired, in file order.
    public let warnings: [SoundFontWarning]
    /// Bytes of sample data: the `smpl` chunk plus the `sm24` chunk when it is used (for a
    /// DLS bank, the `data` chunks of the waves its regions play).
    public let sampleDataByteCount: Int
    /// The file format the bank was read from.
    public internal(set) var format: SoundFontFileFormat = .soundFont

    /// The format's name for people: "SoundFont 2.04", "SoundFont 3.01", "DLS Level 2".
    public var formatDescription: String {
        switch format {
        case .soundFont: return "SoundFont \(info.version)"
        case .dls: return "DLS Level \(info.version.major)"
        }
    }

    /// True when the bank's samples have 24-bit resolution (an `sm24` chunk was used).
    public var is24Bit: Bool { bank.sampleData.lowBytes != nil }
    /// How many samples are Ogg Vorbis compressed (SoundFont 3).
    public var compressedSampleCount: Int { bank.compressedSamples?.compressedCount ?? 0 }
    /// Bytes of Ogg Vorbis data the compressed samples span.
    public var compressedByteCount: Int { bank.compressedSamples?.compressedByteCount ?? 0 }
}

/// The file formats a ``SoundFontFile`` is read from.
public enum SoundFontFileFormat: Hashable, Sendable {
    /// A SoundFont 2 or 3 bank (RIFF `sfbk`).
    case soundFont
    /// A Downloadable Sounds Level 1 or 2 bank (RIFF `DLS `), standing alone or carried in an
    /// RMI file; ``SoundFontInfo/version`` holds the level (1.0 or 2.0).
    case dls
}

/// Reads SoundFont 2 banks (versions 2.00 to 2.04) and SoundFont 3 banks (version 3.x): the
/// RIFF `sfbk` form with its `INFO`, `sdta` (`smpl`, optional `sm24`) and `pdta` (the hydra)
/// lists, validated against the 2.04 specification and resolved into ``SoundFontRegion``s at
/// load time (sections 8.5, 9.4, 9.5).
///
/// A SoundFont 3 bank's samples flagged compressed (sample type bit 0x10) are Ogg Vorbis
/// streams: their start and end are byte offsets into `smpl` and their loop points count from
/// the decoded sample's first point, as FluidSynth and MuseScore read them. Reading does not
/// decode them: ``SoundFontBank/compressedSamples`` does, on request.
///
/// Reading files maps them into memory read-only: the sample data is not copied (unless the
/// `smpl` data starts at an odd byte offset, where it is copied to aligned memory), so opening
/// a 141 MB bank costs the hydra's parse, a few milliseconds. The mapping lives as long as the
/// ``SoundFontBank``. Replacing a bank file while a bank maps it is fine (the mapping keeps the
/// old file); truncating it in place is not (reading the lost pages would raise SIGBUS).
///
/// The reader never reads outside the bytes it was given, never allocates by a count from the
/// file before checking it against the bytes present and the limits of
/// ``SoundFontReadOptions``, and always terminates. Damage it can work around becomes a
/// ``SoundFontWarning`` (chunk, record index, byte offset and what was done); damage that
/// leaves the bank unusable becomes a ``SoundFontError``.
///
/// What is repaired, following FluidSynth where the specification leaves it open:
/// - a RIFF or LIST size past the end of the file or of its parent is cut to what is there;
/// - a missing `INFO` list or `ifil` chunk (2.01 assumed), an `sm24` chunk of the wrong size or
///   in a bank older than 2.04 (ignored, the samples play in 16 bits);
/// - generators out of order (a key range that is not first, a velocity range after anything but
///   a key range), after the zone's instrument or sample, undefined, or not allowed at the
///   preset level (sample offsets, key number, velocity, sample modes, exclusive class,
///   overriding root key): ignored; a repeated generator: the last value wins;
/// - global zones anywhere but first, zones naming a missing instrument or sample or an
///   unusable sample, empty key or velocity ranges: the zone is ignored;
/// - modulators with invalid sources, destinations or transforms, linked modulators (not
///   supported), and modulators identical to an earlier one of the same zone: ignored;
/// - an odd-sized chunk without its pad byte (the next chunk follows at once): read as it is;
/// - samples: ROM samples, compressed samples in a SoundFont 2 bank and samples whose start and
///   end are not inside `smpl` are unusable (zones using them are ignored); loop points outside the
///   sample are moved to its start or end, reversed loop points swapped, a sample rate of 0
///   becomes 44,100 Hz, an original pitch above 127 becomes 60 (the specification's rule), and
///   a stereo link to a missing sample or to itself is dropped.
///
/// Not repaired, and not reported: the specification's advice that loops keep 8 points away
/// from the sample's ends and last 32 points. Many real banks ignore it, and moving their
/// loops would change how they sound.
///
/// Generator values are stored as summed from the file, without clamping to the
/// specification's ranges: modulators add to them while a note plays, and the specification
/// clamps the final sum, so the sampler clamps (see ``SoundFontGenerator/specificationRange``).
public enum SoundFontReader {
    /// Reads and resolves the bank at `path`, memory-mapping the file.
    public static func read(contentsOf path: String, options: SoundFontReadOptions = SoundFontReadOptions()) throws(SoundFontError) -> SoundFontFile {
        let mapping: MappedFile
        do {
            mapping = try MappedFile(path: path, maximumSize: options.maximumFileSize)
        } catch var error {
            error.path = path
            throw error
        }
        let fileName = path.split(separator: "/").last.map(String.init) ?? path
        if DLSReader.isDLS(mapping.bytes) || DLSReader.isRMID(mapping.bytes) {
            do {
                return try DLSReader.read(mapping.bytes, name: fileName, options: options)
            } catch var error {
                error.path = path
                throw error
            }
        }
        do {
            let parsed = try parse(mapping.bytes, defaultName: fileName, options: options)
            return parsed.makeFile(bytes: mapping.bytes, mapping: mapping, options: options)
        } catch var error {
            error.path = path
            throw error
        }
    }

    /// Reads and resolves a bank from bytes in memory; the sample data is copied into the bank.
    /// `name` is the bank's name when it has no `INAM`.
    public static func read(_ bytes: [UInt8], name: String = "SoundFont", options: SoundFontReadOptions = SoundFontReadOptions()) throws(SoundFontError) -> SoundFontFile {
        let result: Result<SoundFontFile, SoundFontError> = bytes.withUnsafeBytes { raw in
            Result { () throws(SoundFontError) in try read(raw, name: name, options: options) }
        }
        return try result.get()
    }

    /// Reads and resolves a bank from a raw buffer; the sample data is copied into the bank, so
    /// the buffer may go away afterwards.
    public static func read(_ raw: UnsafeRawBufferPointer, name: String = "SoundFont", options: SoundFontReadOptions = SoundFontReadOptions()) throws(SoundFontError) -> SoundFontFile {
        if DLSReader.isDLS(raw) || DLSReader.isRMID(raw) {
            return try DLSReader.read(raw, name: name, options: options)
        }
        let parsed = try parse(raw, defaultName: name, options: options)
        return parsed.makeFile(bytes: raw, mapping: nil, options: options)
    }

    static func parse(_ raw: UnsafeRawBufferPointer, defaultName: String, options: SoundFontReadOptions) throws(SoundFontError) -> ParsedBank {
        var parser = BankParser(bytes: raw, options: options)
        return try parser.parse(defaultName: defaultName)
    }
}

/// The result of parsing, before the sample memory is attached.
struct ParsedBank {
    var name: String
    var info: SoundFontInfo
    var presets: [SoundFontPreset]
    var samples: [SoundFontSample]
    var warnings: [SoundFontWarning]
    /// Byte offset and count of the 16-bit words in the file.
    var wordsOffset: Int
    var wordCount: Int
    /// Byte offset of the `sm24` low bytes (as many as words), when they are used.
    var lowBytesOffset: Int?
    /// Bytes in `smpl` (SoundFont 3 samples are byte ranges of it).
    var smplByteCount: Int

    func makeFile(bytes: UnsafeRawBufferPointer, mapping: MappedFile?, options: SoundFontReadOptions) -> SoundFontFile {
        let data: SoundFontSampleData
        let storage: SoundFontBank.SampleStorage
        if let mapping, wordsOffset % MemoryLayout<Int16>.alignment == 0, isLittleEndianHost {
            let base = bytes.baseAddress.map { $0 + wordsOffset }
            let words = UnsafeBufferPointer(start: base?.assumingMemoryBound(to: Int16.self), count: wordCount)
            let low = lowBytesOffset.map { offset in
                UnsafeBufferPointer(start: bytes.baseAddress.map { ($0 + offset).assumingMemoryBound(to: UInt8.self) }, count: wordCount)
            }
            data = SoundFontSampleData(words: words, lowBytes: low)
            storage = mapping
        } else {
            // Unaligned (or big-endian) sample words cannot be used in place.
            let copy = CopiedSamples(bytes: bytes, wordsOffset: wordsOffset, wordCount: wordCount, lowBytesOffset: lowBytesOffset)
            data = copy.data
            storage = copy
        }
        var compressed: SoundFontCompressedSamples?
        if samples.contains(where: \.isCompressed) {
            // The streams are decoded from the mapping in place; a bank read from memory keeps
            // a copy of `smpl`, since the caller's buffer may go away.
            if let mapping {
                compressed = SoundFontCompressedSamples(
                    data: UnsafeRawBufferPointer(rebasing: bytes[wordsOffset..<wordsOffset + smplByteCount]),
                    owner: mapping, samples: samples, maximumFrameCount: options.maximumDecodedFramesPerSample,
                    threadCount: options.decodingThreadCount)
            } else {
                let copy = CopiedBytes(UnsafeRawBufferPointer(rebasing: bytes[wordsOffset..<wordsOffset + smplByteCount]))
                compressed = SoundFontCompressedSamples(data: copy.bytes, owner: copy, samples: samples,
                                                        maximumFrameCount: options.maximumDecodedFramesPerSample,
                                                        threadCount: options.decodingThreadCount)
            }
        }
        let bank = SoundFontBank(name: name, presets: presets, samples: samples, sampleData: data, storage: storage,
                                 compressedSamples: compressed)
        let byteCount = wordCount * 2 + (lowBytesOffset == nil ? 0 : wordCount)
        return SoundFontFile(bank: bank, info: info, warnings: warnings, sampleDataByteCount: byteCount)
    }
}

var isLittleEndianHost: Bool {
    #if _endian(little)
    return true
    #else
    return false
    #endif
}

/// A chunk found in the file: its four-character id and where its data is.
struct Chunk {
    var id: String
    /// Path for messages, such as "pdta/phdr".
    var path: String
    var dataOffset: Int
    var size: Int
}

/// Sizes of the hydra records (specification section 7).
enum RecordSize {
    static let phdr = 38, pbag = 4, pmod = 10, pgen = 4, inst = 22, ibag = 4, imod = 10, igen = 4, shdr = 46
}

/// Walks the RIFF structure and the hydra with every access bounds-checked against the chunk
/// being read, which is itself inside the buffer.
struct BankParser {
    let bytes: UnsafeRawBufferPointer
    let options: SoundFontReadOptions
    var warnings: [SoundFontWarning] = []
    var suppressedWarnings = 0

    init(bytes: UnsafeRawBufferPointer, options: SoundFontReadOptions) {
        self.bytes = bytes
        self.options = options
    }

    // MARK: Bytes

    func u16(_ at: Int) -> Int { bytes.u16le(at) }
    func u32(_ at: Int) -> Int { bytes.u32le(at) }

    func fourCC(_ at: Int) -> String {
        var s = ""
        for i in 0..<4 {
            let b = bytes[at + i]
            s += (0x20..<0x7F).contains(b) ? String(UnicodeScalar(b)) : "\\x" + (b < 16 ? "0" : "") + String(b, radix: 16)
        }
        return s
    }

    func string(at offset: Int, length: Int) -> String { bytes.fieldString(at: offset, length: length) }

    // MARK: Messages

    mutating func warn(_ location: SoundFontLocation, _ message: String) throws(SoundFontError) {
        let warning = SoundFontWarning(location: location, message: message)
        if options.strict { throw SoundFontError(location: location, reason: .strict(warning)) }
        if warnings.count < options.maximumWarningCount {
            warnings.append(warning)
        } else {
            suppressedWarnings += 1
        }
    }


    // MARK: RIFF

    /// The chunks inside `[start, end)`, each cut to the container when it claims more.
    mutating func chunks(from start: Int, to end: Int, parent: String) throws(SoundFontError) -> [Chunk] {
        var found: [Chunk] = []
        var offset = start
        while offset < end {
            guard end - offset >= 8 else {
                try warn(SoundFontLocation(chunk: parent, offset: offset), "\(end - offset) stray bytes at the end of the list ignored")
                break
            }
            let id = fourCC(offset)
            var size = u32(offset + 4)
            let path = parent.isEmpty ? id : "\(parent)/\(id)"
            if size > end - offset - 8 {
                try warn(SoundFontLocation(chunk: path, offset: offset),
                         "chunk declares \(size) bytes but only \(end - offset - 8) remain; cut to what is there")
                size = end - offset - 8
            }
            found.append(Chunk(id: id, path: path, dataOffset: offset + 8, size: size))
            offset += 8 + size
            if size & 1 == 1 && offset < end {
                // RIFF pads odd-sized chunks to an even size, but some writers forget (the
                // MuseScore SoundFont 3 banks, whose `sdta` list is odd-sized): the pad byte is
                // skipped unless a chunk header that fits follows right away and none follows
                // the pad byte. FluidSynth reads such files the same way.
                if looksLikeChunkHeader(offset, end: end) && !looksLikeChunkHeader(offset + 1, end: end) {
                    let name = id == "LIST" && size >= 4 ? "LIST \(fourCC(offset - size))" : path
                    try warn(SoundFontLocation(chunk: name, offset: offset - 8 - size),
                             "odd-sized chunk (\(size) bytes) without its pad byte; the next chunk is read right after it")
                } else {
                    offset += 1
                }
            }
            if found.count > 4096 {
                throw SoundFontError(location: SoundFontLocation(chunk: parent, offset: offset), reason: .limitExceeded("more than 4096 chunks in one list"))
            }
        }
        return found
    }

    /// A chunk id followed by a size that fits before `end`.
    func looksLikeChunkHeader(_ at: Int, end: Int) -> Bool {
        at + 8 <= end && looksLikeChunkID(at) && u32(at + 4) <= end - at - 8
    }

    /// Four ASCII letters, digits or spaces, as chunk ids are.
    func looksLikeChunkID(_ at: Int) -> Bool {
        (at..<at + 4).allSatisfy { i in
            let b = bytes[i]
            return (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == 0x20
        }
    }

    /// The list chunks of the `sfbk` form by type ("INFO", "sdta", "pdta"), first of each.
    mutating func lists(_ top: [Chunk]) throws(SoundFontError) -> [String: (Chunk, [Chunk])] {
        var lists: [String: (Chunk, [Chunk])] = [:]
        for chunk in top {
            guard chunk.id == "LIST", chunk.size >= 4 else {
                try warn(SoundFontLocation(chunk: chunk.id, offset: chunk.dataOffset - 8), "unexpected chunk '\(chunk.id)' in the sfbk form ignored")
                continue
            }
            let type = fourCC(chunk.dataOffset)
            guard ["INFO", "sdta", "pdta"].contains(type) else {
                try warn(SoundFontLocation(chunk: "LIST \(type)", offset: chunk.dataOffset - 8), "unknown list '\(type)' ignored")
                continue
            }
            if lists[type] != nil {
                try warn(SoundFontLocation(chunk: type, offset: chunk.dataOffset - 8), "second '\(type)' list ignored")
                continue
            }
            let children = try chunks(from: chunk.dataOffset + 4, to: chunk.dataOffset + chunk.size, parent: type)
            lists[type] = (chunk, children)
        }
        return lists
    }

    mutating func parse(defaultName: String) throws(SoundFontError) -> ParsedBank {
        let whole = SoundFontLocation(chunk: nil, offset: 0)
        guard bytes.count > 0 else { throw SoundFontError(location: whole, reason: .emptyFile) }
        guard bytes.count >= 12, fourCC(0) == "RIFF", fourCC(8) == "sfbk" else {
            let found = bytes.count >= 12 ? "'\(fourCC(0))' ... '\(fourCC(8))'" : "only \(bytes.count) bytes"
            throw SoundFontError(location: whole, reason: .notASoundFont(found: found))
        }
        guard bytes.count <= options.maximumFileSize else {
            throw SoundFontError(location: whole, reason: .limitExceeded("file is \(bytes.count) bytes, more than the \(options.maximumFileSize) allowed"))
        }
        var end = 8 + u32(4)
        if end > bytes.count {
            try warn(SoundFontLocation(chunk: "RIFF", offset: 0),
                     "RIFF chunk declares \(end - 8) bytes but the file holds \(bytes.count - 8): the file is truncated")
            end = bytes.count
        } else if bytes.count - end > 1 {
            try warn(SoundFontLocation(chunk: nil, offset: end), "\(bytes.count - end) bytes after the RIFF chunk ignored")
        }
        let top = try chunks(from: 12, to: end, parent: "")
        let lists = try lists(top)

        // Check everything structural before any heavy work, so damaged files fail fast.
        guard let (pdtaList, pdtaChunks) = lists["pdta"] else {
            throw SoundFontError(location: SoundFontLocation(chunk: "RIFF", offset: 0), reason: .missingChunk("LIST pdta"))
        }
        let hydra = try hydraChunks(pdtaList, pdtaChunks)
        guard let (sdtaList, sdtaChunks) = lists["sdta"] else {
            throw SoundFontError(location: SoundFontLocation(chunk: "RIFF", offset: 0), reason: .missingChunk("LIST sdta"))
        }
        guard let smpl = sdtaChunks.first(where: { $0.id == "smpl" }) else {
            throw SoundFontError(location: SoundFontLocation(chunk: "sdta", offset: sdtaList.dataOffset - 8), reason: .missingChunk("sdta/smpl"))
        }

        var info = SoundFontInfo()
        if let (_, infoChunks) = lists["INFO"] {
            info = try readInfo(infoChunks)
        } else {
            try warn(SoundFontLocation(chunk: "RIFF", offset: 0), "no INFO list; version 2.01 assumed")
        }
        // A SoundFont 3 bank's `smpl` holds Ogg Vorbis streams at byte offsets: any size is fine.
        if smpl.size % 2 != 0 && info.version.major == 2 {
            try warn(SoundFontLocation(chunk: smpl.path, offset: smpl.dataOffset - 8), "odd size \(smpl.size); the last byte is ignored")
        }
        let wordCount = smpl.size / 2
        var lowBytesOffset: Int?
        if let sm24 = sdtaChunks.first(where: { $0.id == "sm24" }) {
            let at = SoundFontLocation(chunk: sm24.path, offset: sm24.dataOffset - 8)
            if info.version.major == 2 && info.version.minor < 4 {
                try warn(at, "24-bit sample data in a version \(info.version) bank (sm24 needs 2.04); ignored, samples play in 16 bits")
            } else if sm24.size < wordCount {
                try warn(at, "\(sm24.size) bytes of 24-bit data for \(wordCount) samples; ignored, samples play in 16 bits")
            } else {
                lowBytesOffset = sm24.dataOffset
            }
        }

        var builder = HydraReader(parser: self, chunks: hydra, wordCount: wordCount,
                                  compressedByteCount: info.version.major == 3 ? smpl.size : nil)
        let samples = try builder.readSamples()
        let instruments = try builder.readInstruments()
        let presets = try builder.readPresets(instruments: instruments)
        warnings = builder.parser.warnings
        suppressedWarnings = builder.parser.suppressedWarnings
        if suppressedWarnings > 0 {
            warnings.append(SoundFontWarning(location: SoundFontLocation(chunk: nil, offset: 0),
                                             message: "\(suppressedWarnings) more warnings not listed"))
        }
        let name = info.name.flatMap { $0.isEmpty ? nil : $0 } ?? defaultName
        return ParsedBank(name: name, info: info, presets: presets, samples: samples, warnings: warnings,
                          wordsOffset: smpl.dataOffset, wordCount: wordCount, lowBytesOffset: lowBytesOffset,
                          smplByteCount: smpl.size)
    }

    /// The nine hydra chunks, each checked for presence, record size, terminal record and the
    /// record limit.
    mutating func hydraChunks(_ list: Chunk, _ children: [Chunk]) throws(SoundFontError) -> HydraChunks {
        func find(_ id: String, _ recordSize: Int, terminalRequired: Bool, _ parser: inout BankParser) throws(SoundFontError) -> Chunk {
            guard let chunk = children.first(where: { $0.id == id }) else {
                throw SoundFontError(location: SoundFontLocation(chunk: "pdta", offset: list.dataOffset - 8), reason: .missingChunk("pdta/\(id)"))
            }
            let at = SoundFontLocation(chunk: chunk.path, offset: chunk.dataOffset - 8)
            guard chunk.size % recordSize == 0 else {
                throw SoundFontError(location: at, reason: .badChunkSize(size: chunk.size, recordSize: recordSize))
            }
            if chunk.size / recordSize > parser.options.maximumRecordsPerChunk {
                throw SoundFontError(location: at, reason: .limitExceeded("\(chunk.size / recordSize) records, more than the \(parser.options.maximumRecordsPerChunk) allowed"))
            }
            if chunk.size == 0 {
                if terminalRequired { throw SoundFontError(location: at, reason: .missingTerminalRecord) }
                try parser.warn(at, "no terminal record")
            }
            return chunk
        }
        return HydraChunks(
            phdr: try find("phdr", RecordSize.phdr, terminalRequired: true, &self),
            pbag: try find("pbag", RecordSize.pbag, terminalRequired: true, &self),
            pmod: try find("pmod", RecordSize.pmod, terminalRequired: false, &self),
            pgen: try find("pgen", RecordSize.pgen, terminalRequired: false, &self),
            inst: try find("inst", RecordSize.inst, terminalRequired: true, &self),
            ibag: try find("ibag", RecordSize.ibag, terminalRequired: true, &self),
            imod: try find("imod", RecordSize.imod, terminalRequired: false, &self),
            igen: try find("igen", RecordSize.igen, terminalRequired: false, &self),
            shdr: try find("shdr", RecordSize.shdr, terminalRequired: true, &self))
    }

    mutating func readInfo(_ chunks: [Chunk]) throws(SoundFontError) -> SoundFontInfo {
        var info = SoundFontInfo()
        var sawVersion = false
        for chunk in chunks {
            let at = SoundFontLocation(chunk: chunk.path, offset: chunk.dataOffset - 8)
            // Strings are capped well above the specification's 256 bytes (64 KiB for ICMT).
            let text = { (parser: BankParser) in parser.string(at: chunk.dataOffset, length: min(chunk.size, 65_536)) }
            switch chunk.id {
            case "ifil", "iver":
                guard chunk.size >= 4 else {
                    try warn(at, "version chunk of \(chunk.size) bytes, 4 expected; ignored")
                    continue
                }
                let version = SoundFontVersion(major: u16(chunk.dataOffset), minor: u16(chunk.dataOffset + 2))
                if chunk.id == "ifil" {
                    info.version = version
                    sawVersion = true
                } else {
                    info.romVersion = version
                }
            case "INAM": info.name = text(self)
            case "isng": info.soundEngine = text(self)
            case "irom": info.romName = text(self)
            case "ICRD": info.creationDate = text(self)
            case "IENG": info.engineers = text(self)
            case "IPRD": info.product = text(self)
            case "ICOP": info.copyright = text(self)
            case "ICMT": info.comments = text(self)
            case "ISFT": info.software = text(self)
            default: try warn(at, "unknown INFO chunk '\(chunk.id)' ignored")
            }
        }
        if !sawVersion {
            try warn(SoundFontLocation(chunk: "INFO", offset: chunks.first.map { $0.dataOffset - 8 } ?? 0), "no ifil version chunk; 2.01 assumed")
        }
        if info.version.major != 2 && info.version.major != 3 {
            let chunk = chunks.first { $0.id == "ifil" }
            throw SoundFontError(location: SoundFontLocation(chunk: "INFO/ifil", offset: chunk.map { $0.dataOffset } ?? 0),
                                 reason: .unsupportedVersion(major: info.version.major, minor: info.version.minor))
        }
        return info
    }
}

/// Where record `record` of a chunk of `size`-byte records is.
func recordLocation(_ chunk: Chunk, record: Int, size: Int) -> SoundFontLocation {
    SoundFontLocation(chunk: chunk.path, record: record, offset: chunk.dataOffset + record * size)
}

/// Little-endian reads; callers keep `at` inside the chunk they read, which is inside the buffer.
extension UnsafeRawBufferPointer {
    func u8le(_ at: Int) -> Int { Int(self[at]) }
    func u16le(_ at: Int) -> Int { Int(self[at]) | Int(self[at + 1]) << 8 }
    func i16le(_ at: Int) -> Int16 { Int16(bitPattern: UInt16(truncatingIfNeeded: u16le(at))) }
    func u32le(_ at: Int) -> Int { u16le(at) | u16le(at + 2) << 16 }

    /// A zero-terminated string of at most `length` bytes (names are fixed 20-byte fields and
    /// need not be terminated). UTF-8 when it is valid, Latin-1 otherwise.
    func fieldString(at offset: Int, length: Int) -> String {
        var end = offset
        while end < offset + length, self[end] != 0 { end += 1 }
        let slice = UnsafeRawBufferPointer(rebasing: self[offset..<end])
        if let utf8 = String(validating: slice, as: UTF8.self) { return utf8 }
        var scalars = String.UnicodeScalarView()
        for b in slice { scalars.append(UnicodeScalar(b)) }
        return String(scalars)
    }
}

struct HydraChunks {
    var phdr, pbag, pmod, pgen, inst, ibag, imod, igen, shdr: Chunk
}
