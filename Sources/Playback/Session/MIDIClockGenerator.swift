import MIDI
import Sequencing

/// MIDI clock for a backend that sends MIDI inside its periods (JACK): 24 clocks per quarter
/// note on the song's tempo map, placed at the frame the engine reaches each, so they follow
/// the play rate; Start when playback starts at the song's beginning, Stop when it stops, and
/// Song Position Pointer then Continue when it starts elsewhere or jumps (a locate, a loop).
///
/// The backend calls ``advance(anchor:frameCount:into:)`` after each period's render with the
/// block's anchor (``PlaybackRenderer/lastBlockAnchor()``), on its own thread; the messages go
/// into a ``MIDIPortTap``, which the backend drains like a port track's. Nothing here
/// allocates after `init`.
///
/// The song position is read once per render call, so a loop's jump inside a period (rather
/// than at its start) places that period's clocks after the jump as if there were none; the
/// next period sees the jump and sends the Song Position Pointer.
public final class MIDIClockGenerator {
    /// Song positions (in the engine's 1/65536-frame units) of every clock to the song's end.
    private let clockPositions: [Int64]
    private let ticksPerQuarter: Int64
    private let tempo: TempoMap
    private let sampleRate: Int
    private var playing = false
    private var expectedPosition: Int64 = 0
    private var next = 0
    private var isFirstBlock = true

    /// Clocks for `sequence` played at `sampleRate`, up to the end of the song.
    public init(sequence: MusicSequence, sampleRate: Int) {
        tempo = sequence.makeTempoMap()
        self.sampleRate = sampleRate
        ticksPerQuarter = Int64(max(1, tempo.timeBase.ticksPerQuarterForBeats))
        var positions: [Int64] = []
        var k: Int64 = 0
        let endTick = max(1, sequence.length)
        while k * ticksPerQuarter < endTick * 24 {
            positions.append(Self.position(ofClock: k, tempo: tempo, ticksPerQuarter: ticksPerQuarter, sampleRate: sampleRate))
            k += 1
        }
        clockPositions = positions
    }

    /// The song position of clock `k` (on tick `k * ticksPerQuarter / 24`, which need not be
    /// whole: the tempo does not change inside a tick, so its time is still exact).
    static func position(ofClock k: Int64, tempo: TempoMap, ticksPerQuarter: Int64, sampleRate: Int) -> Int64 {
        let scaled = k * ticksPerQuarter
        let whole = scaled / 24, fraction = scaled % 24
        let segment = tempo.segments[tempo.segmentIndex(atTick: whole)]
        let numerator = Double(tempo.timeNumerator(atTick: whole)) + Double(fraction * segment.unitsPerTick) / 24
        return Int64((numerator / Double(tempo.timeDenominator) * Double(sampleRate) * Double(Engine.positionUnitsPerFrame)).rounded())
    }

    /// Clocks to the song's end.
    public var clockCount: Int { clockPositions.count }

    /// Emits the messages of the block that started at `anchor` and lasted `frameCount` frames.
    public func advance(anchor: PlaybackAnchor, frameCount: Int, into tap: MIDIPortTap) {
        var start = anchor.outputFrame
        guard anchor.rateStep > 0 else {
            if playing { tap.receive(MIDIMessage(status: 0xFC), atFrame: start) }
            playing = false
            isFirstBlock = false
            return
        }
        var position = anchor.songPosition
        var frameCount = frameCount
        if isFirstBlock && position == start * anchor.rateStep {
            // The session plays its graph's latency before the backend's first period (the
            // pre-roll, heard from output frame 0): the song started at graph frame 0.
            frameCount += Int(start)
            position = 0
            start = 0
        }
        isFirstBlock = false
        if !playing || position != expectedPosition {
            if playing { tap.receive(MIDIMessage(status: 0xFC), atFrame: start) }
            if position == 0 {
                tap.receive(MIDIMessage(status: 0xFA), atFrame: start)
                next = 0
            } else {
                // A follower starts on the clock after Continue, so clocks resume on the
                // sixteenth the pointer names: the first at or after the position.
                next = firstClock(atOrAfter: position)
                let sixteenth = min(Int64(next + 5) / 6, 0x3FFF)
                next = Int(sixteenth * 6)
                tap.receive(MIDIMessage(status: 0xF2, data1: UInt8(sixteenth & 0x7F), data2: UInt8(sixteenth >> 7)), atFrame: start)
                tap.receive(MIDIMessage(status: 0xFB), atFrame: start)
            }
            playing = true
        }
        let step = anchor.rateStep
        let end = position + Int64(frameCount) * step
        while next < clockPositions.count && clockPositions[next] < end {
            let offset = max(0, (clockPositions[next] - position + step - 1) / step)
            tap.receive(MIDIMessage(status: 0xF8), atFrame: start + offset)
            next += 1
        }
        expectedPosition = end
    }

    private func firstClock(atOrAfter position: Int64) -> Int {
        var low = 0, high = clockPositions.count
        while low < high {
            let mid = (low + high) / 2
            if clockPositions[mid] < position { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
