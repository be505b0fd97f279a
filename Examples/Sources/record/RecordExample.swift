// Live MIDI recorded into a new track over a backing song, with a one-bar count-in and the
// metronome, the take written to a MIDI file with the backing's tracks.
//
//     swift run record [OUT.mid] [SECONDS]
//
// Input comes from Tactus's ALSA sequencer port when the machine has a sequencer (connect a
// keyboard to it, or `aplaymidi -p PORT song.mid`), and from a demo player in this program
// that plays an arpeggio in eighth notes through an in-process input, so there is always
// something to record. The backing plays on the default sound card, or on a silent device
// running at the same pace when there is none. Input quantize puts the notes on the grid.
import ExampleSongs
import Foundation
import Tactus

@main
struct RecordExample {
    static func main() async {
        do {
            try await record()
        } catch {
            ExampleSongs.fail("record: \(error)")
        }
    }

    static func record() async throws {
        let arguments = CommandLine.arguments
        let output = arguments.count > 1 ? arguments[1] : "take.mid"
        let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 4 : 4

        let backingPath = ExampleSongs.path("Songs/morning-steps.mid")
        let backing = try SMFReader.read(contentsOf: backingPath).makeSequence()
        let session = try RecordingSession(
            sequence: backing,
            options: .init(settings: RecordingSettings(quantize: QuantizeGrid(noteValue: 8)), countInBars: 1, metronome: true,
                           durationSeconds: seconds, journalPath: output + ".journal", backingPath: backingPath))

        let demoPlayer = InProcessMIDIInput(name: "demo player")
        var inputs: [any RecordingInput] = [demoPlayer]
        if let client = try? SequencerClient(name: "Tactus record example") {
            inputs.append(SequencerRecordingInput(client: client))
            print("recording what is sent to ALSA sequencer port \(client.inputAddress) too")
        }
        do {
            try session.start(inputs: inputs, on: ALSAPCMBackend())
        } catch {
            guard case .audio(let failure) = error else { throw error }
            print("\(failure); the backing plays on a silent device")
            try session.start(inputs: inputs, on: NullBackend(realTime: true))
        }

        // The demo player: a note on every eighth of the take, each held until the next.
        let eighth = Int64(backing.ticksPerQuarter / 2)
        let player = Thread {
            let keys: [UInt8] = [60, 64, 67, 72]
            var next: Int64 = 0
            var sounding: UInt8?
            while session.take == nil {
                if let position = session.position, position.countInRemaining == 0, let tick = position.tick, tick >= next {
                    if let key = sounding { demoPlayer.send(.noteOff(channel: 0, key: key)) }
                    let key = keys[Int(next / eighth) % keys.count]
                    demoPlayer.send(.noteOn(channel: 0, key: key, velocity: 96))
                    sounding = key
                    next += eighth
                }
                usleep(2_000)
            }
        }
        player.start()

        let meter = backing.makeMeterMap()
        for await event in session.events() {
            switch event {
            case .recordingStarted:
                print("recording")
            case .message(let message) where message.kept && message.bytes.count == 3 && message.bytes[0] & 0xF0 == 0x90:
                let place = meter.barBeatTick(atTick: message.tick ?? 0)
                print("note \(message.bytes[1]) at \(place.bar):\(place.beat):\(place.tick)")
            case .finished(let ending):
                print("take ended: \(ending)")
            default:
                break
            }
        }
        let take = await session.finished()
        try take.write(to: output)
        print("\(output): \(take.noteCount) notes in a new track after the backing's \(backing.tracks.count), \(take.recordedSeconds) s recorded")
    }
}
