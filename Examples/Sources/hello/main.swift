import ExampleSongs
import Tactus

do {
    let session = try PlaybackSession(contentsOf: ExampleSongs.path("Songs/morning-steps.mid"))
    do { try session.start(on: ALSAPCMBackend()) } catch {
        print("\(error); writing morning-steps.wav instead")
        try session.start(on: OfflineBackend(wavFile: "morning-steps.wav"))
    }
    print("played \(try await session.finished().seconds) seconds")
} catch { ExampleSongs.fail("hello: \(error)") }
