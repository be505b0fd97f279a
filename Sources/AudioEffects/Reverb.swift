import AudioGraph
import Foundation

/// A stereo room reverb after Jezar's Freeverb: eight damped feedback combs in parallel and four
/// all-pass filters in series per channel, with the right channel's delays spread a little.
public final class ReverbNode: ParameterizedNode {
    /// Parameter identifiers.
    public enum Parameter {
        /// Size of the room: longer decay as it grows.
        public static let roomSize: UInt32 = 0
        /// How fast high frequencies die away in the tail.
        public static let damping: UInt32 = 1
        /// Level of the reverberated signal.
        public static let wet: UInt32 = 2
        /// Level of the direct signal.
        public static let dry: UInt32 = 3
        /// Stereo width of the tail (0 mono, 1 wide).
        public static let width: UInt32 = 4
    }
    public let name = "Reverb"
    public let inputBusCount = 1
    public let parameters = NodeParameters([
        AudioParameterInfo(id: Parameter.roomSize, name: "Room size", range: 0...1, unit: .fraction, defaultValue: 0.6),
        AudioParameterInfo(id: Parameter.damping, name: "Damping", range: 0...1, unit: .fraction, defaultValue: 0.4),
        AudioParameterInfo(id: Parameter.wet, name: "Wet level", range: 0...1, unit: .fraction, defaultValue: 0.25),
        AudioParameterInfo(id: Parameter.dry, name: "Dry level", range: 0...1, unit: .fraction, defaultValue: 1),
        AudioParameterInfo(id: Parameter.width, name: "Width", range: 0...1, unit: .fraction, defaultValue: 1),
    ])

    private static let combTunings = [1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617]
    private static let allPassTunings = [556, 441, 341, 225]
    private static let stereoSpread = 23

    // The 16 combs (8 left, 8 right) in four groups of four, one a SIMD lane: each group's
    // delay lines share one ring of `combRingSize` four-lane slots (lane k of slot s is float
    // 4s + k), written at `combWrite` (one slot a frame, all four lanes with one store); comb
    // k reads its lane `combDelays[k]` slots back, which is what a ring of that length of its
    // own would give. Then the
    // combs' damping state, and per all-pass (4 left, 4 right) a ring, its length and its
    // read position.
    private static let combCount = 16, allPassCount = 8
    private var combRings: UnsafeMutablePointer<Float>?
    private var combRingSize = 0
    private var combWrite = 0
    private var combDelays: UnsafeMutablePointer<Int>?
    private var combStore: UnsafeMutablePointer<Float>?
    private var allPassRings: UnsafeMutablePointer<UnsafeMutablePointer<Float>>?
    private var allPassLengths: UnsafeMutablePointer<Int>?
    private var allPassPositions: UnsafeMutablePointer<Int>?
    // Per-block scratch: the mono input and the two wet sums.
    private var scratchFrames = 0
    private var scratchInput: UnsafeMutablePointer<Float>?
    private var scratchL: UnsafeMutablePointer<Float>?
    private var scratchR: UnsafeMutablePointer<Float>?
    private var feedback: Float = 0.84, damp1: Float = 0.2, damp2: Float = 0.8
    private var wet1: Float = 0, wet2: Float = 0, dryGain: Float = 1

    /// Creates a reverb.
    public init(roomSize: Float = 0.6, damping: Float = 0.4, wet: Float = 0.25, dry: Float = 1) {
        parameters.jump(Parameter.roomSize, to: roomSize)
        parameters.jump(Parameter.damping, to: damping)
        parameters.jump(Parameter.wet, to: wet)
        parameters.jump(Parameter.dry, to: dry)
        update()
    }

    deinit { freeBuffers() }

    private func freeBuffers() {
        combRings?.deallocate(); combRings = nil
        combDelays?.deallocate(); combDelays = nil
        combStore?.deallocate(); combStore = nil
        if let allPassRings { for k in 0..<Self.allPassCount { allPassRings[k].deallocate() } }
        allPassRings?.deallocate(); allPassRings = nil
        allPassLengths?.deallocate(); allPassLengths = nil
        allPassPositions?.deallocate(); allPassPositions = nil
        scratchInput?.deallocate(); scratchInput = nil
        scratchL?.deallocate(); scratchL = nil
        scratchR?.deallocate(); scratchR = nil
    }

    public func prepare(sampleRate: Double, maximumFrameCount: Int) {
        freeBuffers()
        let scale = sampleRate / 44_100
        func delay(_ tuning: Int) -> Int { max(1, Int((Double(tuning) * scale).rounded())) }
        let delays = UnsafeMutablePointer<Int>.allocate(capacity: Self.combCount)
        for (k, t) in (Self.combTunings + Self.combTunings.map { $0 + Self.stereoSpread }).enumerated() {
            (delays + k).initialize(to: delay(t))
        }
        combDelays = delays
        // A power of two past the longest delay: the slot read is never the one written.
        combRingSize = 1
        for k in 0..<Self.combCount { while combRingSize <= delays[k] { combRingSize <<= 1 } }
        combRings = .allocate(capacity: 16 * combRingSize)
        combRings!.initialize(repeating: 0, count: 16 * combRingSize)
        combWrite = 0
        let rings = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: Self.allPassCount)
        let lengths = UnsafeMutablePointer<Int>.allocate(capacity: Self.allPassCount)
        for (k, t) in (Self.allPassTunings + Self.allPassTunings.map { $0 + Self.stereoSpread }).enumerated() {
            let length = delay(t)
            let ring = UnsafeMutablePointer<Float>.allocate(capacity: length)
            ring.initialize(repeating: 0, count: length)
            (rings + k).initialize(to: ring)
            (lengths + k).initialize(to: length)
        }
        allPassRings = rings
        allPassLengths = lengths
        allPassPositions = .allocate(capacity: Self.allPassCount)
        allPassPositions!.initialize(repeating: 0, count: Self.allPassCount)
        combStore = .allocate(capacity: Self.combCount)
        combStore!.initialize(repeating: 0, count: Self.combCount)
        scratchFrames = max(1, maximumFrameCount)
        scratchInput = .allocate(capacity: scratchFrames)
        scratchL = .allocate(capacity: scratchFrames)
        scratchR = .allocate(capacity: scratchFrames)
        update()
    }

    public func reset() {
        guard let combRings, let allPassRings, let allPassLengths else { return }
        combRings.update(repeating: 0, count: 16 * combRingSize)
        combWrite = 0
        for k in 0..<Self.allPassCount { allPassRings[k].update(repeating: 0, count: allPassLengths[k]) }
        allPassPositions?.update(repeating: 0, count: Self.allPassCount)
        combStore?.update(repeating: 0, count: Self.combCount)
    }

    private func update() {
        feedback = parameters[Parameter.roomSize] * 0.28 + 0.7
        damp1 = parameters[Parameter.damping] * 0.4
        damp2 = 1 - damp1
        let wet = parameters[Parameter.wet] * 3, width = parameters[Parameter.width]
        wet1 = wet * (width / 2 + 0.5)
        wet2 = wet * ((1 - width) / 2)
        dryGain = parameters[Parameter.dry]
    }

    public func parametersChanged() { update() }

    /// Filter by filter over the whole call (each filter's state stays in registers), which
    /// gives exactly the same samples as running all filters sample by sample.
    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        renderFollowingParameters(startFrame: startFrame, frameCount: frameCount, inputs: inputs, output: output, renderSteady: { self.renderSteady(startFrame: $0, frameCount: $1, inputs: $2, output: $3) })
    }

    private func renderSteady(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        guard let combRings, let combDelays, let combStore, let allPassRings, let allPassLengths, let allPassPositions,
              let x = scratchInput, let sumL = scratchL, let sumR = scratchR else {
            output.clear(frameCount: frameCount)
            return
        }
        let input = inputs[0]
        var done = 0
        while done < frameCount {
            let n = min(scratchFrames, frameCount - done)
            // A tiny constant keeps the decaying filters out of denormal numbers, which are
            // many times slower on x86; it settles to an inaudible offset near 1e-19.
            let inL = input.left + done, inR = input.right + done, outL = output.left + done, outR = output.right + done
            for i in 0..<n { x[i] = (inL[i] + inR[i]) * 0.015 + 1e-20 }
            sumL.update(repeating: 0, count: n)
            sumR.update(repeating: 0, count: n)
            // The combs run four at a time, one a SIMD lane: each comb's damping is a chain of
            // dependent multiply-adds, and four chains advance together instead of one after
            // another. Each lane does the same operations as a comb alone, and the lanes are
            // added to the sum in comb order, so the output is the same to the bit.
            let mask = combRingSize - 1
            for group in 0..<4 {
                let first = 4 * group
                let sum = group < 2 ? sumL : sumR
                let ring = combRings + 4 * combRingSize * group
                let delay0 = combDelays[first], delay1 = combDelays[first + 1]
                let delay2 = combDelays[first + 2], delay3 = combDelays[first + 3]
                var store = SIMD4(combStore[first], combStore[first + 1], combStore[first + 2], combStore[first + 3])
                let fb = SIMD4<Float>(repeating: feedback), d1 = SIMD4<Float>(repeating: damp1), d2 = SIMD4<Float>(repeating: damp2)
                var write = combWrite
                var i = 0
                while i < n {
                    let r0 = (write - delay0) & mask, r1 = (write - delay1) & mask
                    let r2 = (write - delay2) & mask, r3 = (write - delay3) & mask
                    // A stretch up to the first wrap-around of the slot written or any slot
                    // read, so the inner loop needs no test of the positions. Two-argument
                    // mins: the variadic one builds an array, an allocation on the render
                    // thread.
                    let size = combRingSize
                    let stretch = min(min(n - i, size - write), min(min(size - r0, size - r1), min(size - r2, size - r3)))
                    let line0 = ring + 4 * r0, line1 = ring + 4 * r1 + 1, line2 = ring + 4 * r2 + 2, line3 = ring + 4 * r3 + 3
                    let written = UnsafeMutableRawPointer(ring + 4 * write)
                    let input = x + i, out = sum + i
                    for j in 0..<stretch {
                        let y0 = line0[4 &* j], y1 = line1[4 &* j], y2 = line2[4 &* j], y3 = line3[4 &* j]
                        store = SIMD4(y0, y1, y2, y3) * d2 + store * d1
                        written.storeBytes(of: SIMD4(repeating: input[j]) + store * fb, toByteOffset: 16 &* j, as: SIMD4<Float>.self)
                        out[j] = (((out[j] + y0) + y1) + y2) + y3
                    }
                    i += stretch
                    write = (write + stretch) & mask
                }
                for lane in 0..<4 { combStore[first + lane] = store[lane] }
            }
            combWrite = (combWrite + n) & mask
            // Each all-pass line runs in stretches up to its wrap-around, so the inner loop
            // needs no test of the position.
            for k in 0..<Self.allPassCount {
                let ring = allPassRings[k], length = allPassLengths[k]
                let sum = k < 4 ? sumL : sumR
                var p = allPassPositions[k]
                var i = 0
                while i < n {
                    let stretch = min(n - i, length - p)
                    let line = ring + p, io = sum + i
                    for j in 0..<stretch {
                        let buffered = line[j]
                        let v = io[j]
                        line[j] = v + buffered * 0.5
                        io[j] = buffered - v
                    }
                    i += stretch
                    p += stretch
                    if p == length { p = 0 }
                }
                allPassPositions[k] = p
            }
            for i in 0..<n {
                let l = sumL[i], r = sumR[i]
                outL[i] = l * wet1 + r * wet2 + inL[i] * dryGain
                outR[i] = r * wet1 + l * wet2 + inR[i] * dryGain
            }
            done += n
        }
    }
}
