import Tactus

let session = try PlaybackSession(contentsOf: "Songs/morning-steps.mid")
do {
    try session.start(on: ALSAPCMBackend())
} catch {
    print("\(error); writing morning-steps.wav instead")
    try session.start(on: OfflineBackend(wavFile: "morning-steps.wav"))
}
let summary = try await session.finished()
print("played \(summary.seconds) seconds")
