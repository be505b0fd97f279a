import AudioGraph
import Foundation
import MallocCounter
import MIDI
import Playback
import Sequencing
import Synchronization

/// What a soak run does.
public struct SoakConfiguration: Sendable {
    /// Audio to produce, in seconds of output.
    public var outputSeconds: Double = 600
    /// How many times faster than real time the offline driver renders (nil: as fast as it
    /// can). Ignored when a device paces the run.
    public var speed: Double? = 100
    /// Frames per second.
    public var sampleRate = 48_000
    /// Frames per render call.
    public var blockSize = 512
    /// Seed of the song's noise and of the transport script.
    public var seed: UInt64 = 1
    /// Length of the song in 4/4 bars.
    public var bars = 96
    /// Average transport actions (seeks, rate changes, edits, loops, stops) per minute of output.
    public var actionsPerMinute = 40.0
    /// Live note-ons (each followed by its note-off) sent per second of wall time.
    public var liveNotesPerSecond = 400.0

    /// The defaults: ten minutes of output at 100x real time.
    public init() {}
}

/// Renders for a soak run: the offline thread below, or a sound card driver.
public protocol SoakRenderDriver: AnyObject {
    /// Starts calling `render` from the driver's own thread.
    func start(render: @escaping @Sendable (Int, StereoBuffer, Int64) -> Void) throws
    /// Frames rendered so far.
    var renderedFrames: Int64 { get }
    /// Stops the thread and waits for it.
    func stop()
    /// Underruns the device reported (0 offline).
    var xrunCount: Int { get }
}

/// What a soak run saw.
public struct SoakReport: Sendable, CustomStringConvertible {
    /// Seconds of audio produced.
    public var outputSeconds = 0.0
    /// Wall-clock seconds the run took.
    public var wallSeconds = 0.0
    /// Transport actions by kind.
    public var seeks = 0, rateChanges = 0, edits = 0, loopsSet = 0, loopsCleared = 0, stops = 0, restartsAtEnd = 0
    /// Probe notes played, and the jumps (seeks, loop passes, restarts) between runs of them.
    public var probeNotesPlayed = 0, probeJumps = 0
    /// Probe notes skipped inside a stretch of continuous playback.
    public var probeNotesLost = 0
    /// Probe notes played again inside a stretch of continuous playback.
    public var probeNotesDuplicated = 0
    /// A note-on for a sounding key or a note-off for a silent key, on the probe instrument.
    public var probePairingErrors = 0
    /// Notes still sounding after the final stop, per instrument.
    public var stuckNotes = 0
    /// Note-offs without a sounding note on the noise instrument.
    public var noiseExtraNoteOffs = 0
    /// Live note-ons sent from the input thread, received by the instrument, and the
    /// difference either way.
    public var liveSent = 0, liveReceived = 0, liveLost = 0, liveDuplicatedOrReordered = 0
    /// Times the input thread found the live ring full and retried.
    public var liveRetries = 0
    /// Underruns the device reported.
    public var xruns = 0
    /// Heap allocations and frees on the render thread inside the engine's render calls.
    public var renderAllocations = 0, renderFrees = 0
    /// The slowest render call, in microseconds, and the block's duration.
    public var slowestBlockMicroseconds = 0.0, blockMicroseconds = 0.0
    /// The first few unexplained discontinuities, for the log.
    public var problems: [String] = []

    /// True when nothing was lost, duplicated, left sounding or allocated.
    public var passed: Bool {
        probeNotesLost == 0 && probeNotesDuplicated == 0 && probePairingErrors == 0 && stuckNotes == 0
            && noiseExtraNoteOffs == 0 && liveLost == 0 && liveDuplicatedOrReordered == 0 && xruns == 0
            && renderAllocations == 0 && renderFrees == 0 && probeNotesPlayed > 0 && liveSent > 0
    }

    public var description: String {
        var lines = [
            String(format: "output %.1f s in %.1f s wall (%.0fx real time)", outputSeconds, wallSeconds, outputSeconds / max(wallSeconds, 1e-9)),
            "actions: \(seeks) seeks, \(rateChanges) rate changes, \(edits) live edits, \(loopsSet) loops set, \(loopsCleared) cleared, \(stops) stop/start, \(restartsAtEnd) restarts at the end",
            "probe: \(probeNotesPlayed) notes in \(probeJumps + 1) continuous stretches; lost \(probeNotesLost), duplicated \(probeNotesDuplicated), pairing errors \(probePairingErrors)",
            "live input: sent \(liveSent), received \(liveReceived), lost \(liveLost), duplicated or out of order \(liveDuplicatedOrReordered) (ring full \(liveRetries) times, retried)",
            "stuck notes \(stuckNotes), extra note-offs \(noiseExtraNoteOffs), xruns \(xruns)",
            "render thread: \(renderAllocations) allocations, \(renderFrees) frees; slowest block "
                + String(format: "%.0f us of %.0f us", slowestBlockMicroseconds, blockMicroseconds),
        ]
        lines += problems.map { "problem: \($0)" }
        lines.append(passed ? "PASS" : "FAIL")
        return lines.joined(separator: "\n")
    }
}

/// A long playback under stress: a control thread seeks, changes the rate, edits tracks, sets
/// and clears loops, stops and starts, while another thread plays live notes and a render
/// thread (offline or a sound card's) renders; afterwards every note the instruments received
/// is checked for gaps, repeats and stuck notes.
public final class SoakRun {
    private let configuration: SoakConfiguration
    private let song: SoakSong
    private let player: Player
    private let probe = SoakProbeNode(name: "Probe", capacity: 1 << 21)
    private let noise = SoakProbeNode(name: "Noise", capacity: 1 << 22)
    private let live = SoakProbeNode(name: "Live", capacity: 1 << 21)
    private var random: SoakRandom

    /// Builds the song and the graph (three recording instruments into the output).
    public init(configuration: SoakConfiguration) throws {
        self.configuration = configuration
        song = SoakSong(bars: configuration.bars, seed: configuration.seed)
        random = SoakRandom(seed: configuration.seed ^ 0x5EED)
        let graph = AudioGraph()
        graph.add(probe, id: SoakSong.probeNode)
        graph.add(noise, id: SoakSong.noiseNode)
        graph.add(live, id: SoakSong.liveNode)
        graph.add(OutputNode(), id: 10)
        for node in [SoakSong.probeNode, SoakSong.noiseNode, SoakSong.liveNode] { try graph.connect(node, to: 10) }
        let compiled = try graph.compile(sampleRate: Double(configuration.sampleRate), maximumFrameCount: configuration.blockSize)
        player = Player(sequence: song.sequence, graph: compiled, defaultNode: SoakSong.probeNode)
    }

    /// Frames per render call the driver should use.
    public var blockSize: Int { configuration.blockSize }

    /// Runs to the configured output length with `driver` rendering, then checks.
    public func run(driver: SoakRenderDriver) throws -> SoakReport {
        var report = SoakReport()
        let stats = RenderStatistics()
        let engine = player.engine
        let wallStart = monotonicSeconds()
        player.start()
        try driver.start { frameCount, buffer, host in
            var before = timespec()
            clock_gettime(CLOCK_MONOTONIC, &before)
            malloc_counter_start()
            engine.render(frameCount: frameCount, into: buffer, hostTimeNanos: host)
            let allocations = malloc_counter_stop()
            let frees = malloc_counter_frees()
            var after = timespec()
            clock_gettime(CLOCK_MONOTONIC, &after)
            stats.record(allocations: allocations, frees: frees,
                         nanoseconds: (Int64(after.tv_sec) - Int64(before.tv_sec)) * 1_000_000_000 + Int64(after.tv_nsec) - Int64(before.tv_nsec))
        }
        let liveSender = LiveSender(input: player.liveInput, notesPerSecond: configuration.liveNotesPerSecond)
        liveSender.start()

        let script = runScript(driver: driver, report: &report)
        liveSender.stop()
        // Let the engine drain the live ring, then stop: the stop releases every sounding note.
        waitForFrames(driver, configuration.blockSize * 4)
        player.stop()
        waitForFrames(driver, configuration.blockSize * 4)
        driver.stop()
        player.service()

        report.wallSeconds = monotonicSeconds() - wallStart
        report.outputSeconds = Double(driver.renderedFrames) / Double(configuration.sampleRate)
        report.xruns = driver.xrunCount
        report.renderAllocations = stats.allocations.load(ordering: .relaxed)
        report.renderFrees = stats.frees.load(ordering: .relaxed)
        report.slowestBlockMicroseconds = Double(stats.slowest.load(ordering: .relaxed)) / 1000
        report.blockMicroseconds = Double(configuration.blockSize) / Double(configuration.sampleRate) * 1e6
        report.liveSent = liveSender.sent.load(ordering: .relaxed)
        report.liveRetries = liveSender.retries.load(ordering: .relaxed)
        for node in [probe, noise, live] where node.overflow > 0 {
            note("\(node.name) recorder overflowed by \(node.overflow) messages", &report)
            report.probeNotesLost += node.overflow
        }
        checkProbe(script: script, report: &report)
        checkNoise(report: &report)
        checkLive(report: &report)
        return report
    }

    // MARK: The control thread's script

    /// What the checker needs to know about the jumps the script caused.
    struct ScriptLog {
        /// Each seek or restart, in order: the output frame before which it cannot have taken
        /// effect, and the first probe note expected after it.
        var seekTargets: [(frame: Int64, note: Int)] = []
        /// Every loop set: (last probe note of a pass, first probe note of the next).
        var loopJumps: Set<[Int]> = []
    }

    private func runScript(driver: SoakRenderDriver, report: inout SoakReport) -> ScriptLog {
        var log = ScriptLog()
        let rate = configuration.sampleRate
        let target = Int64(configuration.outputSeconds * Double(rate))
        let meanGap = 60 / configuration.actionsPerMinute * Double(rate)
        var nextAction = Int64(meanGap)
        var stoppedUntil: Int64?
        var loop: (from: Int64, to: Int64)?
        var ends = player.timesEndReached
        let trace = ProcessInfo.processInfo.environment["TACTUS_SOAK_TRACE"] != nil
        enum Action { case seek, rate, edit, loop, stop }
        var deck: [Action] = []
        // Poll often enough that, even at 100x, an action lands within a few hundred ms of output.
        let pollMicroseconds: UInt32 = configuration.speed == nil ? 500 : 1_000
        while driver.renderedFrames < target {
            usleep(pollMicroseconds)
            player.service()
            let now = driver.renderedFrames
            if player.timesEndReached != ends {
                ends = player.timesEndReached
                log.seekTargets.append((driver.renderedFrames, 0))
                player.locate(toTick: 0)
                player.start()
                report.restartsAtEnd += 1
                continue
            }
            if let until = stoppedUntil {
                if now >= until {
                    if trace { FileHandle.standardError.write(Data("frame \(now) start\n".utf8)) }
                    player.start()
                    stoppedUntil = nil
                }
                continue
            }
            guard now >= nextAction else { continue }
            if trace { FileHandle.standardError.write(Data("frame \(now) tick \(player.tick) rate \(player.playRate)\n".utf8)) }
            nextAction = now + Int64(Double(random.next(in: 1...2000)) / 1000 * meanGap)
            if deck.isEmpty {
                // Actions come from shuffled decks, so even a slow run (sanitizers, a loaded
                // machine) exercises every kind in proportion.
                deck = [Action](repeating: .seek, count: 5) + [Action](repeating: .rate, count: 5)
                    + [Action](repeating: .edit, count: 5) + [Action](repeating: .loop, count: 3) + [.stop, .stop]
                for i in stride(from: deck.count - 1, to: 0, by: -1) { deck.swapAt(i, random.next(in: 0...i)) }
            }
            switch deck.removeLast() {
            case .seek:
                // Inside an active loop a seek stays inside it, so a pass is never cut short
                // behind the checker's back.
                let tick: Int64
                if let loop {
                    tick = Int64(random.next(in: Int(loop.from)...Int(loop.to - 1)))
                } else {
                    tick = Int64(random.next(in: 0...Int(song.lengthTicks - 1)))
                }
                var expected = song.firstProbe(atOrAfter: tick)
                if let loop, expected >= song.firstProbe(atOrAfter: loop.to) {
                    // No probe note between the target and the loop's end: the next one
                    // played is the loop's first.
                    expected = song.firstProbe(atOrAfter: loop.from)
                }
                log.seekTargets.append((driver.renderedFrames, expected))
                if trace { FileHandle.standardError.write(Data("  seek \(tick)\n".utf8)) }
                player.locate(toTick: tick)
                report.seeks += 1
            case .rate:
                let rates = [0.25, 0.5, 0.8, 1, 1, 1.25, 1.5, 2, 3, 4, 8]
                player.playRate = rates[random.next(in: 0...(rates.count - 1))]
                if trace { FileHandle.standardError.write(Data("  rate \(player.playRate)\n".utf8)) }
                report.rateChanges += 1
            case .edit:
                if trace { FileHandle.standardError.write(Data("  edit\n".utf8)) }
                editNoise()
                report.edits += 1
            case .loop:
                if loop != nil {
                    if trace { FileHandle.standardError.write(Data("  clear loop\n".utf8)) }
                    player.clearLoop()
                    loop = nil
                    report.loopsCleared += 1
                } else {
                    // A loop of one to four bars starting a bar past the current position, so
                    // the position is never already beyond its end when it arrives.
                    let bar = player.tick / SoakSong.barTicks + 1
                    let from = bar * SoakSong.barTicks
                    let to = from + Int64(random.next(in: 1...4)) * SoakSong.barTicks
                    guard to < song.lengthTicks else { continue }
                    log.loopJumps.insert([song.lastProbe(before: to), song.firstProbe(atOrAfter: from)])
                    if trace { FileHandle.standardError.write(Data("  loop \(from)..<\(to)\n".utf8)) }
                    player.setLoop(from: from, to: to, count: .forever)
                    loop = (from, to)
                    report.loopsSet += 1
                }
            case .stop:
                if trace { FileHandle.standardError.write(Data("  stop\n".utf8)) }
                player.stop()
                stoppedUntil = now + Int64(random.next(in: 50...500)) * Int64(rate) / 1000
                report.stops += 1
            }
        }
        return log
    }

    /// Replaces, transposes or mutes a noise track while playing.
    private func editNoise() {
        let track = 1 + random.next(in: 0...(SoakSong.noiseTrackCount - 1))
        let choice = random.next(in: 0...2)
        let bars = configuration.bars
        var noiseRandom = SoakRandom(seed: random.next())
        player.updateSequence { sequence in
            switch choice {
            case 0:
                sequence.tracks[track] = SoakSong.noiseTrack(channel: UInt8(track - 1), bars: bars, random: &noiseRandom)
            case 1:
                sequence.tracks[track].mapEvents { event in
                    if case .note(var note) = event.event {
                        note.key = UInt8(min(120, Int(note.key) + 1))
                        event.event = .note(note)
                    }
                }
            default:
                sequence.tracks[track].isMuted.toggle()
            }
        }
    }

    private func waitForFrames(_ driver: SoakRenderDriver, _ frames: Int) {
        let until = driver.renderedFrames + Int64(frames)
        while driver.renderedFrames < until { usleep(500) }
    }

    // MARK: Checks

    private func checkProbe(script: ScriptLog, report: inout SoakReport) {
        let trace = ProcessInfo.processInfo.environment["TACTUS_SOAK_TRACE"] != nil
        var sounding = Set<UInt16>()
        var previous: Int?
        var nextSeek = 0
        var lastFrame: Int64 = .min
        for record in probe.records {
            let m = record.message
            let key = UInt16(m.channel) << 7 | UInt16(m.data1)
            if record.frame < lastFrame { note("probe frames went backwards at frame \(record.frame)", &report) }
            lastFrame = record.frame
            if m.isNoteOn {
                let n = SoakSong.probeNumber(of: m)
                report.probeNotesPlayed += 1
                if !sounding.insert(key).inserted { report.probePairingErrors += 1 }
                defer { previous = n }
                guard let prev = previous else {
                    if n != 0 && !script.seekTargets.contains(where: { $0.note == n }) { note("first probe note \(n), expected 0", &report) }
                    continue
                }
                if n == prev + 1 { continue }
                report.probeJumps += 1
                if trace {
                    FileHandle.standardError.write(Data("jump \(prev) -> \(n) at frame \(record.frame); next seeks \(script.seekTargets[nextSeek...].prefix(3))\n".utf8))
                }
                // A loop pass: its last note, then its first. Otherwise a seek issued before
                // this frame; seeks before it landed where playback already was or were
                // overtaken before a note played.
                var explained = script.loopJumps.contains([prev, n])
                if !explained {
                    var j = nextSeek
                    while j < script.seekTargets.count && script.seekTargets[j].frame <= record.frame {
                        if script.seekTargets[j].note == n { nextSeek = j + 1; explained = true }
                        j += 1
                    }
                }
                if explained {
                } else if n > prev + 1 {
                    report.probeNotesLost += n - prev - 1
                    note("probe notes \(prev + 1)..<\(n) missing at output frame \(record.frame)", &report)
                } else {
                    report.probeNotesDuplicated += prev - n + 1
                    note("probe note \(n) after \(prev) at output frame \(record.frame)", &report)
                }
            } else if m.isNoteOff {
                if sounding.remove(key) == nil { report.probePairingErrors += 1 }
            }
        }
        report.stuckNotes += sounding.count
    }

    private func checkNoise(report: inout SoakReport) {
        var counts = [Int](repeating: 0, count: 16 * 128)
        for record in noise.records {
            let m = record.message
            let key = Int(m.channel) * 128 + Int(m.data1)
            if m.isNoteOn {
                counts[key] += 1
            } else if m.isNoteOff {
                if counts[key] == 0 { report.noiseExtraNoteOffs += 1 } else { counts[key] -= 1 }
            }
        }
        report.stuckNotes += counts.reduce(0, +)
    }

    private func checkLive(report: inout SoakReport) {
        var expected = 0
        var counts = [Int](repeating: 0, count: 16 * 128)
        for record in live.records {
            let m = record.message
            let key = Int(m.channel) * 128 + Int(m.data1)
            if m.isNoteOn {
                report.liveReceived += 1
                let n = SoakSong.probeNumber(of: m)
                if n != expected { report.liveDuplicatedOrReordered += 1 }
                expected = n + 1
                counts[key] += 1
            } else if m.isNoteOff {
                // Stops and seeks release live notes too; the player's own note-off then
                // finds the key silent, which is fine.
                counts[key] = max(0, counts[key] - 1)
            }
        }
        report.liveLost = max(0, report.liveSent - report.liveReceived)
        report.stuckNotes += counts.reduce(0, +)
    }

    private func note(_ problem: String, _ report: inout SoakReport) {
        if report.problems.count < 10 { report.problems.append(problem) }
    }
}

/// Render-thread figures, written by the render thread, read at the end.
final class RenderStatistics: Sendable {
    let allocations = Atomic<Int>(0)
    let frees = Atomic<Int>(0)
    let slowest = Atomic<Int64>(0)

    func record(allocations a: Int, frees f: Int, nanoseconds: Int64) {
        if a != 0 { allocations.add(a, ordering: .relaxed) }
        if f != 0 { frees.add(f, ordering: .relaxed) }
        if nanoseconds > slowest.load(ordering: .relaxed) { slowest.store(nanoseconds, ordering: .relaxed) }
    }
}

/// The live input thread: plays numbered notes through the player's live path as fast as
/// configured, retrying when the ring is full (a keyboard's events must not be dropped).
final class LiveSender: @unchecked Sendable {
    let input: LiveMIDIInput
    let interval: useconds_t
    let sent = Atomic<Int>(0)
    let retries = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    init(input: LiveMIDIInput, notesPerSecond: Double) {
        self.input = input
        interval = useconds_t(max(50, 1_000_000 / max(notesPerSecond, 1) / 2))
    }

    func start() {
        let thread = Thread { [self] in
            var n = 0
            while !stopping.load(ordering: .relaxed) && n < SoakSong.maximumProbeNotes {
                let id = SoakSong.probeIdentity(n)
                send(.noteOn(channel: id.channel, key: id.key, velocity: id.velocity))
                sent.store(n + 1, ordering: .relaxed)
                usleep(interval)
                send(.noteOff(channel: id.channel, key: id.key, velocity: 0))
                usleep(interval)
                n += 1
            }
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    private func send(_ message: MIDIMessage) {
        while !input.send(message, toNode: SoakSong.liveNode) {
            retries.add(1, ordering: .relaxed)
            usleep(200)
        }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        while !finished.load(ordering: .acquiring) { usleep(200) }
    }
}

/// Renders on a thread of its own, paced to a multiple of real time or as fast as possible.
public final class OfflineSoakDriver: SoakRenderDriver, @unchecked Sendable {
    private let blockSize: Int
    private let sampleRate: Int
    private let speed: Double?
    private let frames = Atomic<Int64>(0)
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    /// A driver rendering `blockSize` frames per call at `speed` times real time (nil: flat out).
    public init(blockSize: Int, sampleRate: Int, speed: Double?) {
        self.blockSize = blockSize
        self.sampleRate = sampleRate
        self.speed = speed
    }

    public var renderedFrames: Int64 { frames.load(ordering: .acquiring) }
    public var xrunCount: Int { 0 }

    public func start(render: @escaping @Sendable (Int, StereoBuffer, Int64) -> Void) throws {
        let thread = Thread { [self] in
            let left = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
            let right = UnsafeMutablePointer<Float>.allocate(capacity: blockSize)
            let buffer = StereoBuffer(left: left, right: right)
            let start = monotonicSeconds()
            var rendered: Int64 = 0
            while !stopping.load(ordering: .relaxed) {
                let now = monotonicSeconds()
                if let speed {
                    let due = Double(rendered) / Double(sampleRate) / speed
                    if due > now - start {
                        usleep(useconds_t(min(2_000, (due - (now - start)) * 1e6)))
                        continue
                    }
                }
                render(blockSize, buffer, Int64(now * 1e9))
                rendered += Int64(blockSize)
                frames.store(rendered, ordering: .releasing)
            }
            left.deallocate()
            right.deallocate()
            finished.store(true, ordering: .releasing)
        }
        thread.start()
    }

    public func stop() {
        stopping.store(true, ordering: .relaxed)
        while !finished.load(ordering: .acquiring) { usleep(200) }
    }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
