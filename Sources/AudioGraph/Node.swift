import Foundation
import MIDI

/// The unit a parameter's value is expressed in; hosts use it to display and edit values.
public enum AudioParameterUnit: String, Sendable, Hashable {
    /// A plain number without unit.
    case generic
    /// A gain in decibels.
    case decibels
    /// A linear gain (1 is unity).
    case linearGain
    /// A frequency in hertz.
    case hertz
    /// A time in milliseconds.
    case milliseconds
    /// A time in seconds.
    case seconds
    /// A ratio such as a compressor's `4` for 4:1.
    case ratio
    /// A fraction from 0 to 1 (mix, feedback, room size).
    case fraction
    /// Stereo position from -1 (left) to 1 (right).
    case pan
    /// A choice among numbered options (filter type, voice count).
    case indexed
}

/// The description of one parameter a node publishes: what parameter automation addresses.
public struct AudioParameterInfo: Sendable, Hashable {
    /// The identifier used by parameter events and ``AudioNode/setParameter(_:value:scope:element:)``.
    public var id: UInt32
    /// A short human-readable name.
    public var name: String
    /// The values the parameter accepts; values outside are clamped.
    public var range: ClosedRange<Float>
    /// The unit of the value.
    public var unit: AudioParameterUnit
    /// The value a freshly created node has.
    public var defaultValue: Float
    /// The scope the parameter lives in: `.global` for most, `.input` for per-input mixer settings.
    public var scope: AudioParameterScope
    /// Time constant in seconds of the glide a plain (unramped) change takes, so a jump does
    /// not click; 0 changes the value at the event's frame. Ramps ignore it: they are exact.
    public var smoothingSeconds: Double

    /// Creates a parameter description.
    public init(id: UInt32, name: String, range: ClosedRange<Float>, unit: AudioParameterUnit,
                defaultValue: Float, smoothingSeconds: Double = 0, scope: AudioParameterScope = .global) {
        self.id = id
        self.name = name
        self.range = range
        self.unit = unit
        self.defaultValue = defaultValue
        self.smoothingSeconds = smoothingSeconds
        self.scope = scope
    }

    /// `value` clamped to the parameter's range.
    @inlinable
    public func clamp(_ value: Float) -> Float {
        value.isNaN ? defaultValue : min(max(value, range.lowerBound), range.upperBound)
    }
}

/// Which part of a node a parameter belongs to, as in Apple's audio unit scopes.
public enum AudioParameterScope: UInt8, Sendable, Hashable {
    /// The node as a whole.
    case global = 0
    /// One input bus, selected by the element number.
    case input = 1
    /// One output bus.
    case output = 2
    /// A group such as a MIDI channel, selected by the element number.
    case group = 3
}

/// Two channels of samples that a node reads or writes: the unit of audio between nodes.
///
/// The graph owns the memory; a bus handed to a node points at the part of a buffer the
/// current render call covers, so index 0 is the first frame of that call.
@frozen
public struct StereoBuffer {
    /// Left channel samples.
    public var left: UnsafeMutablePointer<Float>
    /// Right channel samples.
    public var right: UnsafeMutablePointer<Float>

    /// Wraps two channel pointers.
    @inlinable
    public init(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        self.left = left
        self.right = right
    }

    /// The same buffer advanced by `frames` frames.
    @inlinable
    public func advanced(by frames: Int) -> StereoBuffer {
        StereoBuffer(left: left + frames, right: right + frames)
    }

    /// Sets `frameCount` frames of both channels to zero.
    @inlinable
    public func clear(frameCount: Int) {
        left.update(repeating: 0, count: frameCount)
        right.update(repeating: 0, count: frameCount)
    }
}

/// A node of the audio graph: an instrument, an effect, a mixer or the output.
///
/// ## The real-time contract
///
/// Two threads call a node (DESIGN.md section 4), and what each may do differs:
///
/// - **Control side**: `init`, ``prepare(sampleRate:maximumFrameCount:)``, ``reset()`` and
///   everything a program calls while the node is not being rendered. These may allocate,
///   read files, take locks and throw. `prepare` allocates every buffer rendering will need,
///   sized by `maximumFrameCount` (the largest `frameCount` a render call will ask for), and
///   resets.
/// - **Audio thread**: ``render(startFrame:frameCount:inputs:output:)``, ``receive(_:atFrame:)``,
///   ``receiveSystemExclusive(_:atFrame:)``,
///   ``setParameter(_:value:scope:element:)`` and ``rampParameter(_:ramp:scope:element:)``.
///   These must never allocate (no `Array` growth, no `String`, no class
///   instances, no closures that escape), never take a lock, never wait, and never do I/O
///   (no `print`, no files, no logging). A late render is an audible dropout. Whether a node
///   keeps to this can be proved with the `TactusTestSupport` product's allocation check.
///
/// A node never splits a block itself: the graph calls `render` for each stretch between
/// event offsets and delivers the events in between. So that output does not depend on how a
/// block is split, a node computes its state sample by sample, and anything it updates at a
/// lower rate (envelopes, LFOs, coefficient smoothing) is updated on a grid of *absolute*
/// frame numbers, which `startFrame` provides.
///
/// Most nodes need not write the parameter members: adopt ``ParameterizedNode`` and declare
/// the parameters once in a ``NodeParameters``.
public protocol AudioNode: AnyObject {
    /// A short name for listings and errors.
    var name: String { get }
    /// Number of input buses: 0 for instruments, 1 for effects and the output, N for a mixer.
    var inputBusCount: Int { get }
    /// Frames by which the node delays its input (a look-ahead limiter's window); 0 for most.
    var latencyFrames: Int { get }
    /// The parameters the node publishes.
    var parameterInfos: [AudioParameterInfo] { get }
    /// Allocates and initialises everything rendering needs. May be called again to change the
    /// sample rate; it also resets the node.
    func prepare(sampleRate: Double, maximumFrameCount: Int)
    /// Returns the node to its just-prepared state (silence, parameters kept).
    func reset()
    /// Sets a parameter by identifier; unknown identifiers are ignored, values are clamped.
    func setParameter(_ id: UInt32, value: Float, scope: AudioParameterScope, element: UInt32)
    /// The current value of a parameter, or nil for an unknown identifier.
    func parameterValue(_ id: UInt32, scope: AudioParameterScope, element: UInt32) -> Float?
    /// Starts a ramp of a parameter at the frame the next `render` starts at: the value at
    /// that frame is `ramp.value(atElapsed: ramp.elapsed)`, one frame later the next step, and
    /// from `ramp.length - ramp.elapsed` frames on the ramp's end value.
    func rampParameter(_ id: UInt32, ramp: ParameterRamp, scope: AudioParameterScope, element: UInt32)
    /// Takes a MIDI message at absolute frame `frame`: the frame the next `render` starts at.
    func receive(_ message: MIDIMessage, atFrame frame: Int64)
    /// Takes a system exclusive message (`bytes` from F0 to F7) at absolute frame `frame`, the
    /// frame the next `render` starts at. The bytes are lent for the call only: a node copies
    /// what it needs and never keeps the pointer.
    func receiveSystemExclusive(_ bytes: UnsafeBufferPointer<UInt8>, atFrame frame: Int64)
    /// Computes `frameCount` frames starting at absolute frame `startFrame` into `output`,
    /// reading `inputs` (one per input bus, already summed when several sources feed a bus).
    func render(startFrame: Int64, frameCount: Int, inputs: UnsafeBufferPointer<StereoBuffer>, output: StereoBuffer)
    /// Whether the node wants to hear where the song is (``transportChanged(_:atFrame:)``):
    /// a tempo-synced effect, a hosted plugin that reads LV2's `time:Position`. False for most.
    var followsTransport: Bool { get }
    /// Takes the transport's state at absolute frame `frame` (the frame the next `render`
    /// starts at): sent to nodes that follow the transport when playback starts, stops,
    /// locates, loops or changes rate, and at every tempo and time signature change.
    func transportChanged(_ position: TransportPosition, atFrame frame: Int64)
}

/// Where the song is and how it moves, as a host tells plugins (LV2's `time:Position`).
@frozen
public struct TransportPosition: Sendable, Hashable {
    /// The song's position in frames at the play rate of 1 (where the transport is).
    public var songFrame: Int64
    /// How fast the song plays: 0 while stopped, else the play rate (1 normally).
    public var speed: Float
    /// The bar, counted from 0.
    public var bar: Int64
    /// Beats (of ``beatUnit``) since the bar's start, with the fraction.
    public var barBeat: Double
    /// Beats in a bar: the time signature's numerator.
    public var beatsPerBar: Float
    /// The note value of a beat: the time signature's denominator (4 for a quarter).
    public var beatUnit: Int32
    /// The tempo in beats of ``beatUnit`` per minute at speed 1 (a MIDI file's quarter-note
    /// tempo times `beatUnit / 4`).
    public var beatsPerMinute: Double

    /// Creates a position.
    public init(songFrame: Int64, speed: Float, bar: Int64, barBeat: Double, beatsPerBar: Float, beatUnit: Int32,
                beatsPerMinute: Double) {
        self.songFrame = songFrame
        self.speed = speed
        self.bar = bar
        self.barBeat = barBeat
        self.beatsPerBar = beatsPerBar
        self.beatUnit = beatUnit
        self.beatsPerMinute = beatsPerMinute
    }
}

extension AudioNode {
    /// Nodes without look-ahead add no latency.
    public var latencyFrames: Int { 0 }
    /// Nodes that are not instruments ignore MIDI.
    public func receive(_ message: MIDIMessage, atFrame frame: Int64) {}
    /// Nodes that do not understand system exclusive ignore it.
    public func receiveSystemExclusive(_ bytes: UnsafeBufferPointer<UInt8>, atFrame frame: Int64) {}
    /// Most nodes play the same whatever the song's position.
    public var followsTransport: Bool { false }
    /// Nodes that do not follow the transport ignore it.
    public func transportChanged(_ position: TransportPosition, atFrame frame: Int64) {}
    /// A node that cannot follow a ramp jumps to its end value at once.
    public func rampParameter(_ id: UInt32, ramp: ParameterRamp, scope: AudioParameterScope, element: UInt32) {
        setParameter(id, value: ramp.end, scope: scope, element: element)
    }
    /// Sets a global parameter.
    public func setParameter(_ id: UInt32, value: Float) {
        setParameter(id, value: value, scope: .global, element: 0)
    }
    /// The value of a global parameter.
    public func parameterValue(_ id: UInt32) -> Float? {
        parameterValue(id, scope: .global, element: 0)
    }
    /// The description of the parameter with identifier `id` in `scope`, if the node has one.
    public func parameterInfo(_ id: UInt32, scope: AudioParameterScope = .global) -> AudioParameterInfo? {
        parameterInfos.first { $0.id == id && $0.scope == scope }
    }
    /// The description of the parameter called `name` (compared without regard to case).
    public func parameterInfo(named name: String) -> AudioParameterInfo? {
        parameterInfos.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }
}

/// Something the graph delivers to a node at an exact frame offset.
@frozen
public enum NodeEvent: Sendable, Hashable {
    /// A MIDI message for an instrument.
    case midi(MIDIMessage)
    /// A system exclusive message for an instrument; its bytes live in storage that whoever
    /// scheduled the event keeps alive.
    case systemExclusive(SystemExclusiveMessage)
    /// A parameter change.
    case parameter(id: UInt32, scope: AudioParameterScope, element: UInt32, value: Float)
    /// A parameter ramp starting at the event's frame.
    case parameterRamp(id: UInt32, scope: AudioParameterScope, element: UInt32, ramp: ParameterRamp)
    /// The transport's state, for a node that follows it.
    case transport(TransportPosition)
}

/// An event addressed to a node of a compiled graph at a frame offset inside a render call.
@frozen
public struct GraphEvent: Sendable, Hashable {
    /// Frame offset from the start of the render call (0 ..< frameCount).
    public var offset: Int
    /// Index of the target node in ``CompiledGraph/nodes``.
    public var nodeIndex: Int
    /// What to deliver.
    public var event: NodeEvent

    /// Creates an event.
    @inlinable
    public init(offset: Int, nodeIndex: Int, event: NodeEvent) {
        self.offset = offset
        self.nodeIndex = nodeIndex
        self.event = event
    }
}
