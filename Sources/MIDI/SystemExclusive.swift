/// The system exclusive messages a General MIDI instrument acts on, decoded from a message's
/// bytes (F0 to F7) without allocating, so an instrument can decode on the audio thread.
///
/// Which messages count, and how strictly they are checked (device identifiers, lengths, the
/// Roland checksum), follows FluidSynth's `fluid_synth_sysex`: an instrument answering to
/// device 0x10 (FluidSynth's default) or to the "all devices" identifier 0x7F.
public enum SystemExclusiveCommand: Hashable, Sendable {
    /// F0 7E dev 09 01 F7: General MIDI System On.
    case generalMIDIOn
    /// F0 7E dev 09 03 F7: General MIDI 2 System On.
    case generalMIDI2On
    /// F0 41 dev 42 12 40 00 7F 00 41 F7: Roland GS reset (mode set to GS).
    case gsReset
    /// F0 41 dev 42 12 40 00 7F 7F 42 F7: Roland mode set to GM, a reset to General MIDI.
    case gsModeGeneralMIDI
    /// F0 43 dev 4C 00 00 7E 00 F7 (or address 00 00 7F): Yamaha XG System On.
    case xgOn
    /// F0 41 dev 42 12 40 1x 15 mm cs F7: GS "use for rhythm part" of a part, already mapped
    /// to its MIDI channel as the Sound Canvas numbers parts (part 10 is part number 0).
    /// `drums` is false for mode 0 (a melodic part), true for the drum maps 1 and 2.
    case gsRhythmPart(channel: UInt8, drums: Bool)
    /// F0 7F dev 04 01 ll mm F7: master volume, 0...16383 (16383 is full level).
    case masterVolume(UInt16)
    /// F0 7F dev 04 03 ll mm F7: master fine tuning, 0...16383 with 8192 at pitch, spanning
    /// -100 to almost +100 cents.
    case masterFineTuning(UInt16)
    /// F0 7F dev 04 04 ll mm F7: master coarse tuning in semitones from -64 to +63 (the MSB
    /// less 64; the LSB is ignored as the specification says).
    case masterCoarseTuning(Int8)
    /// F0 7E dev 08 01 tt name data cs F7 (or 08 04 bb tt ... with a bank): MIDI Tuning
    /// Standard bulk tuning dump, the pitches of all 128 keys of a tuning program. The
    /// real-time form (F0 7F) is accepted too.
    case tuningBulkDump(MIDITuningProgramChange)
    /// F0 7F dev 08 02 tt ll [kk xx yy zz]... F7 (or 08 07 bb tt ll ... with a bank, real-time
    /// or not): MIDI Tuning Standard single note tuning change of some keys of a program.
    case singleNoteTuningChange(MIDITuningProgramChange)
    /// F0 7E dev 08 08 ff gg hh ss×12 F7 (1-byte form, ±64 cents) or 08 09 with twelve 14-bit
    /// values (±100 cents), real-time or not: MIDI Tuning Standard scale/octave tuning.
    case scaleOctaveTuning(MIDIScaleOctaveTuning)

    /// FluidSynth's default device identifier (`synth.device-id`).
    public static let deviceID: UInt8 = 0x10

    /// Decodes a whole message from its F0 to its F7; nil for anything an instrument need not
    /// act on (other manufacturers, other devices, malformed or truncated messages).
    public init?(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Without the framing bytes, as FluidSynth's handler sees the message.
        guard bytes.count >= 6, bytes[0] == 0xF0, bytes[bytes.count - 1] == 0xF7 else { return nil }
        let count = bytes.count - 2
        func at(_ i: Int) -> UInt8 { bytes[i + 1] }
        func device(_ d: UInt8) -> Bool { d == Self.deviceID || d == 0x7F }
        guard device(at(1)) else { return nil }
        switch at(0) {
        case 0x7E where at(2) == 0x08, 0x7F where at(2) == 0x08:
            guard let command = Self.midiTuning(count: count, at: at) else { return nil }
            self = command
        case 0x7E where at(2) == 0x09 && count == 4:
            switch at(3) {
            case 0x01: self = .generalMIDIOn
            case 0x03: self = .generalMIDI2On
            default: return nil
            }
        case 0x7F where at(2) == 0x04 && count == 6:
            let value = UInt16(at(4) & 0x7F) | UInt16(at(5) & 0x7F) << 7
            switch at(3) {
            case 0x01: self = .masterVolume(value)
            case 0x03: self = .masterFineTuning(value)
            case 0x04: self = .masterCoarseTuning(Int8(Int(at(5) & 0x7F) - 64))
            default: return nil
            }
        case 0x41 where at(2) == 0x42 && at(3) == 0x12 && count == 9:
            // One data byte (DT1 can carry more, but neither message here does).
            var sum = 0
            for i in 4..<(count - 1) { sum += Int(at(i)) }
            guard (0x80 - (sum & 0x7F)) & 0x7F == Int(at(count - 1)) else { return nil }
            let address = Int(at(4)) << 16 | Int(at(5)) << 8 | Int(at(6))
            let data = at(7)
            if address == 0x40007F {
                switch data {
                case 0x00: self = .gsReset
                case 0x7F: self = .gsModeGeneralMIDI
                default: return nil
                }
            } else if address & 0xFFF0FF == 0x401015, data <= 2 {
                let part = UInt8((address >> 8) & 0x0F)
                // The Sound Canvas numbers parts 10, 1...9, 11...16 as 0, 1...9, A...F.
                let channel: UInt8 = part >= 0x0A ? part : (part == 0 ? 9 : part - 1)
                self = .gsRhythmPart(channel: channel, drums: data != 0)
            } else {
                return nil
            }
        case 0x43 where at(2) == 0x4C && count == 7:
            let address = Int(at(3)) << 16 | Int(at(4)) << 8 | Int(at(5))
            guard address == 0x00007E || address == 0x00007F, at(6) == 0 else { return nil }
            self = .xgOn
        default:
            return nil
        }
    }

    /// Decodes a message held in an array (control-side convenience).
    public init?(_ bytes: [UInt8]) {
        guard let command = bytes.withUnsafeBufferPointer({ SystemExclusiveCommand($0) }) else { return nil }
        self = command
    }

    /// True for the messages that return an instrument to its power-up state: the GM, GM2, GS
    /// and XG resets.
    public var isSystemReset: Bool {
        switch self {
        case .generalMIDIOn, .generalMIDI2On, .gsReset, .gsModeGeneralMIDI, .xgOn: return true
        default: return false
        }
    }

    /// Master fine tuning in cents for a ``masterFineTuning(_:)`` value.
    public static func fineTuningCents(_ value: UInt16) -> Double {
        (Double(value) - 8192) * 100 / 8192
    }
}
