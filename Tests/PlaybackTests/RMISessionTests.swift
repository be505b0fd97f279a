import Foundation
import Playback
import Testing

@Suite struct RMISessionTests {
    @Test func anRMISongPlaysItsOwnBank() throws {
        let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/seeds/fuzz-dls")
        let bank = try Data(contentsOf: seeds.appendingPathComponent("level2-plain.dls"))
        let track: [UInt8] = [0x00, 0xC0, 5, 0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0, 0x00, 0xFF, 0x2F, 0x00]
        let smf = Data(Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 96] + Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track)
        func chunk(_ id: String, _ body: Data) -> Data {
            let n = UInt32(body.count)
            return Data(id.utf8) + Data([UInt8(n & 0xFF), UInt8((n >> 8) & 0xFF), UInt8((n >> 16) & 0xFF), UInt8(n >> 24)]) + body
                + (body.count & 1 == 1 ? Data([0]) : Data())
        }
        let path = NSTemporaryDirectory() + "tactus-rmi-session-\(getpid()).rmi"
        try chunk("RIFF", Data("RMID".utf8) + chunk("data", smf) + bank).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var options = PlaybackSession.Options()
        options.logHandler = nil
        let session = try PlaybackSession(contentsOf: path, options: options)
        #expect(session.instrumentDescription.hasPrefix("SoundFont \(path)"), "\(session.instrumentDescription)")
        var named = options
        named.instrument = .builtIn
        #expect(try PlaybackSession(contentsOf: path, options: named).instrumentDescription == "built-in synthesizer")
    }
}
