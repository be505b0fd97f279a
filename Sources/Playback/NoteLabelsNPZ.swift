extension NoteLabel {
    /// The labels as a NumPy `.npz` archive: the fields of ``json(_:sampleRate:augmentation:)``
    /// as columns with the same names and values, one row per note: `track` and `onset_frame`,
    /// `offset_frame` (int64), `channel`, `key`, `velocity`, `program` (uint8), `bank` (int32),
    /// `is_drum` (bool), `onset_seconds`, `offset_seconds` (float64); `stem` (int32) is an index
    /// into `stem_names` (a string column: `stemNames` in their order, then any other stem name
    /// in order of appearance), -1 for a note without a stem; `sample_rate` is an int64 scalar
    /// and, for an augmented song, `augmentation` a string scalar. `numpy.load` reads it
    /// without pickling. Stored uncompressed with fixed timestamps, so the bytes are the same on
    /// every run. (Every column stays far below ZIP's 4 GiB entry limit: a song holds at most
    /// 32 Mi events.)
    public static func npz(_ labels: [NoteLabel], sampleRate: Int, stemNames: [String] = [], augmentation: String? = nil) -> [UInt8] {
        var names = stemNames
        var indices = Dictionary(names.enumerated().map { ($0.element, Int32($0.offset)) }, uniquingKeysWith: { first, _ in first })
        let stems: [Int32] = labels.map { label in
            guard let stem = label.stem else { return -1 }
            if let index = indices[stem] { return index }
            indices[stem] = Int32(names.count)
            names.append(stem)
            return Int32(names.count - 1)
        }
        var archive = NPZArchive()
        archive.add("track", .int64(labels.map { Int64($0.track + 1) }))
        archive.add("channel", .uint8(labels.map { $0.channel + 1 }))
        archive.add("key", .uint8(labels.map(\.key)))
        archive.add("velocity", .uint8(labels.map(\.velocity)))
        archive.add("program", .uint8(labels.map(\.program)))
        archive.add("bank", .int32(labels.map { Int32(clamping: $0.bank) }))
        archive.add("is_drum", .bool(labels.map { $0.channel == 9 }))
        archive.add("stem", .int32(stems))
        archive.add("stem_names", .strings(names))
        archive.add("onset_frame", .int64(labels.map(\.onsetFrame)))
        archive.add("offset_frame", .int64(labels.map(\.offsetFrame)))
        archive.add("onset_seconds", .float64(labels.map(\.onsetSeconds)))
        archive.add("offset_seconds", .float64(labels.map(\.offsetSeconds)))
        archive.add("sample_rate", .int64([Int64(sampleRate)]), scalar: true)
        if let augmentation { archive.add("augmentation", .strings([augmentation]), scalar: true) }
        return archive.bytes()
    }
}

/// A NumPy `.npz` file: a ZIP archive (stored, no compression) of `.npy` arrays, format 1.0.
struct NPZArchive {
    /// A column's values, with its NumPy type.
    enum Column {
        case bool([Bool])
        case uint8([UInt8])
        case int32([Int32])
        case int64([Int64])
        case float64([Double])
        /// Fixed-width UTF-32 (`<U` with the longest string's length), as NumPy stores `str` arrays.
        case strings([String])
    }

    private var entries: [(name: String, data: [UInt8])] = []

    mutating func add(_ name: String, _ column: Column, scalar: Bool = false) {
        entries.append((name + ".npy", Self.npy(column, scalar: scalar)))
    }

    /// One `.npy` file: magic, version 1.0, a header padded so the data starts on a multiple
    /// of 64 bytes, then the values little-endian.
    static func npy(_ column: Column, scalar: Bool) -> [UInt8] {
        var data: [UInt8] = []
        let descr: String
        let count: Int
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        switch column {
        case .bool(let values): descr = "|b1"; count = values.count; data = values.map { $0 ? 1 : 0 }
        case .uint8(let values): descr = "|u1"; count = values.count; data = values
        case .int32(let values): descr = "<i4"; count = values.count; values.forEach(append)
        case .int64(let values): descr = "<i8"; count = values.count; values.forEach(append)
        case .float64(let values): descr = "<f8"; count = values.count; values.forEach { append($0.bitPattern) }
        case .strings(let values):
            let width = max(1, values.map { $0.unicodeScalars.count }.max() ?? 1)
            descr = "<U\(width)"
            count = values.count
            for value in values {
                let scalars = Array(value.unicodeScalars)
                for i in 0..<width { append(i < scalars.count ? scalars[i].value : 0) }
            }
        }
        let shape = scalar ? "()" : "(\(count),)"
        var header = Array("{'descr': '\(descr)', 'fortran_order': False, 'shape': \(shape), }".utf8)
        let unpadded = 10 + header.count + 1
        header += [UInt8](repeating: 0x20, count: (64 - unpadded % 64) % 64) + [0x0A]
        var bytes: [UInt8] = [0x93] + Array("NUMPY".utf8) + [1, 0]
        bytes += [UInt8(header.count & 0xFF), UInt8(header.count >> 8)]
        return bytes + header + data
    }

    /// The ZIP archive: a local header and the stored data per entry, then the central
    /// directory and its end record. Times are 1980-01-01 00:00 (ZIP's earliest), so the bytes
    /// do not depend on when the file was made.
    func bytes() -> [UInt8] {
        var out: [UInt8] = []
        var central: [UInt8] = []
        func u16(_ value: Int, into buffer: inout [UInt8]) { buffer += [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }
        func u32(_ value: UInt32, into buffer: inout [UInt8]) { for shift in stride(from: 0, to: 32, by: 8) { buffer.append(UInt8((value >> UInt32(shift)) & 0xFF)) } }
        let dosDate = (0 << 9) | (1 << 5) | 1  // 1980-01-01
        for entry in entries {
            let name = Array(entry.name.utf8)
            let checksum = CRC32.checksum(entry.data)
            let offset = UInt32(out.count)
            // Local file header.
            u32(0x0403_4B50, into: &out)
            u16(20, into: &out); u16(0, into: &out); u16(0, into: &out)  // version needed, flags, stored
            u16(0, into: &out); u16(dosDate, into: &out)
            u32(checksum, into: &out); u32(UInt32(entry.data.count), into: &out); u32(UInt32(entry.data.count), into: &out)
            u16(name.count, into: &out); u16(0, into: &out)
            out += name + entry.data
            // Its central directory record.
            u32(0x0201_4B50, into: &central)
            u16(20, into: &central); u16(20, into: &central); u16(0, into: &central); u16(0, into: &central)
            u16(0, into: &central); u16(dosDate, into: &central)
            u32(checksum, into: &central); u32(UInt32(entry.data.count), into: &central); u32(UInt32(entry.data.count), into: &central)
            u16(name.count, into: &central); u16(0, into: &central); u16(0, into: &central)  // name, extra, comment lengths
            u16(0, into: &central); u16(0, into: &central); u32(0, into: &central)  // disk, internal and external attributes
            u32(offset, into: &central)
            central += name
        }
        let directoryOffset = UInt32(out.count)
        out += central
        u32(0x0605_4B50, into: &out)
        u16(0, into: &out); u16(0, into: &out)
        u16(entries.count, into: &out); u16(entries.count, into: &out)
        u32(UInt32(central.count), into: &out); u32(directoryOffset, into: &out)
        u16(0, into: &out)
        return out
    }
}

/// CRC-32 (IEEE 802.3, reflected, as ZIP uses it).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
