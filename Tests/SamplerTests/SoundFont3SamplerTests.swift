import AudioGraph
import Foundation
import MallocCounter
import MIDI
import MIDIFile
import Playback
@testable import Sampler
import Sequencing
import SoundFont
import Testing

/// TimGM6mb converted to SoundFont 3 with `sf3convert -z` (Debian package sf3convert), once
/// per test run and kept in memory; nil when the converter, the bank or libvorbisfile is
/// missing.
private let convertedTimGM6mb: [UInt8]? = {
    let source = "/usr/share/sounds/sf2/TimGM6mb.sf2", converter = "/usr/bin/sf3convert"
    guard FileManager.default.fileExists(atPath: source), FileManager.default.isExecutableFile(atPath: converter),
          VorbisDecoder.isAvailable else { return nil }
    let target = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-TimGM6mb-\(getpid()).sf3").path
    defer { try? FileManager.default.removeItem(atPath: target) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: converter)
    process.arguments = ["-z", source, target]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    process.waitUntilExit()
    guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: target) else { return nil }
    return [UInt8](data)
}()

private let sf3Tools = convertedTimGM6mb != nil

@Suite(.enabled(if: sf3Tools, "needs sf3convert (Debian package sf3convert), TimGM6mb (timgm6mb-soundfont) and libvorbisfile.so.3 (libvorbisfile3)"))
struct SoundFont3SamplerTests {
    static let song = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Songs/little-waltz.mid").path

    func bank() throws -> SoundFontBank {
        try SoundFontReader.read(try #require(convertedTimGM6mb), name: "TimGM6mb.sf3").bank
    }

    /// The first quarter of little-waltz, interleaved stereo.
    func render(_ sampler: SamplerNode, blockSize: Int, prepare: Bool = true) throws -> [Float] {
        let sequence = try SMFReader.read(contentsOf: Self.song).makeSequence()
        if prepare { #expect(try sampler.prepareSamples(forNotes: sequence.samplerPlayedNotes()).isEmpty) }
        let player = try Player.makeDefault(sequence: sequence, sampleRate: 44_100, maximumFrameCount: 4096,
                                            instrument: .sampler(sampler))
        player.setEnd(tick: sequence.length / 4)
        var samples: [Float] = []
        _ = try player.renderToEnd(blockSize: blockSize, tailSeconds: 1) { l, r, n in
            for i in 0..<n {
                samples.append(l[i])
                samples.append(r[i])
            }
        }
        return samples
    }

    func rms(_ x: [Float]) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot()
    }

    @Test func renderIsDeterministicBlockSizeIndependentAndSoundsLikeTheSoundFont2Original() throws {
        let soundFont3 = try bank()
        #expect(soundFont3.compressedSamples?.compressedCount == soundFont3.samples.count)
        let reference = try render(SamplerNode(bank: soundFont3), blockSize: 512)
        #expect(reference.contains { abs($0) > 0.05 })
        for size in [63, 4096] {
            #expect(try render(SamplerNode(bank: try bank()), blockSize: size) == reference, "block size \(size)")
        }
        // Only the presets the song selects were decoded, not the whole bank.
        let store = try #require(soundFont3.compressedSamples)
        let decodedSamples = (0..<soundFont3.samples.count).filter { store.decoded($0) != nil }.count
        #expect(decodedSamples > 0 && decodedSamples < soundFont3.samples.count / 4)

        // Against the SoundFont 2 original: the same notes and waveforms. sf3convert lowers
        // the samples by 1 dB when it encodes them (FluidSynth plays its SF3 1.00 dB below its
        // SF2 too), so the comparison is at equal level.
        let original = try SoundFontReader.read(contentsOf: "/usr/share/sounds/sf2/TimGM6mb.sf2").bank
        let sf2 = try render(SamplerNode(bank: original), blockSize: 512)
        #expect(sf2.count == reference.count)
        let levelDecibels = 20 * log10(rms(reference) / rms(sf2))
        #expect(levelDecibels > -1.2 && levelDecibels < -0.8)
        let gain = Float(rms(reference) / rms(sf2))
        let difference = zip(sf2, reference).map { $0 * gain - $1 }
        #expect(rms(difference) < 0.1 * rms(reference))
    }

    @Test func notesAreSilentUntilTheirSamplesAreDecodedAndAProgramChangeAsksForThem() throws {
        let soundFont3 = try bank()
        let sampler = SamplerNode(bank: soundFont3)
        let unprepared = try render(sampler, blockSize: 512, prepare: false)
        // (The reverb keeps a tiny anti-denormal offset, far below anything audible.)
        #expect(unprepared.allSatisfy { abs($0) < 1e-9 }, "peak \(unprepared.map(abs).max() ?? 0)")

        // Live: a program change on the audio thread asks; the control thread decodes.
        let rig = try SamplerRig(soundFont3)
        let program: UInt8 = 40
        let silent = rig.render(frames: 4410, [(0, MIDIMessage.programChange(channel: 0, program: program)),
                                              (10, .noteOn(channel: 0, key: 67, velocity: 100))])
        #expect(silent.left.allSatisfy { $0 == 0 })
        #expect(try rig.sampler.decodeRequestedSamples().isEmpty)
        let preset = try #require(soundFont3.preset(bank: 0, program: Int(program)))
        #expect(preset.regions.allSatisfy { soundFont3.compressedSamples?.decoded($0.sampleIndex) != nil })
        let heard = rig.render(frames: 4410, [(0, .noteOn(channel: 0, key: 67, velocity: 100))])
        #expect(peak(heard.left, 0..<4410) > 0.01)
        // Nothing more was asked for.
        #expect(try rig.sampler.decodeRequestedSamples().isEmpty)
    }

    @Test func renderingAllocatesNothing() throws {
        let soundFont3 = try bank()
        let programs: [UInt8] = [0, 24, 48]
        func prepared() throws -> SamplerRig {
            let rig = try SamplerRig(soundFont3, effects: true, maximumFrameCount: 512)
            try rig.sampler.prepareSamples(for: programs.enumerated().map {
                SamplerNode.ProgramSelection(channel: UInt8($0.offset), bankMSB: 0, program: $0.element)
            } + [SamplerNode.ProgramSelection(channel: 9, bankMSB: 0, program: 0)])
            return rig
        }
        var messages: [(frame: Int, message: MIDIMessage)] = []
        for (c, p) in programs.enumerated() { messages.append((0, .programChange(channel: UInt8(c), program: p))) }
        for i in 0..<30 {
            let channel = UInt8(i % 3), key = UInt8(48 + (i * 5) % 30)
            messages.append((700 * i + 1, .noteOn(channel: channel, key: key, velocity: 90)))
            messages.append((700 * i + 5000, .noteOff(channel: channel, key: key, velocity: 0)))
        }
        messages.append((3001, .noteOn(channel: 9, key: 38, velocity: 100)))
        // Warm up the code paths once, then count.
        _ = try prepared().render(frames: 30_720, messages)
        let rig = try prepared()
        let events = messages.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }
            .map { GraphEvent(offset: $0.element.frame, nodeIndex: 0, event: .midi($0.element.message)) }
        var blocks: [[GraphEvent]] = []
        var next = 0
        for b in 0..<60 {
            var block: [GraphEvent] = []
            while next < events.count && events[next].offset < (b + 1) * 512 {
                var e = events[next]
                e.offset -= b * 512
                block.append(e)
                next += 1
            }
            blocks.append(block)
        }
        var allocations = 0
        for (b, block) in blocks.enumerated() {
            malloc_counter_start()
            block.withUnsafeBufferPointer { rig.graph.render(startFrame: Int64(b * 512), frameCount: 512, events: $0) }
            allocations += malloc_counter_stop()
        }
        #expect(allocations == 0)
        #expect(rig.sampler.activeVoiceCount > 0)
    }
}
