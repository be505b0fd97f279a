import Foundation

/// The curve a parameter ramp follows from its start value to its end value.
public enum ParameterRampShape: UInt8, Sendable, Hashable, CaseIterable {
    /// Equal steps: `start + (end - start) * t`.
    case linear = 0
    /// Equal ratios: `start * (end / start)^t`, the natural sweep for frequencies and gains.
    /// Used when both ends have the same sign and neither is zero; otherwise linear.
    case exponential = 1
}

/// A parameter ramp as a node receives it: from `start` to `end` over `length` frames, of
/// which `elapsed` have already passed (a locate into the middle of a ramp resumes it there,
/// on exactly the values the uninterrupted ramp has).
///
/// The value `k` frames into the ramp is ``value(atElapsed:)``: a function of `k` alone, so a
/// ramp lands on the same values at the same frames whatever the block size.
@frozen
public struct ParameterRamp: Sendable, Hashable {
    /// The value at the ramp's first frame.
    public var start: Float
    /// The value from the ramp's last frame on.
    public var end: Float
    /// Frames from the first frame to the frame that reaches `end` (at least 1).
    public var length: Int64
    /// Frames of the ramp already passed when it is delivered.
    public var elapsed: Int64
    /// The curve.
    public var shape: ParameterRampShape

    /// Creates a ramp.
    @inlinable
    public init(from start: Float, to end: Float, length: Int64, elapsed: Int64 = 0, shape: ParameterRampShape = .linear) {
        self.start = start
        self.end = end
        self.length = max(1, length)
        self.elapsed = min(max(0, elapsed), self.length)
        self.shape = shape
    }

    /// The value `k` frames after the ramp's first frame: `start` at 0, `end` from `length` on.
    /// Computed in double precision and rounded once, so it is the same on every call.
    @inlinable
    public func value(atElapsed k: Int64) -> Float {
        if k <= 0 { return start }
        if k >= length { return end }
        let t = Double(k) / Double(length)
        let a = Double(start), b = Double(end)
        if shape == .exponential, a != 0, b != 0, (a > 0) == (b > 0) {
            return Float(a * pow(b / a, t))
        }
        return Float(a + (b - a) * t)
    }
}

/// A node's parameters, declared once: their descriptions, current values, glides and ramps.
///
/// A node owns one and adopts ``ParameterizedNode``; the graph, automation and hosts find the
/// parameters through it, and nothing else is written by hand. Identifiers may be any numbers
/// (the built-in nodes count from 0).
///
/// Values move in three ways: a plain set with no smoothing changes the value at its frame; a
/// plain set of a parameter declared with ``AudioParameterInfo/smoothingSeconds`` glides there
/// (one pole, per frame); a ``ParameterRamp`` follows its curve exactly. The render side
/// advances moving values one frame at a time with ``step()``, usually through
/// ``renderStretches(frameCount:changed:render:)``, so the values depend only on absolute frames.
///
/// Storage is allocated in `init` and `prepare`; setting, ramping and stepping never allocate.
public final class NodeParameters {
    /// The descriptions, in declaration order.
    public let infos: [AudioParameterInfo]
    private let count: Int
    private let ids: UnsafeMutablePointer<UInt32>
    private let current: UnsafeMutablePointer<Float>
    private let target: UnsafeMutablePointer<Float>
    private let glide: UnsafeMutablePointer<Float>
    // Per parameter: 0 at rest, 1 gliding, 2 ramping.
    private let motion: UnsafeMutablePointer<UInt8>
    private let ramps: UnsafeMutablePointer<ParameterRamp>
    private let rampPosition: UnsafeMutablePointer<Int64>
    private var movingCount = 0
    // Frames rendered at control rate since the last grid point, not yet stepped.
    @usableFromInline var pendingFrames = 0

    /// Parameters with these descriptions, each at its default. Identifiers must be unique.
    public init(_ infos: [AudioParameterInfo]) {
        precondition(Set(infos.map(\.id)).count == infos.count, "parameter ids must be unique")
        self.infos = infos
        count = infos.count
        let n = max(1, count)
        ids = .allocate(capacity: n)
        current = .allocate(capacity: n)
        target = .allocate(capacity: n)
        glide = .allocate(capacity: n)
        motion = .allocate(capacity: n)
        ramps = .allocate(capacity: n)
        rampPosition = .allocate(capacity: n)
        for (i, info) in infos.enumerated() {
            ids[i] = info.id
            current[i] = info.clamp(info.defaultValue)
            target[i] = current[i]
            glide[i] = 1
            motion[i] = 0
            ramps[i] = ParameterRamp(from: current[i], to: current[i], length: 1)
            rampPosition[i] = 0
        }
    }

    deinit {
        ids.deallocate(); current.deallocate(); target.deallocate(); glide.deallocate()
        motion.deallocate(); ramps.deallocate(); rampPosition.deallocate()
    }

    /// Computes the glide coefficients for `sampleRate` and brings every value to rest at its
    /// target (control side).
    public func prepare(sampleRate: Double) {
        for i in 0..<count {
            let seconds = infos[i].smoothingSeconds
            glide[i] = seconds > 0 ? SmoothedValue.coefficient(seconds: seconds, sampleRate: sampleRate) : 1
        }
        settle()
    }

    /// Ends every glide and ramp at its target.
    public func settle() {
        pendingFrames = 0
        for i in 0..<count {
            if motion[i] == 2 { target[i] = ramps[i].end }
            current[i] = target[i]
            motion[i] = 0
        }
        movingCount = 0
    }

    @inline(__always)
    private func index(_ id: UInt32) -> Int? {
        var i = 0
        while i < count {
            if ids[i] == id { return i }
            i += 1
        }
        return nil
    }

    /// True while some value glides or ramps.
    @inlinable
    public var isMoving: Bool { movingNow }
    @usableFromInline
    var movingNow: Bool { movingCount > 0 }

    /// The value of `id` at the current frame (nil when unknown).
    public func current(_ id: UInt32) -> Float? {
        index(id).map { current[$0] }
    }

    /// The value `id` was last set to, or a ramp's end value (what a host displays); nil when
    /// unknown.
    public func value(_ id: UInt32) -> Float? {
        guard let i = index(id) else { return nil }
        return motion[i] == 2 ? ramps[i].end : target[i]
    }

    /// The current value of a declared parameter (0 for an unknown one).
    public subscript(_ id: UInt32) -> Float {
        index(id).map { current[$0] } ?? 0
    }

    /// Sets `id` to `value` (clamped): at once, or gliding when the parameter declares a
    /// smoothing time. Returns false for an unknown id.
    @discardableResult
    public func set(_ id: UInt32, _ value: Float) -> Bool {
        guard let i = index(id) else { return false }
        catchUp()
        let v = infos[i].clamp(value)
        target[i] = v
        let wasMoving = motion[i] != 0
        if glide[i] >= 1 || current[i] == v {
            current[i] = v
            motion[i] = 0
        } else {
            motion[i] = 1
        }
        movingCount += (motion[i] != 0 ? 1 : 0) - (wasMoving ? 1 : 0)
        return true
    }

    /// Sets `id` to `value` at once, without a glide (a node's own initial values).
    @discardableResult
    public func jump(_ id: UInt32, to value: Float) -> Bool {
        guard let i = index(id) else { return false }
        catchUp()
        if motion[i] != 0 { movingCount -= 1 }
        motion[i] = 0
        target[i] = infos[i].clamp(value)
        current[i] = target[i]
        return true
    }

    /// Starts `ramp` on `id`: the current value becomes the ramp's value at `ramp.elapsed`.
    /// Both ends are clamped to the parameter's range. Returns false for an unknown id.
    @discardableResult
    public func ramp(_ id: UInt32, _ ramp: ParameterRamp) -> Bool {
        guard let i = index(id) else { return false }
        catchUp()
        var r = ramp
        r.start = infos[i].clamp(r.start)
        r.end = infos[i].clamp(r.end)
        if motion[i] == 0 { movingCount += 1 }
        ramps[i] = r
        rampPosition[i] = r.elapsed
        current[i] = r.value(atElapsed: r.elapsed)
        target[i] = r.end
        motion[i] = 2
        if r.elapsed >= r.length { motion[i] = 0; movingCount -= 1 }
        return true
    }

    /// Advances every moving value by one frame.
    public func step() {
        guard movingCount > 0 else { return }
        for i in 0..<count {
            switch motion[i] {
            case 1:
                let d = target[i] - current[i]
                // Snap once the remaining distance no longer changes the float, so it rests.
                if abs(d) < 1e-7 * max(1, abs(target[i])) {
                    current[i] = target[i]
                    motion[i] = 0
                    movingCount -= 1
                } else {
                    current[i] += d * glide[i]
                }
            case 2:
                rampPosition[i] += 1
                current[i] = ramps[i].value(atElapsed: rampPosition[i])
                if rampPosition[i] >= ramps[i].length {
                    motion[i] = 0
                    movingCount -= 1
                }
            default:
                break
            }
        }
    }

    /// Steps the frames a control-rate render has passed since its last grid point, so a
    /// change arriving between grid points starts from the exact state at its own frame.
    @usableFromInline
    func catchUp() {
        if pendingFrames > 0 {
            let n = pendingFrames
            pendingFrames = 0
            step(frames: n)
        }
    }

    /// Advances every moving value by `frames` frames, one frame at a time (so the values
    /// are the same however the frames are grouped).
    public func step(frames: Int) {
        var n = 0
        while n < frames && movingCount > 0 {
            step()
            n += 1
        }
    }

    /// Splits a render call so that a node whose values are constant within each stretch
    /// still follows glides and ramps frame by frame: while nothing moves, one stretch covers
    /// everything; while something moves, stretches are one frame long, followed by a
    /// ``step()`` and `changed()` (where the node recomputes what depends on the values).
    /// `render(offset, count)` renders frames `offset ..< offset + count` of the call.
    @inlinable @inline(__always)
    public func renderStretches(frameCount: Int, changed: () -> Void, render: (_ offset: Int, _ count: Int) -> Void) {
        var done = 0
        while done < frameCount {
            if !movingNow {
                render(done, frameCount - done)
                return
            }
            render(done, 1)
            step()
            changed()
            done += 1
        }
    }

    /// Like ``renderStretches(frameCount:changed:render:)``, but while values move they are
    /// updated every `controlInterval` frames on a grid of absolute frames (multiples of the
    /// interval from frame 0), not every frame: for nodes whose updates are costly and whose
    /// parameters tolerate control-rate steps (an instrument's volume). Between grid points the
    /// values hold; at each grid point they are the exact values of that frame; a set or ramp
    /// arriving between grid points applies at its frame. The output does not depend on the
    /// block size.
    @inlinable
    public func renderStretches(startFrame: Int64, frameCount: Int, controlInterval: Int, changed: () -> Void,
                                render: (_ offset: Int, _ count: Int) -> Void) {
        let interval = max(1, controlInterval)
        var done = 0
        while done < frameCount {
            if !movingNow {
                render(done, frameCount - done)
                return
            }
            // Values change only on grid points (and at events, which catch up first), so a
            // stretch cut short by the end of a block leaves them as they are.
            let phase = Int((startFrame + Int64(done)) % Int64(interval))
            let count = min(frameCount - done, interval - phase)
            render(done, count)
            pendingFrames += count
            if phase + count == interval {
                catchUp()
                changed()
            }
            done += count
        }
    }
}

/// A node whose parameters live in a ``NodeParameters``: the parameter members of
/// ``AudioNode`` come from it, so a node declares its parameters once and writes none of the
/// lookup, clamping, smoothing or ramping.
///
/// Only global-scope parameters are handled; a node with per-bus settings (a mixer)
/// implements the members itself.
public protocol ParameterizedNode: AudioNode {
    /// The node's parameters.
    var parameters: NodeParameters { get }
    /// Called on the audio thread after a value changed (a set, a ramp's start, and every
    /// frame a value moves during ``NodeParameters/renderStretches(frameCount:changed:render:)``):
    /// the place to recompute coefficients. The default does nothing.
    func parametersChanged()
}

extension ParameterizedNode {
    /// The declared parameters.
    public var parameterInfos: [AudioParameterInfo] { parameters.infos }

    /// Nothing to recompute.
    public func parametersChanged() {}

    /// Sets a declared global parameter (clamped; gliding when it declares smoothing).
    public func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32) {
        guard scope == .global, parameters.set(id, value) else { return }
        parametersChanged()
    }

    /// Starts a ramp of a declared global parameter.
    public func rampParameter(_ id: UInt32, ramp: ParameterRamp, scope: AudioParameterScope, element: UInt32) {
        guard scope == .global, parameters.ramp(id, ramp) else { return }
        parametersChanged()
    }

    /// The value a global parameter was set to (a ramp's end while it runs).
    public func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float? {
        scope == .global ? parameters.value(id) : nil
    }
}

extension ParameterizedNode {
    /// Renders through `renderSteady`, which treats the parameters as constant, in stretches
    /// over which they are (see ``NodeParameters/renderStretches(frameCount:changed:render:)``):
    /// the whole call while nothing moves, single frames while a value glides or ramps. The
    /// inputs and output handed to `renderSteady` start at the stretch's first frame.
    /// With a `controlInterval` above 1 the values step on that grid of absolute frames (see
    /// ``NodeParameters/renderStretches(startFrame:frameCount:controlInterval:changed:render:)``).
    @inlinable @inline(__always)
    public func renderFollowingParameters(
        startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer,
        controlInterval: Int = 1,
        renderSteady: (_ startFrame: Int64, _ frameCount: Int, _ inputs: UnsafeBufferPointer<StereoBuffer>, _ output: StereoBuffer) -> Void
    ) {
        if !parameters.isMoving {
            renderSteady(startFrame, frameCount, inputs, output)
            return
        }
        withUnsafeTemporaryAllocation(of: StereoBuffer.self, capacity: max(1, inputs.count)) { shifted in
            parameters.renderStretches(startFrame: startFrame, frameCount: frameCount, controlInterval: controlInterval,
                                       changed: { self.parametersChanged() }) { offset, count in
                for b in 0..<inputs.count { shifted[b] = inputs[b].advanced(by: offset) }
                renderSteady(startFrame + Int64(offset), count,
                             UnsafeBufferPointer(start: shifted.baseAddress, count: inputs.count), output.advanced(by: offset))
            }
        }
    }
}
