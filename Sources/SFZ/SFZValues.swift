/// Reading opcode values the way sfizz does: a number may be followed by anything (`57Edge`
/// reads as 57), keys may be note names, and a value out of its range is clamped, kept or
/// refused according to the opcode.
enum SFZValue {
    /// A leading `[+-]digits`, nil when there are no digits or the number does not fit.
    static func leadingInteger(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        var i = 0
        var negative = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
            negative = bytes[i] == UInt8(ascii: "-")
            i += 1
        }
        let digitsStart = i
        var value = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 {
            let digit = Int(bytes[i] - 0x30)
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = sum
            i += 1
        }
        return i > digitsStart ? value : nil
    }

    /// A note name as sfizz reads it: a letter a-g (either case), an optional `#`/`♯` (c, d, f,
    /// g, a) or `b`/`♭` (d, e, g, a, b), then the octave; c4 is 60, c-1 is 0. Nil outside 0-127.
    static func noteNumber(_ text: String) -> Int? {
        var rest = Substring(text)
        guard let letter = rest.first?.lowercased().first, let offset = ["a": 9, "b": 11, "c": 0, "d": 2, "e": 4, "f": 5, "g": 7][letter] else {
            return nil
        }
        rest = rest.dropFirst()
        var note = offset
        if rest.hasPrefix("#") || rest.hasPrefix("♯") {
            guard "cdfga".contains(letter) else { return nil }
            note += 1
            rest = rest.dropFirst()
        } else if rest.hasPrefix("b") || rest.hasPrefix("♭") {
            guard "degab".contains(letter) else { return nil }
            note -= 1
            rest = rest.dropFirst()
        }
        guard !rest.isEmpty, rest.count <= 4, let octave = Int(rest) else { return nil }
        note += (octave + 1) * 12
        return (0...127).contains(note) ? note : nil
    }

    /// An integer or, failing that, a note name.
    static func integerOrNote(_ text: String) -> Int? {
        leadingInteger(text) ?? noteNumber(text)
    }

    /// A leading decimal number (`[+-]digits[.digits][e[+-]digits]`), nil when there is none or
    /// it is not finite.
    static func leadingDouble(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= 0x30 && bytes[i] <= 0x39 }
        var i = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
        while isDigit(i) { i += 1 }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            while isDigit(i) { i += 1 }
        }
        let mantissaEnd = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            var j = i + 1
            if j < bytes.count, bytes[j] == UInt8(ascii: "+") || bytes[j] == UInt8(ascii: "-") { j += 1 }
            if isDigit(j) {
                while isDigit(j) { j += 1 }
                i = j
            }
        }
        let prefix = String(decoding: bytes[0..<i], as: UTF8.self)
        if let value = Double(prefix), value.isFinite { return value }
        if i != mantissaEnd, let value = Double(String(decoding: bytes[0..<mantissaEnd], as: UTF8.self)), value.isFinite {
            return value
        }
        return nil
    }
}

/// What happens to a value beyond one end of an opcode's range (sfizz's opcode flags).
enum SFZBound {
    /// Moved to the end of the range.
    case clamp
    /// Refused: the opcode's default is used instead, with a warning.
    case refuse
    /// Kept as written.
    case keep
}
