/// New pitches for some or all keys of one tuning program, as a MIDI Tuning Standard bulk
/// dump or single note tuning change carries them.
///
/// The pitches are held in the standard's own resolution (a semitone and a fraction of
/// 1/16384 semitone) in fixed-size storage, so the message decodes on the audio thread without
/// allocating.
public struct MIDITuningProgramChange: Hashable, Sendable {
    /// The tuning bank (0 for the message forms that name none).
    public var bank: UInt8
    /// The tuning program, 0...127.
    public var program: UInt8
    /// True for a real-time (F0 7F) message: notes already sounding follow the change.
    public var realTime: Bool
    /// The sixteen ASCII characters of a bulk dump's name (zeros for a note change).
    public var nameBytes: SIMD16<UInt8>
    // Per key, semitone << 14 | fraction, or -1 where the message leaves the key alone.
    // SIMD storage is fixed-size, Hashable and Sendable, so the command stays a plain value.
    var low: SIMD64<Int32>
    var high: SIMD64<Int32>

    /// Marks a key the message leaves unchanged.
    static let unchanged: Int32 = -1

    init(bank: UInt8, program: UInt8, realTime: Bool) {
        self.bank = bank
        self.program = program
        self.realTime = realTime
        nameBytes = SIMD16()
        low = SIMD64(repeating: Self.unchanged)
        high = SIMD64(repeating: Self.unchanged)
    }

    /// The new pitch of `key` (0...127) in cents above MIDI key 0 (C-1), or nil when the
    /// message leaves the key as it was.
    public func cents(forKey key: Int) -> Double? {
        guard (0..<128).contains(key) else { return nil }
        let raw = key < 64 ? low[key] : high[key - 64]
        guard raw != Self.unchanged else { return nil }
        return Double(raw) * 100 / 16_384
    }

    /// The bulk dump's name, without trailing spaces or zeros.
    public var name: String {
        var text = ""
        for i in 0..<16 where nameBytes[i] != 0 { text.unicodeScalars.append(Unicode.Scalar(nameBytes[i] & 0x7F)) }
        while text.last == " " { text.removeLast() }
        return text
    }

    mutating func set(key: Int, semitone: UInt8, fraction: Int32) {
        let raw = Int32(semitone) << 14 | fraction
        if key < 64 { low[key] = raw } else { high[key - 64] = raw }
    }
}

/// A MIDI Tuning Standard scale/octave tuning: one offset for each of the twelve pitch
/// classes, applied to every octave of the channels it names.
public struct MIDIScaleOctaveTuning: Hashable, Sendable {
    /// The channels retuned, bit n for channel n (0...15).
    public var channels: UInt16
    /// True for a real-time (F0 7F) message: notes already sounding follow the change.
    public var realTime: Bool
    // Offsets in cents for C, C#, ... B in lanes 0...11 (lanes 12...15 are zero).
    var offsets: SIMD16<Double>

    /// The offset in cents from equal temperament of pitch class `pitchClass` (0 is C).
    public func cents(forPitchClass pitchClass: Int) -> Double {
        offsets[((pitchClass % 12) + 12) % 12]
    }
}

extension SystemExclusiveCommand {
    /// Decodes a MIDI Tuning Standard message (sub-ID#1 08), from the byte after F0 up to
    /// before F7: `at(0)` is 7E or 7F. Nil for forms an instrument does not act on (dump
    /// requests), wrong lengths, data bytes with the top bit set, and a bulk dump whose
    /// checksum matches no sender's reckoning.
    static func midiTuning(count: Int, at: (Int) -> UInt8) -> SystemExclusiveCommand? {
        guard count >= 5 else { return nil }
        for i in 0..<count where at(i) & 0x80 != 0 { return nil }
        let realTime = at(0) == 0x7F
        switch at(3) {
        case 0x01, 0x04:
            let banked = at(3) == 0x04
            let first = banked ? 5 : 4
            guard count == first + 1 + 16 + 384 + 1 else { return nil }
            guard bulkDumpChecksumMatches(count: count, first: first, at: at) else { return nil }
            var change = MIDITuningProgramChange(bank: banked ? at(4) : 0, program: at(first), realTime: realTime)
            for i in 0..<16 { change.nameBytes[i] = at(first + 1 + i) }
            let data = first + 17
            for key in 0..<128 {
                let p = data + 3 * key
                readPitch(at(p), at(p + 1), at(p + 2)).map { change.set(key: key, semitone: $0.0, fraction: $0.1) }
            }
            return .tuningBulkDump(change)
        case 0x02, 0x07:
            let banked = at(3) == 0x07
            let first = banked ? 5 : 4
            guard count > first + 1 else { return nil }
            let changes = Int(at(first + 1))
            guard changes >= 1, count == first + 2 + 4 * changes else { return nil }
            var change = MIDITuningProgramChange(bank: banked ? at(4) : 0, program: at(first), realTime: realTime)
            for n in 0..<changes {
                let p = first + 2 + 4 * n
                readPitch(at(p + 1), at(p + 2), at(p + 3)).map { change.set(key: Int(at(p)), semitone: $0.0, fraction: $0.1) }
            }
            return .singleNoteTuningChange(change)
        case 0x08, 0x09:
            let twoByte = at(3) == 0x09
            guard count == (twoByte ? 31 : 19) else { return nil }
            let mask = UInt16(at(4) & 0x03) << 14 | UInt16(at(5)) << 7 | UInt16(at(6))
            var offsets = SIMD16<Double>()
            for i in 0..<12 {
                if twoByte {
                    // 14 bits with 8192 at pitch and 100 cents either side, as FluidSynth reads it.
                    let value = Int(at(7 + 2 * i)) << 7 | Int(at(8 + 2 * i))
                    offsets[i] = Double(value - 8192) * 100 / 8192
                } else {
                    offsets[i] = Double(Int(at(7 + i)) - 64)
                }
            }
            return .scaleOctaveTuning(MIDIScaleOctaveTuning(channels: mask, realTime: realTime, offsets: offsets))
        default:
            return nil
        }
    }

    /// A frequency's three bytes: nil for 7F 7F 7F, the standard's "no change".
    private static func readPitch(_ semitone: UInt8, _ msb: UInt8, _ lsb: UInt8) -> (UInt8, Int32)? {
        let fraction = Int32(msb) << 7 | Int32(lsb)
        if semitone == 0x7F && fraction == 0x3FFF { return nil }
        return (semitone, fraction)
    }

    /// The specification XORs every byte from 7E to the last data byte; FluidSynth's own dumps
    /// leave out the name and device (08 01) or the 7E (08 04). Any of the three is accepted,
    /// so dumps from either kind of sender load.
    private static func bulkDumpChecksumMatches(count: Int, first: Int, at: (Int) -> UInt8) -> Bool {
        let checksum = at(count - 1)
        var all: UInt8 = 0
        for i in 0..<(count - 1) { all ^= at(i) }
        if all & 0x7F == checksum { return true }
        if (all ^ at(0)) & 0x7F == checksum { return true }
        guard first == 4 else { return false }
        var fluid = at(0) ^ at(2) ^ at(3) ^ at(4)
        for i in 21..<(count - 1) { fluid ^= at(i) }
        return fluid & 0x7F == checksum
    }
}
