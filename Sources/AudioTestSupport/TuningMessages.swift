import MIDI

/// MIDI Tuning Standard messages built byte by byte, as a sender would, for tests of the
/// parser and of the instruments that act on them.
public enum TuningMessages {
    /// One key's pitch: a semitone (the MIDI key whose equal-tempered pitch is the floor) and a
    /// 14-bit fraction of the next 100 cents; nil is the standard's "no change" (7F 7F 7F).
    public struct Pitch: Sendable {
        /// The semitone, 0...127.
        public var semitone: UInt8
        /// The fraction, 0...16383 (1/16384 of a semitone each).
        public var fraction: UInt16

        /// Creates a pitch from its two fields.
        public init(semitone: UInt8, fraction: UInt16) {
            self.semitone = semitone
            self.fraction = fraction
        }

        /// The pitch in cents above MIDI key 0, exactly as the message means it.
        public var cents: Double { Double(semitone) * 100 + Double(fraction) * 100 / 16_384 }

        /// The three data bytes.
        public var bytes: [UInt8] { [semitone & 0x7F, UInt8(fraction >> 7 & 0x7F), UInt8(fraction & 0x7F)] }
    }

    /// Bulk tuning dump (08 01, or 08 04 with `bank`) with the specification's checksum (XOR of
    /// every byte from 7E to the last data byte); `pitch(key)` nil leaves a key unchanged.
    public static func bulkDump(program: UInt8, bank: UInt8? = nil, name: String = "Test tuning", realTime: Bool = false,
                                device: UInt8 = 0x7F, pitch: (Int) -> Pitch?) -> [UInt8] {
        var body: [UInt8] = [realTime ? 0x7F : 0x7E, device, 0x08, bank == nil ? 0x01 : 0x04]
        if let bank { body.append(bank) }
        body.append(program)
        var nameBytes = Array(name.utf8.prefix(16)).map { $0 & 0x7F }
        while nameBytes.count < 16 { nameBytes.append(0x20) }
        body += nameBytes
        for key in 0..<128 { body += pitch(key)?.bytes ?? [0x7F, 0x7F, 0x7F] }
        body.append(body.reduce(0, ^) & 0x7F)
        return [0xF0] + body + [0xF7]
    }

    /// Single note tuning change (08 02, or 08 07 with `bank`); a nil pitch is "no change".
    public static func noteChange(program: UInt8, bank: UInt8? = nil, realTime: Bool = true,
                                  _ changes: [(key: UInt8, pitch: Pitch?)]) -> [UInt8] {
        var body: [UInt8] = [realTime ? 0x7F : 0x7E, 0x7F, 0x08, bank == nil ? 0x02 : 0x07]
        if let bank { body.append(bank) }
        body += [program, UInt8(changes.count)]
        for change in changes { body += [change.key] + (change.pitch?.bytes ?? [0x7F, 0x7F, 0x7F]) }
        return [0xF0] + body + [0xF7]
    }

    /// Scale/octave tuning, 1-byte form (08 08): `cents` for C...B, each -64...63.
    public static func scaleOctave(channels: UInt16, cents: [Int], realTime: Bool = false) -> [UInt8] {
        [0xF0, realTime ? 0x7F : 0x7E, 0x7F, 0x08, 0x08] + mask(channels) + cents.map { UInt8($0 + 64) } + [0xF7]
    }

    /// Scale/octave tuning, 2-byte form (08 09): 14-bit `values` for C...B, 8192 at pitch.
    public static func scaleOctave(channels: UInt16, values: [UInt16], realTime: Bool = false) -> [UInt8] {
        [0xF0, realTime ? 0x7F : 0x7E, 0x7F, 0x08, 0x09] + mask(channels)
            + values.flatMap { [UInt8($0 >> 7 & 0x7F), UInt8($0 & 0x7F)] } + [0xF7]
    }

    /// RPN 4 (when `bank` is given) and RPN 3 with their data entries: select tuning `program`.
    public static func select(program: UInt8, bank: UInt8? = nil, channel: UInt8 = 0) -> [MIDIMessage] {
        func cc(_ controller: UInt8, _ value: UInt8) -> MIDIMessage {
            MIDIMessage.controlChange(channel: channel, controller: controller, value: value)
        }
        var messages: [MIDIMessage] = []
        if let bank { messages += [cc(101, 0), cc(100, 4), cc(6, bank)] }
        messages += [cc(101, 0), cc(100, 3), cc(6, program), cc(101, 127), cc(100, 127)]
        return messages
    }

    private static func mask(_ channels: UInt16) -> [UInt8] {
        [UInt8(channels >> 14 & 0x03), UInt8(channels >> 7 & 0x7F), UInt8(channels & 0x7F)]
    }
}
