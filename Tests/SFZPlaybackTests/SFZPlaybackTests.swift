import AudioFileOutput
import Foundation
import SFZ
import SoundFont
import Testing
@testable import SFZPlayback

@Suite("SFZ instruments played by the sampler")
struct SFZPlaybackTests {
    /// A second of a 441 Hz sine (period 100 frames), the sample most tests play.
    func toneFixtures() throws -> Fixtures {
        let f = try Fixtures()
        try f.writeWAV("tone.wav", [sine(period: 100, frames: 44_100)])
        return f
    }

    @Test("A note's first sample lands at its frame, whatever the block size")
    func firstSampleAtNoteFrame() throws {
        let f = try Fixtures()
        try f.writeWAV("dc.wav", [[Int16](repeating: 16_000, count: 4_000)])
        let sfz = try f.writeSFZ("dc.sfz", "<region> sample=dc.wav pitch_keycenter=60\n")
        let instrument = try SFZBank.load(contentsOf: sfz)
        for blocks in [[512], [1], [37, 300, 5]] {
            let out = try Rig(instrument).render(frames: 3_000, notes: [(1_000, 60, 127, nil)], blockSizes: blocks)
            #expect(out.left[0..<1_000].allSatisfy { $0 == 0 }, "\(blocks)")
            #expect(out.left[1_000] != 0, "\(blocks)")
        }
    }

    @Test("Key and velocity ranges pick the region; pitch_keycenter sets the unshifted key")
    func rangesPickTheRegion() throws {
        let f = try Fixtures()
        try f.writeWAV("low.wav", [sine(period: 100, frames: 44_100)])    // 441 Hz
        try f.writeWAV("high.wav", [sine(period: 50, frames: 44_100)])    // 882 Hz
        try f.writeWAV("soft.wav", [sine(period: 200, frames: 44_100)])   // 220.5 Hz
        let sfz = try f.writeSFZ("ranges.sfz", """
            <region> sample=low.wav lokey=0 hikey=59 pitch_keycenter=50
            <region> sample=high.wav lokey=60 hikey=127 lovel=64 pitch_keycenter=70
            <region> sample=soft.wav lokey=60 hikey=127 hivel=63 pitch_keycenter=70
            """)
        let instrument = try SFZBank.load(contentsOf: sfz)
        for (key, velocity, expected) in [(UInt8(50), UInt8(100), 441.0), (70, 100, 882), (70, 40, 220.5)] {
            let out = try Rig(instrument).render(frames: 22_050, notes: [(0, key, velocity, nil)])
            let measured = frequency(out.left, 1_000..<20_000)
            #expect(abs(measured / expected - 1) < 0.001, "key \(key) velocity \(velocity): \(measured) Hz")
        }
    }

    @Test("pitch_keycenter, tune, transpose and pitch_keytrack shift the pitch by their cents")
    func pitch() throws {
        let f = try toneFixtures()
        let cases: [(String, UInt8, Double)] = [
            ("pitch_keycenter=60", 72, 882),                           // an octave up
            ("pitch_keycenter=60 transpose=-12", 60, 220.5),           // an octave down
            ("pitch_keycenter=60 tune=100", 60, 441 * pow(2, 1.0 / 12)),
            ("pitch_keycenter=60 tune=-50", 60, 441 * pow(2, -0.5 / 12)),
            ("pitch_keycenter=60 pitch_keytrack=50", 72, 441 * pow(2, 0.5)),  // 12 keys x 50 cents
            ("pitch_keycenter=60 pitch_keytrack=0", 84, 441),
        ]
        for (opcodes, key, expected) in cases {
            let sfz = try f.writeSFZ("p.sfz", "<region> sample=tone.wav \(opcodes)\n")
            let out = try Rig(try SFZBank.load(contentsOf: sfz)).render(frames: 20_000, notes: [(0, key, 127, nil)])
            let measured = frequency(out.left, 1_000..<19_000)
            #expect(abs(measured / expected - 1) < 0.0005, "\(opcodes) key \(key): \(measured) Hz, expected \(expected)")
        }
    }

    @Test("loop_continuous repeats loop_start...loop_end while no_loop stops at the sample's end")
    func loops() throws {
        let f = try Fixtures()
        try f.writeWAV("short.wav", [sine(period: 100, frames: 1_000)])
        let looped = try f.writeSFZ("l.sfz", "<region> sample=short.wav pitch_keycenter=60 loop_mode=loop_continuous loop_start=200 loop_end=299\n")
        let once = try f.writeSFZ("o.sfz", "<region> sample=short.wav pitch_keycenter=60 loop_mode=no_loop loop_start=200 loop_end=299\n")
        let loopOut = try Rig(try SFZBank.load(contentsOf: looped)).render(frames: 10_000, notes: [(0, 60, 127, nil)])
        let onceOut = try Rig(try SFZBank.load(contentsOf: once)).render(frames: 10_000, notes: [(0, 60, 127, nil)])
        // The loop is exactly one period: the tone goes on at 441 Hz and full level.
        #expect(abs(frequency(loopOut.left, 2_000..<9_000) / 441 - 1) < 0.0005)
        #expect(abs(decibels(peak(loopOut.left, 8_000..<9_000) / peak(loopOut.left, 300..<900))) < 0.05)
        #expect(peak(onceOut.left, 1_100..<10_000) == 0)
        #expect(peak(onceOut.left, 300..<900) > 0)
    }

    @Test("offset starts the sample later in, end stops it early")
    func offsetAndEnd() throws {
        let f = try Fixtures()
        var click = [Int16](repeating: 0, count: 2_000)
        click[500] = 20_000
        try f.writeWAV("click.wav", [click])
        func clickFrame(_ opcodes: String) throws -> Int? {
            let sfz = try f.writeSFZ("c.sfz", "<region> sample=click.wav pitch_keycenter=60 \(opcodes)\n")
            let out = try Rig(try SFZBank.load(contentsOf: sfz)).render(frames: 4_000, notes: [(1_000, 60, 127, nil)])
            let loudest = out.left.indices.max { abs(out.left[$0]) < abs(out.left[$1]) }!
            return out.left[loudest] == 0 ? nil : loudest
        }
        #expect(try clickFrame("") == 1_500)
        #expect(try clickFrame("offset=400") == 1_100)
        #expect(try clickFrame("end=499") == nil)
        #expect(try clickFrame("end=500") == 1_500)
    }

    @Test("ampeg: delay and attack set the level at known frames, sustain the level after the decay, release the fade")
    func amplitudeEnvelope() throws {
        let f = try Fixtures()
        try f.writeWAV("dc.wav", [[Int16](repeating: 16_000, count: 100)])
        let loop = "pitch_keycenter=60 loop_mode=loop_continuous loop_start=0 loop_end=99"
        let flat = try Rig(try SFZBank.load(contentsOf: try f.writeSFZ("a.sfz", "<region> sample=dc.wav \(loop)\n")))
            .render(frames: 30_000, notes: [(0, 60, 127, nil)]).left
        let full = flat[20_000]
        let shaped = try f.writeSFZ("b.sfz", "<region> sample=dc.wav \(loop) ampeg_delay=0.1 ampeg_attack=0.2 ampeg_decay=0.05 ampeg_sustain=50 ampeg_release=0.1\n")
        let out = try Rig(try SFZBank.load(contentsOf: shaped)).render(frames: 44_100, notes: [(0, 60, 127, 30_000)]).left
        // Envelopes step on the sampler's 64-frame control grid, so times are good to a step or two.
        // Silent through the delay (4410 frames), linear through the attack (8820 frames).
        let step = 64
        #expect(out[0..<4_410 - 2 * step].allSatisfy { $0 == 0 }, "first sound at \(out.firstIndex { $0 != 0 } ?? -1): \(out[0..<4])")
        #expect(out[4_410 + step] > 0)
        #expect(abs(out[4_410 + 4_410] / full - 0.5) < Float(2 * step) / 8_820, "\(out[8_820] / full)")
        // Sustain 50 % of the amplitude: -6.02 dB.
        #expect(abs(decibels(out[25_000] / full) - 20 * log10(0.5)) < 0.1, "\(decibels(out[25_000] / full))")
        // Released at 30,000: silent well before 0.1 s of 96 dB fall, less than 5 dB left 1/20 s... gone after it.
        #expect(out[30_000 + 4_410 + 128..<44_100].allSatisfy { $0 == 0 })
        #expect(out[30_000 + 441] > 0)
    }

    @Test("pan=-100 and pan=100 play on one side only; width spreads a stereo sample")
    func pan() throws {
        let f = try toneFixtures()
        for (pan, silentRight) in [(-100, true), (100, false)] {
            let sfz = try f.writeSFZ("p.sfz", "<region> sample=tone.wav pitch_keycenter=60 pan=\(pan)\n")
            let out = try Rig(try SFZBank.load(contentsOf: sfz)).render(frames: 5_000, notes: [(0, 60, 127, nil)])
            let (quiet, loud) = silentRight ? (out.right, out.left) : (out.left, out.right)
            #expect(peak(quiet, 0..<5_000) < 1e-6 * peak(loud, 0..<5_000), "pan \(pan)")
            #expect(peak(loud, 1_000..<5_000) > 0.01, "pan \(pan)")
        }
        try f.writeWAV("stereo.wav", [sine(period: 100, frames: 44_100), [Int16](repeating: 0, count: 44_100)])
        let full = try Rig(try SFZBank.load(contentsOf: try f.writeSFZ("s.sfz", "<region> sample=stereo.wav pitch_keycenter=60\n")))
            .render(frames: 5_000, notes: [(0, 60, 127, nil)])
        #expect(peak(full.right, 0..<5_000) < 1e-6 * peak(full.left, 0..<5_000))
        let mono = try Rig(try SFZBank.load(contentsOf: try f.writeSFZ("m.sfz", "<region> sample=stereo.wav pitch_keycenter=60 width=0\n")))
            .render(frames: 5_000, notes: [(0, 60, 127, nil)])
        #expect(abs(decibels(peak(mono.right, 1_000..<5_000) / peak(mono.left, 1_000..<5_000))) < 0.01)
    }

    @Test("width leaves a mono sample as it is, as sfizz (its one channel is the same on both sides), without a warning")
    func widthOnMono() throws {
        let f = try toneFixtures()
        func render(_ opcodes: String) throws -> (left: [Float], right: [Float], warnings: [SFZWarning]) {
            let instrument = try SFZBank.load(contentsOf: try f.writeSFZ("w.sfz", "<region> sample=tone.wav pitch_keycenter=60 pan=30 \(opcodes)\n"))
            let out = try Rig(instrument).render(frames: 5_000, notes: [(0, 60, 127, 3_000)])
            return (out.left, out.right, instrument.warnings)
        }
        let plain = try render("")
        #expect(peak(plain.left, 1_000..<3_000) > 0.01 && peak(plain.right, 1_000..<3_000) > peak(plain.left, 1_000..<3_000))
        for width in ["0", "-100", "50", "250"] {
            let widened = try render("width=\(width)")
            #expect(widened.left == plain.left && widened.right == plain.right, "width=\(width)")
            #expect(widened.warnings.isEmpty, "width=\(width): \(widened.warnings)")
        }
    }

    @Test("volume and amplitude change the level by their dB; gain above 0 dB raises the sampler's output")
    func volume() throws {
        let f = try toneFixtures()
        func level(_ opcodes: String) throws -> (Double, SFZPlayableInstrument) {
            let instrument = try SFZBank.load(contentsOf: try f.writeSFZ("v.sfz", "<region> sample=tone.wav pitch_keycenter=60 \(opcodes)\n"))
            let out = try Rig(instrument).render(frames: 10_000, notes: [(0, 60, 127, nil)])
            return (decibels(peak(out.left, 5_000..<10_000)), instrument)
        }
        let (reference, plain) = try level("")
        #expect(plain.outputGain == 0)
        for (opcodes, expected) in [("volume=-6", -6.0), ("volume=-20.5", -20.5), ("amplitude=50", 20 * log10(0.5)),
                                    ("volume=-3 amplitude=50", -3 + 20 * log10(0.5))] {
            let (measured, _) = try level(opcodes)
            #expect(abs(measured - reference - expected) < 0.05, "\(opcodes): \(measured - reference) dB")
        }
        let (louder, raised) = try level("volume=6")
        #expect(raised.outputGain == 6)
        #expect(abs(louder - reference - 6) < 0.05, "\(louder - reference) dB")
    }

    @Test("Two regions with different gains keep their difference when one is above 0 dB")
    func positiveGainKeepsRelativeLevels() throws {
        let f = try toneFixtures()
        let sfz = try f.writeSFZ("g.sfz", """
            <region> sample=tone.wav key=60 volume=4
            <region> sample=tone.wav key=62 pitch_keycenter=62 volume=-2
            """)
        let instrument = try SFZBank.load(contentsOf: sfz)
        #expect(instrument.outputGain == 4)
        let a = try Rig(instrument).render(frames: 10_000, notes: [(0, 60, 127, nil)]).left
        let b = try Rig(instrument).render(frames: 10_000, notes: [(0, 62, 127, nil)]).left
        #expect(abs(decibels(peak(a, 5_000..<10_000) / peak(b, 5_000..<10_000)) - 6) < 0.05)
    }

    @Test("cutoff low-passes: a 5 kHz tone through a 500 Hz lpf_2p loses more than 30 dB; 441 Hz barely changes")
    func lowPass() throws {
        let f = try Fixtures()
        try f.writeWAV("hi.wav", [sine(period: 44_100 / 5_000, frames: 44_100)])
        try f.writeWAV("lo.wav", [sine(period: 100, frames: 44_100)])
        func level(_ sample: String, _ opcodes: String) throws -> Double {
            let sfz = try f.writeSFZ("f.sfz", "<region> sample=\(sample) pitch_keycenter=60 \(opcodes)\n")
            let out = try Rig(try SFZBank.load(contentsOf: sfz)).render(frames: 10_000, notes: [(0, 60, 127, nil)])
            return decibels(peak(out.left, 5_000..<10_000))
        }
        #expect(try level("hi.wav", "cutoff=500") - level("hi.wav", "") < -30)
        #expect(abs(try level("lo.wav", "cutoff=5000") - level("lo.wav", "")) < 0.5)
    }

    @Test("fil_type=hpf_2p high-passes with RBJ's response at the cutoff and resonance: 441 Hz and 2205 Hz through 5 kHz")
    func highPass() throws {
        let f = try Fixtures()
        try f.writeWAV("lo.wav", [sine(period: 100, frames: 44_100)])
        try f.writeWAV("mid.wav", [sine(period: 20, frames: 44_100)])
        /// RMS over whole periods, so the filter's phase shift does not move it.
        func level(_ sample: String, _ opcodes: String) throws -> Double {
            let sfz = try f.writeSFZ("f.sfz", "<region> sample=\(sample) pitch_keycenter=60 \(opcodes)\n")
            let out = try Rig(try SFZBank.load(contentsOf: sfz)).render(frames: 10_000, notes: [(0, 60, 127, nil)]).left
            return 10 * log10(out[5_000..<10_000].reduce(0.0) { $0 + Double($1) * Double($1) } / 5_000)
        }
        /// The biquad's magnitude at `frequency`, with sfizz's resonance (Q is the resonance in
        /// dB as a ratio) at unity gain.
        func expected(_ frequency: Double, cutoff: Double, resonance: Double) -> Double {
            let q = pow(10, resonance / 20), omega = 2 * Double.pi * cutoff / 44_100
            let alpha = sin(omega) / (2 * q), c = cos(omega)
            let b0 = (1 + c) / 2, b1 = -(1 + c), a0 = 1 + alpha, a1 = -2 * c, a2 = 1 - alpha
            let w = 2 * Double.pi * frequency / 44_100
            func magnitude(_ p: (Double, Double, Double)) -> Double {
                let re = p.0 + p.1 * cos(w) + p.2 * cos(2 * w), im = -p.1 * sin(w) - p.2 * sin(2 * w)
                return (re * re + im * im).squareRoot()
            }
            return 20 * log10(magnitude((b0, b1, b0)) / magnitude((a0, a1, a2)))
        }
        for (sample, frequency) in [("lo.wav", 441.0), ("mid.wav", 2_205.0)] {
            for resonance in [0.0, 6.0] {
                let measured = try level(sample, "fil_type=hpf_2p cutoff=5000 resonance=\(resonance)") - level(sample, "")
                // The region without a cutoff is not filtered at all.
                let wanted = expected(frequency, cutoff: 5_000, resonance: resonance)
                #expect(abs(measured - wanted) < 0.05, "\(frequency) Hz, resonance \(resonance): \(measured) dB, expected \(wanted)")
            }
        }
        #expect(try level("lo.wav", "fil_type=hpf_2p cutoff=5000") - level("lo.wav", "") < -30)
    }

    @Test("A FLAC sample decodes to the points written and plays as the WAV does",
          .enabled(if: SndFileLibrary.isAvailable, "needs libsndfile.so.1 (Debian package libsndfile1)"))
    func flacSamples() throws {
        let f = try toneFixtures()
        let points = sine(period: 100, frames: 44_100)
        let floats = points.map { Float($0) / 32_768 }
        let writer = try SndFileWriter(path: f.path("tone.flac"), format: .flac(bitsPerSample: 16), sampleRate: 44_100, channelCount: 1)
        try floats.withUnsafeBufferPointer { try writer.write(left: $0.baseAddress!, right: $0.baseAddress!, count: $0.count) }
        try writer.finish()
        let decoded = try SFZSampleReader.read(f.path("tone.flac"), budget: 1 << 30)
        #expect(decoded.sampleRate == 44_100)
        #expect(decoded.channels == [points.map { Int32($0) << 8 }])
        let wav = try Rig(try SFZBank.load(contentsOf: try f.writeSFZ("w.sfz", "<region> sample=tone.wav\n")))
            .render(frames: 8_000, notes: [(100, 60, 100, 5_000)])
        let flac = try Rig(try SFZBank.load(contentsOf: try f.writeSFZ("f.sfz", "<region> sample=tone.flac\n")))
            .render(frames: 8_000, notes: [(100, 60, 100, 5_000)])
        #expect(wav.left == flac.left)
        #expect(wav.right == flac.right)
    }

    @Test("A sample libsndfile cannot read is a data error naming it and the region, and leaks no descriptor",
          .enabled(if: SndFileLibrary.isAvailable, "needs libsndfile.so.1 (Debian package libsndfile1)"))
    func unreadableNonWAVSample() throws {
        let f = try Fixtures()
        _ = try f.writeSFZ("j.sfz", "<region> sample=junk.flac\n")
        try Data("not audio at all".utf8).write(to: URL(fileURLWithPath: f.path("junk.flac")))
        for _ in 0..<20 {
            let error = try #require(loadError(f.path("j.sfz")))
            #expect(error.path == f.path("junk.flac"))
            #expect(!error.isUnreadableInput)
            #expect(error.reason.hasPrefix("not a sound file libsndfile reads ("), "\(error.reason)")
            #expect(error.reason.hasSuffix(" (sample of the region at \(f.path("j.sfz")):1)"), "\(error.reason)")
        }
        // Only descriptors on this sample count: other tests open files in parallel.
        let stillOpen = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == f.path("junk.flac")
        }
        #expect(stillOpen.isEmpty, "descriptors left open on the sample: \(stillOpen)")
    }

    @Test("A missing sample is an unreadable-input error naming it and the region")
    func missingSample() throws {
        let f = try Fixtures()
        let sfz = try f.writeSFZ("m.sfz", "// a comment\n<region> sample=gone.wav\n")
        let error = try #require(loadError(sfz))
        #expect(error.path == f.path("gone.wav"))
        #expect(error.isUnreadableInput)
        #expect(error.description == "\(f.path("gone.wav")): sample not found (named by the region at \(sfz):2)")
    }

    @Test("Sample memory over the limit is an error naming the sample that did not fit")
    func sampleMemoryLimit() throws {
        let f = try toneFixtures()
        try f.writeWAV("two.wav", [sine(period: 100, frames: 44_100)])
        let sfz = try f.writeSFZ("big.sfz", "<region> sample=tone.wav key=60\n<region> sample=two.wav key=61\n")
        var options = SFZPlaybackOptions()
        // Room for the first file (3 bytes per point with the 46 guard points), not the second.
        options.maximumSampleMemory = (44_100 + 46) * 3 + 1_000
        let error = try #require(loadError(sfz, options: options))
        #expect(error.path == f.path("two.wav"))
        #expect(!error.isUnreadableInput)
        #expect(error.reason.contains("over the 1000 bytes left of the limit"), "\(error.reason)")
        options.maximumSampleMemory = 2 * (44_100 + 46) * 3
        #expect(loadError(sfz, options: options) == nil)
    }

    @Test("Opcodes read but not played are warnings naming the file, the first region's line and the opcode")
    func notPlayedWarnings() throws {
        let f = try toneFixtures()
        let sfz = try f.writeSFZ("w.sfz", """
            <group> fileg_depth=1200
            <region> sample=tone.wav pitch_keycenter=sample
            <region> sample=tone.wav pitch_keycenter=sample
            <region> sample=tone.wav loop_mode=loop_continuous loop_start=5 loop_end=5
            """)
        let instrument = try SFZBank.load(contentsOf: sfz)
        let lines = instrument.warnings.map(\.description)
        #expect(lines == [
            "\(sfz):2: `fileg_depth` parsed but not played (and 2 more regions)",
            "\(sfz):2: `pitch_keycenter` is sample, but the sample stores no root key: played at 60 (and 1 more region)",
            "\(sfz):4: `loop_end` gives a loop shorter than 2 frames: played without loop",
        ], "\(lines)")
        #expect(instrument.warnings.allSatisfy { $0.opcode != nil && $0.path == sfz })
        #expect(instrument.bank.presets[0].regions.count == 3)
    }
}
