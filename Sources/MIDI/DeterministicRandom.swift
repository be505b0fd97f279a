/// SplitMix64 (Steele, Lea and Flood, 2014): a small generator whose stream depends only on its
/// seed, the same on every machine and Swift version. Whatever must repeat from a seed draws from
/// it: SFZ's `lorand`/`hirand`, seeded augmentation, the soak's actions.
@frozen
public struct SplitMix64: Sendable, Hashable {
    /// The generator's whole state.
    public var state: UInt64

    /// A generator starting from `seed`.
    @inlinable
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The next draw in 0 ≤ draw < 1, from the top 53 bits.
    @inlinable
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }
}

/// 64-bit FNV-1a of `text`'s UTF-8 bytes: a hash that stays the same across runs, machines and
/// Swift versions, unlike `Hasher`, which is seeded per process. Shards choose their inputs by
/// it, and augmentation keys its draws with it.
public func stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01B3
    }
    return hash
}
