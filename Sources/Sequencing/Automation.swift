/// One point of an automation lane: the value a parameter has at a tick, and how it moves
/// from there to the next point.
public struct AutomationPoint: Hashable, Sendable {
    /// Position in ticks from the start of the track.
    public var tick: Int64
    /// The parameter's value at `tick`.
    public var value: Float
    /// The curve to the next point; nil holds the value until the next point, which then
    /// jumps.
    public var curveToNext: RampShape?

    /// Creates a point.
    public init(tick: Int64, value: Float, curveToNext: RampShape? = .linear) {
        self.tick = tick
        self.value = value
        self.curveToNext = curveToNext
    }
}

extension MusicTrack {
    /// Adds an automation lane for the parameter at `address`: one parameter event per point,
    /// each ramping to the next point's value along its curve, so the parameter is at every
    /// point's value exactly at that point's frame. Points need not be sorted; after the last
    /// one the value stays. Returns the number of events added.
    ///
    /// Name a parameter rather than an identifier with `AudioGraph.parameterID(node:named:)`.
    @discardableResult
    public mutating func addAutomation(_ address: ParameterAddress, points: [AutomationPoint]) -> Int {
        let sorted = points.sorted { $0.tick < $1.tick }
        var added = 0
        for (i, point) in sorted.enumerated() {
            var ramp: ParameterEvent.Ramp?
            if i + 1 < sorted.count, let shape = point.curveToNext, sorted[i + 1].tick > point.tick {
                ramp = ParameterEvent.Ramp(to: sorted[i + 1].value, duration: sorted[i + 1].tick - point.tick, shape: shape)
            }
            add(.parameter(ParameterEvent(address, value: point.value, ramp: ramp)), at: max(0, point.tick))
            added += 1
        }
        return added
    }

    /// The automation lane of `address` on this track: its parameter events in order.
    public func automation(of address: ParameterAddress) -> [(tick: Int64, event: ParameterEvent)] {
        events.compactMap { e in
            if case .parameter(let p) = e.event, p.address == address { return (e.tick, p) }
            return nil
        }
    }
}
