import Foundation
import Testing

/// The Getting Started article shows the `hello` example itself (which `Examples/run-examples.sh`
/// compiles and runs), and the example stays at most ten lines of code.
@Suite struct ExampleDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The Swift code blocks of a catalog article.
    static func swiftBlocks(_ article: String) -> [String] {
        article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
    }

    @Test func theGettingStartedArticleShowsTheHelloExampleVerbatim() throws {
        let article = try Self.read("Sources/Tactus/Tactus.docc/GettingStarted.md")
        let hello = try Self.read("Examples/Sources/hello/main.swift")
        #expect(Self.swiftBlocks(article).contains(hello), "GettingStarted.md must hold Examples/Sources/hello/main.swift as a swift code block")
    }

    /// The code of the "Time and tempo", "Threads and the real-time contract" and "Recording" articles is
    /// compiled and run: it is a program and a test file of the Examples package, verbatim.
    @Test(arguments: [("TimeAndTempo.md", "Examples/Sources/time-and-tempo/main.swift"),
                      ("ThreadsAndRealTime.md", "Examples/Tests/SynthVoicesTests/RealTimeContractTests.swift"),
                      ("RecordingMIDI.md", "Examples/Sources/record/RecordExample.swift")])
    func anArticlesCodeIsACompiledExampleVerbatim(article: String, source: String) throws {
        let text = try Self.read("Sources/Tactus/Tactus.docc/" + article)
        let code = try Self.read(source)
        #expect(Self.swiftBlocks(text).contains(code), "\(article) must hold \(source) as a swift code block")
    }

    @Test func theHelloExampleIsAtMostTenLinesOfCode() throws {
        let hello = try Self.read("Examples/Sources/hello/main.swift")
        let code = hello.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(code.count <= 10, "\(code.count) lines")
        #expect(hello.contains("Songs/morning-steps.mid"))
    }

    @Test func theREADMEShowsTheHelloExample() throws {
        let readme = try Self.read("README.md")
        let hello = try Self.read("Examples/Sources/hello/main.swift")
        #expect(readme.contains("```swift\n" + hello + "```"))
    }
}
