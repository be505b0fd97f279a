/// Reads one opcode's value into a typed field, collecting what was wrong with it.
struct SFZValueReader {
    let name: String
    let value: String
    var problems: [String] = []

    private mutating func refuse(_ why: String, _ fallback: String) {
        problems.append("`\(SFZWarning.shortened(name))=\(SFZWarning.shortened(value))`: \(why); \(fallback)")
    }

    private func bounded<T: Comparable>(_ v: T, _ range: ClosedRange<T>, _ low: SFZBound, _ high: SFZBound) -> T? {
        if v < range.lowerBound {
            switch low {
            case .clamp: return range.lowerBound
            case .refuse: return nil
            case .keep: return v
            }
        }
        if v > range.upperBound {
            switch high {
            case .clamp: return range.upperBound
            case .refuse: return nil
            case .keep: return v
            }
        }
        return v
    }

    /// An integer (or note name when `note`), bounded; nil (with a warning unless `quiet`) when
    /// it is not a number or is refused.
    mutating func optionalInteger(_ range: ClosedRange<Int>, low: SFZBound = .refuse, high: SFZBound = .refuse,
                                  note: Bool = false, quiet: Bool = false) -> Int? {
        guard let parsed = note ? SFZValue.integerOrNote(value) : SFZValue.leadingInteger(value) else {
            if !quiet { refuse(note ? "not a number or note name" : "not a whole number", "ignored") }
            return nil
        }
        guard let result = bounded(parsed, range, low, high) else {
            if !quiet { refuse("outside \(range.lowerBound)...\(range.upperBound)", "ignored") }
            return nil
        }
        return result
    }

    /// An integer (or note name when `note`), bounded, or `fallback` (with a warning) when it is
    /// not a number or is refused: sfizz falls back to the opcode's default.
    mutating func integer(_ range: ClosedRange<Int>, low: SFZBound = .refuse, high: SFZBound = .refuse,
                          note: Bool = false, default fallback: Int) -> Int {
        guard let parsed = note ? SFZValue.integerOrNote(value) : SFZValue.leadingInteger(value) else {
            refuse(note ? "not a number or note name" : "not a whole number", "the default \(fallback) is used")
            return fallback
        }
        guard let result = bounded(parsed, range, low, high) else {
            refuse("outside \(range.lowerBound)...\(range.upperBound)", "the default \(fallback) is used")
            return fallback
        }
        return result
    }

    /// A number, bounded, or `fallback` (with a warning) when it is not a number or is refused.
    mutating func number(_ range: ClosedRange<Double>, low: SFZBound = .keep, high: SFZBound = .keep, default fallback: Double) -> Double {
        guard let parsed = SFZValue.leadingDouble(value) else {
            refuse("not a number", "the default \(fallback) is used")
            return fallback
        }
        guard let result = bounded(parsed, range, low, high) else {
            refuse("outside \(range.lowerBound)...\(range.upperBound)", "the default \(fallback) is used")
            return fallback
        }
        return result
    }

    /// A number sfizz keeps whatever its size, read within `limit`: past it the arithmetic
    /// that turns it into gains, pitches and times would overflow to infinity or NaN, so it is
    /// played at the limit, with a warning naming it.
    mutating func number(within limit: ClosedRange<Double> = SFZValueReader.arithmeticLimit, default fallback: Double) -> Double {
        guard let parsed = SFZValue.leadingDouble(value) else {
            refuse("not a number", "the default \(Self.text(fallback)) is used")
            return fallback
        }
        let played = min(max(parsed, limit.lowerBound), limit.upperBound)
        if played != parsed {
            refuse("beyond the playable \(Self.text(limit.lowerBound))...\(Self.text(limit.upperBound))", "played as \(Self.text(played))")
        }
        return played
    }

    /// Far beyond any value a playable instrument uses (cutoffs in hertz, cents, percentages,
    /// seconds), and small enough that sums and products of a few such values stay finite.
    static let arithmeticLimit: ClosedRange<Double> = -1_000_000...1_000_000

    /// A number as a warning shows it: whole numbers without a fraction.
    private static func text(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : "\(number)"
    }

    /// One of an enumeration's SFZ names, or nil (with a warning) for anything else.
    mutating func choice<E: RawRepresentable & CaseIterable>(_ type: E.Type) -> E? where E.RawValue == String {
        if let chosen = E(rawValue: value) { return chosen }
        refuse("not one of \(E.allCases.map(\.rawValue).joined(separator: ", "))", "ignored")
        return nil
    }
}

/// `note_selfmask` values as sfizz reads them.
enum SFZSelfmaskSpelling: String, CaseIterable {
    case on, mask, off
}

/// Opcode names as sfizz reads them: in lower case, with the aliases it accepts mapped to the
/// names used here.
enum SFZOpcodeName {
    static let aliases: [String: String] = [
        "loopmode": "loop_mode", "loopstart": "loop_start", "loopend": "loop_end",
        "offby": "off_by", "offmode": "off_mode", "polyphony_group": "group",
        "gain": "volume", "pitch": "tune",
        "filtype": "fil_type", "fil1_type": "fil_type", "cutoff1": "cutoff", "resonance1": "resonance",
        "fil1_keytrack": "fil_keytrack", "fil1_keycenter": "fil_keycenter", "fil1_veltrack": "fil_veltrack",
    ]

    static func canonical(_ written: String) -> String {
        let lower = String(written.lowercased())
        if let alias = aliases[lower] { return alias }
        for prefix in ["ampeg_velto", "fileg_velto"] where lower.hasPrefix(prefix) {
            return String(prefix.dropLast(2)) + "2" + lower.dropFirst(prefix.count)
        }
        return lower
    }

    /// `name` split as `prefix` + a number, such as `locc64`; nil when it is not that shape.
    static func number(after prefix: String, in name: String) -> Int? {
        guard name.hasPrefix(prefix) else { return nil }
        let digits = name.dropFirst(prefix.count)
        guard !digits.isEmpty, digits.count <= 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }
}

extension SFZEnvelope {
    /// Applies an `ampeg_`/`fileg_` opcode, the prefix removed; false when the stage is unknown.
    mutating func apply(stage: String, reader: inout SFZValueReader, isFilter: Bool) -> Bool {
        // sfizz reads times and levels permissively: what the file says is kept (within the
        // arithmetic limit).
        switch stage {
        case "delay": delay = reader.number(default: 0)
        case "start": start = reader.number(default: 0)
        case "attack": attack = reader.number(default: 0)
        case "hold": hold = reader.number(default: 0)
        case "decay": decay = reader.number(default: 0)
        case "sustain": sustain = reader.number(default: 100)
        case "release": release = reader.number(default: isFilter ? 0 : 0.001)
        case "vel2delay": velocityToDelay = reader.number(default: 0)
        case "vel2attack": velocityToAttack = reader.number(default: 0)
        case "vel2hold": velocityToHold = reader.number(default: 0)
        case "vel2decay": velocityToDecay = reader.number(default: 0)
        case "vel2sustain": velocityToSustain = reader.number(default: 0)
        case "vel2release": velocityToRelease = reader.number(default: 0)
        case "depth" where isFilter: depth = reader.number(default: 0)
        default: return false
        }
        return true
    }
}


/// The opcodes a region reads by name, looked up in a table: a `switch` over strings compares
/// them one after another, which costs more than the rest of reading a region.
enum SFZRegionOpcode: String, CaseIterable, Sendable {
    case sample
    case lokey
    case hikey
    case key
    case pitchKeycenter = "pitch_keycenter"
    case lovel
    case hivel
    case lochan
    case hichan
    case lorand
    case hirand
    case seqLength = "seq_length"
    case seqPosition = "seq_position"
    case trigger
    case rtDecay = "rt_decay"
    case group
    case offBy = "off_by"
    case offMode = "off_mode"
    case offTime = "off_time"
    case polyphony
    case notePolyphony = "note_polyphony"
    case noteSelfmask = "note_selfmask"
    case swLokey = "sw_lokey"
    case swHikey = "sw_hikey"
    case swLast = "sw_last"
    case swDefault = "sw_default"
    case volume
    case amplitude
    case pan
    case width
    case position
    case tune
    case transpose
    case pitchKeytrack = "pitch_keytrack"
    case ampVeltrack = "amp_veltrack"
    case filType = "fil_type"
    case cutoff
    case resonance
    case filKeytrack = "fil_keytrack"
    case filKeycenter = "fil_keycenter"
    case filVeltrack = "fil_veltrack"
    case offset
    case end
    case loopMode = "loop_mode"
    case loopStart = "loop_start"
    case loopEnd = "loop_end"

    static let byName: [String: SFZRegionOpcode] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })
}

extension SFZRegion {
    /// Applies one opcode of a `<global>`, `<master>`, `<group>` or `<region>` header, its name
    /// already canonical. `defaultPath` is the `<control>` header's `default_path` in force.
    /// Returns false for an opcode this model does not know; what was wrong with a known one's
    /// value is in `reader.problems`.
    mutating func apply(_ name: String, reader: inout SFZValueReader, defaultPath: String) -> Bool {
        let maximumFrame = Int(Int32.max)
        guard let known = SFZRegionOpcode.byName[name] else { return applyNumbered(name, reader: &reader) }
        switch known {
        case .sample:
            let written = reader.value
            guard !written.isEmpty else { return true }
            if written.hasPrefix("*") {
                sample = .generator(written)
            } else {
                // Resolved against the instrument's folder once every header is read.
                sample = .file(defaultPath + String(written.map { $0 == "\\" ? "/" : $0 }))
            }
        case .lokey:
            keyRange.low = reader.integer(0...127, note: true, default: 0)
        case .hikey:
            let key = reader.optionalInteger(0...127, note: true, quiet: reader.value == "-1")
            triggersOnNote = key != nil
            keyRange.high = key ?? 127
        case .key:
            let key = reader.optionalInteger(0...127, note: true, quiet: reader.value == "-1")
            triggersOnNote = key != nil
            keyRange = SFZRange(key ?? 60, key ?? 60)
            pitchKeycenter = key ?? 60
        case .pitchKeycenter:
            if reader.value == "sample" {
                pitchKeycenterFromSample = true
            } else {
                pitchKeycenterFromSample = false
                pitchKeycenter = reader.integer(0...127, note: true, default: 60)
            }
        case .lovel:
            // sfizz keeps any velocity bound; clamping to 0-127 matches the same velocities.
            velocityRange.low = Int(reader.number(0...127, low: .clamp, high: .clamp, default: 0).rounded(.up))
        case .hivel:
            velocityRange.high = Int(reader.number(0...127, low: .clamp, high: .clamp, default: 127).rounded(.down))
        case .lochan:
            channelRange.low = reader.integer(1...16, default: 1)
        case .hichan:
            channelRange.high = reader.integer(1...16, default: 16)
        case .lorand:
            randomRange.low = reader.number(default: 0)
        case .hirand:
            randomRange.high = reader.number(default: 1)
        case .seqLength:
            sequenceLength = reader.integer(1...100, default: 1)
        case .seqPosition:
            sequencePosition = reader.integer(1...100, default: 1)
        case .trigger:
            trigger = reader.choice(SFZTrigger.self) ?? .attack
        case .rtDecay:
            releaseTriggerDecay = reader.number(0...200, low: .clamp, high: .keep, default: 0)
        case .group:
            group = reader.integer(-Int(Int32.max)...Int(UInt32.max), default: 0)
        case .offBy:
            offBy = reader.optionalInteger(-Int(Int32.max)...Int(UInt32.max))
        case .offMode:
            offMode = reader.choice(SFZOffMode.self) ?? .fast
        case .offTime:
            // As sfizz: giving a time chooses the timed fade; a later off_mode may still change it.
            offMode = .time
            offTime = reader.number(0...100, default: 0.006)
        case .polyphony:
            polyphony = reader.optionalInteger(0...Int(UInt32.max), low: .clamp, high: .clamp)
        case .notePolyphony:
            notePolyphony = reader.optionalInteger(1...Int(UInt32.max), low: .clamp, high: .clamp)
        case .noteSelfmask:
            if let spelling = reader.choice(SFZSelfmaskSpelling.self) { noteSelfmask = spelling != .off }
        case .swLokey:
            let key = reader.integer(0...127, note: true, default: 0)
            keyswitchRange = SFZRange(key, keyswitchRange?.high ?? 127)
        case .swHikey:
            let key = reader.integer(0...127, note: true, default: 127)
            keyswitchRange = SFZRange(keyswitchRange?.low ?? 0, key)
        case .swLast:
            keyswitchLast = reader.optionalInteger(0...127, note: true)
        case .swDefault:
            keyswitchDefault = reader.integer(0...127, note: true, default: 60)
        case .volume: volume = reader.number(default: 0)
        case .amplitude: amplitude = reader.number(default: 100)
        case .pan: pan = reader.number(default: 0)
        case .width: width = reader.number(default: 100)
        case .position: position = reader.number(default: 0)
        case .tune: tune = reader.number(within: -12_000...12_000, default: 0)
        case .transpose: transpose = reader.number(within: -127...127, default: 0)
        case .pitchKeytrack: pitchKeytrack = reader.number(default: 100)
        case .ampVeltrack: ampVeltrack = reader.number(default: 100)
        case .filType:
            if let type = reader.choice(SFZFilterType.self) { filterType = type }
        case .cutoff: cutoff = reader.number(default: 0)
        case .resonance: resonance = reader.number(default: 0)
        case .filKeytrack: filterKeytrack = reader.number(default: 0)
        case .filKeycenter: filterKeycenter = reader.integer(0...127, note: true, default: 60)
        case .filVeltrack: filterVeltrack = reader.number(default: 0)
        case .offset:
            offset = reader.integer(0...maximumFrame, low: .keep, high: .keep, default: 0)
        case .end:
            end = reader.integer(0...maximumFrame, low: .clamp, high: .clamp, default: maximumFrame)
        case .loopMode:
            loopMode = reader.choice(SFZLoopMode.self)
        case .loopStart:
            loopStart = reader.optionalInteger(0...maximumFrame, low: .refuse, high: .clamp)
        case .loopEnd:
            loopEnd = reader.optionalInteger(0...maximumFrame, low: .refuse, high: .clamp)
        }
        return true
    }

    /// The opcodes with a number in their name (`loccN`, `amp_velcurve_N`) and the envelopes'.
    private mutating func applyNumbered(_ name: String, reader: inout SFZValueReader) -> Bool {
        if name.hasPrefix("ampeg_") {
            return amplitudeEnvelope.apply(stage: String(name.dropFirst(6)), reader: &reader, isFilter: false)
        }
        if name.hasPrefix("fileg_") {
            return filterEnvelope.apply(stage: String(name.dropFirst(6)), reader: &reader, isFilter: true)
        }
        if let cc = SFZOpcodeName.number(after: "locc", in: name), cc < 512 {
            let value = reader.number(default: 0)
            controllerRanges[cc, default: SFZRange(0, 127)].low = value
            return true
        }
        if let cc = SFZOpcodeName.number(after: "hicc", in: name), cc < 512 {
            let value = reader.number(default: 127)
            controllerRanges[cc, default: SFZRange(0, 127)].high = value
            return true
        }
        if let velocity = SFZOpcodeName.number(after: "amp_velcurve_", in: name), velocity <= 127 {
            ampVelocityCurve.append(SFZVelocityPoint(velocity: velocity, gain: reader.number(default: 0)))
            return true
        }
        return false
    }
}
