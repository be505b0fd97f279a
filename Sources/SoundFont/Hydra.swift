// The hydra (`pdta`): sample headers, instruments and presets, validated record by record and
// resolved into regions (specification sections 7, 8 and 9.4-9.5).

/// Generators a zone's record list may hold, as read: the values set, ranges, the terminal
/// generator's target, and the zone's valid modulators.
struct ParsedZone {
    var amounts = [Int32](repeating: 0, count: SoundFontGenerator.count)
    /// Bit `g` set when generator `g` was given.
    var mask: UInt64 = 0
    var keyRange: (lo: Int, hi: Int)?
    var velocityRange: (lo: Int, hi: Int)?
    /// The instrument (preset zone) or sample (instrument zone) the zone plays.
    var target: Int?
    var modulators: [SoundFontModulator] = []

    func has(_ g: Int) -> Bool { mask & (1 << UInt64(g)) != 0 }

    /// Copies every generator this zone sets into `values`.
    func apply(to values: inout [Int32]) {
        var remaining = mask
        while remaining != 0 {
            let g = remaining.trailingZeroBitCount
            remaining &= remaining - 1
            values[g] = amounts[g]
        }
    }
}

/// An instrument zone with the instrument level resolved: defaults, then the global zone, then
/// the zone's own generators and modulators.
struct InstrumentZone {
    var keyRange: (lo: Int, hi: Int)
    var velocityRange: (lo: Int, hi: Int)
    var sampleIndex: Int
    var generators: [Int32]
    var modulators: [SoundFontModulator]
}

struct Instrument {
    var name: String
    var zones: [InstrumentZone]
}

/// Which level a zone belongs to: the terminal generator and the chunks differ.
enum ZoneLevel {
    case preset, instrument

    var terminalGenerator: Int { self == .preset ? SoundFontGenerator.instrument.rawValue : SoundFontGenerator.sampleID.rawValue }
    var otherTerminal: Int { self == .preset ? SoundFontGenerator.sampleID.rawValue : SoundFontGenerator.instrument.rawValue }
    var noun: String { self == .preset ? "preset" : "instrument" }
}

/// Generators the specification leaves undefined (unused, reserved, endOper).
let undefinedGenerators: UInt64 = [14, 18, 19, 20, 42, 49, 55, 59, 60].reduce(0) { $0 | 1 << UInt64($1) }

/// Generators a preset zone may not set (section 8.1.2/8.5): sample address offsets, key
/// number, velocity, sample modes, exclusive class and overriding root key are instrument-only.
let presetForbiddenGenerators: UInt64 = [0, 1, 2, 3, 4, 12, 45, 46, 47, 50, 54, 57, 58].reduce(0) { $0 | 1 << UInt64($1) }

struct HydraReader {
    var parser: BankParser
    let bytes: UnsafeRawBufferPointer
    let chunks: HydraChunks
    let wordCount: Int
    /// Bytes of `smpl` in a SoundFont 3 bank (compressed samples are byte ranges of it); nil
    /// in a SoundFont 2 bank, where compressed samples are unusable.
    let compressedByteCount: Int?
    /// Whether each sample may be played (not ROM, inside `smpl`...).
    var sampleUsable: [Bool] = []
    var sampleNames: [String] = []
    var regionCount = 0

    init(parser: BankParser, chunks: HydraChunks, wordCount: Int, compressedByteCount: Int?) {
        self.parser = parser
        self.bytes = parser.bytes
        self.chunks = chunks
        self.wordCount = wordCount
        self.compressedByteCount = compressedByteCount
    }

    func count(_ chunk: Chunk, _ size: Int) -> Int { chunk.size / size }

    // MARK: Samples

    mutating func readSamples() throws(SoundFontError) -> [SoundFontSample] {
        let c = chunks.shdr
        let count = self.count(c, RecordSize.shdr) - 1
        var samples: [SoundFontSample] = []
        samples.reserveCapacity(count)
        sampleUsable.reserveCapacity(count)
        sampleNames.reserveCapacity(count)
        var links: [Int?] = []
        links.reserveCapacity(count)
        for i in 0..<count {
            let o = c.dataOffset + i * RecordSize.shdr
            let at = recordLocation(c, record: i, size: RecordSize.shdr)
            let name = bytes.fieldString(at: o, length: 20)
            var start = bytes.u32le(o + 20), end = bytes.u32le(o + 24)
            var loopStart = bytes.u32le(o + 28), loopEnd = bytes.u32le(o + 32)
            var rate = bytes.u32le(o + 36)
            var pitch = bytes.u8le(o + 40)
            let correction = Int8(bitPattern: UInt8(bytes.u8le(o + 41)))
            let link = bytes.u16le(o + 42)
            let type = bytes.u16le(o + 44)
            var usable = true
            let compressed = type & 0x10 != 0 && compressedByteCount != nil
            if type & 0x8000 != 0 {
                try parser.warn(at, "sample '\(name)' is a ROM sample, which this player does not have; zones using it are ignored")
                usable = false
            } else if type & ~0xF != 0 && !(compressed && type & ~0x1F == 0) {
                let what = type & 0x10 != 0 ? "compressed in a SoundFont 2 bank" : "of unknown type 0x\(String(type, radix: 16))"
                try parser.warn(at, "sample '\(name)' is \(what); zones using it are ignored")
                usable = false
            } else if compressed, let byteCount = compressedByteCount {
                if start >= end || end > byteCount {
                    try parser.warn(at, "compressed sample '\(name)' spans bytes \(start)..<\(end), not inside the \(byteCount) bytes of smpl; zones using it are ignored")
                    usable = false
                }
            } else if start >= end || end > wordCount {
                try parser.warn(at, "sample '\(name)' spans points \(start)..<\(end), not inside the \(wordCount) points of smpl; zones using it are ignored")
                usable = false
            }
            var kind = SoundFontSample.Kind.mono
            switch type & 0xF {
            case 0:
                if usable { try parser.warn(at, "sample '\(name)' has no type; mono assumed") }
            case let t where t & 1 != 0: kind = .mono
            case let t where t & 4 != 0: kind = .left
            case let t where t & 2 != 0: kind = .right
            default: kind = .linked
            }
            if usable && compressed {
                // Loop points count from the decoded sample, whose length is known only once
                // it is decoded: they are checked then (``SoundFontCompressedSamples``).
                if rate == 0 {
                    try parser.warn(at, "sample '\(name)' has a sample rate of 0; 44100 Hz assumed")
                    rate = 44_100
                }
            } else if usable {
                if loopStart > loopEnd {
                    try parser.warn(at, "sample '\(name)' has its loop end \(loopEnd) before its loop start \(loopStart); swapped")
                    swap(&loopStart, &loopEnd)
                }
                if loopStart < start || loopStart > end {
                    try parser.warn(at, "sample '\(name)' loop start \(loopStart) is outside the sample \(start)..<\(end); moved to the sample start")
                    loopStart = start
                }
                if loopEnd < start || loopEnd > end {
                    try parser.warn(at, "sample '\(name)' loop end \(loopEnd) is outside the sample \(start)..<\(end); moved to the sample end")
                    loopEnd = end
                }
                if loopStart > loopEnd { loopStart = loopEnd }
                if rate == 0 {
                    try parser.warn(at, "sample '\(name)' has a sample rate of 0; 44100 Hz assumed")
                    rate = 44_100
                }
            } else {
                // Nothing may reach an unusable sample's points.
                (start, end, loopStart, loopEnd) = (0, 0, 0, 0)
                if rate == 0 { rate = 44_100 }
            }
            if pitch > 127 {
                // 255 means "unpitched" (section 7.10); both map to middle C.
                if pitch != 255 { try parser.warn(at, "sample '\(name)' has original pitch \(pitch); 60 used") }
                pitch = 60
            }
            var linked: Int?
            if kind != .mono {
                if link >= count || link == i {
                    try parser.warn(at, "sample '\(name)' links to sample \(link)\(link == i ? " (itself)" : ", past the \(count) samples"); played unlinked")
                } else {
                    linked = link
                }
            }
            links.append(linked)
            samples.append(SoundFontSample(name: name, start: start, end: end, loopStart: loopStart, loopEnd: loopEnd,
                                           sampleRate: rate, originalPitch: UInt8(pitch), pitchCorrection: correction,
                                           link: linked, kind: kind, isCompressed: usable && compressed))
            sampleUsable.append(usable)
            sampleNames.append(name)
        }
        // A pair is usable when each half links to the other and they are a left and a right
        // (or both "linked" samples). FluidR3_GM, for one, marks its stereo halves left and right
        // but links them all to sample 0: such halves play as mono samples.
        var oneSided = 0
        for i in 0..<count {
            guard let link = links[i] else { continue }
            let partner = samples[link]
            let matches: Bool
            switch samples[i].kind {
            case .left: matches = partner.kind == .right && links[link] == i
            case .right: matches = partner.kind == .left && links[link] == i
            default: matches = partner.kind == .linked
            }
            if !matches || !sampleUsable[link] || !sampleUsable[i] {
                samples[i].link = nil
                if sampleUsable[link] && sampleUsable[i] { oneSided += 1 }
            }
        }
        if oneSided > 0 {
            try parser.warn(SoundFontLocation(chunk: c.path, offset: c.dataOffset),
                            "\(oneSided) stereo sample(s) link to a sample that is not their other half; played unlinked")
        }
        try checkTerminalName(c, record: count, size: RecordSize.shdr, expected: "EOS")
        return samples
    }

    mutating func checkTerminalName(_ c: Chunk, record: Int, size: Int, expected: String) throws(SoundFontError) {
        let name = bytes.fieldString(at: c.dataOffset + record * size, length: 20)
        if name != expected {
            try parser.warn(recordLocation(c, record: record, size: size), "terminal record is named '\(name)' instead of '\(expected)'")
        }
    }

    // MARK: Index checks

    /// Reads the header chunk's bag indices (at `field` offset inside each record), checks that
    /// they never decrease and stay inside the bag chunk, then checks the referenced bags'
    /// generator and modulator indices the same way. Returns the bag index of every header,
    /// terminal included.
    mutating func checkedBagIndices(header: Chunk, headerSize: Int, fieldOffset: Int, fieldName: String,
                                    bags: Chunk, generators: Chunk, modulators: Chunk,
                                    bagName: String) throws(SoundFontError) -> [Int] {
        let headerCount = count(header, headerSize)
        let bagCount = count(bags, 4)
        var indices: [Int] = []
        indices.reserveCapacity(headerCount)
        for i in 0..<headerCount {
            let value = bytes.u16le(header.dataOffset + i * headerSize + fieldOffset)
            if let previous = indices.last, value < previous {
                throw SoundFontError(location: recordLocation(header, record: i, size: headerSize),
                                     reason: .indexNotMonotonic(field: fieldName, previous: previous, value: value))
            }
            indices.append(value)
        }
        guard let first = indices.first, let last = indices.last else { return indices }
        if last >= bagCount {
            throw SoundFontError(location: recordLocation(header, record: headerCount - 1, size: headerSize),
                                 reason: .indexOutOfRange(field: fieldName, value: last, count: bagCount))
        }
        let generatorCount = count(generators, 4)
        let modulatorCount = count(modulators, 10)
        var previousGenerator = 0, previousModulator = 0
        for j in first...last {
            let at = recordLocation(bags, record: j, size: 4)
            let g = bytes.u16le(bags.dataOffset + j * 4), m = bytes.u16le(bags.dataOffset + j * 4 + 2)
            if j > first {
                if g < previousGenerator {
                    throw SoundFontError(location: at, reason: .indexNotMonotonic(field: "\(bagName) generator index", previous: previousGenerator, value: g))
                }
                if m < previousModulator {
                    throw SoundFontError(location: at, reason: .indexNotMonotonic(field: "\(bagName) modulator index", previous: previousModulator, value: m))
                }
            }
            if g > generatorCount {
                throw SoundFontError(location: at, reason: .indexOutOfRange(field: "\(bagName) generator index", value: g, count: generatorCount))
            }
            if m > modulatorCount {
                throw SoundFontError(location: at, reason: .indexOutOfRange(field: "\(bagName) modulator index", value: m, count: modulatorCount))
            }
            previousGenerator = g
            previousModulator = m
        }
        return indices
    }

    // MARK: Zones

    /// Reads bag `bag`'s generators and modulators under the ordering rules of section 9.4.
    mutating func readZone(_ level: ZoneLevel, bag: Int, owner: String, zoneNumber: Int) throws(SoundFontError) -> ParsedZone {
        let isPreset = level == .preset
        let bags = isPreset ? chunks.pbag : chunks.ibag
        let gens = isPreset ? chunks.pgen : chunks.igen
        let mods = isPreset ? chunks.pmod : chunks.imod
        let terminal = level.terminalGenerator, otherTerminal = level.otherTerminal
        let forbidden = isPreset ? presetForbiddenGenerators : 0
        let genBase = gens.dataOffset
        let o = bags.dataOffset + bag * 4
        let genStart = bytes.u16le(o), genEnd = bytes.u16le(o + 4)
        let modStart = bytes.u16le(o + 2), modEnd = bytes.u16le(o + 6)
        // Messages are built only when needed: most zones of most banks have nothing to report.
        func warn(_ record: Int, _ chunk: Chunk, _ size: Int, _ message: String) throws(SoundFontError) {
            try parser.warn(recordLocation(chunk, record: record, size: size), "\(level.noun) '\(owner)' zone \(zoneNumber): \(message)")
        }
        var zone = ParsedZone()
        // 0: nothing yet; 1: a key range; 2: a velocity range or any other generator.
        var stage = 0
        var record = genStart
        while record < genEnd {
            let go = genBase + record * 4
            let op = bytes.u16le(go)
            let raw = bytes.u16le(go + 2)
            let current = record
            record += 1
            switch op {
            case SoundFontGenerator.keyRange.rawValue:
                guard stage == 0 else {
                    try warn(current, gens, 4, "key range is not the zone's first generator; ignored")
                    continue
                }
                stage = 1
                zone.keyRange = (raw & 0xFF, raw >> 8)
                if let problem = rangeProblem(raw, what: "key") { try warn(current, gens, 4, problem) }
            case SoundFontGenerator.velocityRange.rawValue:
                guard stage <= 1 else {
                    try warn(current, gens, 4, "velocity range follows generators other than a key range; ignored")
                    continue
                }
                stage = 2
                zone.velocityRange = (raw & 0xFF, raw >> 8)
                if let problem = rangeProblem(raw, what: "velocity") { try warn(current, gens, 4, problem) }
            case terminal:
                zone.target = raw
                if record < genEnd {
                    let what = isPreset ? "instrument" : "sample"
                    try warn(current, gens, 4, "\(genEnd - record) generator(s) after the \(what) generator ignored")
                }
                record = genEnd
            case otherTerminal:
                stage = 2
                try warn(current, gens, 4, isPreset ? "sampleID in a preset zone ignored" : "instrument in an instrument zone ignored")
            default:
                stage = 2
                guard op < SoundFontGenerator.count, undefinedGenerators & (1 << UInt64(op)) == 0 else {
                    try warn(current, gens, 4, "undefined generator \(op) ignored")
                    continue
                }
                if forbidden & (1 << UInt64(op)) != 0 {
                    try warn(current, gens, 4, "\(SoundFontGenerator(rawValue: op)!) may not be set in a preset zone; ignored")
                    continue
                }
                if zone.mask & (1 << UInt64(op)) != 0 {
                    try warn(current, gens, 4, "\(SoundFontGenerator(rawValue: op)!) given twice; the later value is used")
                }
                zone.amounts[op] = Int32(Int16(bitPattern: UInt16(raw)))
                zone.mask |= 1 << UInt64(op)
            }
        }
        if let keys = zone.keyRange { zone.keyRange = (keys.lo, min(keys.hi, 127)) }
        if let velocities = zone.velocityRange { zone.velocityRange = (velocities.lo, min(velocities.hi, 127)) }
        var m = modStart
        while m < modEnd {
            let mo = mods.dataOffset + m * 10
            let current = m
            m += 1
            let modulator = SoundFontModulator(
                source: UInt16(bytes.u16le(mo)), destination: UInt16(bytes.u16le(mo + 2)), amount: bytes.i16le(mo + 4),
                amountSource: UInt16(bytes.u16le(mo + 6)), transform: UInt16(bytes.u16le(mo + 8)))
            if let problem = modulatorProblem(modulator) {
                try warn(current, mods, 10, "modulator ignored: \(problem)")
                continue
            }
            if zone.modulators.contains(where: { $0.isIdentical(to: modulator) }) {
                try warn(current, mods, 10, "modulator identical to an earlier one of the zone ignored")
                continue
            }
            zone.modulators.append(modulator)
        }
        return zone
    }

    /// What is wrong with a key or velocity range amount, if anything.
    func rangeProblem(_ raw: Int, what: String) -> String? {
        let lo = raw & 0xFF, hi = raw >> 8
        guard lo > 127 || hi > 127 || lo > hi else { return nil }
        return "\(what) range \(lo)-\(hi) is \(lo > min(hi, 127) ? "empty; the zone never plays" : "past 127; cut to 127")"
    }

    /// Why a modulator cannot be used (section 8.2), or nil when it can.
    func modulatorProblem(_ m: SoundFontModulator) -> String? {
        if m.destination & 0x8000 != 0 { return "it feeds another modulator (linked modulators are not supported)" }
        if Int(m.destination) >= SoundFontGenerator.count || undefinedGenerators & (1 << UInt64(m.destination)) != 0 {
            return "destination \(m.destination) is not a generator"
        }
        if m.source & 0xFF == 0x7F { return "its source is another modulator's output (linked modulators are not supported)" }
        if m.source & 0x80 == 0 && m.source & 0x7F == 0 { return "its source is 'no controller'" }
        if let why = sourceProblem(m.source) { return "source 0x\(String(m.source, radix: 16)): \(why)" }
        if m.amountSource & 0xFF == 0x7F { return "its amount source is a link, which only a primary source may be" }
        if let why = sourceProblem(m.amountSource) { return "amount source 0x\(String(m.amountSource, radix: 16)): \(why)" }
        if m.transform != 0 && m.transform != 2 { return "transform \(m.transform) is neither linear (0) nor absolute value (2)" }
        return nil
    }

    func sourceProblem(_ source: UInt16) -> String? {
        let index = Int(source & 0x7F)
        if source >> 10 > 3 { return "curve type \(source >> 10) is undefined" }
        if source & 0x80 != 0 {
            // MIDI controllers that are bank select, data entry, LSBs, (N)RPN and mode messages.
            if index == 0 || index == 6 || (32...63).contains(index) || (98...101).contains(index) || index >= 120 {
                return "controller \(index) cannot be a modulator source"
            }
        } else if ![0, 2, 3, 10, 13, 14, 16, 127].contains(index) {
            return "general controller \(index) is undefined"
        }
        return nil
    }

    // MARK: Instruments

    mutating func readInstruments() throws(SoundFontError) -> [Instrument] {
        let c = chunks.inst
        let bagIndex = try checkedBagIndices(header: c, headerSize: RecordSize.inst, fieldOffset: 20, fieldName: "wInstBagNdx",
                                             bags: chunks.ibag, generators: chunks.igen, modulators: chunks.imod, bagName: "ibag")
        let count = bagIndex.count - 1
        try checkTerminalName(c, record: count, size: RecordSize.inst, expected: "EOI")
        var instruments: [Instrument] = []
        instruments.reserveCapacity(count)
        for i in 0..<count {
            let name = bytes.fieldString(at: c.dataOffset + i * RecordSize.inst, length: 20)
            var global: ParsedZone?
            var zones: [InstrumentZone] = []
            for bag in bagIndex[i]..<bagIndex[i + 1] {
                let n = bag - bagIndex[i]
                let zone = try readZone(.instrument, bag: bag, owner: name, zoneNumber: n)
                guard let sample = zone.target else {
                    if n == 0 {
                        global = zone
                    } else {
                        try parser.warn(recordLocation(chunks.ibag, record: bag, size: 4), "instrument '\(name)' zone \(n) has no sample and is not the first zone; ignored")
                    }
                    continue
                }
                guard sample < sampleUsable.count else {
                    try parser.warn(recordLocation(chunks.ibag, record: bag, size: 4), "instrument '\(name)' zone \(n) plays sample \(sample), past the \(sampleUsable.count) samples; ignored")
                    continue
                }
                guard sampleUsable[sample] else {
                    try parser.warn(recordLocation(chunks.ibag, record: bag, size: 4), "instrument '\(name)' zone \(n) plays unusable sample '\(sampleNames[sample])'; ignored")
                    continue
                }
                let keys = zone.keyRange ?? global?.keyRange ?? (0, 127)
                let velocities = zone.velocityRange ?? global?.velocityRange ?? (0, 127)
                guard keys.lo <= keys.hi, velocities.lo <= velocities.hi else { continue }
                var generators = SoundFontGenerators.defaults.values
                global?.apply(to: &generators)
                zone.apply(to: &generators)
                var modulators = SoundFontModulator.defaults
                if let global { merge(global.modulators, into: &modulators) }
                merge(zone.modulators, into: &modulators)
                zones.append(InstrumentZone(keyRange: keys, velocityRange: velocities, sampleIndex: sample,
                                            generators: generators, modulators: modulators))
            }
            instruments.append(Instrument(name: name, zones: zones))
        }
        return instruments
    }

    // MARK: Presets

    mutating func readPresets(instruments: [Instrument]) throws(SoundFontError) -> [SoundFontPreset] {
        let c = chunks.phdr
        let bagIndex = try checkedBagIndices(header: c, headerSize: RecordSize.phdr, fieldOffset: 24, fieldName: "wPresetBagNdx",
                                             bags: chunks.pbag, generators: chunks.pgen, modulators: chunks.pmod, bagName: "pbag")
        let count = bagIndex.count - 1
        try checkTerminalName(c, record: count, size: RecordSize.phdr, expected: "EOP")
        var presets: [SoundFontPreset] = []
        presets.reserveCapacity(count)
        var seen: [Int: String] = [:]
        for i in 0..<count {
            let o = c.dataOffset + i * RecordSize.phdr
            let at = recordLocation(c, record: i, size: RecordSize.phdr)
            let name = bytes.fieldString(at: o, length: 20)
            let program = bytes.u16le(o + 20), bank = bytes.u16le(o + 22)
            guard program <= 127 else {
                try parser.warn(at, "preset '\(name)' has program \(program), outside 0-127; ignored")
                continue
            }
            if let first = seen[bank << 7 | program] {
                try parser.warn(at, "preset '\(name)' has the bank and program \(bank):\(program) of '\(first)', which is used instead")
            } else {
                seen[bank << 7 | program] = name
            }
            var global: ParsedZone?
            var regions: [SoundFontRegion] = []
            for bag in bagIndex[i]..<bagIndex[i + 1] {
                let n = bag - bagIndex[i]
                let zone = try readZone(.preset, bag: bag, owner: name, zoneNumber: n)
                guard let instrument = zone.target else {
                    if n == 0 {
                        global = zone
                    } else {
                        try parser.warn(recordLocation(chunks.pbag, record: bag, size: 4), "preset '\(name)' zone \(n) has no instrument and is not the first zone; ignored")
                    }
                    continue
                }
                guard instrument < instruments.count else {
                    try parser.warn(recordLocation(chunks.pbag, record: bag, size: 4), "preset '\(name)' zone \(n) plays instrument \(instrument), past the \(instruments.count) instruments; ignored")
                    continue
                }
                try appendRegions(of: instruments[instrument], zone: zone, global: global, to: &regions, bag: bag)
            }
            presets.append(SoundFontPreset(name: name, bank: bank, program: program, regions: regions))
        }
        return presets
    }

    /// The regions of one preset zone: every instrument zone whose ranges meet the preset zone's,
    /// with the preset level's generators added and its modulators appended.
    mutating func appendRegions(of instrument: Instrument, zone: ParsedZone, global: ParsedZone?,
                                to regions: inout [SoundFontRegion], bag: Int) throws(SoundFontError) {
        let keys = zone.keyRange ?? global?.keyRange ?? (0, 127)
        let velocities = zone.velocityRange ?? global?.velocityRange ?? (0, 127)
        guard keys.lo <= keys.hi, velocities.lo <= velocities.hi else { return }
        var offsets = [Int32](repeating: 0, count: SoundFontGenerator.count)
        let offsetMask = (global?.mask ?? 0) | zone.mask
        global?.apply(to: &offsets)
        zone.apply(to: &offsets)
        var presetModulators = global?.modulators ?? []
        merge(zone.modulators, into: &presetModulators)
        for instrumentZone in instrument.zones {
            let lo = max(keys.lo, instrumentZone.keyRange.lo), hi = min(keys.hi, instrumentZone.keyRange.hi)
            let vlo = max(velocities.lo, instrumentZone.velocityRange.lo), vhi = min(velocities.hi, instrumentZone.velocityRange.hi)
            guard lo <= hi, vlo <= vhi else { continue }
            regionCount += 1
            if regionCount > parser.options.maximumRegionCount {
                throw SoundFontError(location: recordLocation(chunks.pbag, record: bag, size: 4), reason: .limitExceeded("presets resolve to more than \(parser.options.maximumRegionCount) regions"))
            }
            var generators = instrumentZone.generators
            var remaining = offsetMask
            while remaining != 0 {
                let g = remaining.trailingZeroBitCount
                remaining &= remaining - 1
                generators[g] += offsets[g]
            }
            regions.append(SoundFontRegion(
                keyRange: UInt8(lo)...UInt8(hi), velocityRange: UInt8(vlo)...UInt8(vhi),
                sampleIndex: instrumentZone.sampleIndex, generators: SoundFontGenerators(values: generators),
                modulators: presetModulators.isEmpty ? instrumentZone.modulators : instrumentZone.modulators + presetModulators))
        }
    }
}

/// Adds `modulators` to `list`, each replacing an identical one already there (section 9.5.1).
func merge(_ modulators: [SoundFontModulator], into list: inout [SoundFontModulator]) {
    for modulator in modulators {
        if let i = list.firstIndex(where: { $0.isIdentical(to: modulator) }) {
            list[i] = modulator
        } else {
            list.append(modulator)
        }
    }
}
