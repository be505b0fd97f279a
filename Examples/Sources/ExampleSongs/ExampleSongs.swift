import Foundation

/// Finds the repository's demo songs wherever an example is started: the repository's root,
/// `Examples/`, or anywhere else on the machine that built it.
public enum ExampleSongs {
    /// `relativePath` (such as `Songs/morning-steps.mid`) under the working folder, its parent,
    /// or the repository this file was compiled from, whichever holds it; `relativePath`
    /// itself when none does, so that opening it reports the missing file.
    public static func path(_ relativePath: String, sourceFile: String = #filePath) -> String {
        // This file sits at Examples/Sources/ExampleSongs/, three folders below the root.
        var root = URL(fileURLWithPath: sourceFile)
        for _ in 0..<4 { root = root.deletingLastPathComponent() }
        let candidates = [relativePath, "../" + relativePath, root.path + "/" + relativePath]
        return candidates.first { FileManager.default.isReadableFile(atPath: $0) } ?? relativePath
    }

    /// Prints `message` on standard error as one line and exits with status 1: how an example
    /// reports a failure (no backtrace).
    public static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
        exit(1)
    }
}
