import ALSA
import Foundation
import Synchronization
import Testing

/// A source whose output depends only on the frame index, so the file can be checked.
final class RampSource: PCMRenderSource, @unchecked Sendable {
    var frame = 0
    func renderPCM(frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        for i in 0..<frameCount {
            let n = frame + i
            left[i] = Float(n % 1000) / 1000 - 0.5
            right[i] = -Float(n % 777) / 777
        }
        frame += frameCount
    }
}

@Suite("ALSA PCM output", .enabled(if: ALSALibrary.isAvailable, "needs libasound.so.2 (Debian package libasound2)"))
struct PCMOutputTests {
    @Test("Plays to ALSA's file plugin: every frame arrives, converted exactly", arguments: [PCMSampleFormat.s16, .s32, .float])
    func filePlugin(format: PCMSampleFormat) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tactus-pcm-\(UUID().uuidString).raw").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = try PCMOutput(PCMConfiguration(device: "file:'\(path)',raw", sampleRate: 48_000, periodFrames: 256, bufferFrames: 1024, format: format))
        #expect(output.granted.periodFrames == 256)
        let source = RampSource()
        try output.start(source: source)
        let deadline = Date().addingTimeInterval(10)
        while output.framesWritten < 48_000 && Date() < deadline { usleep(1000) }
        output.stop()
        #expect(output.error == nil)
        #expect(output.xrunCount == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let frames = data.count / (2 * format.bytesPerSample)
        #expect(frames >= 48_000)
        #expect(Int64(frames) == output.framesWritten)
        data.withUnsafeBytes { raw in
            for n in stride(from: 0, to: frames, by: 97) {
                let l = Float(n % 1000) / 1000 - 0.5
                let r = -Float(n % 777) / 777
                switch format {
                case .s16:
                    let s = raw.bindMemory(to: Int16.self)
                    #expect(s[2 * n] == Int16((l * 32767).rounded()) && s[2 * n + 1] == Int16((r * 32767).rounded()), "frame \(n)")
                case .s32:
                    let s = raw.bindMemory(to: Int32.self)
                    #expect(s[2 * n] == Int32((Double(l) * 2147483647).rounded()), "frame \(n)")
                case .float:
                    let s = raw.bindMemory(to: Float.self)
                    #expect(s[2 * n] == l && s[2 * n + 1] == r, "frame \(n)")
                }
            }
        }
    }

    @Test("An unknown device is a clear error naming it")
    func unknownDevice() {
        do {
            _ = try PCMOutput(PCMConfiguration(device: "no_such_device_xyz"))
            Issue.record("opened a device that does not exist")
        } catch {
            #expect(error.description.hasPrefix("audio device 'no_such_device_xyz': open failed"))
        }
    }
}
