import ArgumentParser
import Foundation
import MIDI
import MIDIFile
import Sequencing
import SoundFont

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe a MIDI file (format, division, duration, tempo map, time signatures and tracks), a SoundFont bank (--soundfont) or the installed LV2 plugins (--plugins, --plugin URI)."
    )

    @Argument(help: "The MIDI file.")
    var file: String?

    @Option(name: .customLong("soundfont"), help: ArgumentHelp("Describe a SoundFont 2 or 3 bank or a DLS bank (or the one an RMI file carries) instead: name, version, samples and presets.", valueName: "FILE"))
    var soundFont: String?

    @Flag(help: "List the installed LV2 plugins: URI, kind (instrument, effect, other), whether Tactus can host each and why not, and name.")
    var plugins = false

    @Option(help: ArgumentHelp("Describe one LV2 plugin: ports, parameters with ranges, required features.", valueName: "URI"))
    var plugin: String?

    @OptionGroup var input: InputOptions

    func validate() throws {
        let given = [file != nil, soundFont != nil, plugins, plugin != nil].filter { $0 }.count
        if given == 0 { throw ValidationError("give a MIDI file, a bank with --soundfont FILE, --plugins or --plugin URI") }
        if given > 1 { throw ValidationError("give one of a MIDI file, --soundfont FILE, --plugins or --plugin URI, not both or more") }
    }

    func run() throws {
        if plugins {
            try listPlugins()
            return
        }
        if let plugin {
            try describePlugin(plugin)
            return
        }
        if let soundFont {
            try describeSoundFont(soundFont, options: input)
            return
        }
        guard let file else { return }
        let smf = try loadMIDIFile(file, options: input)
        let sequence = smf.makeSequence()
        let tempo = sequence.makeTempoMap()
        let meter = sequence.makeMeterMap()
        let length = sequence.length
        var out = OutputBuffer()
        out.line("file:        \(file)")
        out.line("format:      \(smf.format) (\(smf.tracks.count) track\(smf.tracks.count == 1 ? "" : "s"))")
        out.line("division:    \(describe(smf.timeBase))")
        if smf.timeBase.isUsable {
            let seconds = tempo.seconds(atTick: length)
            let end = meter.barBeatTick(atTick: length)
            out.line("duration:    \(formatDuration(seconds)) (\(String(format: "%.3f", seconds)) s), \(String(format: "%.2f", meter.bars(atTick: length))) bars, ends at \(end), \(length) ticks")
        } else {
            out.line("duration:    \(length) ticks (division 0: no time)")
        }
        let changes = sequence.tempoChanges
        if case .smpte = smf.timeBase {
            out.line("tempo:       SMPTE time; tempo events do not change speed")
        } else if changes.isEmpty {
            out.line("tempo:       120 BPM (no tempo events)")
        } else {
            out.line("tempo map:   \(changes.count) change\(changes.count == 1 ? "" : "s")")
            for change in changes.prefix(20) {
                out.line("  \(meter.barBeatTick(atTick: change.tick))  \(String(format: "%.3f", change.bpm)) BPM")
            }
            if changes.count > 20 { out.line("  ... \(changes.count - 20) more") }
        }
        let signatures = sequence.timeSignatures
        if signatures.isEmpty {
            out.line("time sig:    4/4 (none given)")
        } else {
            out.line("time sigs:   \(signatures.map { "\($0.signature) at \(meter.barBeatTick(atTick: $0.tick))" }.prefix(10).joined(separator: ", "))\(signatures.count > 10 ? ", ..." : "")")
        }
        let keys = sequence.keySignatures
        if !keys.isEmpty {
            out.line("key sigs:    \(keys.prefix(10).map { "\(keyName($0.key)) at \(meter.barBeatTick(atTick: $0.tick))" }.joined(separator: ", "))")
        }
        out.line("tracks:")
        out.line("  #  name                      channels          programs          notes    events")
        for (i, track) in smf.tracks.enumerated() {
            var channels = Set<UInt8>()
            var programs: [UInt8: Set<UInt8>] = [:]
            var notes = 0
            for e in track.events {
                switch e.event {
                case .note(let n):
                    channels.insert(n.channel)
                    notes += 1
                case .message(let m) where m.isChannelMessage:
                    channels.insert(m.channel)
                    if m.status & 0xF0 == 0xC0 { programs[m.channel, default: []].insert(m.data1) }
                    if m.isNoteOn { notes += 1 }
                default: break
                }
            }
            var fileEvents = 0
            track.forEachFileEvent { _, _ in fileEvents += 1 }
            if track.explicitLength != nil { fileEvents += 1 }
            let name = (track.name ?? "").replacingOccurrences(of: "\n", with: " ")
            let channelText = channels.isEmpty ? "-" : channels.sorted().map { String($0 + 1) }.joined(separator: ",")
            let programText = programs.isEmpty ? "-" : programs.keys.sorted().flatMap { ch in programs[ch]!.sorted().map { "\(ch + 1):\($0)" } }.joined(separator: ",")
            out.line("  " + pad(String(i), 2) + " " + pad(String(name.prefix(25)), 25) + " " + pad(channelText, 17) + " " + pad(programText, 17) + " " + pad(String(notes), 8) + " " + String(fileEvents))
        }
        describeGeneralMIDI(smf.tracks, into: &out)
        try out.finish()
    }
}

/// The programs the song selects and the drum notes it plays on the percussion channel, with
/// their General MIDI names (the track table keeps numbers, so it stays in columns).
func describeGeneralMIDI(_ tracks: [MusicTrack], into out: inout OutputBuffer) {
    var programs = Set<Int>()  // channel << 7 | program
    var drums: [UInt8: Int] = [:]
    for track in tracks {
        for e in track.events {
            switch e.event {
            case .note(let n) where n.channel == GeneralMIDI.percussionChannel:
                drums[n.key, default: 0] += 1
            case .message(let m) where m.status & 0xF0 == 0xC0:
                programs.insert(Int(m.channel) << 7 | Int(m.data1))
            case .message(let m) where m.isNoteOn && m.channel == GeneralMIDI.percussionChannel:
                drums[m.data1, default: 0] += 1
            default: break
            }
        }
    }
    if !programs.isEmpty {
        out.line("programs:")
        for key in programs.sorted() {
            let channel = key >> 7, program = UInt8(key & 0x7F)
            let name = GeneralMIDI.programName(program, channel: UInt8(channel)).map { " (\($0))" } ?? ""
            out.line("  ch \(pad(String(channel + 1), 2)) program \(program)\(name)")
        }
    }
    if !drums.isEmpty {
        out.line("drum notes (channel 10):")
        for key in drums.keys.sorted() {
            let hits = drums[key]!
            out.line("  note \(key) (\(GeneralMIDI.percussionName(key: key) ?? "not a GM drum")): \(hits) hit\(hits == 1 ? "" : "s")")
        }
    }
}

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}

func formatDuration(_ seconds: Double) -> String {
    let total = Int(seconds.rounded(.down))
    let ms = Int(((seconds - Double(total)) * 1000).rounded(.down))
    return String(format: "%d:%02d.%03d", total / 60, total % 60, ms)
}

func keyName(_ key: KeySignature) -> String {
    let majors = ["Cb", "Gb", "Db", "Ab", "Eb", "Bb", "F", "C", "G", "D", "A", "E", "B", "F#", "C#"]
    let minors = ["Ab", "Eb", "Bb", "F", "C", "G", "D", "A", "E", "B", "F#", "C#", "G#", "D#", "A#"]
    let i = Int(key.sharpsOrFlats) + 7
    guard (0..<15).contains(i) else { return "\(key.sharpsOrFlats) \(key.isMinor ? "minor" : "major")" }
    return key.isMinor ? minors[i] + " minor" : majors[i] + " major"
}

/// Prints a bank's name, version, sample data and presets (`bank:program name (N regions)`).
func describeSoundFont(_ path: String, options: InputOptions) throws {
    let file = try loadSoundFont(path, options: options)
    let bank = file.bank
    let info = file.info
    var out = OutputBuffer()
    out.line("file:        \(path)")
    out.line("name:        \(bank.name)")
    if file.format == .dls {
        out.line("version:     \(file.formatDescription)")
    } else {
        out.line("version:     \(info.version)\(info.soundEngine.map { ", for \($0)" } ?? "")")
    }
    if let software = info.software { out.line("software:    \(software)") }
    if let copyright = info.copyright { out.line("copyright:   \(copyright)") }
    let megabytes = String(format: "%.1f", Double(file.sampleDataByteCount) / 1_048_576)
    // A DLS bank's regions may play one wave with different loops: count the waves.
    let sampleCount = file.format == .dls ? Set(bank.samples.map(\.start)).count : bank.samples.count
    out.line("samples:     \(sampleCount) (\(megabytes) MB of sample data, \(file.is24Bit ? 24 : 16)-bit)")
    if file.compressedSampleCount > 0 {
        let compressedMegabytes = String(format: "%.1f", Double(file.compressedByteCount) / 1_048_576)
        out.line("compressed:  \(file.compressedSampleCount) of \(bank.samples.count) samples Ogg Vorbis (\(compressedMegabytes) MB), decoded when a song uses them")
    }
    let regions = bank.presets.reduce(0) { $0 + $1.regions.count }
    out.line("presets:     \(bank.presets.count) (\(regions) region\(regions == 1 ? "" : "s"))")
    for preset in bank.presets.sorted(by: { ($0.bank, $0.program) < ($1.bank, $1.program) }) {
        let n = preset.regions.count
        out.line("  " + pad("\(preset.bank):\(preset.program)", 7) + " \(preset.name) (\(n) region\(n == 1 ? "" : "s"))")
    }
    try out.finish()
}
