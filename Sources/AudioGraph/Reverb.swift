import Foundation

/// A stereo room reverb after Jezar's Freeverb: eight damped feedback combs in parallel and four
/// all-pass filters in series per channel, with the right channel's delays spread a little.
public final class ReverbNode: AudioNode {
    /// Parameter identifiers.
    public enum Parameter {
        public static let roomSize: UInt32 = 0
        public static let damping: UInt32 = 1
        public static let wet: UInt32 = 2
        public static let dry: UInt32 = 3
        public static let width: UInt32 = 4
    }
    public let name = "Reverb"
    public let inputBusCount = 1
    private var table = ParameterTable([
        AudioParameterInfo(id: Parameter.roomSize, name: "Room size", range: 0...1, unit: .fraction, defaultValue: 0.6),
        AudioParameterInfo(id: Parameter.damping, name: "Damping", range: 0...1, unit: .fraction, defaultValue: 0.4),
        AudioParameterInfo(id: Parameter.wet, name: "Wet level", range: 0...1, unit: .fraction, defaultValue: 0.25),
        AudioParameterInfo(id: Parameter.dry, name: "Dry level", range: 0...1, unit: .fraction, defaultValue: 1),
        AudioParameterInfo(id: Parameter.width, name: "Width", range: 0...1, unit: .fraction, defaultValue: 1),
    ])
    public var parameterInfos: [AudioParameterInfo] { table.infos }

    private static let combTunings = [1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617]
    private static let allPassTunings = [556, 441, 341, 225]
    private static let stereoSpread = 23

    // Each filter is a ring in one allocation: lengths, positions and comb damping state.
    private var lengths: [Int] = []
    private var rings: [UnsafeMutablePointer<Float>] = []
    private var positions: UnsafeMutablePointer<Int>?
    private var combStore: UnsafeMutablePointer<Float>?
    private var feedback: Float = 0.84, damp1: Float = 0.2, damp2: Float = 0.8
    private var wet1: Float = 0, wet2: Float = 0, dryGain: Float = 1

    /// Creates a reverb.
    public init(roomSize: Float = 0.6, damping: Float = 0.4, wet: Float = 0.25, dry: Float = 1) {
        _ = table.set(Parameter.roomSize, roomSize)
        _ = table.set(Parameter.damping, damping)
        _ = table.set(Parameter.wet, wet)
        _ = table.set(Parameter.dry, dry)
        update()
    }

    deinit { freeBuffers() }

    private func freeBuffers() {
        for r in rings { r.deallocate() }
        rings = []
        positions?.deallocate(); positions = nil
        combStore?.deallocate(); combStore = nil
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        freeBuffers()
        let scale = sampleRate / 44_100
        var l: [Int] = []
        for spread in [0, Self.stereoSpread] {
            for t in Self.combTunings { l.append(max(1, Int((Double(t + spread) * scale).rounded()))) }
        }
        for spread in [0, Self.stereoSpread] {
            for t in Self.allPassTunings { l.append(max(1, Int((Double(t + spread) * scale).rounded()))) }
        }
        lengths = l
        rings = l.map { n in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            p.initialize(repeating: 0, count: n)
            return p
        }
        positions = .allocate(capacity: l.count)
        positions!.initialize(repeating: 0, count: l.count)
        combStore = .allocate(capacity: 16)
        combStore!.initialize(repeating: 0, count: 16)
        update()
    }

    public func reset() {
        for (r, n) in zip(rings, lengths) { r.update(repeating: 0, count: n) }
        positions?.update(repeating: 0, count: lengths.count)
        combStore?.update(repeating: 0, count: 16)
    }

    private func update() {
        feedback = table[Parameter.roomSize] * 0.28 + 0.7
        damp1 = table[Parameter.damping] * 0.4
        damp2 = 1 - damp1
        let wet = table[Parameter.wet] * 3, width = table[Parameter.width]
        wet1 = wet * (width / 2 + 0.5)
        wet2 = wet * ((1 - width) / 2)
        dryGain = table[Parameter.dry]
    }

    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {
        guard scope == .global, table.set(id, value) else { return }
        update()
    }

    public func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? {
        scope == .global ? table.value(id) : nil
    }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        guard let positions, let combStore, rings.count == 24 else {
            output.clear(frameCount: frameCount)
            return
        }
        let input = inputs[0]
        let fixedGain: Float = 0.015
        for i in 0..<frameCount {
            let x = (input.left[i] + input.right[i]) * fixedGain
            var outL: Float = 0, outR: Float = 0
            for c in 0..<8 {
                outL += comb(c, x, positions, combStore)
                outR += comb(c + 8, x, positions, combStore)
            }
            for a in 0..<4 {
                outL = allPass(16 + a, outL, positions)
                outR = allPass(20 + a, outR, positions)
            }
            output.left[i] = outL * wet1 + outR * wet2 + input.left[i] * dryGain
            output.right[i] = outR * wet1 + outL * wet2 + input.right[i] * dryGain
        }
    }

    @inline(__always)
    private func comb(_ k: Int, _ x: Float, _ positions: UnsafeMutablePointer<Int>, _ store: UnsafeMutablePointer<Float>) -> Float {
        let ring = rings[k], p = positions[k]
        let y = ring[p]
        store[k] = y * damp2 + store[k] * damp1
        ring[p] = x + store[k] * feedback
        positions[k] = p + 1 == lengths[k] ? 0 : p + 1
        return y
    }

    @inline(__always)
    private func allPass(_ k: Int, _ x: Float, _ positions: UnsafeMutablePointer<Int>) -> Float {
        let ring = rings[k], p = positions[k]
        let buffered = ring[p]
        ring[p] = x + buffered * 0.5
        positions[k] = p + 1 == lengths[k] ? 0 : p + 1
        return buffered - x
    }
}

/// Mixes several stereo inputs, each with its own volume and pan (balance), into one output
/// with a master volume. Volume and pan glide over a few milliseconds to avoid zipper noise.
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
    }

    deinit {
        gainsL.deallocate()
        gainsR.deallocate()
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        self.sampleRate = sampleRate
        let c = SmoothedValue.coefficient(seconds: 0.005, sampleRate: sampleRate)
        for b in 0..<inputBusCount { gainsL[b].coefficient = c; gainsR[b].coefficient = c }
        reset()
    }

    public func reset() {
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

    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {
        switch (scope, id) {
        case (.global, Parameter.masterVolume):
            master = parameterInfos[2].clamp(value)
            for b in 0..<inputBusCount { retarget(b) }
        case (.input, Parameter.volume) where Int(element) < inputBusCount:
            volumes[Int(element)] = parameterInfos[0].clamp(value)
            retarget(Int(element))
        case (.input, Parameter.pan) where Int(element) < inputBusCount:
            pans[Int(element)] = parameterInfos[1].clamp(value)
            retarget(Int(element))
        default: break
        }
    }

    public func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? {
        switch (scope, id) {
        case (.global, Parameter.masterVolume): return master
        case (.input, Parameter.volume) where Int(element) < inputBusCount: return volumes[Int(element)]
        case (.input, Parameter.pan) where Int(element) < inputBusCount: return pans[Int(element)]
        default: return nil
        }
    }

    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        output.clear(frameCount: frameCount)
        for b in 0..<inputBusCount {
            let input = inputs[b]
            for i in 0..<frameCount {
                output.left[i] += input.left[i] * gainsL[b].next()
                output.right[i] += input.right[i] * gainsR[b].next()
            }
        }
    }
}
