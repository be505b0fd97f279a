import AudioGraph
import Foundation
import MIDI
import SoundFont

// Rendering: voices in groups of four (SIMD), sample interpolation, the per-sample filter and gain ramps, and the effect sends.
extension SamplerNode {
    public func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        // Ramps of volume and send levels step every 32 frames: a render call has a fixed cost
        // (effect sends, voice groups) too high to pay per frame.
        renderFollowingParameters(startFrame: startFrame, frameCount: frameCount, inputs: inputs, output: output,
                                  controlInterval: 32,
                                  renderSteady: { self.renderSteady(startFrame: $0, frameCount: $1, inputs: $2, output: $3) })
    }

    func renderSteady(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer) {
        // Every frame of the output is written below, once prepared.
        guard let reverbSend = reverbSendBuffer, let chorusSend = chorusSendBuffer, let wet else {
            output.clear(frameCount: frameCount)
            return
        }
        let reverbOn = parameters[Parameter.reverbLevel] > 0
        let chorusOn = parameters[Parameter.chorusLevel] > 0
        let interval = Int64(Self.controlInterval)
        var done = 0
        while done < frameCount {
            let frame = startFrame + Int64(done)
            let intoGrid = Int(((frame % interval) + interval) % interval)
            if intoGrid == 0 {
                position = frame
                controlStep(frame: frame)
            }
            let count = min(frameCount - done, Self.controlInterval - intoGrid)
            renderChunk(count: count, sends: reverbOn || chorusOn)
            Self.sumLanes(sumL, count: count, into: output.left + done)
            Self.sumLanes(sumR, count: count, into: output.right + done)
            if reverbOn { Self.sumLanes(sumReverb, count: count, into: reverbSend + done) }
            if chorusOn { Self.sumLanes(sumChorus, count: count, into: chorusSend + done) }
            done += count
        }
        position = startFrame + Int64(frameCount)
        // The effects run even when no voice sounds, so their tails ring out.
        if reverbOn {
            effectInput.pointee = StereoBuffer(left: reverbSend, right: reverbSend)
            reverb.render(startFrame: startFrame, frameCount: frameCount, inputs: UnsafeBufferPointer(start: effectInput, count: 1),
                          output: wet)
            for f in 0..<frameCount {
                output.left[f] += wet.left[f]
                output.right[f] += wet.right[f]
            }
        }
        if chorusOn {
            effectInput.pointee = StereoBuffer(left: chorusSend, right: chorusSend)
            chorus.render(startFrame: startFrame, frameCount: frameCount, inputs: UnsafeBufferPointer(start: effectInput, count: 1),
                          output: wet)
            for f in 0..<frameCount {
                output.left[f] += wet.left[f]
                output.right[f] += wet.right[f]
            }
        }
    }

    /// Renders `count` frames (inside one control interval) of every active voice into the
    /// lane sums, four voices at a time: each voice's interpolated points go to one lane of
    /// ``lanes``, then filter, gains and mixing run on the four lanes at once. Voices whose
    /// sample, envelope or fade ends are freed.
    func renderChunk(count: Int, sends: Bool) {
        let zero = SIMD4<Float>(repeating: 0)
        sumL.update(repeating: zero, count: count)
        sumR.update(repeating: zero, count: count)
        if sends {
            sumReverb.update(repeating: zero, count: count)
            sumChorus.update(repeating: zero, count: count)
        }
        var n = 0
        while n < activeCount {
            let width = min(4, activeCount - n)
            // Lanes without a voice read a silent, gainless dummy.
            var group = (Int32(-1), Int32(-1), Int32(-1), Int32(-1))
            withUnsafeMutableBytes(of: &group) { raw in
                let g = raw.bindMemory(to: Int32.self)
                for lane in 0..<width { g[lane] = activeList[n + lane] }
            }
            renderGroup(group, count: count, sends: sends)
            n += width
        }
    }

    @inline(__always)
    func laneVoice(_ group: (Int32, Int32, Int32, Int32), _ lane: Int) -> UnsafeMutablePointer<SamplerVoice> {
        let index: Int32
        switch lane {
        case 0: index = group.0
        case 1: index = group.1
        case 2: index = group.2
        default: index = group.3
        }
        return index >= 0 ? voices + Int(index) : silentVoice
    }

    func renderGroup(_ group: (Int32, Int32, Int32, Int32), count: Int, sends: Bool) {
        let chunk = Self.controlInterval
        // Lanes are padded with silence to whole vectors of four frames for the transpose.
        let padded = (count + 3) & ~3
        // Each lane's voice (the silent voice for an empty lane, a voice that ended earlier in
        // this control interval, or one still in its delay) and its number of real frames.
        var voiceOf = (silentVoice, silentVoice, silentVoice, silentVoice)
        var validOf: (Float, Float, Float, Float) = (0, 0, 0, 0)
        for lane in 0..<4 {
            let v = laneVoice(group, lane)
            let points = lanePoints + lane * chunk
            var produced = 0
            var live = false
            if v != silentVoice, v.pointee.state != .off,
               !(v.pointee.volumeEnvelope.section == .delay && v.pointee.state == .playing) {
                live = true
                var frames = count
                if v.pointee.state == .fading {
                    frames = min(count, v.pointee.fadeRemaining)
                    v.pointee.fadeRemaining -= frames
                }
                produced = interpolate(v, count: frames, into: points)
                // An unlooped sample that ended, or a fade that ends in this chunk.
                if produced < frames || (v.pointee.state == .fading && v.pointee.fadeRemaining == 0) {
                    v.pointee.state = .off
                }
            }
            (points + produced).update(repeating: 0, count: padded - produced)
            switch lane {
            case 0: if live { voiceOf.0 = v }; validOf.0 = Float(produced)
            case 1: if live { voiceOf.1 = v }; validOf.1 = Float(produced)
            case 2: if live { voiceOf.2 = v }; validOf.2 = Float(produced)
            default: if live { voiceOf.3 = v }; validOf.3 = Float(produced)
            }
        }
        transposeLanePoints(frames: padded)
        let v0 = voiceOf.0, v1 = voiceOf.1, v2 = voiceOf.2, v3 = voiceOf.3
        let state = groupState
        let onePole = playsOnePoleFilters && (v0.pointee.filterKind.isOnePole || v1.pointee.filterKind.isOnePole
                                              || v2.pointee.filterKind.isOnePole || v3.pointee.filterKind.isOnePole)
        // Whole vectors built at once: inserting lanes one by one goes through memory and
        // stalls on every insert.
        @inline(__always) func gather(_ read: (UnsafeMutablePointer<SamplerVoice>) -> Float) -> SIMD4<Float> {
            SIMD4(read(v0), read(v1), read(v2), read(v3))
        }
        state.pointee = SamplerLaneState(
            history1: gather { $0.pointee.history1 }, history2: gather { $0.pointee.history2 },
            b02: gather { $0.pointee.b02 }, b1: gather { $0.pointee.b1 }, a1: gather { $0.pointee.a1 }, a2: gather { $0.pointee.a2 },
            db02: gather { $0.pointee.db02 }, db1: gather { $0.pointee.db1 }, da1: gather { $0.pointee.da1 }, da2: gather { $0.pointee.da2 },
            b0Excess: .zero, db0Excess: .zero,
            gainL: gather { $0.pointee.gainL }, gainR: gather { $0.pointee.gainR },
            stepL: gather { $0.pointee.stepL }, stepR: gather { $0.pointee.stepR },
            valid: SIMD4<Float>(validOf.0, validOf.1, validOf.2, validOf.3))
        if onePole {
            state.pointee.b0Excess = gather { $0.pointee.b0Excess }
            state.pointee.db0Excess = gather { $0.pointee.db0Excess }
        }
        @inline(__always) func filterAndMix<Sends: LaneSends>(_ sends: Sends) {
            if onePole {
                Self.filterAndMix(GeneralNumerator.self, state, count: count, lanes: lanes, sumL: sumL, sumR: sumR, sends: sends)
            } else {
                Self.filterAndMix(SymmetricNumerator.self, state, count: count, lanes: lanes, sumL: sumL, sumR: sumR, sends: sends)
            }
        }
        if sends {
            // Send gains are a function of the frames since the last control step, so a send
            // that is switched off can skip its work and still be where it should afterwards.
            let reverbBase = gather { $0.pointee.gainReverb }, reverbStep = gather { $0.pointee.stepReverb }
            let chorusBase = gather { $0.pointee.gainChorus }, chorusStep = gather { $0.pointee.stepChorus }
            let firstFrames = gather { Float($0.pointee.sendRampFrame) } + 1
            if skipsSilentChorusSends && chorusBase == .zero && chorusStep == .zero {
                filterAndMix(ReverbSend(reverbBase: reverbBase, reverbStep: reverbStep, firstFrames: firstFrames, sumReverb: sumReverb))
                groupsWithoutChorusSend &+= 1
            } else {
                filterAndMix(SendMix(reverbBase: reverbBase, reverbStep: reverbStep, chorusBase: chorusBase, chorusStep: chorusStep,
                                     firstFrames: firstFrames, sumReverb: sumReverb, sumChorus: sumChorus))
            }
        } else {
            filterAndMix(NoSends())
        }
        let result = state.pointee
        // Written back lane by lane (a local function capturing these variables would box them).
        for lane in 0..<4 {
            let v = lane == 0 ? v0 : lane == 1 ? v1 : lane == 2 ? v2 : v3
            guard v != silentVoice else { continue }
            v.pointee.history1 = result.history1[lane]
            v.pointee.history2 = result.history2[lane]
            v.pointee.b02 = result.b02[lane]
            v.pointee.b1 = result.b1[lane]
            v.pointee.a1 = result.a1[lane]
            v.pointee.a2 = result.a2[lane]
            v.pointee.gainL = result.gainL[lane]
            v.pointee.gainR = result.gainR[lane]
            v.pointee.sendRampFrame += count
        }
        if onePole {
            for lane in 0..<4 {
                let v = lane == 0 ? v0 : lane == 1 ? v1 : lane == 2 ? v2 : v3
                if v != silentVoice { v.pointee.b0Excess = result.b0Excess[lane] }
            }
        }
    }

    /// Writes each frame's four lanes added up, `sums[k].sum()`, four frames at a time: a
    /// 4 x 4 transpose puts frame k's lanes in lane k of four vectors, added in the order
    /// `sum()` adds them (((lane 0 + lane 1) + lane 2) + lane 3), so the result is the same.
    @inline(__always)
    static func sumLanes(_ sums: UnsafeMutablePointer<SIMD4<Float>>, count: Int, into destination: UnsafeMutablePointer<Float>) {
        var k = 0
        while k &+ 4 <= count {
            let a = sums[k], b = sums[k &+ 1], c = sums[k &+ 2], d = sums[k &+ 3]
            // Pairs of frames interleaved, then their 64-bit halves paired up.
            let ab01 = unsafeBitCast(SIMD4(a[0], b[0], a[1], b[1]), to: SIMD2<Double>.self)
            let ab23 = unsafeBitCast(SIMD4(a[2], b[2], a[3], b[3]), to: SIMD2<Double>.self)
            let cd01 = unsafeBitCast(SIMD4(c[0], d[0], c[1], d[1]), to: SIMD2<Double>.self)
            let cd23 = unsafeBitCast(SIMD4(c[2], d[2], c[3], d[3]), to: SIMD2<Double>.self)
            let lane0 = unsafeBitCast(SIMD2(ab01[0], cd01[0]), to: SIMD4<Float>.self)
            let lane1 = unsafeBitCast(SIMD2(ab01[1], cd01[1]), to: SIMD4<Float>.self)
            let lane2 = unsafeBitCast(SIMD2(ab23[0], cd23[0]), to: SIMD4<Float>.self)
            let lane3 = unsafeBitCast(SIMD2(ab23[1], cd23[1]), to: SIMD4<Float>.self)
            UnsafeMutableRawPointer(destination + k).storeBytes(of: ((lane0 + lane1) + lane2) + lane3, as: SIMD4<Float>.self)
            k &+= 4
        }
        while k < count {
            destination[k] = sums[k].sum()
            k &+= 1
        }
    }

    /// `(x[0] + x[2], x[1] + x[3], y[0] + y[2], y[1] + y[3])`. The halves move as 64-bit
    /// lanes: moved as floats, the optimizer pushes the moves through the products that make
    /// `x` and `y` and moves both factors instead, three times the shuffles.
    @inline(__always)
    static func halves(_ x: SIMD4<Float>, _ y: SIMD4<Float>) -> SIMD4<Float> {
        let x2 = unsafeBitCast(x, to: SIMD2<Double>.self), y2 = unsafeBitCast(y, to: SIMD2<Double>.self)
        let low = unsafeBitCast(SIMD2(x2[0], y2[0]), to: SIMD4<Float>.self)
        let high = unsafeBitCast(SIMD2(x2[1], y2[1]), to: SIMD4<Float>.self)
        return low + high
    }

    /// Interleaves the four lanes' points into ``lanes`` (frame by frame, a lane each), four
    /// frames at a time through a 4 x 4 transpose; `frames` is a multiple of four.
    @inline(__always)
    func transposeLanePoints(frames: Int) {
        let chunk = Self.controlInterval
        let source = UnsafeRawPointer(lanePoints)
        let destination = UnsafeMutableRawPointer(lanes)
        var k = 0
        while k < frames {
            let r0 = source.loadUnaligned(fromByteOffset: 4 &* k, as: SIMD4<Float>.self)
            let r1 = source.loadUnaligned(fromByteOffset: 4 &* (chunk &+ k), as: SIMD4<Float>.self)
            let r2 = source.loadUnaligned(fromByteOffset: 4 &* (2 &* chunk &+ k), as: SIMD4<Float>.self)
            let r3 = source.loadUnaligned(fromByteOffset: 4 &* (3 &* chunk &+ k), as: SIMD4<Float>.self)
            let low01 = SIMD4(r0[0], r1[0], r0[1], r1[1]), high01 = SIMD4(r0[2], r1[2], r0[3], r1[3])
            let low23 = SIMD4(r2[0], r3[0], r2[1], r3[1]), high23 = SIMD4(r2[2], r3[2], r2[3], r3[3])
            destination.storeBytes(of: SIMD4(low01[0], low01[1], low23[0], low23[1]), toByteOffset: 16 &* k, as: SIMD4<Float>.self)
            destination.storeBytes(of: SIMD4(low01[2], low01[3], low23[2], low23[3]), toByteOffset: 16 &* (k &+ 1), as: SIMD4<Float>.self)
            destination.storeBytes(of: SIMD4(high01[0], high01[1], high23[0], high23[1]), toByteOffset: 16 &* (k &+ 2), as: SIMD4<Float>.self)
            destination.storeBytes(of: SIMD4(high01[2], high01[3], high23[2], high23[3]), toByteOffset: 16 &* (k &+ 3), as: SIMD4<Float>.self)
            k &+= 4
        }
    }

    /// Reads `count` interpolated sample points of voice `v` into `out`; returns fewer when an
    /// unlooped sample ends.
    ///
    /// The points a stretch of outputs reads are first copied, as floats, into ``window`` in
    /// the order playback meets them (through the loop, clamped at the start, silence past an
    /// unlooped end), so each output is one vector load and a dot product with its row of
    /// the coefficient table.
    @inline(__always)
    func interpolate(_ v: UnsafeMutablePointer<SamplerVoice>, count: Int, into out: UnsafeMutablePointer<Float>) -> Int {
        let coefficients = interpolationTable
        var phase = v.pointee.phase
        let increment = v.pointee.increment
        let end = v.pointee.end
        let loopStart = v.pointee.loopStart, loopEnd = v.pointee.loopEnd
        let looping = v.pointee.loopMode == 1 || (v.pointee.loopMode == 3 && !v.pointee.released)
        let loopLength = Int64(loopEnd - loopStart) << 32
        var produced = 0
        while produced < count {
            if looping {
                while phase >> 32 >= Int64(loopEnd) {
                    phase -= loopLength
                    v.pointee.hasLooped = true
                }
            }
            let first = Int(phase >> 32)
            var n = count - produced
            // The divisions below are costly next to a stretch of 64 outputs: they run only
            // when the stretch would pass an unlooped end or overflow the window.
            let span = Int64(n - 1) * increment
            if !looping {
                if first >= end { break }
                if phase + span >= Int64(end) << 32 {
                    // Outputs left before the position reaches the end.
                    n = min(n, Int(((Int64(end) << 32) - phase + increment - 1) / increment))
                }
            }
            if (phase & 0xFFFF_FFFF) + span >= Int64(Self.windowCapacity - 4) << 32 {
                // As many outputs as the window holds.
                n = max(1, min(n, Int((Int64(Self.windowCapacity - 4) << 32) / increment)))
            }
            let last = Int((phase + Int64(n - 1) * increment) >> 32)
            fillWindow(v, from: first - 1, count: last - first + 4, looping: looping)
            let w = UnsafeRawPointer(window)
            let table = UnsafeRawPointer(coefficients)
            // Phase relative to the window's first point: the fraction bits are the phase's own.
            var relative = phase &- (Int64(first) << 32)
            @inline(__always) func product(_ p: Int64) -> SIMD4<Float> {
                let s = w.loadUnaligned(fromByteOffset: Int(truncatingIfNeeded: p >> 32) &* 4, as: SIMD4<Float>.self)
                let row = Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: p) >> Self.fractionShift) &* 16
                return s * table.load(fromByteOffset: row, as: SIMD4<Float>.self)
            }
            let increment2 = increment &* 2, increment3 = increment &* 3, increment4 = increment &* 4
            let o = UnsafeMutableRawPointer(out + produced)
            // Four outputs at a time: their four products are summed across by a transpose,
            // which costs less than four horizontal sums. The sums leave as one vector store:
            // stored element by element, the compiler turns the transpose back into scalar sums.
            var k = 0
            while k &+ 4 <= n {
                let m0 = product(relative), m1 = product(relative &+ increment)
                let m2 = product(relative &+ increment2), m3 = product(relative &+ increment3)
                let a = Self.halves(m0, m1), b = Self.halves(m2, m3)
                let sums = SIMD4(a[0], a[2], b[0], b[2]) + SIMD4(a[1], a[3], b[1], b[3])
                o.storeBytes(of: sums, toByteOffset: k &* 4, as: SIMD4<Float>.self)
                relative &+= increment4
                k &+= 4
            }
            while k < n {
                // The same order of additions as the transpose, so an output does not depend
                // on which loop computed it (that depends on block splits).
                let m = product(relative)
                out[produced + k] = (m[0] + m[2]) + (m[1] + m[3])
                relative &+= increment
                k &+= 1
            }
            phase = relative &+ (Int64(first) << 32)
            produced += n
        }
        if looping {
            // Stored inside the loop, so a release (loop mode 3) continues from the point
            // playback has really reached.
            while phase >> 32 >= Int64(loopEnd) {
                phase -= loopLength
                v.pointee.hasLooped = true
            }
        }
        v.pointee.phase = phase
        return produced
    }

    /// Copies `count` points starting at playback index `first` into ``window``.
    @inline(__always)
    func fillWindow(_ v: UnsafeMutablePointer<SamplerVoice>, from first: Int, count: Int, looping: Bool) {
        guard let words = v.pointee.words else {
            window.update(repeating: 0, count: count)
            return
        }
        let start = v.pointee.start, end = v.pointee.end
        let loopStart = v.pointee.loopStart, loopEnd = v.pointee.loopEnd
        let loopLength = loopEnd - loopStart
        let hasLooped = v.pointee.hasLooped
        let low = v.pointee.lowBytes
        var index = first
        var i = 0
        while i < count {
            var p = index
            if looping {
                if p >= loopEnd {
                    p = loopStart + (p - loopEnd) % loopLength
                } else if hasLooped && p < loopStart {
                    // The point before the loop start, once looping: the loop's last point.
                    p += loopLength
                }
            } else if p >= end {
                (window + i).update(repeating: 0, count: count - i)
                return
            }
            if p < start {
                window[i] = point(start, words: words, low: low)
                i += 1
                index += 1
                continue
            }
            let runEnd = looping && p < loopEnd ? loopEnd : end
            let run = min(count - i, max(1, runEnd - p))
            let destination = window + i
            if let low {
                for r in 0..<run { destination[r] = Float(Int32(words[p + r]) << 8 | Int32(low[p + r])) * (1 / 256) }
            } else {
                let source = words + p
                for r in 0..<run { destination[r] = Float(source[r]) }
            }
            i += run
            index += run
        }
    }

    /// Sample point `j` as a 16-bit-scaled float (24-bit banks add their low byte).
    @inline(__always)
    func point(_ j: Int, words: UnsafePointer<Int16>, low: UnsafePointer<UInt8>?) -> Float {
        if let low {
            return Float(Int32(words[j]) << 8 | Int32(low[j])) * (1 / 256)
        }
        return Float(words[j])
    }
}
