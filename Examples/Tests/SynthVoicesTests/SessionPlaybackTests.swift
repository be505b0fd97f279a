import Foundation
import SynthVoices
import Tactus
import Testing

/// A graph a program built plays through `PlaybackSession` on a device exactly as it renders
/// offline: the subtractive-synth example's graph, played to ALSA's `file:` plugin (a device
/// that writes what it is given) and to an `OfflineBackend`.
@Suite struct SessionPlaybackTests {
    static var hasALSA: Bool {
        guard let handle = dlopen("libasound.so.2", RTLD_LAZY) else { return false }
        dlclose(handle)
        return true
    }

    /// The bytes of a WAV file's data chunk.
    static func wavData(_ path: String) throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var at = 12
        while at + 8 <= bytes.count {
            let id = String(decoding: bytes[at..<at + 4], as: UTF8.self)
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            if id == "data" { return Array(bytes[(at + 8)..<min(bytes.count, at + 8 + size)]) }
            at += 8 + size + (size & 1)
        }
        return []
    }

    @Test(.enabled(if: hasALSA, "needs libasound.so.2 (Debian package libasound2)"))
    func theExampleGraphOnAnALSADeviceGetsExactlyTheOfflineSamples() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-session-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wav = dir + "/offline.wav", raw = dir + "/device.raw"

        let offline = try SubtractiveSong().session(sampleRate: 48_000)
        try offline.start(on: OfflineBackend(wavFile: wav, format: .s16))
        let rendered = try await offline.finished()
        #expect(rendered.ending == .reachedEnd)

        let live = try SubtractiveSong().session(sampleRate: 48_000)
        try live.start(on: ALSAPCMBackend(device: "file:'\(raw)',raw"))
        let played = try await live.finished()
        #expect(played.ending == .reachedEnd && played.underruns == 0)

        let expected = try Self.wavData(wav)
        let got = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        #expect(expected.contains { $0 != 0 }, "the offline render is not silent")
        try #require(got.count >= expected.count, "played \(got.count) bytes, rendered \(expected.count)")
        #expect(Array(got[..<expected.count]) == expected)
        #expect(got[expected.count...].allSatisfy { $0 == 0 }, "silence after the end")
    }

    @Test func theExampleGraphRendersTheSameAtEveryBlockSize() async throws {
        var reference: [Float]?
        for blockSize in [1, 64, 65, 512] {
            let session = try SubtractiveSong().session()
            let backend = OfflineBackend(destination: .memory, blockSize: blockSize)
            try session.start(on: backend)
            _ = try await session.finished()
            let left = backend.samples.left
            if let reference { #expect(left.count == reference.count && left == reference, "block size \(blockSize)") } else { reference = left }
        }
        #expect(reference?.contains { $0 != 0 } == true)
    }
}
