import Foundation

/// A value that glides towards its target by a fixed fraction per sample: parameter changes
/// start at their exact frame without a step (zipper noise). Per-sample, so it does not
/// depend on how blocks are split.
@frozen
public struct SmoothedValue {
    /// The value now.
    public var current: Float
    /// The value it moves to.
    public var target: Float
    /// Fraction of the remaining distance covered per sample.
    public var coefficient: Float

    /// A value at rest.
    public init(_ value: Float, coefficient: Float = 1) {
        current = value
        target = value
        self.coefficient = coefficient
    }

    /// The coefficient of a one-pole glide with time constant `seconds`.
    public static func coefficient(seconds: Double, sampleRate: Double) -> Float {
        Float(1 - exp(-1 / max(1e-6, seconds * sampleRate)))
    }

    /// Advances one sample and returns the new value.
    @inlinable @inline(__always)
    public mutating func next() -> Float {
        let d = target - current
        // Snap when the remaining distance no longer changes the float, so it comes to rest.
        if abs(d) < 1e-7 { current = target } else { current += d * coefficient }
        return current
    }

    /// Jumps to `value` at once.
    @inlinable
    public mutating func jump(to value: Float) {
        current = value
        target = value
    }
}

/// Decibels to a linear gain.
@inlinable
public func decibelsToGain(_ db: Float) -> Float {
    db <= -96 ? 0 : Float(pow(10, Double(db) / 20))
}

/// A linear gain to decibels (-infinity for 0).
@inlinable
public func gainToDecibels(_ gain: Float) -> Float {
    gain <= 0 ? -.infinity : 20 * log10(gain)
}
