import ArgumentParser
import Foundation
import Playback
import Sequencing

/// Transport options `tactus play` and `tactus render` share, so every transport behaviour
/// heard live can be rendered and checked offline.
struct TransportOptions: ParsableArguments {
    @Option(help: "Play rate, 0.05...20 (2 is twice as fast, same pitch of events, half the time).")
    var rate: Double = 1

    @Option(help: "Start position: BAR:BEAT[:TICK] (from 1:1), seconds like 42.5s, or ticks like 1920t.")
    var from: String?

    @Option(help: "End position (not included), in the same forms as --from.")
    var to: String?

    @Option(help: "Loop the span from --from to --to (or the song's end): N plays in all, or 'forever' (a bare --loop).")
    var loop: String?

    @Option(help: "Tracks to mute, as `tactus info` numbers them (like 2 or 1,3 or 2-4).")
    var mute: String?

    @Option(help: "Tracks to solo, as `tactus info` numbers them.")
    var solo: String?

    // Unconditional, so `--transpose -3` reads -3 as the value rather than as an unknown flag.
    @Option(parsing: .unconditional, help: "Transpose notes by N semitones (drums on channel 10 stay).")
    var transpose: Int = 0

    /// The most plays `--loop N` takes: a bound that keeps the song's length in frames far
    /// from overflowing, and more than any render needs.
    static let maximumLoopCount = 10_000

    /// Spelling of a bare `--loop`: Tactus.main rewrites it, since an option with an optional
    /// value is not something the argument parser offers.
    static let foreverSpelling = "forever"
}

/// Transport options checked against a sequence.
struct TransportPlan {
    var rate = 1.0
    var fromTick: Int64 = 0
    var toTick: Int64?
    var loop: LoopCount?

    /// True when playback never ends by itself.
    var isEndless: Bool { loop == .forever }
}

extension TransportOptions {
    /// Checks the options against `sequence`, applies mute, solo and transpose to it, and
    /// returns the plan; a bad option prints one line starting with `file` and exits 64.
    func plan(for sequence: inout MusicSequence, file: String) throws -> TransportPlan {
        func usage(_ message: String) -> ExitCode {
            printError("\(file): \(message)")
            return ExitCode(ExitStatus.usage)
        }
        var plan = TransportPlan()
        guard rate.isFinite, Player.rateRange.contains(rate) else { throw usage("--rate \(rate) is outside 0.05...20") }
        plan.rate = rate
        guard (-127...127).contains(transpose) else { throw usage("--transpose \(transpose) is outside -127...127") }
        func position(_ text: String, _ option: String) throws -> Int64 {
            do { return try MusicPosition(parsing: text).tick(in: sequence) } catch { throw usage("\(option): \(error)") }
        }
        if let from { plan.fromTick = try position(from, "--from") }
        if let to {
            let tick = try position(to, "--to")
            guard tick > plan.fromTick else { throw usage("--to \(to) is not after the start") }
            plan.toTick = tick
        }
        if let loop {
            if loop == TransportOptions.foreverSpelling {
                plan.loop = .forever
            } else if let n = Int(loop), (1...TransportOptions.maximumLoopCount).contains(n) {
                plan.loop = .times(n)
            } else {
                throw usage("--loop takes a count in 1...\(TransportOptions.maximumLoopCount), or nothing to loop forever, not '\(loop)'")
            }
            let loopEnd = plan.toTick ?? sequence.length
            guard loopEnd > plan.fromTick else { throw usage("the loop from --from to the song's end is empty") }
        }
        let conductor = !sequence.tempoTrack.isEmpty
        for (option, list) in [("--mute", mute), ("--solo", solo)] {
            guard let list else { continue }
            let indices: [Int]
            do {
                indices = try EditScript.trackIndices(list, option: option, sequence: sequence, conductor: conductor)
            } catch {
                throw usage("\(error)")
            }
            for i in indices {
                if option == "--mute" { sequence.tracks[i].isMuted = true } else { sequence.tracks[i].isSoloed = true }
            }
        }
        if transpose != 0 { sequence.transpose(by: transpose) }
        return plan
    }
}

extension Tactus {
    /// Rewrites a bare `--loop` (no count after it) to `--loop forever`, since the argument
    /// parser has no options with an optional value.
    static func expandingBareLoop(_ arguments: [String]) -> [String] {
        var result: [String] = []
        var i = 0
        while i < arguments.count {
            result.append(arguments[i])
            if arguments[i] == "--loop" {
                let next = i + 1 < arguments.count ? arguments[i + 1] : nil
                if next == nil || Int(next!) == nil && next != TransportOptions.foreverSpelling {
                    result.append(TransportOptions.foreverSpelling)
                }
            }
            i += 1
        }
        return result
    }
}
