// swift-tools-version:6.0
// libFuzzer targets for every parser Tactus exposes to outside data. Kept out of the main
// package because libFuzzer supplies `main`: build with Fuzz/run.sh, which passes
// --sanitize fuzzer --sanitize address.
import PackageDescription

let fuzzFlags: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
    name: "TactusFuzz",
    dependencies: [.package(name: "Tactus", path: "..")],
    targets: [
        .executableTarget(name: "fuzz-smf", dependencies: [.product(name: "TactusCore", package: "Tactus")], swiftSettings: fuzzFlags),
        .executableTarget(name: "fuzz-bytestream", dependencies: [.product(name: "TactusCore", package: "Tactus")], swiftSettings: fuzzFlags),
        .executableTarget(name: "fuzz-json", dependencies: [.product(name: "TactusCore", package: "Tactus")], swiftSettings: fuzzFlags),
        .executableTarget(name: "fuzz-positions", dependencies: [.product(name: "TactusCore", package: "Tactus")], swiftSettings: fuzzFlags),
        .executableTarget(name: "fuzz-sf2", dependencies: [.product(name: "TactusCore", package: "Tactus")], swiftSettings: fuzzFlags),
        .executableTarget(name: "fuzz-dls", dependencies: [.product(name: "TactusCore", package: "Tactus")], swiftSettings: fuzzFlags),
        .executableTarget(name: "fuzz-sf3", dependencies: [.product(name: "TactusCore", package: "Tactus")], swiftSettings: fuzzFlags),
        .executableTarget(name: "fuzz-sfz", dependencies: [.product(name: "TactusCore", package: "Tactus")], swiftSettings: fuzzFlags),
        .executableTarget(name: "fuzz-journal", dependencies: [.product(name: "TactusCore", package: "Tactus"), .product(name: "TactusAudio", package: "Tactus")], swiftSettings: fuzzFlags),
        .executableTarget(name: "fuzz-sfz-play", dependencies: [.product(name: "TactusCore", package: "Tactus"), .product(name: "TactusAudio", package: "Tactus")], swiftSettings: fuzzFlags),
    ],
    swiftLanguageModes: [.v6]
)
