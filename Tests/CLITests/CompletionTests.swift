import Testing

/// Shell completions come from the argument parser and know every command and option.
@Suite struct CompletionTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsNameTheCommandsAndOptions(shell: String) throws {
        let result = try CLI.run(["--generate-completion-script", shell])
        #expect(result.status == 0, "\(result.stderr)")
        for word in ["render", "play", "record", "soundfont", "sample-rate"] {
            #expect(result.stdout.contains(word), "\(shell) completions lack \(word)")
        }
    }
}
