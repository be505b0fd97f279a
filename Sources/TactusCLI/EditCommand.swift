import ArgumentParser
import Foundation
import MIDI
import MIDIFile
import Sequencing

/// A usage error in an edit script: which option, and why.
struct EditUsageError: Error, CustomStringConvertible {
    var option: String
    var reason: String
    var description: String { "\(option): \(reason)" }
}

struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Edit a MIDI file with operations applied in the order given.",
        usage: "tactus edit IN -o OUT [--dry-run] [operations...]",
        discussion: """
        Scope (applies to the operations after it; --all resets it):
          --tracks LIST        track numbers as `tactus info` shows them (e.g. 2 or 1,3 or 2-4)
          --channels LIST      MIDI channels 1-16
          --keys A-B           key range, numbers or names (C4 is 60)
          --range START-END    only events starting in this span
        Notes and velocities:
          --transpose N [--overflow clamp|fold|drop]   (channel 10 only when --channels names it)
          --velocity V | --scale-velocity PCT | --compress-velocity MIN-MAX
          --quantize GRID [--strength PCT] [--swing PCT] [--ends]   GRID: 1/4 ... 1/64, 1/8t, 1/4.
        Time (positions BAR:BEAT[:TICK], 42.5s or 1920t; ranges START-END, comma-separated):
          --cut RANGE  --copy RANGE  --paste POS [--overwrite]  --delete RANGE  --clear RANGE
          --insert-silence RANGE (inserts the range's length at its start)   --move TICKS
        Tracks:
          --merge LIST  --split-channels N  --split-keys N:KEY  --duplicate N  --remove-track N
          --rename N=NAME  --reorder FROM:TO
          --program P[@POS]  --bank MSB[.LSB][@POS]  --volume V[@POS]  --pan V[@POS]
        Tempo and signatures (--keep beats|seconds, default beats):
          --tempo BPM  --scale-tempo FACTOR  --insert-tempo BPM@POS  --tempo-ramp A-B@RANGE
          --timesig N/D[@POS]  --keysig KEY[@POS] (C, Em, Bb, F#m or -2, 3m)
        Removing:
          --remove sysex|cc|cc:N|program|pitchbend|aftertouch|polytouch|text|meta:N|notes
        Output:
          --format 0|1  --resolution PPQ  --dry-run (print what would change; write nothing)
          An output ending in .wav is rendered with the built-in synthesizer, as `tactus render` does.
        """
    )

    @Argument(parsing: .captureForPassthrough, help: "IN -o OUT and the operations.")
    var arguments: [String] = []

    func run() throws {
        do {
            var script = try EditScript(arguments: arguments)
            if let output = script.output, !script.dryRun {
                try refuseInputAsOutput(output, inputs: [script.input])
                try refuseAudioExtension(output, allowed: ["wav"])
            }
            let smf = try loadMIDIFile(script.input, strict: script.strict, quiet: script.quiet)
            var sequence = smf.makeSequence()
            let lengthBefore = sequence.length
            let reports = try script.apply(to: &sequence, fileHadConductor: !sequence.tempoTrack.isEmpty)
            if let resolution = script.resolution {
                guard case .ticksPerQuarter(let old) = sequence.timeBase, old > 0 else {
                    throw EditUsageError(option: "--resolution", reason: "the file has \(describe(sequence.timeBase)), not ticks per quarter")
                }
                sequence = sequence.rescaled(toTicksPerQuarter: resolution, from: old)
            }
            if script.dryRun {
                try printDryRun(reports: reports, sequence: sequence, lengthBefore: lengthBefore, conductor: !sequence.tempoTrack.isEmpty)
                return
            }
            guard let output = script.output else { throw EditUsageError(option: "-o", reason: "an output file is needed (or --dry-run)") }
            if output.lowercased().hasSuffix(".wav") {
                // WAV export goes through the renderer, with `tactus render`'s defaults.
                var report = OutputBuffer()
                try renderToFile(sequence, source: script.input, output: output, settings: RenderSettings(quiet: script.quiet), report: &report)
                try report.finish()
                return
            }
            let layout: SMFLayout = script.format == 0 ? .format0 : script.format == 1 ? .format1 : .asRead
            let bytes = try checkedSMFBytes(of: StandardMIDIFile(sequence: sequence, layout: layout), output: output)
            do {
                try SMFWriter.writeAtomically(bytes, to: output)
            } catch {
                printError("\(error)")
                throw ExitCode(ExitStatus.cannotCreate)
            }
        } catch let error as EditUsageError {
            printError("tactus edit: \(error)")
            throw ExitCode(ExitStatus.usage)
        }
    }

    func printDryRun(reports: [(String, EditReport)], sequence: MusicSequence, lengthBefore: Int64, conductor: Bool) throws {
        var out = OutputBuffer()
        func trackLabel(_ index: Int) -> String {
            index < 0 ? "tempo track" : "track \(index + (conductor ? 1 : 0))"
        }
        for (operation, report) in reports {
            let parts = report.touched.keys.sorted().map { "\(trackLabel($0)): \(report.touched[$0]!)" }
            out.line("\(operation): \(parts.isEmpty ? "no events touched" : parts.joined(separator: ", "))")
        }
        let tempo = sequence.makeTempoMap()
        let meter = sequence.makeMeterMap()
        let length = sequence.length
        out.line("length: \(lengthBefore) -> \(length) ticks, \(String(format: "%.2f", meter.bars(atTick: length))) bars, \(sequence.timeBase.isUsable ? formatDuration(tempo.seconds(atTick: length)) : "-")")
        out.line("dry run: nothing written")
        try out.finish()
    }
}

/// The parsed command line of `tactus edit`: options, then operations in order.
struct EditScript {
    var input = ""
    var output: String?
    var dryRun = false
    var format: Int?
    var resolution: Int?
    var strict = false
    var quiet = false
    var steps: [(option: String, value: String?)] = []

    /// Options that modify the latest operation of their kind (or the ones that follow).
    static let modifiers: Set<String> = ["--strength", "--swing", "--ends", "--keep", "--overflow", "--overwrite"]
    static let flags: Set<String> = ["--ends", "--overwrite", "--all"]
    static let operations: Set<String> = [
        "--tracks", "--channels", "--keys", "--range", "--all",
        "--transpose", "--velocity", "--scale-velocity", "--compress-velocity", "--quantize",
        "--cut", "--copy", "--paste", "--delete", "--clear", "--insert-silence", "--move",
        "--merge", "--split-channels", "--split-keys", "--duplicate", "--remove-track", "--rename", "--reorder",
        "--program", "--bank", "--volume", "--pan",
        "--tempo", "--scale-tempo", "--insert-tempo", "--tempo-ramp", "--timesig", "--keysig", "--remove",
    ]

    init(arguments: [String]) throws {
        var i = 0
        var positional: [String] = []
        func value(_ option: String) throws -> String {
            guard i + 1 < arguments.count else { throw EditUsageError(option: option, reason: "needs a value") }
            i += 1
            return arguments[i]
        }
        while i < arguments.count {
            var arg = arguments[i]
            var inlineValue: String?
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") , !arg.hasPrefix("--rename") {
                inlineValue = String(arg[arg.index(after: eq)...])
                arg = String(arg[..<eq])
            }
            switch arg {
            case "-h", "--help":
                print(EditCommand.helpMessage())
                throw ExitCode.success
            case "-o", "--output": output = try inlineValue ?? value(arg)
            case "--dry-run": dryRun = true
            case "--strict": strict = true
            case "--quiet": quiet = true
            case "--format":
                let v = try inlineValue ?? value(arg)
                guard let f = Int(v), f == 0 || f == 1 else { throw EditUsageError(option: arg, reason: "must be 0 or 1, not '\(v)'") }
                format = f
            case "--resolution":
                let v = try inlineValue ?? value(arg)
                guard let r = Int(v), (1...32767).contains(r) else { throw EditUsageError(option: arg, reason: "must be 1...32767 ticks per quarter, not '\(v)'") }
                resolution = r
            default:
                if Self.flags.contains(arg) {
                    steps.append((arg, nil))
                } else if Self.operations.contains(arg) || Self.modifiers.contains(arg) {
                    steps.append((arg, try inlineValue ?? value(arg)))
                } else if arg.hasPrefix("-") && arg.count > 1 && Int(arg) == nil {
                    throw EditUsageError(option: arg, reason: "unknown option (see tactus edit --help)")
                } else {
                    positional.append(arg)
                }
            }
            i += 1
        }
        guard positional.count == 1 else {
            throw EditUsageError(option: "IN", reason: positional.isEmpty ? "no input file given" : "one input file expected, got \(positional.joined(separator: " "))")
        }
        input = positional[0]
        if output == nil && !dryRun { throw EditUsageError(option: "-o", reason: "an output file is needed (or --dry-run)") }
    }

    /// Track numbers as `tactus info` prints them, mapped to indices of `sequence.tracks`.
    static func trackIndices(_ text: String, option: String, sequence: MusicSequence, conductor: Bool) throws -> [Int] {
        let count = sequence.tracks.count + (conductor ? 1 : 0)
        var result: [Int] = []
        for part in text.split(separator: ",") {
            let bounds = part.split(separator: "-")
            guard (1...2).contains(bounds.count), let a = Int(bounds[0]), let b = Int(bounds.last!), a <= b else {
                throw EditUsageError(option: option, reason: "'\(text)' is not a list of track numbers (like 2 or 1,3 or 2-4)")
            }
            for n in a...b {
                guard (0..<count).contains(n) else {
                    throw EditUsageError(option: option, reason: "no track \(n) (the file has tracks 0-\(count - 1); see tactus info)")
                }
                if conductor && n == 0 { throw EditUsageError(option: option, reason: "track 0 is the tempo track; name event tracks 1-\(count - 1)") }
                result.append(n - (conductor ? 1 : 0))
            }
        }
        return result
    }

    static func keyNumber(_ text: String) -> UInt8? {
        if let n = Int(text), (0...127).contains(n) { return UInt8(n) }
        let names: [Character: Int] = ["c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11]
        var chars = Substring(text.lowercased())
        guard let first = chars.first, let base = names[first] else { return nil }
        chars = chars.dropFirst()
        var pitch = base
        if chars.first == "#" { pitch += 1; chars = chars.dropFirst() } else if chars.first == "b" && chars.count > 1 { pitch -= 1; chars = chars.dropFirst() }
        guard let octave = Int(chars) else { return nil }
        let key = (octave + 1) * 12 + pitch
        return (0...127).contains(key) ? UInt8(key) : nil
    }

    static func position(_ text: String, option: String) throws -> MusicPosition {
        do { return try MusicPosition(parsing: text) } catch { throw EditUsageError(option: option, reason: error.description) }
    }

    static func ranges(_ text: String, option: String, sequence: MusicSequence) throws -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        for part in text.split(separator: ",") {
            let range: MusicRange
            do { range = try MusicRange(parsing: String(part)) } catch { throw EditUsageError(option: option, reason: error.description) }
            guard let ticks = range.ticks(in: sequence) else {
                throw EditUsageError(option: option, reason: "the range \(part) ends before it starts (or is empty)")
            }
            if let clash = result.first(where: { $0.overlaps(ticks) }) {
                throw EditUsageError(option: option, reason: "ranges overlap (\(part) and the range at ticks \(clash.lowerBound)-\(clash.upperBound))")
            }
            result.append(ticks)
        }
        guard !result.isEmpty else { throw EditUsageError(option: option, reason: "no range given") }
        return result.sorted { $0.lowerBound > $1.lowerBound }  // last first, so earlier positions stay valid
    }

    /// Splits `VALUE@POS`; POS defaults to the start.
    static func valueAt(_ text: String, option: String, sequence: MusicSequence) throws -> (String, Int64) {
        let parts = text.split(separator: "@", maxSplits: 1).map(String.init)
        guard let v = parts.first, !v.isEmpty else { throw EditUsageError(option: option, reason: "needs a value, like 40 or 40@9:1") }
        let tick = parts.count == 2 ? try position(parts[1], option: option).tick(in: sequence) : 0
        return (v, tick)
    }

    mutating func apply(to sequence: inout MusicSequence, fileHadConductor conductor: Bool) throws -> [(String, EditReport)] {
        var scope = EditScope.all
        var reports: [(String, EditReport)] = []
        var clipboard: SequenceClip?
        // Modifier values in force; a modifier placed after its operation is applied to it.
        func modifier(_ name: String, after index: Int, default value: String?) -> String? {
            var result = value
            for (option, v) in steps[..<index] where option == name { result = v ?? "yes" }
            var j = index + 1
            while j < steps.count && (Self.modifiers.contains(steps[j].option)) {
                if steps[j].option == name { result = steps[j].value ?? "yes" }
                j += 1
            }
            return result
        }
        func percent(_ text: String, _ option: String, _ range: ClosedRange<Double>) throws -> Double {
            guard let v = Double(text.hasSuffix("%") ? String(text.dropLast()) : text), range.contains(v) else {
                throw EditUsageError(option: option, reason: "'\(text)' must be a number from \(Int(range.lowerBound)) to \(Int(range.upperBound))")
            }
            return v
        }
        func keep(_ index: Int) throws -> TempoEditKeeps {
            let v = modifier("--keep", after: index, default: "beats")!
            guard let k = TempoEditKeeps(rawValue: v) else { throw EditUsageError(option: "--keep", reason: "must be beats or seconds, not '\(v)'") }
            return k
        }
        func bpm(_ text: String, _ option: String) throws -> Double {
            guard let v = Double(text), v >= 1, v <= 1000 else { throw EditUsageError(option: option, reason: "'\(text)' is not a tempo in BPM (1-1000)") }
            return v
        }
        func channelsOfScopedTracks() -> [(Int, UInt8)] {
            var result: [(Int, UInt8)] = []
            for i in sequence.tracks.indices where scope.includesTrack(i) {
                var seen = Set<UInt8>()
                for e in sequence.tracks[i].events {
                    switch e.event {
                    case .note(let n): seen.insert(n.channel)
                    case .message(let m) where m.isChannelMessage: seen.insert(m.channel)
                    default: break
                    }
                }
                for ch in seen.sorted() where scope.channels?.contains(ch) ?? true { result.append((i, ch)) }
            }
            return result
        }
        func trackIndex(_ text: String, _ option: String) throws -> Int {
            let list = try Self.trackIndices(text, option: option, sequence: sequence, conductor: conductor)
            guard list.count == 1 else { throw EditUsageError(option: option, reason: "names one track, not '\(text)'") }
            return list[0]
        }

        for (index, step) in steps.enumerated() {
            let option = step.option
            let v = step.value ?? ""
            let label = step.value.map { "\(option) \($0)" } ?? option
            var report = EditReport()
            switch option {
            case "--all": scope = .all
            case "--tracks": scope.tracks = Set(try Self.trackIndices(v, option: option, sequence: sequence, conductor: conductor))
            case "--channels":
                var set = Set<UInt8>()
                for part in v.split(separator: ",") {
                    let bounds = part.split(separator: "-").compactMap { Int($0) }
                    guard (1...2).contains(bounds.count), bounds.allSatisfy({ (1...16).contains($0) }), bounds.first! <= bounds.last! else {
                        throw EditUsageError(option: option, reason: "'\(v)' is not a list of channels 1-16")
                    }
                    for c in bounds.first!...bounds.last! { set.insert(UInt8(c - 1)) }
                }
                scope.channels = set
            case "--keys":
                let parts = v.split(separator: "-").map(String.init)
                guard parts.count == 2, let a = Self.keyNumber(parts[0]), let b = Self.keyNumber(parts[1]), a <= b else {
                    throw EditUsageError(option: option, reason: "'\(v)' is not a key range like 36-51 or C2-D#3")
                }
                scope.keys = a...b
            case "--range":
                let r = try Self.ranges(v, option: option, sequence: sequence)
                guard r.count == 1 else { throw EditUsageError(option: option, reason: "one range expected") }
                scope.range = r[0]
            case "--transpose":
                guard let n = Int(v), (-127...127).contains(n) else { throw EditUsageError(option: option, reason: "'\(v)' is not a number of semitones") }
                let policyText = modifier("--overflow", after: index, default: "clamp")!
                guard let policy = TransposeOverflowPolicy(rawValue: policyText) else {
                    throw EditUsageError(option: "--overflow", reason: "must be clamp, fold or drop, not '\(policyText)'")
                }
                report = sequence.transpose(by: n, scope: scope, policy: policy)
            case "--velocity":
                guard let n = Int(v), (1...127).contains(n) else { throw EditUsageError(option: option, reason: "'\(v)' is not a velocity 1-127") }
                report = sequence.setVelocity(n, scope: scope)
            case "--scale-velocity":
                report = sequence.scaleVelocity(percent: try percent(v, option, 0...1000), scope: scope)
            case "--compress-velocity":
                let parts = v.split(separator: "-").compactMap { Int($0) }
                guard parts.count == 2, parts[0] >= 1, parts[1] <= 127, parts[0] <= parts[1] else {
                    throw EditUsageError(option: option, reason: "'\(v)' is not a velocity range like 40-100")
                }
                report = sequence.compressVelocity(into: parts[0]...parts[1], scope: scope)
            case "--quantize":
                guard let grid = QuantizeGrid(parsing: v) else {
                    throw EditUsageError(option: option, reason: "'\(v)' is not a grid (1/4 ... 1/64, 1/8t for triplets, 1/4. for dotted)")
                }
                let strength = try percent(modifier("--strength", after: index, default: "100")!, "--strength", 0...100) / 100
                let swing = try percent(modifier("--swing", after: index, default: "0")!, "--swing", 0...100) / 100
                let ends = modifier("--ends", after: index, default: nil) != nil
                report = sequence.quantize(grid: grid, strength: strength, swing: swing, starts: true, ends: ends, scope: scope)
            case "--cut", "--delete", "--clear", "--copy":
                for range in try Self.ranges(v, option: option, sequence: sequence) {
                    switch option {
                    case "--cut":
                        clipboard = sequence.copy(range, scope: scope)
                        report = sequence.delete(range, scope: scope)
                    case "--copy": clipboard = sequence.copy(range, scope: scope)
                    case "--delete": report = sequence.delete(range, scope: scope)
                    default: report = sequence.clear(range, scope: scope)
                    }
                }
            case "--paste":
                guard let clip = clipboard else { throw EditUsageError(option: option, reason: "nothing to paste: --cut or --copy a range first") }
                let tick = try Self.position(v, option: option).tick(in: sequence)
                let overwrite = modifier("--overwrite", after: index, default: nil) != nil
                report = sequence.paste(clip, at: tick, mode: overwrite ? .overwrite : .insert)
            case "--insert-silence":
                for range in try Self.ranges(v, option: option, sequence: sequence) {
                    report = sequence.insertSilence(at: range.lowerBound, length: range.upperBound - range.lowerBound, scope: EditScope(tracks: scope.tracks))
                }
            case "--move":
                guard let ticks = Int64(v) else { throw EditUsageError(option: option, reason: "'\(v)' is not a whole number of ticks") }
                guard (-SMFWriter.maximumTick...SMFWriter.maximumTick).contains(ticks) else {
                    throw EditUsageError(option: option, reason: "\(v) ticks is outside -\(SMFWriter.maximumTick)...\(SMFWriter.maximumTick)")
                }
                report = sequence.move(by: ticks, scope: scope)
            case "--merge":
                let list = try Self.trackIndices(v, option: option, sequence: sequence, conductor: conductor)
                guard list.count >= 2 else { throw EditUsageError(option: option, reason: "name two tracks or more") }
                sequence.mergeTracks(list)
            case "--split-channels": sequence.splitTrackByChannel(try trackIndex(v, option))
            case "--split-keys":
                let parts = v.split(separator: ":").map(String.init)
                guard parts.count == 2, let key = Self.keyNumber(parts[1]) else { throw EditUsageError(option: option, reason: "'\(v)' should be TRACK:KEY, like 4:C3") }
                sequence.splitTrackByKey(try trackIndex(parts[0], option), at: key)
            case "--duplicate": sequence.duplicateTrack(try trackIndex(v, option))
            case "--remove-track": sequence.tracks.remove(at: try trackIndex(v, option))
            case "--rename":
                let parts = v.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { throw EditUsageError(option: option, reason: "'\(v)' should be TRACK=NAME") }
                sequence.tracks[try trackIndex(parts[0], option)].name = parts[1]
            case "--reorder":
                let parts = v.split(separator: ":").map(String.init)
                guard parts.count == 2 else { throw EditUsageError(option: option, reason: "'\(v)' should be FROM:TO") }
                sequence.moveTrack(from: try trackIndex(parts[0], option), to: try trackIndex(parts[1], option))
            case "--program", "--volume", "--pan", "--bank":
                let (text, tick) = try Self.valueAt(v, option: option, sequence: sequence)
                let targets = channelsOfScopedTracks()
                guard !targets.isEmpty else { throw EditUsageError(option: option, reason: "no track in scope uses a MIDI channel") }
                var messages: [(UInt8) -> MIDIMessage] = []
                switch option {
                case "--bank":
                    let parts = text.split(separator: ".").compactMap { Int($0) }
                    guard (1...2).contains(parts.count), parts.allSatisfy({ (0...127).contains($0) }) else {
                        throw EditUsageError(option: option, reason: "'\(text)' is not a bank MSB[.LSB] (0-127)")
                    }
                    messages.append { .controlChange(channel: $0, controller: 0, value: UInt8(parts[0])) }
                    if parts.count == 2 { messages.append { .controlChange(channel: $0, controller: 32, value: UInt8(parts[1])) } }
                default:
                    guard let n = Int(text), (0...127).contains(n) else { throw EditUsageError(option: option, reason: "'\(text)' must be 0-127") }
                    let value = UInt8(n)
                    switch option {
                    case "--program": messages.append { .programChange(channel: $0, program: value) }
                    case "--volume": messages.append { .controlChange(channel: $0, controller: MIDIController.volume, value: value) }
                    default: messages.append { .controlChange(channel: $0, controller: MIDIController.pan, value: value) }
                    }
                }
                for (track, channel) in targets {
                    for make in messages { sequence.addChannelMessage(make(channel), track: track, at: tick) }
                    report.add(track, messages.count)
                }
            case "--tempo": sequence.setConstantTempo(bpm: try bpm(v, option), keep: try keep(index))
            case "--scale-tempo":
                guard let f = Double(v), f > 0.01, f < 100 else { throw EditUsageError(option: option, reason: "'\(v)' is not a factor (0.01-100)") }
                sequence.scaleTempo(by: f, keep: try keep(index))
            case "--insert-tempo":
                let (text, tick) = try Self.valueAt(v, option: option, sequence: sequence)
                sequence.insertTempo(bpm: try bpm(text, option), at: tick, keep: try keep(index))
            case "--tempo-ramp":
                let parts = v.split(separator: "@", maxSplits: 1).map(String.init)
                let bpms = parts.first?.split(separator: "-").map(String.init) ?? []
                guard parts.count == 2, bpms.count == 2 else { throw EditUsageError(option: option, reason: "'\(v)' should be FROM-TO@RANGE, like 120-90@9:1-13:1") }
                let ranges = try Self.ranges(parts[1], option: option, sequence: sequence)
                sequence.tempoRamp(from: try bpm(bpms[0], option), to: try bpm(bpms[1], option), over: ranges[0], keep: try keep(index))
            case "--timesig":
                let (text, tick) = try Self.valueAt(v, option: option, sequence: sequence)
                let parts = text.split(separator: "/").compactMap { Int($0) }
                guard parts.count == 2, (1...255).contains(parts[0]), [1, 2, 4, 8, 16, 32, 64].contains(parts[1]) else {
                    throw EditUsageError(option: option, reason: "'\(text)' is not a time signature like 3/4 or 7/8")
                }
                sequence.setTimeSignature(TimeSignature(parts[0], parts[1]), at: tick)
            case "--keysig":
                let (text, tick) = try Self.valueAt(v, option: option, sequence: sequence)
                guard let key = Self.keySignature(text) else { throw EditUsageError(option: option, reason: "'\(text)' is not a key like C, Em, Bb, F#m, -2 or 3m") }
                sequence.setKeySignature(key, at: tick)
            case "--remove":
                guard let kind = Self.removable(v) else {
                    throw EditUsageError(option: option, reason: "'\(v)' is not one of sysex, cc, cc:N, program, pitchbend, aftertouch, polytouch, text, meta:N, notes")
                }
                report = sequence.removeEvents(kind, scope: scope)
            default:
                continue  // modifiers are read by their operation
            }
            if !Self.modifiers.contains(option) && !["--all", "--tracks", "--channels", "--keys", "--range"].contains(option) {
                reports.append((label, report))
            }
        }
        return reports
    }

    static func keySignature(_ text: String) -> KeySignature? {
        var t = Substring(text)
        let minor = t.hasSuffix("m")
        if minor { t = t.dropLast() }
        if let n = Int(t), (-7...7).contains(n) { return KeySignature(sharpsOrFlats: Int8(n), isMinor: minor) }
        let majors = ["Cb": -7, "Gb": -6, "Db": -5, "Ab": -4, "Eb": -3, "Bb": -2, "F": -1, "C": 0, "G": 1, "D": 2, "A": 3, "E": 4, "B": 5, "F#": 6, "C#": 7]
        let minors = ["Ab": -7, "Eb": -6, "Bb": -5, "F": -4, "C": -3, "G": -2, "D": -1, "A": 0, "E": 1, "B": 2, "F#": 3, "C#": 4, "G#": 5, "D#": 6, "A#": 7]
        guard let n = (minor ? minors : majors)[String(t)] else { return nil }
        return KeySignature(sharpsOrFlats: Int8(n), isMinor: minor)
    }

    static func removable(_ text: String) -> RemovableEventKind? {
        switch text {
        case "sysex": return .sysex
        case "cc": return .controller(nil)
        case "program": return .programChange
        case "pitchbend": return .pitchBend
        case "aftertouch": return .channelPressure
        case "polytouch": return .polyPressure
        case "text": return .meta(nil)
        case "notes": return .notes
        default:
            if text.hasPrefix("cc:"), let n = Int(text.dropFirst(3)), (0...127).contains(n) { return .controller(UInt8(n)) }
            if text.hasPrefix("meta:"), let n = Int(text.dropFirst(5)), (0...127).contains(n) { return .meta(UInt8(n)) }
            return nil
        }
    }
}
