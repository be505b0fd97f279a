import Foundation

/// Mixes several stereo inputs, each with its own volume and pan (balance), into one output
/// with a master volume. A plain change of volume or pan glides over a few milliseconds to
/// avoid zipper noise; a ``ParameterRamp`` is followed exactly, frame by frame, so automation
/// lands on the same values at the same frames whatever the block size.
public final class MixerNode: AudioNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Per input (scope `.input`, element = bus): linear volume.
        public static let volume: UInt32 = 0
        /// Per input (scope `.input`, element = bus): pan from -1 to 1.
        public static let pan: UInt32 = 1
        /// Global: master linear volume.
        public static let masterVolume: UInt32 = 0
    }
    public let name = "Mixer"
    public let inputBusCount: Int
    public let parameterInfos: [AudioParameterInfo]
    private var volumes: [Float], pans: [Float]
    private var master: Float = 1
    private var gainsL: UnsafeMutablePointer<SmoothedValue>
    private var gainsR: UnsafeMutablePointer<SmoothedValue>
    private var sampleRate = 44_100.0
    // Ramps by slot: bus b's volume at 2b, its pan at 2b + 1, the master volume last. Reserved
    // in init so starting and following a ramp never allocates.
    private let ramps: UnsafeMutablePointer<ParameterRamp>
    private let rampPositions: UnsafeMutablePointer<Int64>
    private let rampActive: UnsafeMutablePointer<Bool>
    private var activeRamps = 0
    private var masterSlot: Int { 2 * inputBusCount }

    /// Creates a mixer with `inputCount` input buses.
    public init(inputCount: Int) {
        inputBusCount = max(1, inputCount)
        parameterInfos = [
            AudioParameterInfo(id: Parameter.volume, name: "Volume", range: 0...4, unit: .linearGain, defaultValue: 1, scope: .input),
            AudioParameterInfo(id: Parameter.pan, name: "Pan", range: -1...1, unit: .pan, defaultValue: 0, scope: .input),
            AudioParameterInfo(id: Parameter.masterVolume, name: "Master volume", range: 0...4, unit: .linearGain, defaultValue: 1),
        ]
        volumes = Array(repeating: 1, count: inputBusCount)
        pans = Array(repeating: 0, count: inputBusCount)
        gainsL = .allocate(capacity: inputBusCount)
        gainsR = .allocate(capacity: inputBusCount)
        gainsL.initialize(repeating: SmoothedValue(1), count: inputBusCount)
        gainsR.initialize(repeating: SmoothedValue(1), count: inputBusCount)
        let slots = 2 * inputBusCount + 1
        ramps = .allocate(capacity: slots)
        ramps.initialize(repeating: ParameterRamp(from: 0, to: 0, length: 1), count: slots)
        rampPositions = .allocate(capacity: slots)
        rampPositions.initialize(repeating: 0, count: slots)
        rampActive = .allocate(capacity: slots)
        rampActive.initialize(repeating: false, count: slots)
    }

    deinit {
        gainsL.deallocate()
        gainsR.deallocate()
        ramps.deallocate()
        rampPositions.deallocate()
        rampActive.deallocate()
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        let c = SmoothedValue.coefficient(seconds: 0.005, sampleRate: sampleRate)
        for b in 0..<inputBusCount { gainsL[b].coefficient = c; gainsR[b].coefficient = c }
        reset()
    }

    public func reset() {
        // A ramp in flight ends at its target, as a plain change would.
        for slot in 0...masterSlot where rampActive[slot] {
            rampActive[slot] = false
            store(ramps[slot].end, slot: slot)
        }
        activeRamps = 0
        for b in 0..<inputBusCount {
            let (l, r) = targets(b)
            gainsL[b].jump(to: l)
            gainsR[b].jump(to: r)
        }
    }

    private func targets(_ bus: Int) -> (Float, Float) {
        // Equal-power balance, normalised so the centre is unity on both sides.
        let angle = Double(pans[bus] + 1) * Double.pi / 4
        let g = volumes[bus] * master
        return (g * Float(cos(angle) * 2.0.squareRoot()), g * Float(sin(angle) * 2.0.squareRoot()))
    }

    private func retarget(_ bus: Int) {
        let (l, r) = targets(bus)
        gainsL[bus].target = l
        gainsR[bus].target = r
    }

    /// The ramp slot of a parameter address, or nil when the mixer has no such parameter.
    private func slot(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Int? {
        switch (scope, id) {
        case (.global, Parameter.masterVolume): return masterSlot
        case (.input, Parameter.volume) where Int(element) < inputBusCount: return 2 * Int(element)
        case (.input, Parameter.pan) where Int(element) < inputBusCount: return 2 * Int(element) + 1
        default: return nil
        }
    }

    private func info(forSlot slot: Int) -> AudioParameterInfo {
        slot == masterSlot ? parameterInfos[2] : parameterInfos[slot % 2]
    }

    /// Stores a clamped value in its slot; the gains still have to be retargeted.
    private func store(_ value: Float, slot: Int) {
        let v = info(forSlot: slot).clamp(value)
        if slot == masterSlot {
            master = v
        } else if slot % 2 == 0 {
            volumes[slot / 2] = v
        } else {
            pans[slot / 2] = v
        }
    }

    private func stopRamp(_ slot: Int) {
        if rampActive[slot] {
            rampActive[slot] = false
            activeRamps -= 1
        }
    }

    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {
        guard let slot = slot(id, scope: scope, element: element) else { return }
        // A plain change ends a ramp of the same parameter and glides from where it is.
        stopRamp(slot)
        store(value, slot: slot)
        if slot == masterSlot {
            for b in 0..<inputBusCount { retarget(b) }
        } else {
            retarget(slot / 2)
        }
    }

    /// Follows `ramp` exactly: the gains take the ramp's value at every frame, with no glide.
    public func rampParameter(_ id: UInt32, ramp: ParameterRamp, scope: AudioParameterScope, element: UInt32) {
        guard let slot = slot(id, scope: scope, element: element) else { return }
        let info = info(forSlot: slot)
        var r = ramp
        r.start = info.clamp(r.start)
        r.end = info.clamp(r.end)
        ramps[slot] = r
        rampPositions[slot] = r.elapsed
        if !rampActive[slot] {
            rampActive[slot] = true
            activeRamps += 1
        }
        store(r.value(atElapsed: r.elapsed), slot: slot)
        if slot == masterSlot {
            for b in 0..<inputBusCount { jumpGains(b) }
        } else {
            jumpGains(slot / 2)
        }
        if r.elapsed >= r.length {
            stopRamp(slot)
            store(r.end, slot: slot)
        }
    }

    /// The value a parameter was set to, or a ramp's end value while the ramp runs.
    public func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? {
        guard let slot = slot(id, scope: scope, element: element) else { return nil }
        if rampActive[slot] { return ramps[slot].end }
        if slot == masterSlot { return master }
        return slot % 2 == 0 ? volumes[slot / 2] : pans[slot / 2]
    }

    private func jumpGains(_ bus: Int) {
        let (l, r) = targets(bus)
        gainsL[bus].jump(to: l)
        gainsR[bus].jump(to: r)
    }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.clear(frameCount: frameCount)
        var done = 0
        // While a ramp runs the gains are exact per frame: one frame at a time, then a step.
        while activeRamps > 0 && done < frameCount {
            mix(inputs: inputs, output: output, from: done, count: 1)
            stepRamps()
            done += 1
        }
        if done < frameCount { mix(inputs: inputs, output: output, from: done, count: frameCount - done) }
    }

    @inline(__always)
    private func mix(inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer, from start: Int, count: Int) {
        for b in 0..<inputBusCount {
            let input = inputs[b]
            for i in start..<(start + count) {
                output.left[i] += input.left[i] * gainsL[b].next()
                output.right[i] += input.right[i] * gainsR[b].next()
            }
        }
    }

    /// Advances every running ramp by one frame and sets the gains it moves.
    private func stepRamps() {
        // A bus's two gains are products of its volume, pan and the master volume, so a ramp
        // of one of them sets both exactly (a glide of another on that bus completes at once).
        var masterMoved = false
        for slot in 0...masterSlot where rampActive[slot] {
            rampPositions[slot] += 1
            store(ramps[slot].value(atElapsed: rampPositions[slot]), slot: slot)
            if rampPositions[slot] >= ramps[slot].length { stopRamp(slot) }
            if slot == masterSlot { masterMoved = true } else { jumpGains(slot / 2) }
        }
        if masterMoved { for b in 0..<inputBusCount { jumpGains(b) } }
    }
}
