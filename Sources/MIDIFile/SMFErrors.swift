/// Where in a file something was found.
public struct SMFLocation: Hashable, Sendable, CustomStringConvertible {
    /// The chunk: "MThd", "MTrk #3" (tracks counted from 0), or nil for the file as a whole.
    public var chunk: String?
    /// Byte offset from the start of the file.
    public var offset: Int

    /// Creates a location.
    public init(chunk: String?, offset: Int) {
        self.chunk = chunk
        self.offset = offset
    }

    public var description: String {
        if let chunk { return "\(chunk) at byte \(offset)" }
        return "byte \(offset)"
    }
}

/// Why a file was refused.
public enum SMFErrorReason: Hashable, Sendable {
    /// The file has no bytes.
    case emptyFile
    /// The file does not start with an `MThd` chunk (nor a RIFF RMID wrapper).
    case notAStandardMIDIFile(found: String)
    /// A MIDI 2.0 clip file (`SMF2CLIP`), which is not a Standard MIDI File.
    case midi2ClipFile
    /// The header chunk is cut short or declares fewer than 6 bytes.
    case truncatedHeader(bytesPresent: Int)
    /// A RIFF wrapper without a usable `data` chunk.
    case badRIFFWrapper(String)
    /// A variable-length quantity longer than the 4 bytes SMF allows.
    case variableLengthQuantityTooLong
    /// A data byte where a status byte is needed and no running status is in effect.
    case runningStatusWithoutStatus(byte: UInt8)
    /// A status byte that MIDI leaves undefined (F4, F5, F9, FD).
    case undefinedStatus(UInt8)
    /// A channel message data byte with the high bit set.
    case dataByteOutOfRange(status: UInt8, byte: UInt8)
    /// A meta or sysex event that claims more bytes than its chunk holds.
    case eventLengthExceedsChunk(kind: String, declared: Int, available: Int)
    /// A limit of ``SMFReadOptions`` was exceeded.
    case limitExceeded(String)
    /// A warning promoted to an error by strict reading.
    case strict(SMFWarning)
    /// The file could not be opened or read (missing, a directory, permission denied...): the
    /// reason in words.
    case cannotRead(String)
    /// ``SMFReadOptions/shouldCancel`` asked to stop before the file was read.
    case cancelled
}

/// A file Tactus refuses to read, with where and why.
public struct SMFError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file's path, when it was read from a file.
    public var path: String?
    /// Where the problem is.
    public var location: SMFLocation
    /// What is wrong.
    public var reason: SMFErrorReason

    /// Creates an error.
    public init(path: String? = nil, location: SMFLocation, reason: SMFErrorReason) {
        self.path = path
        self.location = location
        self.reason = reason
    }

    /// The reason in words.
    public var reasonText: String {
        switch reason {
        case .emptyFile: return "empty file (0 bytes), not a MIDI file"
        case .notAStandardMIDIFile(let found): return "not a Standard MIDI File: expected 'MThd', found \(found)"
        case .midi2ClipFile: return "a MIDI 2.0 clip file (SMF2CLIP), not a Standard MIDI File"
        case .truncatedHeader(let n): return "header chunk truncated: \(n) of 6 data bytes present"
        case .badRIFFWrapper(let why): return "RIFF RMID wrapper: \(why)"
        case .variableLengthQuantityTooLong: return "variable-length quantity longer than 4 bytes"
        case .runningStatusWithoutStatus(let b): return "data byte 0x\(hex(b)) with no running status in effect"
        case .undefinedStatus(let s): return "undefined status byte 0x\(hex(s))"
        case .dataByteOutOfRange(let s, let b): return "data byte 0x\(hex(b)) above 127 in a message with status 0x\(hex(s))"
        case .eventLengthExceedsChunk(let kind, let declared, let available):
            return "\(kind) event declares \(declared) bytes but only \(available) remain in the chunk"
        case .limitExceeded(let what): return "limit exceeded: \(what)"
        case .strict(let w): return "\(w.message) (strict mode)"
        case .cannotRead(let why): return why
        case .cancelled: return "reading was cancelled"
        }
    }

    /// True when the file could not be opened or read at all (rather than read and refused):
    /// a missing file, a directory, no permission.
    public var isUnreadableInput: Bool {
        if case .cannotRead = reason { return true }
        return false
    }

    public var description: String {
        let prefix = path.map { "\($0): " } ?? ""
        // A file that could not be read has no place in it to name.
        if isUnreadableInput { return prefix + reasonText }
        return "\(prefix)\(location): \(reasonText)"
    }
}

/// Something odd in a file that was read anyway.
public struct SMFWarning: Hashable, Sendable, CustomStringConvertible {
    /// Where it was found.
    public var location: SMFLocation
    /// What was found and what the reader did about it.
    public var message: String

    /// Creates a warning.
    public init(location: SMFLocation, message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { "\(location): \(message)" }
}

@inlinable
func hex(_ b: UInt8) -> String {
    let s = String(b, radix: 16, uppercase: true)
    return s.count == 1 ? "0" + s : s
}
