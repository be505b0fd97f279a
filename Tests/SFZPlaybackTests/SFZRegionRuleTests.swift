import AudioGraph
import Foundation
import MallocCounter
import MIDI
import SFZ
import Testing
@testable import SFZPlayback

/// The selection opcodes SoundFont cannot express, played by the sampler's region rules.
@Suite("SFZ region selection in the sampler")
struct SFZRegionRuleTests {
    /// 441 Hz, 882 Hz and 220.5 Hz tones, a second each.
    func fixtures() throws -> Fixtures {
        let f = try Fixtures()
        try f.writeWAV("a.wav", [sine(period: 100, frames: 44_100)])
        try f.writeWAV("b.wav", [sine(period: 50, frames: 44_100)])
        try f.writeWAV("c.wav", [sine(period: 200, frames: 44_100)])
        return f
    }

    func rig(_ f: Fixtures, _ text: String) throws -> Rig {
        try Rig(try SFZBank.load(contentsOf: try f.writeSFZ("i.sfz", text)))
    }

    /// The frequency heard in `range`, rounded to 0.5 Hz (0 for silence).
    func tone(_ x: [Float], _ range: Range<Int>) -> Double {
        peak(x, range) == 0 ? 0 : (frequency(x, range) * 2).rounded() / 2
    }

    @Test("seq_length/seq_position: each note plays the next region of the round robin")
    func roundRobin() throws {
        let f = try fixtures()
        let rig = try rig(f, """
            <group> seq_length=3 pitch_keycenter=60
            <region> sample=a.wav seq_position=1
            <region> sample=b.wav seq_position=2
            <region> sample=c.wav seq_position=3
            """)
        let notes = (0..<4).map { (at: $0 * 10_000, key: UInt8(60), velocity: UInt8(100), off: Optional($0 * 10_000 + 5_000)) }
        let out = rig.render(frames: 40_000, notes: notes).left
        #expect((0..<4).map { tone(out, $0 * 10_000 + 500..<$0 * 10_000 + 4_500) } == [441, 882, 220.5, 441])
    }

    @Test("lorand/hirand: every note plays exactly one of two halves, both halves occur, and renders repeat exactly")
    func randomSelection() throws {
        let f = try fixtures()
        let text = """
            <group> pitch_keycenter=60
            <region> sample=a.wav lorand=0 hirand=0.5
            <region> sample=b.wav lorand=0.5 hirand=1
            """
        let notes = (0..<16).map { (at: $0 * 5_000, key: UInt8(60), velocity: UInt8(100), off: Optional($0 * 5_000 + 3_000)) }
        let first = try rig(f, text).render(frames: 80_000, notes: notes).left
        let heard = (0..<16).map { tone(first, $0 * 5_000 + 300..<$0 * 5_000 + 2_700) }
        #expect(heard.allSatisfy { $0 == 441 || $0 == 882 }, "\(heard)")
        #expect(heard.contains(441) && heard.contains(882), "\(heard)")
        #expect(try rig(f, text).render(frames: 80_000, notes: notes, blockSizes: [100, 37]).left == first)
    }

    @Test("sw_last/sw_default: the default articulation plays until a key switch selects another")
    func keySwitches() throws {
        let f = try fixtures()
        let rig = try rig(f, """
            <group> sw_lokey=24 sw_hikey=25 sw_default=24 lokey=48 hikey=72 pitch_keycenter=60
            <region> sample=a.wav sw_last=24
            <region> sample=b.wav sw_last=25
            """)
        let out = rig.render(frames: 30_000, notes: [(0, 60, 100, 5_000), (9_000, 25, 100, 9_500), (10_000, 60, 100, 15_000),
                                                     (19_000, 24, 100, 19_500), (20_000, 60, 100, 25_000)]).left
        #expect([tone(out, 500..<4_500), tone(out, 10_500..<14_500), tone(out, 20_500..<24_500)] == [441, 882, 441])
    }

    @Test("trigger=release starts at note-off with the note's velocity; trigger=first and legato follow the keys down")
    func triggers() throws {
        let f = try fixtures()
        let release = try rig(f, """
            <group> pitch_keycenter=60
            <region> sample=a.wav
            <region> sample=b.wav trigger=release
            """)
        let out = release.render(frames: 20_000, notes: [(0, 60, 100, 10_000)]).left
        #expect(tone(out, 500..<9_500) == 441)
        #expect(tone(out, 12_000..<19_000) == 882)
        let legato = try rig(f, """
            <group> pitch_keytrack=0 pitch_keycenter=60
            <region> sample=a.wav trigger=first pan=-100
            <region> sample=b.wav trigger=legato pan=100
            """)
        let both = legato.render(frames: 20_000, notes: [(0, 60, 100, nil), (10_000, 62, 100, nil)])
        #expect(tone(both.left, 500..<9_500) == 441)
        #expect(peak(both.right, 0..<10_000) == 0)
        #expect(tone(both.right, 10_500..<19_500) == 882)
        #expect(tone(both.left, 10_500..<19_500) == 441)
    }

    @Test("loop_mode=one_shot plays to the sample's end through note-off and a repeated key; no_loop stops at note-off")
    func oneShot() throws {
        let f = try fixtures()
        let shot = try rig(f, "<region> sample=a.wav pitch_keycenter=60 loop_mode=one_shot\n")
            .render(frames: 50_000, notes: [(0, 60, 100, 1_000), (20_000, 60, 100, 21_000)]).left
        // The first strike sounds on under the second until its second of audio ends.
        #expect(tone(shot, 10_000..<19_000) == 441)
        #expect(peak(shot, 20_000..<44_000) > 1.5 * peak(shot, 10_000..<19_000))
        #expect(peak(shot, 44_100 + 64..<50_000) > 0)
        let cut = try rig(f, "<region> sample=a.wav pitch_keycenter=60 loop_mode=no_loop\n")
            .render(frames: 20_000, notes: [(0, 60, 100, 1_000)]).left
        #expect(peak(cut, 5_000..<20_000) == 0)
    }

    @Test("off_by: a region of the named group cuts the voice within the 132-frame fade (fast) or through its release (normal)")
    func offBy() throws {
        let f = try fixtures()
        // Key 60 (left) is stopped by group 2 (key 62, right); neither stops itself.
        func left(_ mode: String, release: String = "") throws -> [Float] {
            try rig(f, """
                <group> loop_mode=loop_continuous loop_start=0 loop_end=99 pitch_keytrack=0 pitch_keycenter=60
                <region> sample=a.wav key=60 group=1 off_by=2 off_mode=\(mode) pan=-100 \(release)
                <region> sample=a.wav key=62 group=2 pan=100
                """).render(frames: 40_000, notes: [(0, 60, 100, nil), (10_000, 62, 100, nil), (20_000, 62, 100, nil)]).left
        }
        let fast = try left("fast")
        #expect(peak(fast, 5_000..<10_000) > 0.01)
        #expect(peak(fast, 10_000 + 132..<40_000) == 0)
        // Normal: the 0.2 s release (8,820 frames) runs its course.
        let normal = try left("normal", release: "ampeg_release=0.2")
        #expect(peak(normal, 10_000 + 2_000..<10_000 + 3_000) > 0.001)
        #expect(peak(normal, 10_000 + 8_820 + 200..<40_000) == 0)
        // Without off_by nothing is cut.
        let kept = try rig(f, """
            <group> loop_mode=loop_continuous loop_start=0 loop_end=99 pitch_keytrack=0
            <region> sample=a.wav key=60 group=1 pan=-100
            <region> sample=a.wav key=62 group=2 pan=100
            """).render(frames: 40_000, notes: [(0, 60, 100, nil), (10_000, 62, 100, nil)]).left
        #expect(peak(kept, 30_000..<40_000) > 0.01)
    }

    @Test("off_mode=time: a voice stopped by off_by falls 78 dB (sfizz's 9 nepers) over off_time, silent by 1.25 x off_time; fast stays fast")
    func offTime() throws {
        let f = try fixtures()
        // Key 60 (left) is stopped at frame 10,000 by group 2 (key 62, right).
        func left(_ opcodes: String) throws -> (out: [Float], warnings: [SFZWarning]) {
            let instrument = try SFZBank.load(contentsOf: try f.writeSFZ("i.sfz", """
                <group> loop_mode=loop_continuous loop_start=0 loop_end=99 pitch_keytrack=0 pitch_keycenter=60
                <region> sample=a.wav key=60 group=1 off_by=2 pan=-100 \(opcodes)
                <region> sample=a.wav key=62 group=2 pan=100
                """))
            return (try Rig(instrument).render(frames: 50_000, notes: [(0, 60, 100, nil), (10_000, 62, 100, nil)]).left,
                    instrument.warnings)
        }
        let choke = 10_000
        let (timed, warnings) = try left("off_time=0.5")
        #expect(warnings.isEmpty, "\(warnings)")
        let before = peak(timed, 5_000..<choke)
        #expect(before > 0.01)
        // The level in dB below `before` a time after the choke (a 100-frame period's peak).
        func fall(_ x: [Float], after seconds: Double) -> Double {
            let frame = choke + Int(seconds * 44_100)
            return -decibels(peak(x, frame..<frame + 100) / before)
        }
        // 78.17 dB per 0.5 s, exponential: a straight line in dB, within a 64-frame control step.
        for t in [0.1, 0.25, 0.4] {
            #expect(abs(fall(timed, after: t) - 78.17 * t / 0.5) < 0.8, "at \(t) s: \(fall(timed, after: t)) dB")
        }
        #expect(peak(timed, choke + 22_050..<choke + 22_150) > 0, "still sounding at off_time")
        #expect(peak(timed, choke + 27_563..<50_000) == 0, "silent by 1.25 x off_time")
        // A later off_mode overrides the mode off_time chose; off_mode=time alone fades over sfizz's 6 ms.
        let fast = try left("off_time=0.5 off_mode=fast").out
        #expect(peak(fast, choke + 132..<50_000) == 0)
        let defaultTime = try left("off_mode=time").out
        #expect(peak(defaultTime, choke + 100..<choke + 164) > 0)
        #expect(peak(defaultTime, choke + 64 + 325..<50_000) == 0)
    }

    @Test("polyphony: a group's third note stops its oldest voice within the 132-frame fade; note_polyphony limits one key")
    func polyphony() throws {
        let f = try fixtures()
        func threeNotes(_ limit: String) throws -> (left: [Float], right: [Float]) {
            try rig(f, """
                <group> group=1 \(limit) loop_mode=loop_continuous loop_start=0 loop_end=99 pitch_keytrack=0
                <region> sample=a.wav key=60 pan=-100
                <region> sample=b.wav key=62 pan=100
                <region> sample=c.wav key=64 pan=100
                """).render(frames: 20_000, notes: [(0, 60, 100, nil), (5_000, 62, 100, nil), (10_000, 64, 100, nil)])
        }
        let two = try threeNotes("polyphony=2")
        #expect(peak(two.left, 9_000..<10_000) > 0.01)
        #expect(peak(two.left, 10_000 + 132..<20_000) == 0)
        #expect(tone(two.right, 6_000..<9_900) == 882)
        #expect(peak(two.right, 15_000..<20_000) > 0.01)
        let three = try threeNotes("polyphony=3")
        #expect(peak(three.left, 15_000..<20_000) > 0.01)
        // A stereo sample's two channels are one voice: two notes of a group fit polyphony=2.
        try f.writeWAV("stereo.wav", [sine(period: 100, frames: 44_100), sine(period: 50, frames: 44_100)])
        func stereo(_ limit: Int) throws -> [Float] {
            try rig(f, "<region> sample=stereo.wav group=1 polyphony=\(limit) loop_mode=loop_continuous loop_start=0 loop_end=99\n")
                .render(frames: 20_000, notes: [(0, 60, 100, nil), (5_000, 62, 100, nil), (10_000, 64, 100, nil)]).right
        }
        let (stereoTwo, stereoThree) = (try stereo(2), try stereo(3))
        let sameForTwoNotes = stereoTwo[0..<10_000] == stereoThree[0..<10_000]
        let differentForThree = stereoTwo[10_200..<20_000] != stereoThree[10_200..<20_000]
        #expect(sameForTwoNotes)
        #expect(differentForThree)
        // A one-shot strike plays on under the next, louder one unless note_polyphony=1 stops it.
        func twoStrikes(_ limit: String) throws -> [Float] {
            try rig(f, "<region> sample=a.wav pitch_keycenter=60 loop_mode=one_shot \(limit)\n")
                .render(frames: 20_000, notes: [(0, 60, 64, 1_000), (10_000, 60, 127, 11_000)]).left
        }
        let alone = try rig(f, "<region> sample=a.wav pitch_keycenter=60 loop_mode=one_shot\n")
            .render(frames: 20_000, notes: [(10_000, 60, 127, 11_000)]).left
        let limited = try twoStrikes("note_polyphony=1"), layered = try twoStrikes("")
        #expect(abs(decibels(peak(limited, 10_200..<20_000) / peak(alone, 10_200..<20_000))) < 0.01)
        // The earlier strike, at a quarter of the later one's level, still sounds under it.
        #expect(decibels(peak(layered, 10_200..<20_000) / peak(alone, 10_200..<20_000)) > 1)
    }

    @Test("A key struck again keeps its earlier voices, as sfizz: note_polyphony caps them, and a group that chokes itself spares the same key")
    func restrikesLayerAsInSfizz() throws {
        let f = try fixtures()
        // Strikes 5,000 frames apart on a 100-frame loop start in phase: N voices peak N times one.
        func strikes(_ opcodes: String, keys: [UInt8] = [60, 60, 60]) throws -> [Float] {
            try rig(f, "<region> sample=a.wav lokey=0 hikey=127 pitch_keytrack=0 loop_mode=loop_continuous loop_start=0 loop_end=99 \(opcodes)\n")
                .render(frames: 20_000, notes: keys.enumerated().map { (at: $0.offset * 5_000, key: $0.element, velocity: 100, off: nil) }).left
        }
        let one = peak(try strikes("", keys: [60]), 15_000..<20_000)
        #expect(one > 0.01)
        func voices(_ out: [Float]) -> Double { Double(peak(out, 15_000..<20_000) / one) }
        #expect(abs(voices(try strikes("")) - 3) < 0.01, "three strikes of one key: three voices")
        #expect(abs(voices(try strikes("note_polyphony=2")) - 2) < 0.01, "note_polyphony=2: two")
        #expect(abs(voices(try strikes("group=3 off_by=3")) - 3) < 0.01, "a self-choking group spares its own key")
        #expect(abs(voices(try strikes("group=3 off_by=3", keys: [60, 62, 64])) - 1) < 0.01, "but chokes its other keys")
    }

    @Test("lochan/hichan and loccN/hiccN gate the region on the channel and the controller's value")
    func channelsAndControllers() throws {
        let f = try fixtures()
        let channel = try rig(f, "<region> sample=a.wav lochan=2 hichan=2\n")
        #expect(peak(channel.render(frames: 5_000, notes: [(0, 60, 100, nil)], channel: 0).left, 0..<5_000) == 0)
        #expect(tone(try rig(f, "<region> sample=a.wav lochan=2 hichan=2\n").render(frames: 5_000, notes: [(0, 60, 100, nil)], channel: 1).left,
                     500..<4_500) == 441)
        let controlled = try rig(f, "<region> sample=a.wav locc1=64 hicc1=127\n")
        let out = controlled.render(frames: 20_000, notes: [(0, 60, 100, 5_000), (10_000, 60, 100, 15_000)],
                                    messages: [(9_000, MIDIMessage(status: 0xB0, data1: 1, data2: 100))]).left
        #expect(peak(out, 0..<9_000) == 0)
        #expect(tone(out, 10_500..<14_500) == 441)
    }

    @Test("Selecting regions by rules allocates nothing on the render thread")
    func rulesAllocateNothing() throws {
        // The counter sees this process's allocations (else the test could not fail).
        malloc_counter_start()
        let probe = [Int](repeating: 1, count: Int.random(in: 100...200))
        #expect(malloc_counter_stop() > 0 && probe.count >= 100)
        let f = try fixtures()
        let text = """
            <group> pitch_keycenter=60 sw_lokey=24 sw_hikey=25 sw_default=24 lokey=48 hikey=72
            <region> sample=a.wav seq_length=2 seq_position=1 sw_last=24 lorand=0 hirand=0.7 group=5 off_by=6 off_time=0.1 fil_type=lpf_1p cutoff=500 fileg_depth=1200 fileg_decay=0.1
            <region> sample=b.wav seq_length=2 seq_position=2 sw_last=24 locc1=0 hicc1=63 group=6 fil_type=hpf_1p cutoff=200 fil_keytrack=50
            <region> sample=c.wav trigger=release sw_last=25 polyphony=3 note_polyphony=1 rt_decay=3 ampeg_vel2attack=0.1 ampeg_start=20
            <region> sample=b.wav trigger=release_key amp_velcurve_64=0.3 fil_type=lpf_2p cutoff=800 fileg_depth=600 fileg_vel2decay=0.2 fileg_start=30
            <region> sample=a.wav trigger=legato lochan=1 hichan=4 ampeg_vel2sustain=-20 fil_type=hpf_2p cutoff=300
            """
        var messages: [MIDIMessage] = []
        for n in 0..<40 {
            let key = UInt8(48 + n % 20)
            messages += [MIDIMessage(status: 0x90, data1: n % 7 == 0 ? 25 : 24, data2: 90), MIDIMessage(status: 0x90, data1: key, data2: 100),
                         MIDIMessage(status: 0xB0, data1: 1, data2: UInt8(n * 3 % 128)), MIDIMessage(status: 0x80, data1: key, data2: 0)]
            // The sustain pedal holds some release regions back until it lifts.
            if n % 3 == 0 { messages.insert(MIDIMessage(status: 0xB0, data1: 64, data2: 127), at: messages.count - 1) }
            if n % 3 == 2 { messages.append(MIDIMessage(status: 0xB0, data1: 64, data2: 0)) }
        }
        func events(block b: Int) -> [GraphEvent] {
            // Four messages a block, spread over it.
            (0..<4).map { GraphEvent(offset: $0 * 100, nodeIndex: 0, event: .midi(messages[(b * 4 + $0) % messages.count])) }
        }
        let blocks = (0..<40).map { events(block: $0) }
        // Warm up on the same events: the first run of each code path may instantiate runtime metadata.
        let warm = try rig(f, text)
        for (b, block) in blocks.enumerated() {
            block.withUnsafeBufferPointer { warm.graph.render(startFrame: Int64(b * 512), frameCount: 512, events: $0) }
        }
        let rig = try rig(f, text)
        var allocations = 0
        for (b, block) in blocks.enumerated() {
            malloc_counter_start()
            block.withUnsafeBufferPointer { rig.graph.render(startFrame: Int64(b * 512), frameCount: 512, events: $0) }
            allocations += malloc_counter_stop()
        }
        #expect(allocations == 0)
    }
}
