/// A JSON value, printed in the canonical layout of the corpus oracle: keys sorted, scalar
/// lists on one line, one row per line otherwise, so two dumps diff line by line.
public indirect enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number.
    case int(Int64)
    /// A number with a fraction.
    case double(Double)
    /// A string.
    case string(String)
    /// A list.
    case array([JSONValue])
    /// An object, printed with its keys sorted.
    case object([String: JSONValue])

    /// The canonical text.
    public func canonicalText() -> String {
        var out = ""
        write(to: &out, indent: 0)
        return out
    }

    private var isLeafy: Bool {
        switch self {
        case .object: return false
        case .array(let items):
            if items.contains(where: { if case .object = $0 { return true }; return false }) { return false }
            if !items.isEmpty && items.allSatisfy({ if case .array = $0 { return true }; return false }) { return false }
            for item in items {
                if case .array(let inner) = item {
                    if !item.isLeafy { return false }
                    if !inner.isEmpty && inner.allSatisfy({ if case .array = $0 { return true }; return false }) { return false }
                }
            }
            return true
        default: return true
        }
    }

    private func writeCompact(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d): out += JSONValue.format(d)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.writeCompact(to: &out)
            }
            out += "]"
        case .object(let dict):
            out += "{"
            for (i, key) in dict.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                JSONValue.writeString(key, to: &out)
                out += ":"
                dict[key]!.writeCompact(to: &out)
            }
            out += "}"
        }
    }

    private func write(to out: inout String, indent: Int) {
        if isLeafy {
            writeCompact(to: &out)
            return
        }
        let pad = String(repeating: " ", count: indent)
        switch self {
        case .object(let dict):
            if dict.isEmpty { out += "{}"; return }
            out += "{\n"
            for (i, key) in dict.keys.sorted().enumerated() {
                if i > 0 { out += ",\n" }
                out += pad + " "
                JSONValue.writeString(key, to: &out)
                out += ":"
                dict[key]!.write(to: &out, indent: indent + 1)
            }
            out += "\n" + pad + "}"
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "[\n"
            for (i, item) in items.enumerated() {
                if i > 0 { out += ",\n" }
                out += pad + " "
                item.write(to: &out, indent: indent + 1)
            }
            out += "\n" + pad + "]"
        default:
            writeCompact(to: &out)
        }
    }

    static func format(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        if d == d.rounded() && abs(d) < 1e15 { return String(Int64(d)) + ".0" }
        return "\(d)"
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value > 0x7E {
                    // ASCII-only output, as the oracle prints it.
                    var units: [UInt16] = []
                    units.append(contentsOf: String(scalar).utf16)
                    for u in units {
                        let h = String(u, radix: 16)
                        out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                    }
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
