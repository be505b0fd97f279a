// swift-tools-version:6.0
import PackageDescription

// The tutorial programs, built against the repository's library products only (`import Tactus`,
// no internal modules, no @testable), as an application would. `swift run NAME` from this
// directory; `./run-examples.sh` and `./check-examples.sh` run each offline and check it.
let tactus = Target.Dependency.product(name: "Tactus", package: "Tactus")

let package = Package(
    name: "TactusExamples",
    dependencies: [
        .package(name: "Tactus", path: ".."),
    ],
    targets: [
        // Finds Songs/ wherever an example is started.
        .target(name: "ExampleSongs"),
        .executableTarget(name: "hello", dependencies: [tactus, "ExampleSongs"]),
        // The custom instruments and effect the examples play, in a library so the tests below
        // can prove them allocation-free.
        .target(name: "SynthVoices", dependencies: [tactus]),
        .executableTarget(name: "subtractive-synth", dependencies: [tactus, "SynthVoices"]),
        .executableTarget(name: "fm-synth", dependencies: [tactus, "SynthVoices"]),
        .executableTarget(name: "tone-generator", dependencies: [tactus, "SynthVoices"]),
        .executableTarget(name: "comb-filter", dependencies: [tactus, "SynthVoices"]),
        .executableTarget(name: "score-render", dependencies: [tactus]),
        .executableTarget(name: "sampler-sequence", dependencies: [tactus]),
        // An installed LV2 instrument (MDA Piano) with an automated control.
        .executableTarget(name: "lv2-instrument", dependencies: [tactus, "ExampleSongs"]),
        .executableTarget(name: "record", dependencies: [tactus, "ExampleSongs"]),
        // The code of the "Time and tempo" article: ticks, beats, seconds, bars and frames.
        .executableTarget(name: "time-and-tempo", dependencies: [tactus]),
        // Reads the examples' WAV output and checks what each one must show.
        .executableTarget(name: "example-checks"),
        .testTarget(
            name: "SynthVoicesTests",
            dependencies: [tactus, "SynthVoices", .product(name: "TactusTestSupport", package: "Tactus")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
