import AudioGraph
import Foundation
import MallocCounter
import MIDI
import MIDIFile
import Playback
import Sequencing
import Synchronization
import Testing

@Suite struct RealTimeSafetyTests {
    @Test func playingWithCommandsAllocatesNothingOnTheRenderThread() throws {
        // Sanity: the counter sees this thread's frees.
        malloc_counter_start()
        do { let scratch = [Int](repeating: 1, count: Int.random(in: 100...200)); #expect(scratch.count >= 100) }
        _ = malloc_counter_stop()
        #expect(malloc_counter_frees() > 0)
        let song = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Songs/morning-steps.mid").path
        let smf = try SMFReader.read(contentsOf: song)
        var sequence = smf.makeSequence()
        sequence.tracks[0].add(.user(UserEvent(data: [1, 2, 3])), at: 1000)
        sequence.tracks[0].add(.meta(.text(MetaType.lyric, "la")), at: 1200)
        // Sysex reaches the instrument (and the chases of loop jumps and locates) too.
        sequence.tracks[0].add(.sysex(SysexEvent(payload: [0x41, 0x10, 0x42, 0x12, 0x40, 0x12, 0x15, 0x01, 0x18, 0xF7])), at: 0)
        sequence.tracks[0].add(.sysex(SysexEvent(payload: [0x7F, 0x7F, 0x04, 0x01, 0x00, 0x60, 0xF7])), at: 900)
        sequence.tracks[0].add(.sysex(SysexEvent(payload: [0x7E, 0x7F, 0x09, 0x01, 0xF7])), at: 5_000)
        let player = try Player.makeDefault(sequence: sequence, sampleRate: 44_100, maximumFrameCount: 512)
        var users = 0, lyrics = 0
        player.userEventHandler = { _ in users += 1 }
        player.textEventHandler = { if $0.type == MetaType.lyric { lyrics += 1 } }
        let l = UnsafeMutablePointer<Float>.allocate(capacity: 512), r = UnsafeMutablePointer<Float>.allocate(capacity: 512)
        defer { l.deallocate(); r.deallocate() }
        let out = StereoBuffer(left: l, right: r)
        player.setLoop(from: 0, to: 20_000, count: .times(2))
        player.start()
        for _ in 0..<100 { player.engine.render(frameCount: 512, into: out) }
        var allocations = 0, frees = 0
        // 20 s of audio: each command below comes four times, inside and across the loop.
        for block in 0..<(44_100 * 20 / 512) {
            // Control side (allocates freely): commands between blocks.
            switch block % 400 {
            case 50: player.playRate = 1.5
            case 100: player.tick = 3_000
            case 150: player.sendMIDI(.noteOn(channel: 0, key: 60, velocity: 100), toNode: DefaultGraph.instrumentID)
            case 200: player.stop()
            case 210: player.start()
            case 300: player.updateSequence { $0.tracks[1].isMuted.toggle() }
            case 350: player.allNotesOff()
            default: break
            }
            malloc_counter_start()
            player.engine.render(frameCount: block % 3 == 0 ? 512 : 301, into: out)
            allocations += malloc_counter_stop()
            frees += malloc_counter_frees()
            player.service()
        }
        #expect(allocations == 0)
        // Retired schedules, chases and loops (replaced at blocks 100, 300 and by the loop)
        // are freed by service() on this side, never inside render.
        #expect(frees == 0)
        #expect(users >= 1, "the user event passed")
        #expect(lyrics >= 1, "the lyric passed")
        #expect(player.engine.cursor > 0, "events were delivered")
    }
}

/// Set by the render thread of the threaded test when it is done.
final class RenderThreadDone: Sendable {
    let done = Atomic<Bool>(false)
    /// Set by the control thread once a command is queued, so rendering overlaps commands
    /// however fast the render thread would otherwise finish.
    let commandQueued = Atomic<Bool>(false)
}

@Suite struct ThreadedPlaybackTests {
    @Test func userEventsArriveInOrderWhileAnotherThreadRendersAndCommandsFlow() throws {
        var seq = MusicSequence(timeBase: .ticksPerQuarter(480))
        var t = MusicTrack()
        for i in 0..<200 {
            t.add(.user(UserEvent(data: [UInt8(i % 256)])), at: Int64(i * 10))
            t.addNote(at: Int64(i * 10), channel: UInt8(i % 16), key: UInt8(40 + i % 50), velocity: 100, duration: 25)
        }
        seq.tracks = [t]
        let (player, recorder, _) = try recorderPlayer(seq, maximumFrameCount: 256)
        var received: [Int64] = []
        player.userEventHandler = { received.append($0.tick) }
        player.start()
        let engine = player.engine
        let finished = RenderThreadDone()
        let total = Int(player.schedule.endFrame) + 10_000
        Thread.detachNewThread {
            let l = UnsafeMutablePointer<Float>.allocate(capacity: 256), r = UnsafeMutablePointer<Float>.allocate(capacity: 256)
            while !finished.commandQueued.load(ordering: .acquiring) { usleep(100) }
            var done = 0
            while done < total {
                engine.render(frameCount: 256, into: StereoBuffer(left: l, right: r))
                done += 256
                if done % 4096 == 0 { usleep(100) }
            }
            l.deallocate()
            r.deallocate()
            finished.done.store(true, ordering: .releasing)
        }
        var commands = 0
        while !finished.done.load(ordering: .acquiring) {
            player.service()
            // Commands that change no position, so the outcome stays exact.
            player.sendMIDI(.controlChange(channel: 15, controller: 1, value: UInt8(commands % 128)), toNode: 1)
            commands += 1
            finished.commandQueued.store(true, ordering: .releasing)
            usleep(200)
        }
        player.service()
        #expect(received == (0..<200).map { Int64($0 * 10) })
        let ons = recorder.records.filter(\.message.isNoteOn).map(\.frame)
        #expect(ons == (0..<200).map { Int64($0 * 10) * framesPerTick })
        #expect(commands > 0)
        #expect(!player.isPlaying && player.timesEndReached == 1)
    }

    @Test func retiredObjectsAreFreedByTheControlThreadWhileAnotherThreadRenders() throws {
        // The control thread collects retired schedules, chases and loops while blocks
        // render. Whatever it collects must be its to free: were the render call still
        // holding a reference when the control thread released its own, the render thread
        // would free the object (a race the soak run hit once in about 40 runs).
        var seq = MusicSequence(timeBase: .ticksPerQuarter(480))
        var t = MusicTrack()
        for i in 0..<64 { t.addNote(at: Int64(i * 120), channel: UInt8(i % 4), key: UInt8(40 + i % 30), velocity: 90, duration: 100) }
        seq.tracks = [t, t]
        let (player, _, _) = try recorderPlayer(seq, maximumFrameCount: 64)
        player.setLoop(from: 0, to: 7_680, count: .forever)
        player.start()
        let engine = player.engine
        let finished = RenderThreadDone()
        let frees = Atomic<Int>(0), allocations = Atomic<Int>(0), blocks = Atomic<Int>(0)
        Thread.detachNewThread {
            let l = UnsafeMutablePointer<Float>.allocate(capacity: 64), r = UnsafeMutablePointer<Float>.allocate(capacity: 64)
            let out = StereoBuffer(left: l, right: r)
            while !finished.commandQueued.load(ordering: .acquiring) {
                malloc_counter_start()
                engine.render(frameCount: 64, into: out)
                allocations.add(malloc_counter_stop(), ordering: .relaxed)
                frees.add(malloc_counter_frees(), ordering: .relaxed)
                blocks.add(1, ordering: .relaxed)
            }
            l.deallocate()
            r.deallocate()
            finished.done.store(true, ordering: .releasing)
        }
        for i in 0..<4_000 {
            switch i % 4 {
            case 0: player.tick = Int64(i % 7_000)
            case 1: player.setLoop(from: 0, to: i % 8 == 1 ? 7_680 : 3_840, count: .forever)
            case 2: if i % 40 == 2 { player.updateSequence { $0.tracks[1].isMuted.toggle() } }
            default: player.clearLoop()
            }
            // Collect as often as possible, so collections fall inside render calls.
            for _ in 0..<50 { player.service() }
        }
        finished.commandQueued.store(true, ordering: .releasing)
        while !finished.done.load(ordering: .acquiring) { usleep(100) }
        player.service()
        #expect(blocks.load(ordering: .relaxed) > 100, "blocks rendered while commands flowed")
        #expect(allocations.load(ordering: .relaxed) == 0)
        #expect(frees.load(ordering: .relaxed) == 0, "the render thread freed what it retired")
    }
}
