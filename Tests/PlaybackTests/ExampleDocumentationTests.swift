import Foundation
import Testing

/// The Getting Started article shows the `hello` example itself (which `Examples/run-examples.sh`
/// compiles and runs), and the example stays at most ten lines of code.
@Suite struct ExampleDocumentationTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func theGettingStartedArticleShowsTheHelloExampleVerbatim() throws {
        let article = try Self.read("Sources/Tactus/Tactus.docc/GettingStarted.md")
        let hello = try Self.read("Examples/Sources/hello/main.swift")
        let blocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
        #expect(blocks.contains(hello), "GettingStarted.md must hold Examples/Sources/hello/main.swift as a swift code block")
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
