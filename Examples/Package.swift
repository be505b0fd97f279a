// swift-tools-version:6.0
import PackageDescription

// The example programs: each uses Tactus only through its library products, as an
// application would (no internal modules, no @testable).
let package = Package(
    name: "TactusExamples",
    dependencies: [
        .package(name: "Tactus", path: ".."),
    ],
    targets: [
        .executableTarget(name: "hello", dependencies: [.product(name: "Tactus", package: "Tactus")]),
    ],
    swiftLanguageModes: [.v6]
)
