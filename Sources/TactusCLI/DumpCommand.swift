import ArgumentParser
import Foundation
import MIDI
import MIDIFile
import Sequencing

struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print a MIDI file's events, one per line.",
        discussion: """
        --json prints the document of the corpus oracle (same keys and schema), so Tactus can be diffed against mido; \
        --notes prints notes paired first in, first out. --lyrics prints the lyrics: every lyric meta event, or, in a \
        file without any, the karaoke words of a .kar file (text events of a track that uses the / and \\ line marks \
        or is named Words, without the @ header fields).
        """
    )

    @Argument(help: "The MIDI file.")
    var file: String

    @Flag(name: .long, help: "Print the oracle's JSON document.")
    var json = false

    @Flag(name: .long, help: "Print notes with their start and end ticks instead of events.")
    var notes = false

    @Flag(name: .long, help: "Print the lyrics with their track, tick, bar:beat:tick and seconds instead of events (--json: a list).")
    var lyrics = false

    @Flag(name: .long, help: "With --json, print events over 1024 bytes whole instead of as a hash, so `tactus build` can read the document back.")
    var full = false

    @OptionGroup var input: InputOptions

    func validate() throws {
        if lyrics && (notes || full) { throw ValidationError("--lyrics cannot be combined with --notes or --full") }
    }

    func run() throws {
        let smf = try loadMIDIFile(file, options: input)
        var out = OutputBuffer()
        if lyrics {
            dumpLyrics(smf, into: &out)
        } else if json {
            let doc = notes ? FileDump.notesDocument(of: smf) : FileDump.document(of: smf, fullBytes: full)
            out.line(doc.canonicalText())
        } else if notes {
            let pairing = FileDump.notes(of: smf)
            out.line("# track channel key start end velocity")
            for n in pairing.matched {
                out.line("\(n.track) \(n.channel) \(n.pitch) \(n.start) \(n.end.map(String.init) ?? "-") \(n.velocity)")
            }
            for n in pairing.unterminated {
                out.line("\(n.track) \(n.channel) \(n.pitch) \(n.start) unterminated \(n.velocity)")
            }
            if pairing.orphans > 0 { out.line("# \(pairing.orphans) note-off(s) without a note-on") }
        } else {
            let sequence = smf.makeSequence()
            let tempo = sequence.makeTempoMap()
            let meter = sequence.makeMeterMap()
            out.line("# format \(smf.format), \(smf.tracks.count) track(s), division \(describe(smf.timeBase))")
            for (ti, track) in smf.tracks.enumerated() {
                out.line("# track \(ti)")
                track.forEachFileEvent { tick, event in
                    let position = meter.barBeatTick(atTick: tick)
                    let seconds = smf.timeBase.isUsable ? String(format: "%.6f", tempo.seconds(atTick: tick)) : "-"
                    out.line("\(ti)\t\(tick)\t\(position)\t\(seconds)\t\(FileDump.kindName(event))\t\(describe(event))")
                }
                if let end = track.explicitLength {
                    out.line("\(ti)\t\(end)\t\(meter.barBeatTick(atTick: end))\t\(smf.timeBase.isUsable ? String(format: "%.6f", tempo.seconds(atTick: end)) : "-")\tend_of_track")
                }
            }
        }
        try out.finish()
    }

    private func dumpLyrics(_ smf: StandardMIDIFile, into out: inout OutputBuffer) {
        let events = Lyrics.events(in: smf.tracks)
        let sequence = smf.makeSequence()
        let tempo = sequence.makeTempoMap()
        let meter = sequence.makeMeterMap()
        let usable = smf.timeBase.isUsable
        if json {
            let rows: [JSONValue] = events.map { e in
                .object([
                    "track": .int(Int64(e.track)), "tick": .int(e.tick), "kind": .string(FileDump.metaName(e.type)),
                    "seconds": usable ? .double((tempo.seconds(atTick: e.tick) * 1e9).rounded() / 1e9) : .null,
                    "text": .string(e.text),
                ])
            }
            out.line(JSONValue.object(["lyrics": .array(rows)]).canonicalText())
            return
        }
        out.line("# track tick bar:beat:tick seconds kind text")
        for e in events {
            let seconds = usable ? String(format: "%.6f", tempo.seconds(atTick: e.tick)) : "-"
            out.line("\(e.track)\t\(e.tick)\t\(meter.barBeatTick(atTick: e.tick))\t\(seconds)\t\(FileDump.metaName(e.type))\t\(quoted(e.text))")
        }
    }
}

/// `text` in double quotes, with quotes, backslashes and control characters escaped, so a
/// syllable with a line break stays on its line.
func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += String(format: "\\u{%02X}", scalar.value)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

/// " (Bass Drum 1)" for a note on the General MIDI percussion channel with a GM drum name,
/// else nothing.
func drumName(_ m: MIDIMessage) -> String {
    guard m.channel == GeneralMIDI.percussionChannel, let name = GeneralMIDI.percussionName(key: m.data1) else { return "" }
    return " (\(name))"
}

func describe(_ timeBase: TimeBase) -> String {
    switch timeBase {
    case .ticksPerQuarter(let q): return "\(q) ticks per quarter"
    case .smpte(let fps, let tpf): return "SMPTE \(fps == 29 ? "29.97 drop" : String(fps)) fps, \(tpf) ticks per frame"
    }
}

func describe(_ event: FileEvent) -> String {
    switch event {
    case .message(let m):
        switch m.status & 0xF0 {
        // General MIDI names go last, in parentheses, so the key=value fields read as before.
        case 0x80, 0x90: return "ch=\(m.channel + 1) key=\(m.data1) vel=\(m.data2)" + drumName(m)
        case 0xA0: return "ch=\(m.channel + 1) key=\(m.data1) pressure=\(m.data2)" + drumName(m)
        case 0xB0: return "ch=\(m.channel + 1) cc=\(m.data1) value=\(m.data2)"
        case 0xC0: return "ch=\(m.channel + 1) program=\(m.data1)" + (GeneralMIDI.programName(m.data1, channel: m.channel).map { " (\($0))" } ?? "")
        case 0xD0: return "ch=\(m.channel + 1) pressure=\(m.data1)"
        case 0xE0: return "ch=\(m.channel + 1) bend=\(Int(m.pitchBendValue) - 8192)"
        default: return m.description
        }
    case .sysex(let s):
        return "\(s.status == 0xF0 ? "F0" : "F7") " + s.payload.prefix(32).map { String(format: "%02X", $0) }.joined(separator: " ") + (s.payload.count > 32 ? " ... (\(s.payload.count) bytes)" : "")
    case .meta(let m):
        if let us = m.tempoMicrosecondsPerQuarter { return String(format: "%.3f bpm (%d us/quarter)", 60_000_000.0 / Double(us), us) }
        if let sig = m.timeSignature { return "\(sig)" }
        if (1...9).contains(m.type) { return "\"\(m.text)\"" }
        return m.data.map { String(format: "%02X", $0) }.joined(separator: " ")
    }
}
