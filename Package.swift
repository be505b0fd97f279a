// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tactus",
    products: [
        .executable(name: "tactus", targets: ["TactusCLI"]),
        // Everything a player needs: sequences, files, the graph and its instruments, playback
        // and the drivers, behind one `import Tactus`.
        .library(name: "Tactus", targets: ["Tactus"]),
        // The MIDI, sequence and file core, without audio.
        .library(name: "TactusCore", targets: ["MIDI", "Sequencing", "MIDIFile", "SoundFont"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .target(name: "MIDI"),
        .target(name: "Sequencing", dependencies: ["MIDI"]),
        .target(name: "MIDIFile", dependencies: ["MIDI", "Sequencing"]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .target(name: "ALSA", dependencies: ["CALSA", "Sequencing", "MIDI"]),
        .target(name: "AudioGraph", dependencies: ["MIDI"]),
        .target(name: "SoundFont"),
        .target(name: "Instruments", dependencies: ["AudioGraph", "MIDI"]),
        .target(name: "Sampler", dependencies: ["SoundFont", "AudioGraph", "MIDI"]),
        .target(name: "Playback", dependencies: ["Sequencing", "AudioGraph", "Instruments", "Sampler", "MIDI"]),
        // libsndfile (FLAC, Ogg Vorbis and Opus output), loaded at run time: hand-written
        // declarations, no system header, nothing linked.
        .target(name: "CSndFile"),
        .target(name: "AudioFileOutput", dependencies: ["CSndFile", "Playback"]),
        // Rendering whole corpora: input discovery, sharding, the manifest, resumable outputs
        // and the job pool (issue 15).
        .target(name: "BatchRender", dependencies: ["AudioFileOutput", "Playback", "MIDIFile", "Sequencing"]),
        .target(
            name: "Tactus",
            dependencies: ["MIDI", "Sequencing", "MIDIFile", "SoundFont", "AudioGraph", "Instruments", "Sampler", "Playback", "ALSA",
                           "AudioFileOutput", "BatchRender"]
        ),
        .executableTarget(
            name: "TactusCLI",
            dependencies: [
                "MIDI", "Sequencing", "MIDIFile", "AudioGraph", "Instruments", "Playback", "ALSA", "SoundFont", "Sampler",
                "AudioFileOutput", "BatchRender",
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
            name: "tactus-scheduler-benchmark",
            dependencies: ["AudioGraph", "Playback", "Sequencing", "MIDI"],
            path: "Benchmarks/SchedulerBenchmark"
        ),
        .testTarget(name: "MIDITests", dependencies: ["MIDI"]),
        .testTarget(name: "ALSATests", dependencies: ["ALSA", "Sequencing", "MIDI"]),
        .testTarget(name: "SequencingTests", dependencies: ["Sequencing", "MIDI"]),
        .testTarget(name: "SoundFontTests", dependencies: ["SoundFont"]),
        .testTarget(name: "MIDIFileTests", dependencies: ["MIDIFile", "Sequencing", "MIDI"]),
        .testTarget(name: "CLITests", dependencies: ["TactusCLI", "MIDIFile", "Sequencing", "MIDI", "SoundFont"]),
        // Test-only allocation counter; linked only into the test executable.
        .target(name: "MallocCounter"),
        // Test-only helpers shared by the audio test suites.
        .target(name: "AudioTestSupport", dependencies: ["AudioGraph", "MIDI"]),
        .testTarget(name: "AudioGraphTests", dependencies: ["AudioGraph", "MIDI", "AudioTestSupport"]),
        .testTarget(
            name: "SamplerTests",
            dependencies: ["Sampler", "SoundFont", "AudioGraph", "MIDI", "AudioTestSupport", "MallocCounter", "Playback",
                           "MIDIFile", "Sequencing"]
        ),
        .testTarget(name: "InstrumentsTests", dependencies: ["Instruments", "AudioGraph", "MIDI", "AudioTestSupport"]),
        .testTarget(
            name: "PlaybackTests",
            dependencies: ["Playback", "Instruments", "AudioGraph", "Sequencing", "MIDIFile", "MIDI", "MallocCounter", "PlaybackSoak"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
