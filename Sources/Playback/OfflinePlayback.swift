import AudioFileOutput
import AudioGraph
import MIDI

extension Player {
    /// The output frame at which playback last stopped by reaching its end (nil while it has
    /// not, or after a new start). Safe to read from any thread, the audio thread included.
    public var endOutputFrame: Int64? {
        let frame = engine.publishedEndOutputFrame.load(ordering: .acquiring)
        return frame >= 0 ? frame : nil
    }

    /// Plays from the current position to the end, as fast as the CPU allows, with whatever
    /// rate, loop and end are set, then `tailSeconds` more for releases and reverb: the
    /// offline twin of real-time playback, through the same engine.
    ///
    /// The graph's latency (a limiter's look-ahead) is rendered first and dropped, so an event
    /// at output frame `f` is heard at frame `f` of the result, as with ``OfflineRenderer``.
    /// Each block goes to `consume(left, right, count)`; `shouldContinue` is asked before each
    /// block, and returning false throws ``OfflineRenderError/cancelled``. The sequence must end: a loop
    /// that repeats forever never does (check ``Schedule/loopsForever`` and the loop count).
    public func renderToEnd<Failure: Error>(blockSize: Int, tailSeconds: Double,
                            shouldContinue: () -> Bool = { true },
                            consume: (UnsafePointer<Float>, UnsafePointer<Float>, Int) throws(Failure) -> Void) throws(OfflineRenderError<Failure>) -> RenderStatistics {
        try renderToEnd(blockSize: blockSize, tail: .seconds(tailSeconds), shouldContinue: shouldContinue, consume: consume)
    }

    /// Plays from the current position to the end and then the `tail`: a fixed time, or until
    /// the sound has died away (see ``RenderTail``). Otherwise as
    /// ``renderToEnd(blockSize:tailSeconds:shouldContinue:consume:)``.
    public func renderToEnd<Failure: Error>(blockSize: Int, tail: RenderTail,
                            shouldContinue: () -> Bool = { true },
                            consume: (UnsafePointer<Float>, UnsafePointer<Float>, Int) throws(Failure) -> Void) throws(OfflineRenderError<Failure>) -> RenderStatistics {
        let block = max(1, min(blockSize, engine.graph.maximumFrameCount))
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { left.deallocate(); right.deallocate() }
        let buffer = StereoBuffer(left: left, right: right)
        let tailFrames: Int64
        var silence: (threshold: Float, window: Int64)?
        switch tail {
        case .seconds(let seconds):
            tailFrames = Int64((max(0, seconds) * Double(sampleRate)).rounded())
        case .untilSilent(let thresholdDecibels, let capSeconds):
            tailFrames = Int64((max(0, capSeconds) * Double(sampleRate)).rounded())
            silence = (decibelsToGain(thresholdDecibels), Int64(max(1, sampleRate / RenderTail.windowsPerSecond)))
        }
        let silentAfter = silence != nil ? silenceMayEndAfter() : nil
        start()
        var toSkip = Int64(engine.graph.latencyFrames)
        while toSkip > 0 {
            let n = Int(min(toSkip, Int64(block)))
            render(frameCount: n, into: buffer)
            toSkip -= Int64(n)
        }
        var heard: Int64 = 0
        var peak: Float = 0
        // The first frame of the current run of frames below the silence threshold.
        var quietSince: Int64 = 0
        var fellSilent = false
        while !fellSilent {
            let total = endOutputFrame.map { $0 + tailFrames }
            if let total, heard >= total { break }
            guard shouldContinue() else { throw .cancelled }
            render(frameCount: block, into: buffer)
            // The end may fall inside this block; keep only the frames before end + tail.
            var n = Int64(block)
            let end = endOutputFrame
            if let end { n = min(n, end + tailFrames - heard) }
            var count = Int(max(0, n))
            if let silence {
                // The render stops at the first boundary of a grid of absolute output frames,
                // at or after the end, that closes a whole window of quiet frames: the same
                // frame whatever the block size.
                for i in 0..<count {
                    let frame = heard + Int64(i)
                    if abs(left[i]) > silence.threshold || abs(right[i]) > silence.threshold { quietSince = frame + 1 }
                    let next = frame + 1
                    let pastTheMusic = (end.map { next >= $0 } ?? false) || (silentAfter.map { next - silence.window >= $0 } ?? false)
                    if pastTheMusic, next % silence.window == 0, next - quietSince >= silence.window {
                        count = i + 1
                        fellSilent = true
                        break
                    }
                }
            }
            for i in 0..<count { peak = max(peak, abs(left[i]), abs(right[i])) }
            if count > 0 {
                do { try consume(left, right, count) } catch { throw .output(error) }
            }
            heard += Int64(count)
        }
        return RenderStatistics(frameCount: heard, peak: peak, sampleRate: sampleRate)
    }
}

extension Player {
    /// The output frame after which a tail until silence may end a song that falls silent
    /// before its end (bars of rests before its end of track): just after its last note-on,
    /// counted from the current position. Only without a loop and at rate 1, where output
    /// frames follow song frames one to one; nil otherwise.
    func silenceMayEndAfter() -> Int64? {
        guard loopSetting == nil, playRate == 1 else { return nil }
        let lastNoteOn = schedule.events.last { event in
            if case .midi(let message) = event.event { return message.isNoteOn }
            return false
        }?.frame ?? 0
        return max(0, lastNoteOn + 1 - songFrame)
    }
}

/// What an offline render plays after the song's end.
public enum RenderTail: Sendable, Hashable {
    /// A fixed number of seconds, whatever is still sounding.
    case seconds(Double)
    /// Until every voice and effect tail has fallen below `thresholdDecibels` dBFS on both
    /// channels for a whole window (1/20 s, on a grid of absolute output frames so the end
    /// does not depend on the block size), but at most `capSeconds` after the end. Played at
    /// rate 1 without a loop, a song whose sound ends before its end (rests before its end of
    /// track) stops there too: at the first such window wholly after its last note-on.
    case untilSilent(thresholdDecibels: Float, capSeconds: Double)

    /// The default: until the sound is below -90 dBFS, at most 30 s after the end.
    public static let automatic = RenderTail.untilSilent(thresholdDecibels: -90, capSeconds: 30)

    /// Silence windows per second of audio.
    static let windowsPerSecond = 20
}
