// swift-tools-version:6.0
import Foundation
import PackageDescription

let package = Package(
    name: "Tactus",
    products: [
        .executable(name: "tactus", targets: ["TactusCLI"]),
        // Everything a player needs: sequences, files, the graph and its instruments, playback
        // and the drivers, behind one `import Tactus`.
        .library(name: "Tactus", targets: ["Tactus"]),
        // For users' test targets: the allocation counter and offline node rendering, to prove
        // custom nodes allocation-free and block-size independent.
        .library(name: "TactusTestSupport", targets: ["TactusTestSupport"]),
        // The MIDI, sequence and file core, without audio.
        .library(name: "TactusCore", targets: ["MIDI", "Sequencing", "MIDIFile", "SoundFont", "SFZ"]),
        // The audio engine without drivers: graph, built-in effects, instruments, sampler, player,
        // the playback session with its offline and null backends, the recording session, and
        // hosted LV2 plugins (liblilv loaded at run time).
        .library(name: "TactusAudio", targets: ["AudioGraph", "AudioEffects", "Instruments", "Sampler", "SFZPlayback", "Playback", "Recording", "LV2"]),
        // The ALSA drivers: the PCM backend for sessions, the sequencer, raw MIDI.
        .library(name: "TactusALSA", targets: ["ALSA"]),
        // The JACK driver: the JACK backend for sessions, transport and timebase.
        .library(name: "TactusJACK", targets: ["JACK"]),
        // Plain C functions over loading and rendering (libTactusC.so), for Python through
        // ctypes and for any other language with a C FFI (issue 26).
        .library(name: "TactusC", type: .dynamic, targets: ["TactusC"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `swift package generate-documentation` for the DocC catalogs.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(name: "MIDI"),
        .target(name: "Locking"),
        .target(name: "Sequencing", dependencies: ["MIDI"]),
        .target(name: "MIDIFile", dependencies: ["MIDI", "Sequencing"]),
        // libasound is loaded at run time (dlopen), so building needs no ALSA headers and
        // everything but live audio and MIDI runs without the library.
        .target(name: "CALSA", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "ALSA", dependencies: ["Locking", "CALSA", "Sequencing", "MIDI", "Playback", "Recording"]),
        // libjack is loaded at run time too: JACK is optional, and pw-jack swaps in PipeWire's.
        .target(name: "CJACK", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "JACK", dependencies: ["CJACK", "Playback", "Recording", "Sequencing"]),
        .target(name: "CFloatConversion"),
        .target(name: "CProcessControl"),
        // liblilv is loaded at run time too: LV2 hosting is optional, and the LV2 structs are
        // declared by hand (a stable ABI), so building needs neither lilv nor LV2 headers.
        .target(name: "CLilv", linkerSettings: [.linkedLibrary("dl")]),
        // Hosted LV2 plugins as graph nodes, and the catalogue of installed plugins (issue 27).
        .target(name: "LV2", dependencies: ["AudioGraph", "MIDI", "CLilv"]),
        .target(name: "AudioGraph", dependencies: ["MIDI", "CFloatConversion"]),
        // The built-in effect nodes (gain, filters, delay, reverb, chorus, dynamics) over the graph.
        .target(name: "AudioEffects", dependencies: ["AudioGraph", "CFloatConversion"]),
        // libvorbisfile, loaded at run time (SoundFont 3 samples): declarations and loader.
        .target(name: "CVorbisFile"),
        .target(name: "SoundFont", dependencies: ["Locking", "CVorbisFile"]),
        // SFZ instruments: the parser and the resolver that flattens headers into regions.
        .target(name: "SFZ"),
        // SFZ instruments built into SoundFont banks for the sampler; FLAC and other non-WAV
        // samples are decoded by libsndfile (loaded at run time).
        .target(name: "SFZPlayback", dependencies: ["SFZ", "SoundFont", "Sampler", "CSndFile"]),
        .target(name: "Instruments", dependencies: ["AudioGraph", "AudioEffects", "MIDI", "CFloatConversion"]),
        .target(name: "Sampler", dependencies: ["SoundFont", "AudioGraph", "AudioEffects", "MIDI"]),
        .target(name: "Playback", dependencies: ["Locking", "Sequencing", "AudioGraph", "AudioEffects", "Instruments", "Sampler", "MIDI", "MIDIFile", "SoundFont", "AudioFileOutput"]),
        // Recording live MIDI: the recording session, its inputs, the recorder, the journal and
        // the metronome. Drivers add their inputs (ALSA sequencer and raw MIDI, JACK MIDI).
        .target(name: "Recording", dependencies: ["Locking", "Playback", "Sequencing", "MIDI", "MIDIFile"]),
        // libsndfile (FLAC, Ogg Vorbis and Opus output), loaded at run time: hand-written
        // declarations, no system header, nothing linked.
        .target(name: "CSndFile"),
        .target(name: "AudioFileOutput", dependencies: ["CSndFile", "MIDIFile"]),
        // Rendering whole corpora: input discovery, sharding, the manifest, resumable outputs
        // and the job pool (issue 15).
        .target(name: "BatchRender", dependencies: ["Locking", "AudioFileOutput", "AudioGraph", "Playback", "MIDI", "MIDIFile", "Sequencing"]),
        // The C interface: `@_cdecl` functions declared in include/tactus.h, which ships beside
        // the Python package rather than being compiled here.
        .target(
            name: "TactusC",
            dependencies: ["MIDIFile", "Sequencing", "Playback", "AudioGraph", "Sampler", "SoundFont", "SFZPlayback"],
            exclude: ["include"]
        ),
        .target(
            name: "Tactus",
            dependencies: ["MIDI", "Sequencing", "MIDIFile", "SoundFont", "SFZ", "SFZPlayback", "AudioGraph", "AudioEffects", "Instruments", "Sampler", "Playback", "Recording",
                           "ALSA", "JACK", "AudioFileOutput", "BatchRender", "LV2"]
        ),
        .executableTarget(
            name: "TactusCLI",
            dependencies: [
                "MIDI", "Sequencing", "MIDIFile", "AudioGraph", "Instruments", "Playback", "Recording", "ALSA", "JACK", "SoundFont", "Sampler",
                "SFZ", "SFZPlayback", "AudioFileOutput", "BatchRender", "LV2", "CProcessControl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "songwriter", dependencies: ["MIDI", "Sequencing", "MIDIFile"]),
        .executableTarget(
            name: "tactus-render-benchmark",
            dependencies: ["AudioGraph", "Instruments", "Playback", "MIDIFile", "Sequencing", "Sampler", "SoundFont"],
            path: "Benchmarks/RenderBenchmark"
        ),
        .executableTarget(
            name: "smf-bench",
            dependencies: ["MIDIFile", "Sequencing"],
            path: "Benchmarks/SMFBench"
        ),
        .executableTarget(name: "soundfont-bench", dependencies: ["SoundFont"], path: "Benchmarks/SoundFontBench"),
        // The soak run: long playback under transport actions, edits and live input, checked
        // for lost and repeated events (issue 8); the test suite runs it offline.
        .target(name: "PlaybackSoak", dependencies: ["Playback", "AudioGraph", "Sequencing", "MIDI", "MallocCounter"]),
        .executableTarget(
            name: "tactus-soak",
            dependencies: ["PlaybackSoak", "ALSA", "AudioGraph"],
            path: "Benchmarks/Soak"
        ),
        .executableTarget(
            name: "tactus-ramp-benchmark",
            dependencies: ["AudioGraph", "AudioEffects", "Instruments", "MIDI", "Sampler", "SoundFont", "TactusTestSupport"],
            path: "Benchmarks/RampBenchmark"
        ),
        .executableTarget(
            name: "tactus-scheduler-benchmark",
            dependencies: ["AudioGraph", "Playback", "Sequencing", "MIDI"],
            path: "Benchmarks/SchedulerBenchmark"
        ),
        .testTarget(name: "MIDITests", dependencies: ["MIDI", "AudioTestSupport"]),
        .testTarget(name: "LV2Tests", dependencies: ["LV2", "CLilv", "AudioGraph", "MIDI", "Playback", "Sequencing", "TactusTestSupport", "AudioTestSupport"]),
        .testTarget(name: "ALSATests", dependencies: ["Locking", "ALSA", "Sequencing", "MIDI", "MIDIFile", "Playback", "AudioGraph", "AudioTestSupport"]),
        .testTarget(name: "JACKTests", dependencies: ["Locking", "JACK", "Playback", "Recording", "Sequencing", "MIDIFile", "AudioTestSupport", "TactusTestSupport"]),
        .testTarget(name: "SequencingTests", dependencies: ["Sequencing", "MIDI"]),
        .testTarget(name: "SoundFontTests", dependencies: ["SoundFont", "AudioTestSupport"]),
        .testTarget(name: "SFZTests", dependencies: ["SFZ"]),
        .testTarget(
            name: "SFZPlaybackTests",
            dependencies: ["SFZPlayback", "SFZ", "Sampler", "SoundFont", "AudioGraph", "MIDI", "AudioTestSupport", "AudioFileOutput", "MallocCounter"]
        ),
        .testTarget(name: "MIDIFileTests", dependencies: ["MIDIFile", "Sequencing", "MIDI"]),
        .testTarget(name: "CLITests", dependencies: ["TactusCLI", "MIDIFile", "Sequencing", "MIDI", "SoundFont", "AudioTestSupport"]),
        // The allocation counter; linked only into test executables (it interposes malloc).
        .target(name: "MallocCounter"),
        .target(name: "TactusTestSupport", dependencies: ["AudioGraph", "JACK", "MIDI", "MallocCounter"]),
        // Test-only helpers shared by the audio test suites.
        .target(name: "AudioTestSupport", dependencies: ["AudioGraph", "MIDI"]),
        .testTarget(name: "AudioGraphTests", dependencies: ["AudioGraph", "AudioEffects", "MIDI", "AudioTestSupport"]),
        .testTarget(name: "AudioEffectsTests", dependencies: ["AudioEffects", "AudioGraph", "AudioTestSupport"]),
        .testTarget(
            name: "SamplerTests",
            dependencies: ["Sampler", "SoundFont", "AudioGraph", "AudioEffects", "MIDI", "AudioTestSupport", "MallocCounter", "Playback",
                           "MIDIFile", "Sequencing", "Instruments"]
        ),
        .testTarget(name: "InstrumentsTests", dependencies: ["Instruments", "AudioGraph", "MIDI", "AudioTestSupport"]),
        .testTarget(
            name: "AutomationTests",
            dependencies: ["AudioGraph", "AudioEffects", "Instruments", "Sampler", "SoundFont", "Playback", "Sequencing", "MIDI", "TactusTestSupport"]
        ),
        .testTarget(
            name: "PlaybackTests",
            dependencies: ["Playback", "AudioFileOutput", "Recording", "Instruments", "AudioGraph", "AudioEffects", "Sequencing", "MIDIFile", "MIDI", "MallocCounter", "PlaybackSoak", "ALSA",
                           "AudioTestSupport", "TactusTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// CI's sanitizer stages build only what the suites they run need, since a sanitized optimized
// build of everything is most of their time: TACTUS_TEST_TARGETS=A,B keeps the test targets A
// and B, every target they depend on, and the products made only of kept targets. Unset (the
// normal case), the package is whole.
if let wanted = ProcessInfo.processInfo.environment["TACTUS_TEST_TARGETS"] {
    let byName = Dictionary(uniqueKeysWithValues: package.targets.map { ($0.name, $0) })
    var kept = Set<String>()
    var pending = wanted.split(separator: ",").map(String.init)
    // A misspelt or renamed name would build a smaller package whose filter then runs fewer
    // tests and still passes: refuse it instead.
    for name in pending where byName[name]?.type != .test {
        fatalError("TACTUS_TEST_TARGETS names \(name), which is not a test target of this package")
    }
    while let name = pending.popLast() {
        guard let target = byName[name], kept.insert(name).inserted else { continue }
        for dependency in target.dependencies {
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _): pending.append(name)
            default: break
            }
        }
    }
    package.targets.removeAll { !kept.contains($0.name) }
    package.products.removeAll { product in
        let targets = (product as? Product.Library)?.targets ?? (product as? Product.Executable)?.targets ?? []
        return !targets.allSatisfy(kept.contains)
    }
}
