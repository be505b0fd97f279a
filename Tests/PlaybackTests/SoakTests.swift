import PlaybackSoak
import Testing

/// Issue 8's soak, offline: ten minutes of output rendered on a thread of its own at 100x real
/// time while the test thread seeks, changes the rate, edits tracks, loops, stops and starts,
/// and a third thread plays live notes. Nothing may be lost, repeated, left sounding or
/// allocated on the render thread. (`tactus-soak --device hw:2,0 --seconds 60` runs the same
/// at real time in the VM tests.)
@Suite("Soak") struct SoakTests {
    @Test(arguments: [UInt64(11), 12])
    func tenMinutesAt100xLoseNothing(seed: UInt64) throws {
        var configuration = SoakConfiguration()
        configuration.outputSeconds = 600
        configuration.speed = 100
        configuration.seed = seed
        let run = try SoakRun(configuration: configuration)
        let report = try run.run(driver: OfflineSoakDriver(blockSize: configuration.blockSize, sampleRate: configuration.sampleRate,
                                                           speed: configuration.speed))
        #expect(report.passed, "\(report)")
        #expect(report.outputSeconds >= 600)
        // At least two decks of actions (20 each), even when sanitizers slow the control thread.
        #expect(report.seeks >= 10 && report.rateChanges >= 10 && report.edits >= 10 && report.loopsSet + report.loopsCleared >= 6
                && report.stops >= 4, "the script exercised every action: \(report)")
        #expect(report.probeJumps >= 5, "seeks and loop passes showed up as jumps")
        #expect(report.liveSent > 500)
    }
}
