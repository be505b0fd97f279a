// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tactus",
    products: [
        .executable(name: "tactus", targets: ["tactus"]),
        .library(name: "TactusCore", targets: ["MIDI", "Sequencing", "MIDIFile"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .target(name: "MIDI"),
        .target(name: "Sequencing", dependencies: ["MIDI"]),
        .target(name: "MIDIFile", dependencies: ["MIDI", "Sequencing"]),
        .executableTarget(
            name: "tactus",
            dependencies: [
                "MIDI", "Sequencing", "MIDIFile",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "smf-bench",
            dependencies: ["MIDIFile", "Sequencing"],
            path: "Benchmarks/SMFBench"
        ),
        .testTarget(name: "MIDITests", dependencies: ["MIDI"]),
        .testTarget(name: "SequencingTests", dependencies: ["Sequencing", "MIDI"]),
        .testTarget(name: "MIDIFileTests", dependencies: ["MIDIFile", "Sequencing", "MIDI"]),
        .testTarget(name: "CLITests", dependencies: ["MIDIFile", "Sequencing", "MIDI"]),
    ],
    swiftLanguageModes: [.v6]
)
