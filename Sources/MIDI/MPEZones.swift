/// The MIDI Polyphonic Expression zones an instrument's sixteen channels are split into, as
/// MPE Configuration Messages (MIDI MPE 1.0, RP-053) set them.
///
/// A Lower Zone is managed from channel 1 (index 0) and takes the member channels above it;
/// an Upper Zone is managed from channel 16 (index 15) and takes the member channels below
/// it. A note on a member channel has that channel to itself, so the channel's pitch bend,
/// pressure and controller 74 shape that note alone; the manager channel's pitch bend is
/// added to every member's, its pressure and controller 74 are combined with each member's
/// (instruments take the larger pressure and add the controller's offsets from 64), and its
/// other messages speak for the whole zone. A member channel's own program changes are
/// ignored, and a channel whose role changes releases its notes.
///
/// Until a configuration message arrives there are no zones and nothing changes, so files
/// without MPE play as they always did. The value holds no storage of its own: instruments
/// keep it inline and consult it on the audio thread.
public struct MPEZones: Sendable, Hashable {
    /// The registered parameter (LSB, with MSB 0) whose data entry MSB on a manager channel
    /// is the MPE Configuration Message: the number of member channels.
    public static let configurationRPN: UInt8 = 6
    /// The manager channel of the Lower Zone (channel 1).
    public static let lowerManager = 0
    /// The manager channel of the Upper Zone (channel 16).
    public static let upperManager = 15
    /// The pitch bend sensitivity, in semitones, a configuration message gives member channels.
    public static let memberBendRange: Float = 48
    /// The pitch bend sensitivity, in semitones, a configuration message gives the manager channel.
    public static let managerBendRange: Float = 2

    /// The Lower Zone's member channels: indices 1 through this count (0 when there is no Lower Zone).
    public private(set) var lowerMemberCount = 0
    /// The Upper Zone's member channels: indices 14 down through 15 minus this count (0 when
    /// there is no Upper Zone).
    public private(set) var upperMemberCount = 0
    /// Bit n set when channel n is a member channel of either zone.
    public private(set) var memberMask: UInt16 = 0

    /// Creates a configuration without zones.
    public init() {}

    /// True when at least one zone is configured.
    @inline(__always)
    public var isActive: Bool { lowerMemberCount != 0 || upperMemberCount != 0 }

    /// True when `channel` (0-based) is a member channel of a zone.
    @inline(__always)
    public func isMember(_ channel: Int) -> Bool {
        memberMask & (1 << UInt16(channel & 15)) != 0
    }

    /// True when `channel` manages a configured zone.
    public func isManager(_ channel: Int) -> Bool {
        (channel == Self.lowerManager && lowerMemberCount > 0) || (channel == Self.upperManager && upperMemberCount > 0)
    }

    /// The manager channel of the zone `channel` is a member of, or nil when it is no member.
    @inline(__always)
    public func manager(of channel: Int) -> Int? {
        guard isMember(channel) else { return nil }
        return channel <= lowerMemberCount ? Self.lowerManager : Self.upperManager
    }

    /// The member channels (bit n for channel n) of the zone `channel` manages or belongs to;
    /// 0 when it is in no zone.
    public func members(ofZoneWith channel: Int) -> UInt16 {
        let lower = Self.mask(1...max(1, lowerMemberCount), when: lowerMemberCount > 0)
        let upper = Self.mask((15 - max(1, upperMemberCount))...14, when: upperMemberCount > 0)
        if lower & (1 << UInt16(channel & 15)) != 0 || (channel == Self.lowerManager && lowerMemberCount > 0) { return lower }
        if upper & (1 << UInt16(channel & 15)) != 0 || (channel == Self.upperManager && upperMemberCount > 0) { return upper }
        return 0
    }

    /// Applies an MPE Configuration Message received on `channel` asking for `memberCount`
    /// member channels, and returns the channels whose role changed (bit n for channel n), or
    /// nil when `channel` is no manager channel and the message means nothing.
    ///
    /// A count of 0 removes the zone. A zone that would overlap the other one shrinks the
    /// other (a Lower Zone of 15 members removes the Upper Zone, and the reverse), as the
    /// specification asks: the newest message wins.
    public mutating func configure(managerChannel channel: Int, memberCount: Int) -> UInt16? {
        let count = min(max(memberCount, 0), 15)
        let before = memberMask | Self.managerBits(lowerMemberCount, upperMemberCount)
        if channel == Self.lowerManager {
            lowerMemberCount = count
            // Together the zones fit in 16 channels: N + M + 2 <= 16.
            if upperMemberCount > 0 && count + upperMemberCount > 14 { upperMemberCount = max(0, 14 - count) }
        } else if channel == Self.upperManager {
            upperMemberCount = count
            if lowerMemberCount > 0 && count + lowerMemberCount > 14 { lowerMemberCount = max(0, 14 - count) }
        } else {
            return nil
        }
        memberMask = Self.mask(1...max(1, lowerMemberCount), when: lowerMemberCount > 0)
            | Self.mask((15 - max(1, upperMemberCount))...14, when: upperMemberCount > 0)
        return before ^ (memberMask | Self.managerBits(lowerMemberCount, upperMemberCount))
    }

    /// What a data entry message means in MPE.
    public enum DataEntry: Sendable, Equatable {
        /// Nothing MPE defines: the instrument's ordinary handling applies.
        case notMPE
        /// A configuration message changed the zones; bit n is set for each channel n whose
        /// role changed.
        case zonesChanged(UInt16)
        /// A member channel set its zone's pitch bend range, in semitones (the cents as the
        /// fraction), which the specification applies to every member of the zone.
        case memberBendRange(Float)
    }

    /// Interprets data entry on `channel` while the registered parameter `rpnMSB`/`rpnLSB` is
    /// selected: `coarse` for the MSB (controller 6), otherwise the LSB (controller 38).
    ///
    /// The MPE Configuration Message (RPN 6, MSB, on a manager channel) updates the zones.
    /// RPN 0 on a member channel sets the zone's bend range: the MSB the semitones, keeping the
    /// cents of `currentBendRange`, the LSB the cents (0...99), keeping its semitones.
    public mutating func dataEntry(channel: Int, rpnMSB: UInt8, rpnLSB: UInt8, value: UInt8, coarse: Bool,
                                   currentBendRange: Float) -> DataEntry {
        guard rpnMSB == 0 else { return .notMPE }
        if coarse && rpnLSB == Self.configurationRPN {
            guard let changed = configure(managerChannel: channel, memberCount: Int(value)) else { return .notMPE }
            return .zonesChanged(changed)
        }
        guard rpnLSB == 0, isMember(channel) else { return .notMPE }
        return .memberBendRange(MIDIController.bendRange(currentBendRange, afterDataEntry: value, coarse: coarse))
    }

    /// What a message on a manager channel asks of its zone's member channels.
    public enum ZoneMessage: Sendable, Equatable {
        /// Nothing: the message stays the manager's (parameter selection and data entry).
        case none
        /// The controller and value reach every member channel.
        case controller(UInt8, value: UInt8)
        /// Every member channel takes the program.
        case program(UInt8)
        /// The members' voices update: the manager's pitch bend, pressure or CC 74, kept on the
        /// manager, combine with each member's own.
        case expression
    }

    /// What `message`, received on a manager channel, asks of the zone: program changes and
    /// controllers (pedals, volume, modulation, all notes off...) reach every member; pitch
    /// bend, channel pressure and controller 74 stay the manager's and combine with each
    /// member's (they would otherwise overwrite the members' per-note values); parameter
    /// selection and data entry stay the manager's own.
    public static func zoneMessage(for message: MIDIMessage) -> ZoneMessage {
        switch message.status & 0xF0 {
        case 0xB0:
            let controller = message.data1 & 0x7F
            switch controller {
            case MIDIController.dataEntryMSB, MIDIController.dataEntryLSB, MIDIController.nrpnLSB, MIDIController.nrpnMSB,
                 MIDIController.rpnLSB, MIDIController.rpnMSB:
                return .none
            case MIDIController.timbre:
                return .expression
            default:
                return .controller(controller, value: message.data2 & 0x7F)
            }
        case 0xC0: return .program(message.data1 & 0x7F)
        case 0xD0, 0xE0: return .expression
        default: return .none
        }
    }

    /// Removes both zones (a system reset).
    public mutating func reset() {
        self = MPEZones()
    }

    private static func mask(_ channels: ClosedRange<Int>, when present: Bool) -> UInt16 {
        guard present else { return 0 }
        var m: UInt16 = 0
        for c in channels where c >= 0 && c < 16 { m |= 1 << UInt16(c) }
        return m
    }

    private static func managerBits(_ lower: Int, _ upper: Int) -> UInt16 {
        (lower > 0 ? 1 << UInt16(lowerManager) : 0) | (upper > 0 ? 1 << UInt16(upperManager) : 0)
    }
}

extension MIDIMessage {
    /// True for pitch bend, channel pressure and controller 74: the expression MPE gives each
    /// note on its member channel, sent just before the note-on for its start.
    public var isNoteExpression: Bool {
        switch status & 0xF0 {
        case 0xE0, 0xD0: true
        case 0xB0: data1 == 74
        default: false
        }
    }
}
