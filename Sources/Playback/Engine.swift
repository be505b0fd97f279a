import AudioGraph
import MIDI
import Synchronization

/// The render entry: one object that owns a compiled graph and a schedule and turns
/// `render(frameCount:into:)` calls into audio, delivering every scheduled event at its exact
/// frame offset. Offline rendering and the real-time driver call the same method.
///
/// Two clocks run here. The *output frame* counts rendered frames and never jumps: nodes see
/// it as their absolute frame, so envelopes and smoothing stay continuous. The *song position*
/// is where playback is in the schedule, kept as an exact integer in 1/65536 frame units and
/// advanced by the play-rate step `R = round(rate * 65536)` per output frame; an event at song
/// frame `F` is delivered at output offset `ceil((F * 65536 - position) / R)` from a block
/// start. Nothing is rescheduled when the rate changes.
///
/// Thread contract (DESIGN.md section 4): a ``Player`` on the control side talks to a playing
/// engine only through a command ring, a snapshot mailbox and atomics; `render` runs on one
/// audio thread and never allocates, locks or does I/O. The direct methods ``load(_:)`` and
/// ``seek(toFrame:)`` are for an engine nobody is rendering concurrently (offline use).
public final class Engine: @unchecked Sendable {
    /// Song position units per frame.
    public static let positionUnitsPerFrame: Int64 = 65_536

    /// The graph being rendered.
    public let graph: CompiledGraph
    /// The schedule being played.
    public var schedule: Schedule { snapshot.schedule }
    /// The absolute output frame the next render call starts at.
    public private(set) var frame: Int64 = 0
    /// Index of the next schedule event to deliver.
    public private(set) var cursor = 0

    private var snapshot: EngineSnapshot
    private var userCursor = 0
    /// The last song frame whose events have all been delivered. At a play rate above 1 the
    /// song position after a block lies past the last frame the block reached, and events in
    /// between belong to the next block: a schedule installed at the boundary must resume
    /// from here, not from the position, or it skips them.
    private var deliveredThroughFrame: Int64 = -1
    private var songPosition: Int64 = 0
    private var rateStep: Int64 = Engine.positionUnitsPerFrame
    private var pendingRate: (step: Int64, frame: Int64)?
    private var playing = true
    private var loop: TransportLoop?
    private var endFrame: Int64 = .max
    private var endInclusive = true
    // Nodes that follow the transport, by index; the next tempo or time signature change to
    // tell them; whether they must hear the transport's state before the next frame renders
    // (after a start, stop, locate, loop jump, rate change or new schedule).
    private let transportNodes: UnsafeMutablePointer<Int>
    private let transportNodeCount: Int
    private var transportCursor = 0
    private var transportNoticePending = true

    private let eventBuffer: UnsafeMutablePointer<GraphEvent>
    private let eventCapacity: Int
    // Sounding notes per (node, channel, key): how many note-ons are unanswered, and the
    // track of the last one (0xFFFF for live input). Pedals down per (node, channel).
    private let nodeCount: Int
    private let soundingCount: UnsafeMutablePointer<UInt8>
    private let soundingOwner: UnsafeMutablePointer<UInt16>
    private let pedalDown: UnsafeMutablePointer<Bool>
    private var soundingTotal = 0

    // Channels to and from the control side.
    let commands = CommandRing(minimumCapacity: 256)
    let retired = RetireRing(minimumCapacity: 1024)
    // What this render call retired, handed to `retired` only when the call ends. Until then
    // the call itself may still hold references (the command being applied, a local, the
    // field being replaced); were the control side to pop and release an object first, the
    // audio thread's own release would be the last one and free it here. Holds one entry per
    // command a call applies, plus an installed snapshot.
    private let retiring: UnsafeMutablePointer<Unmanaged<AnyObject>>
    private let retiringCapacity: Int
    private var retiringCount = 0
    let userEvents = UserEventRing(minimumCapacity: 1024)
    let liveInput = LiveMIDIRing(minimumCapacity: 1024)
    private let mailbox = Atomic<UnsafeMutableRawPointer?>(nil)
    let publishedSongPosition = Atomic<Int64>(0)
    let publishedOutputFrame = Atomic<Int64>(0)
    let publishedPlaying = Atomic<Bool>(true)
    let publishedRateStep = Atomic<Int64>(65_536)
    let droppedUserEvents = Atomic<Int>(0)
    /// Changes whenever the engine stops by reaching its end (not by a stop command).
    let endCount = Atomic<Int>(0)
    /// Counts the transport loop's jumps back to its start (each completed pass but the last).
    let loopJumpCount = Atomic<Int>(0)
    /// The output frame at which playback last stopped by reaching its end; -1 after a start.
    let publishedEndOutputFrame = Atomic<Int64>(-1)
    // Host-time anchor of the last block: a sequence lock (odd while being written) around
    // the output frame, song position, rate step and host time of the block's first frame.
    let anchorSequence = Atomic<Int>(0)
    let anchorOutputFrame = Atomic<Int64>(0)
    let anchorSongPosition = Atomic<Int64>(0)
    let anchorRateStep = Atomic<Int64>(0)
    let anchorHostNanos = Atomic<Int64>(0)

    /// Creates an engine that plays `schedule` from frame 0 at rate 1 until stopped (no end);
    /// `eventCapacity` bounds the events delivered per graph call (a block with more is
    /// rendered in several calls, with the same result).
    public init(graph: CompiledGraph, schedule: Schedule, eventCapacity: Int = 4096) {
        self.graph = graph
        self.eventCapacity = max(1, eventCapacity)
        eventBuffer = .allocate(capacity: self.eventCapacity)
        snapshot = EngineSnapshot(schedule: schedule, graph: graph)
        nodeCount = graph.nodes.count
        soundingCount = .allocate(capacity: nodeCount * 2048)
        soundingCount.initialize(repeating: 0, count: nodeCount * 2048)
        soundingOwner = .allocate(capacity: nodeCount * 2048)
        soundingOwner.initialize(repeating: 0, count: nodeCount * 2048)
        pedalDown = .allocate(capacity: nodeCount * 16)
        pedalDown.initialize(repeating: false, count: nodeCount * 16)
        retiringCapacity = commands.capacity + 1
        retiring = .allocate(capacity: retiringCapacity)
        // A graph call carries at most `eventCapacity` events, and every follower hears a
        // change in the same call: followers past that many (none in practice) hear nothing.
        let followers = graph.nodes.indices.filter { graph.nodes[$0].followsTransport }.prefix(self.eventCapacity)
        transportNodeCount = followers.count
        transportNodes = .allocate(capacity: max(1, followers.count))
        for (k, index) in followers.enumerated() { transportNodes[k] = index }
    }

    deinit {
        eventBuffer.deallocate()
        soundingCount.deallocate()
        soundingOwner.deallocate()
        pedalDown.deallocate()
        transportNodes.deallocate()
        for i in 0..<retiringCount { retiring[i].release() }
        retiring.deallocate()
        if let pending = mailbox.exchange(nil, ordering: .acquiring) {
            Unmanaged<EngineSnapshot>.fromOpaque(pending).release()
        }
    }

    /// Replaces the schedule and keeps playing from the current position (control side: only
    /// while nobody renders concurrently; a ``Player`` publishes through its mailbox instead).
    public func load(_ schedule: Schedule) {
        install(EngineSnapshot(schedule: schedule, graph: graph))
        handOverRetired()
        // This is the control side, so what was retired can be freed right here.
        while let object = retired.pop() { object.release() }
    }

    /// Moves output and song position to `frame`: the next event delivered is the first one at
    /// or after it (only while nobody renders concurrently).
    public func seek(toFrame frame: Int64) {
        self.frame = frame
        songPosition = frame * Engine.positionUnitsPerFrame
        reseek(fromSongFrame: frame)
    }

    // MARK: Control side

    /// Publishes a snapshot; the audio thread installs it at its next block. A snapshot that
    /// was published but never picked up is released here, on the control side.
    func publish(_ snapshot: EngineSnapshot) {
        let pointer = Unmanaged.passRetained(snapshot).toOpaque()
        if let previous = mailbox.exchange(pointer, ordering: .acquiringAndReleasing) {
            Unmanaged<EngineSnapshot>.fromOpaque(previous).release()
        }
    }

    /// Puts the engine in the player's initial state: stopped at song frame 0 (before any
    /// render call, while nobody renders).
    func resetForPlayer() {
        playing = false
        publishedPlaying.store(false, ordering: .releasing)
    }

    // MARK: Audio thread

    /// Renders `frameCount` frames into `output` and advances. `hostTimeNanos` is the
    /// monotonic time at which the driver asked for the block (0 offline); the player uses it
    /// to convert between host time and beats.
    public func render(frameCount: Int, into output: StereoBuffer, hostTimeNanos: Int64 = 0) {
        if let pointer = mailbox.exchange(nil, ordering: .acquiring) {
            install(Unmanaged<EngineSnapshot>.fromOpaque(pointer).takeRetainedValue())
        }
        // At most a ring's worth per call, so `retiring` has room for what they retire;
        // commands the control side adds meanwhile wait for the next call.
        var applied = 0
        while applied < commands.capacity, let command = commands.pop() {
            apply(command)
            applied += 1
        }
        drainLiveInput()
        publishAnchor(hostTimeNanos: hostTimeNanos)
        var done = 0
        let unit = Engine.positionUnitsPerFrame
        while done < frameCount {
            var length = min(frameCount - done, graph.maximumFrameCount)
            if let pending = pendingRate {
                if pending.frame <= frame {
                    rateStep = pending.step
                    pendingRate = nil
                    transportNoticePending = true
                } else if pending.frame < frame + Int64(length) {
                    length = Int(pending.frame - frame)
                }
            }
            if transportNoticePending {
                transportNoticePending = false
                announceTransport()
            }
            var count = 0
            var boundaryReached: Int64?
            if playing {
                let boundary = activeBoundaryFrame()
                if boundary != .max {
                    let framesToBoundary = ceilDiv(boundary * unit - songPosition, rateStep)
                    if framesToBoundary <= 0 {
                        crossBoundary(boundary)
                        continue
                    }
                    if framesToBoundary <= Int64(length) {
                        length = Int(framesToBoundary)
                        boundaryReached = boundary
                    }
                }
                // Every event whose song frame is reached by one of this stretch's frames.
                let lastFrame = floorDiv(songPosition + Int64(length - 1) * rateStep, unit)
                let events = snapshot.schedule.events
                let targets = snapshot.targets
                let changes = snapshot.schedule.transport.changes
                var bufferFilledAt: Int64?
                while true {
                    let eventFrame = cursor < events.count ? events[cursor].frame : Int64.max
                    // A tempo or time signature change goes before the events of its frame.
                    let changeFrame = transportNodeCount > 0 && transportCursor < changes.count ? changes[transportCursor].songFrame : Int64.max
                    let nextFrame = min(eventFrame, changeFrame)
                    if nextFrame > lastFrame { break }
                    let offset = Int(max(0, ceilDiv(nextFrame * unit - songPosition, rateStep)))
                    let needed = changeFrame <= eventFrame ? transportNodeCount : 1
                    if count + needed > eventCapacity {
                        // Buffer full: end this graph call at the event that did not fit
                        // (possibly after zero frames, when more events share one frame).
                        length = offset
                        boundaryReached = nil
                        bufferFilledAt = nextFrame
                        break
                    }
                    if changeFrame <= eventFrame {
                        var position = changes[transportCursor].position
                        position.speed = Float(Double(rateStep) / Double(unit))
                        for k in 0..<transportNodeCount {
                            eventBuffer[count] = GraphEvent(offset: offset, nodeIndex: transportNodes[k], event: .transport(position))
                            count += 1
                        }
                        transportCursor += 1
                        continue
                    }
                    let target = Int(targets[cursor])
                    if target >= 0 && track(events[cursor].event, node: target, owner: UInt16(truncatingIfNeeded: events[cursor].track)) {
                        eventBuffer[count] = GraphEvent(offset: offset, nodeIndex: target, event: atPlayRate(events[cursor].event))
                        count += 1
                    }
                    cursor += 1
                }
                if let bufferFilledAt {
                    deliveredThroughFrame = bufferFilledAt - 1
                } else if length > 0 {
                    deliveredThroughFrame = max(deliveredThroughFrame, lastFrame)
                }
                passUserEvents(throughFrame: floorDiv(songPosition + Int64(max(0, length - 1)) * rateStep, unit))
            }
            graph.render(startFrame: frame, frameCount: length, events: UnsafeBufferPointer(start: eventBuffer, count: count))
            let out = graph.output
            (output.left + done).update(from: out.left, count: length)
            (output.right + done).update(from: out.right, count: length)
            done += length
            frame += Int64(length)
            if playing { songPosition += Int64(length) * rateStep }
            // Crossed right away, at the frame the position reaches it: once the position
            // stands on a loop's end the loop no longer applies (a locate there leaves it).
            if let boundaryReached { crossBoundary(boundaryReached) }
        }
        publishedSongPosition.store(songPosition, ordering: .relaxed)
        publishedOutputFrame.store(frame, ordering: .releasing)
        handOverRetired()
    }

    private func publishAnchor(hostTimeNanos: Int64) {
        let s = anchorSequence.load(ordering: .relaxed)
        anchorSequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        anchorOutputFrame.store(frame, ordering: .relaxed)
        anchorSongPosition.store(songPosition, ordering: .relaxed)
        anchorRateStep.store(playing ? rateStep : 0, ordering: .relaxed)
        anchorHostNanos.store(hostTimeNanos, ordering: .relaxed)
        anchorSequence.store(s &+ 2, ordering: .releasing)
    }

    /// The song frame at which playback must do something other than advance: the loop's
    /// end while the position is before it, else the end.
    private func activeBoundaryFrame() -> Int64 {
        if let loop, loop.remainingJumps != 0, songPosition < loop.endFrame * Engine.positionUnitsPerFrame {
            return loop.endFrame
        }
        return endFrame
    }

    /// The position reached `boundary`: events before it that no frame of a skipping rate
    /// landed on play now, then the loop jumps back or playback ends.
    private func crossBoundary(_ boundary: Int64) {
        let isLoop = loop != nil && boundary == loop!.endFrame && loop!.remainingJumps != 0
        let inclusive = !isLoop && endInclusive
        deliverPending(beforeFrame: inclusive ? boundary + 1 : boundary)
        passUserEvents(throughFrame: inclusive ? boundary : boundary - 1)
        if let loop, isLoop {
            releaseSounding(pedals: true, onlyChangedTracks: nil)
            if loop.remainingJumps > 0 { loop.remainingJumps -= 1 }
            // Keep the overshoot of a fractional rate, so the loop has no gap in song time.
            // (modulo the loop's length, so a rate that steps over a whole loop still advances).
            let overshoot = (songPosition - boundary * Engine.positionUnitsPerFrame) % ((loop.endFrame - loop.startFrame) * Engine.positionUnitsPerFrame)
            songPosition = loop.startFrame * Engine.positionUnitsPerFrame + overshoot
            reseek(fromSongFrame: loop.startFrame)
            deliverNow(loop.chase.events)
            loopJumpCount.add(1, ordering: .releasing)
            transportNoticePending = true
        } else {
            releaseSounding(pedals: !endInclusive, onlyChangedTracks: nil)
            playing = false
            transportNoticePending = true
            publishedEndOutputFrame.store(frame, ordering: .relaxed)
            publishedPlaying.store(false, ordering: .releasing)
            endCount.add(1, ordering: .releasing)
        }
    }

    /// Delivers live MIDI from the input thread at the start of this block, in arrival order.
    private func drainLiveInput() {
        var count = 0
        while count < eventCapacity, let record = liveInput.pop() {
            let node = Int(record.nodeIndex)
            guard node >= 0 && node < nodeCount, track(.midi(record.message), node: node, owner: 0xFFFF) else { continue }
            eventBuffer[count] = GraphEvent(offset: 0, nodeIndex: node, event: .midi(record.message))
            count += 1
        }
        if count > 0 { flush(count) }
    }

    private func apply(_ command: EngineCommand) {
        switch command {
        case .start:
            publishedEndOutputFrame.store(-1, ordering: .relaxed)
            transportNoticePending = true
            playing = true
            publishedPlaying.store(true, ordering: .releasing)
        case .stop:
            if playing { releaseSounding(pedals: true, onlyChangedTracks: nil) }
            transportNoticePending = true
            playing = false
            publishedPlaying.store(false, ordering: .releasing)
        case .locate(let songFrame, let chase):
            releaseSounding(pedals: true, onlyChangedTracks: nil)
            songPosition = songFrame * Engine.positionUnitsPerFrame
            reseek(fromSongFrame: songFrame)
            deliverNow(chase.events)
            retire(chase)
        case .setRate(let step, let atFrame):
            if let atFrame, atFrame > frame {
                pendingRate = (step, atFrame)
            } else {
                rateStep = step
                pendingRate = nil
                transportNoticePending = true
            }
            publishedRateStep.store(step, ordering: .relaxed)
        case .midi(let nodeIndex, let message):
            guard nodeIndex >= 0 && nodeIndex < nodeCount, track(.midi(message), node: nodeIndex, owner: 0xFFFF) else { return }
            eventBuffer[0] = GraphEvent(offset: 0, nodeIndex: nodeIndex, event: .midi(message))
            graph.render(startFrame: frame, frameCount: 0, events: UnsafeBufferPointer(start: eventBuffer, count: 1))
        case .allNotesOff:
            releaseSounding(pedals: true, onlyChangedTracks: nil)
        case .setLoop(let newLoop):
            if let old = loop {
                if let newLoop, newLoop.continuesPrevious { newLoop.remainingJumps = old.remainingJumps }
                retire(old)
            }
            loop = newLoop
        case .setEnd(let songFrame, let inclusive):
            endFrame = songFrame
            endInclusive = inclusive
        }
    }

    private func install(_ new: EngineSnapshot) {
        let old = snapshot
        snapshot = new
        // Notes of tracks whose content changed may have lost their note-off: release them.
        // Unchanged tracks keep sounding; their note-offs are in the new schedule too.
        releaseSounding(pedals: false, onlyChangedTracks: (old.schedule.trackFingerprints, new.schedule.trackFingerprints))
        // Resume after the last song frame whose events were delivered.
        cursor = new.schedule.firstIndex(atOrAfterFrame: deliveredThroughFrame + 1)
        userCursor = new.schedule.firstUserIndex(atOrAfterFrame: deliveredThroughFrame + 1)
        transportCursor = new.schedule.transport.firstIndex(atOrAfterFrame: deliveredThroughFrame + 1)
        // The new song may have another tempo here.
        transportNoticePending = true
        retire(old)
    }

    private func reseek(fromSongFrame songFrame: Int64) {
        deliveredThroughFrame = songFrame - 1
        cursor = snapshot.schedule.firstIndex(atOrAfterFrame: songFrame)
        userCursor = snapshot.schedule.firstUserIndex(atOrAfterFrame: songFrame)
        // The state at `songFrame` itself is announced; changes after it follow.
        transportCursor = snapshot.schedule.transport.firstIndex(atOrAfterFrame: songFrame + 1)
        transportNoticePending = true
    }

    /// Keeps a reference to `object` until the render call ends, then hands it to the
    /// control side (see `retiring`).
    private func retire(_ object: AnyObject) {
        // Never full (its capacity bounds the commands a call applies); were it, the object
        // would be kept alive for good rather than freed on the audio thread.
        let reference = Unmanaged.passRetained(object)
        guard retiringCount < retiringCapacity else { return }
        retiring[retiringCount] = reference
        retiringCount += 1
    }

    /// Passes what this call retired to the control side, once nothing here refers to it.
    private func handOverRetired() {
        for i in 0..<retiringCount {
            // The ring is sized so the control side, which empties it whenever it publishes
            // or sends, never lets it fill; should it ever, the object is kept alive for good.
            _ = retired.push(retiring[i])
        }
        retiringCount = 0
    }

    /// Tells the nodes that follow the transport where it is now and how fast it moves.
    private func announceTransport() {
        guard transportNodeCount > 0 else { return }
        let unit = Engine.positionUnitsPerFrame
        let speed = playing ? Float(Double(rateStep) / Double(unit)) : 0
        let position = snapshot.schedule.transport.position(atSongFrame: floorDiv(songPosition, unit), speed: speed)
        var count = 0
        for k in 0..<transportNodeCount {
            if count == eventCapacity { flush(count); count = 0 }
            eventBuffer[count] = GraphEvent(offset: 0, nodeIndex: transportNodes[k], event: .transport(position))
            count += 1
        }
        flush(count)
    }

    /// Delivers scheduled events before `limit` not yet delivered, at the current frame.
    private func deliverPending(beforeFrame limit: Int64) {
        let events = snapshot.schedule.events
        let targets = snapshot.targets
        var count = 0
        while cursor < events.count && events[cursor].frame < limit {
            if count == eventCapacity { flush(count); count = 0 }
            let target = Int(targets[cursor])
            if target >= 0 && track(events[cursor].event, node: target, owner: UInt16(truncatingIfNeeded: events[cursor].track)) {
                eventBuffer[count] = GraphEvent(offset: 0, nodeIndex: target, event: atPlayRate(events[cursor].event))
                count += 1
            }
            cursor += 1
        }
        deliveredThroughFrame = max(deliveredThroughFrame, limit - 1)
        flush(count)
    }

    private func passUserEvents(throughFrame last: Int64) {
        let users = snapshot.schedule.userEvents
        while userCursor < users.count && users[userCursor].frame <= last {
            let e = users[userCursor]
            if !userEvents.push(UserEventRecord(tick: e.tick, track: e.track, data: e.data, metaType: e.metaType)) {
                droppedUserEvents.add(1, ordering: .relaxed)
            }
            userCursor += 1
        }
    }

    private func deliverNow(_ events: [GraphEvent]) {
        var count = 0
        var index = 0
        while index < events.count {
            let e = events[index]
            index += 1
            if count == eventCapacity { flush(count); count = 0 }
            guard track(e.event, node: e.nodeIndex, owner: 0xFFFF) else { continue }
            eventBuffer[count] = GraphEvent(offset: e.offset, nodeIndex: e.nodeIndex, event: atPlayRate(e.event))
            count += 1
        }
        flush(count)
    }

    /// A ramp's lengths are song frames; nodes count output frames, so at a play rate other
    /// than 1 the ramp is stretched or shrunk to last as long as the song time it covers.
    @inline(__always)
    private func atPlayRate(_ event: NodeEvent) -> NodeEvent {
        guard rateStep != Engine.positionUnitsPerFrame, case .parameterRamp(let id, let scope, let element, var ramp) = event else {
            return event
        }
        let unit = Engine.positionUnitsPerFrame
        ramp.length = max(1, ceilDiv(ramp.length * unit, rateStep))
        ramp.elapsed = min(ramp.length, ceilDiv(ramp.elapsed * unit, rateStep))
        return .parameterRamp(id: id, scope: scope, element: element, ramp: ramp)
    }

    /// Delivers the first `count` buffered events at the current frame without rendering.
    private func flush(_ count: Int) {
        guard count > 0 else { return }
        graph.render(startFrame: frame, frameCount: 0, events: UnsafeBufferPointer(start: eventBuffer, count: count))
    }

    /// Keeps the sounding-note and pedal tables up to date with an event about to be
    /// delivered. Returns false for a note-off whose note is not sounding: a stop, seek or
    /// live edit already released it (or a seek landed inside it), and a second note-off
    /// would reach the instrument, or a MIDI port, as a stray duplicate.
    @inline(__always)
    private func track(_ event: NodeEvent, node: Int, owner: UInt16) -> Bool {
        guard case .midi(let m) = event else { return true }
        let kind = m.status & 0xF0
        if kind == 0x90 || kind == 0x80 {
            let slot = node * 2048 + Int(m.channel) * 128 + Int(m.data1 & 0x7F)
            if m.isNoteOn {
                if soundingCount[slot] < 255 { soundingCount[slot] += 1; soundingTotal += 1 }
                soundingOwner[slot] = owner
            } else if soundingCount[slot] > 0 {
                soundingCount[slot] -= 1
                soundingTotal -= 1
            } else {
                return false
            }
        } else if kind == 0xB0 && m.data1 == MIDIController.sustainPedal {
            pedalDown[node * 16 + Int(m.channel)] = m.data2 >= 64
        }
        return true
    }

    /// Sends a note-off for every unanswered note-on (one per note-on, since an instrument
    /// releases one voice per note-off) and, with `pedals`, lifts held sustain pedals.
    /// With `onlyChangedTracks`, only notes last started by a track whose fingerprint differs.
    private func releaseSounding(pedals: Bool, onlyChangedTracks: ([Int], [Int])?) {
        var count = 0
        if soundingTotal > 0 {
            for node in 0..<nodeCount {
                for channel in 0..<16 {
                    let base = node * 2048 + channel * 128
                    for key in 0..<128 where soundingCount[base + key] > 0 {
                        if let (old, new) = onlyChangedTracks {
                            let owner = Int(soundingOwner[base + key])
                            if owner == 0xFFFF { continue }
                            if owner < old.count && owner < new.count && old[owner] == new[owner] { continue }
                        }
                        let message = MIDIMessage.noteOff(channel: UInt8(channel), key: UInt8(key))
                        // An Int counter: iterating a range of UInt8 allocates in debug builds.
                        var remaining = Int(soundingCount[base + key])
                        while remaining > 0 {
                            if count == eventCapacity { flush(count); count = 0 }
                            eventBuffer[count] = GraphEvent(offset: 0, nodeIndex: node, event: .midi(message))
                            count += 1
                            remaining -= 1
                        }
                        soundingTotal -= Int(soundingCount[base + key])
                        soundingCount[base + key] = 0
                    }
                }
            }
        }
        if pedals {
            for slot in 0..<(nodeCount * 16) where pedalDown[slot] {
                if count == eventCapacity { flush(count); count = 0 }
                let message = MIDIMessage.controlChange(channel: UInt8(slot % 16), controller: MIDIController.sustainPedal, value: 0)
                eventBuffer[count] = GraphEvent(offset: 0, nodeIndex: slot / 16, event: .midi(message))
                pedalDown[slot] = false
                count += 1
            }
        }
        flush(count)
    }
}

/// `ceil(a / b)` for positive `b`.
@inline(__always)
func ceilDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && a > 0) ? q + 1 : q
}

/// `floor(a / b)` for positive `b`.
@inline(__always)
func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let q = a / b
    return (a % b != 0 && a < 0) ? q - 1 : q
}
