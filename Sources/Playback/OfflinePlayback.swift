import AudioGraph

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
    /// block, and returning false throws ``RenderCancelled``. The sequence must end: a loop
    /// that repeats forever never does (check ``Schedule/loopsForever`` and the loop count).
    public func renderToEnd(blockSize: Int, tailSeconds: Double,
                            shouldContinue: () -> Bool = { true },
                            consume: (UnsafePointer<Float>, UnsafePointer<Float>, Int) throws -> Void) throws -> RenderStatistics {
        let block = max(1, min(blockSize, engine.graph.maximumFrameCount))
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block)
        let right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { left.deallocate(); right.deallocate() }
        let buffer = StereoBuffer(left: left, right: right)
        let tailFrames = Int64((max(0, tailSeconds) * Double(sampleRate)).rounded())
        start()
        var toSkip = Int64(engine.graph.latencyFrames)
        while toSkip > 0 {
            let n = Int(min(toSkip, Int64(block)))
            render(frameCount: n, into: buffer)
            toSkip -= Int64(n)
        }
        var heard: Int64 = 0
        var peak: Float = 0
        while true {
            let total = endOutputFrame.map { $0 + tailFrames }
            if let total, heard >= total { break }
            guard shouldContinue() else { throw RenderCancelled() }
            render(frameCount: block, into: buffer)
            // The end may fall inside this block; keep only the frames before end + tail.
            var n = Int64(block)
            if let end = endOutputFrame { n = min(n, end + tailFrames - heard) }
            let count = Int(max(0, n))
            for i in 0..<count { peak = max(peak, abs(left[i]), abs(right[i])) }
            if count > 0 { try consume(left, right, count) }
            heard += Int64(count)
        }
        return RenderStatistics(frameCount: heard, peak: peak, sampleRate: sampleRate)
    }
}
