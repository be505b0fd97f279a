import AudioFileOutput
import AudioGraph
import MIDI
import Sequencing

/// One note as the engine plays it: the frames are those of the schedule, so the note's first
/// sample in a render from the start at rate 1 is at ``onsetFrame``.
public struct NoteLabel: Sendable, Hashable {
    /// The event track (index into `MusicSequence.tracks`).
    public var track: Int
    /// MIDI channel, 0...15 (9 is the General MIDI drum channel).
    public var channel: UInt8
    /// Key number.
    public var key: UInt8
    /// Attack velocity, 1...127.
    public var velocity: UInt8
    /// The program playing the note's channel when it starts (0 before any program change).
    public var program: UInt8
    /// The bank (controller 0 × 128 + controller 32) of the note's channel when it starts.
    public var bank: Int
    /// The name of the stem that holds the note, or nil when there are no stems.
    public var stem: String?
    /// The frame at which the note starts.
    public var onsetFrame: Int64
    /// The frame at which the note is released (the song's end for a note never released).
    public var offsetFrame: Int64
    /// Frames per second of ``onsetFrame`` and ``offsetFrame``.
    public var sampleRate: Int

    /// ``onsetFrame`` in seconds: the time the note is heard in the audio (within half a
    /// frame of the tempo map's exact time).
    public var onsetSeconds: Double { Double(onsetFrame) / Double(sampleRate) }
    /// ``offsetFrame`` in seconds.
    public var offsetSeconds: Double { Double(offsetFrame) / Double(sampleRate) }
}

extension Schedule {
    /// Every note of the schedule, in the order the engine starts them, with the program and
    /// bank its channel has then (program and bank changes of every track count, as the
    /// instrument hears them all). `stemOfTrack` names the stem of an event track.
    ///
    /// The frames are the schedule's own, from the same tempo map the engine plays, so they
    /// are the output frames of a render from the start at rate 1 without a loop.
    public func noteLabels(stemOfTrack: (Int) -> String? = { _ in nil }) -> [NoteLabel] {
        var programs = [UInt8](repeating: 0, count: 16)
        var banks = [Int](repeating: 0, count: 16)
        var labels: [NoteLabel] = []
        // Notes sounding per (track, channel, key), oldest first: a release ends the oldest,
        // as a note-off from the same track ends the note the file paired it with.
        var sounding: [Int: [Int]] = [:]
        for event in events {
            guard case .midi(let message) = event.event, event.track > 0 else { continue }
            let channel = message.status & 0x0F
            let kind = message.status & 0xF0
            let slot = (event.track << 11) | Int(channel) << 7 | Int(message.data1 & 0x7F)
            switch kind {
            case 0xC0:
                programs[Int(channel)] = message.data1
            case 0xB0 where message.data1 == 0:
                banks[Int(channel)] = Int(message.data2) << 7 | banks[Int(channel)] & 0x7F
            case 0xB0 where message.data1 == 32:
                banks[Int(channel)] = banks[Int(channel)] & ~0x7F | Int(message.data2)
            case 0x90 where message.data2 > 0:
                sounding[slot, default: []].append(labels.count)
                labels.append(NoteLabel(track: event.track - 1, channel: channel, key: message.data1, velocity: message.data2,
                                        program: programs[Int(channel)], bank: banks[Int(channel)],
                                        stem: stemOfTrack(event.track - 1), onsetFrame: event.frame, offsetFrame: endFrame,
                                        sampleRate: sampleRate))
            case 0x80, 0x90:
                guard var open = sounding[slot], !open.isEmpty else { continue }
                labels[open.removeFirst()].offsetFrame = event.frame
                sounding[slot] = open
            default:
                continue
            }
        }
        return labels
    }
}

extension Schedule {
    /// ``noteLabels(stemOfTrack:)`` with each note's stem looked up in `stems` (the stems of
    /// the scheduled sequence): what `tactus render --labels` writes beside `--stems`.
    public func noteLabels(stems: [Stem]) -> [NoteLabel] {
        var stemOfTrack: [Int: String] = [:]
        for stem in stems { for track in stem.tracks { stemOfTrack[track] = stem.name } }
        return noteLabels { stemOfTrack[$0] }
    }
}

extension NoteLabel {
    /// The labels as a JSON document: `{"sample_rate": R, "notes": [...]}`, one object per
    /// note with `track` (numbered from 1, as `tactus info` does), `channel` (from 1), `key`,
    /// `velocity`, `program` (0...127), `bank`, `is_drum` (channel 10), `stem` (or null),
    /// `onset_frame`, `offset_frame`, `onset_seconds` and `offset_seconds`. Written by hand
    /// rather than through an encoder so the bytes are the same on every run and platform.
    public static func json(_ labels: [NoteLabel], sampleRate: Int, augmentation: String? = nil) -> [UInt8] {
        var text = "{\"sample_rate\": \(sampleRate), "
        if let augmentation { text += "\"augmentation\": \(jsonString(augmentation)), " }
        text += "\"notes\": ["
        for (i, label) in labels.enumerated() {
            text += i == 0 ? "\n" : ",\n"
            text += "  {\"track\": \(label.track + 1), \"channel\": \(label.channel + 1), \"key\": \(label.key), "
            text += "\"velocity\": \(label.velocity), \"program\": \(label.program), \"bank\": \(label.bank), "
            text += "\"is_drum\": \(label.channel == 9), \"stem\": \(label.stem.map(jsonString) ?? "null"), "
            text += "\"onset_frame\": \(label.onsetFrame), \"offset_frame\": \(label.offsetFrame), "
            text += "\"onset_seconds\": \(label.onsetSeconds), \"offset_seconds\": \(label.offsetSeconds)}"
        }
        text += labels.isEmpty ? "]}\n" : "\n]}\n"
        return Array(text.utf8)
    }

    /// `value` as a JSON string literal, quotes included, with the escapes JSON requires (also
    /// a valid double-quoted YAML scalar).
    public static func jsonString(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

/// A sink that passes on exactly `frameCount` frames: later frames are dropped and, when the
/// render ends early, silence fills the rest. Stems go through one so every stem is as long as
/// the mix, whatever each stem's own tail would be.
public final class FixedLengthSink: AudioSink {
    private let sink: any AudioSink
    private var remaining: Int64

    /// Writes `frameCount` frames to `sink`.
    public init(_ sink: any AudioSink, frameCount: Int64) {
        self.sink = sink
        remaining = max(0, frameCount)
    }

    /// Passes on the frames that still fit in the length and drops the rest.
    public func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(AudioSinkError) {
        let n = Int(min(Int64(count), remaining))
        guard n > 0 else { return }
        try sink.write(left: left, right: right, count: n)
        remaining -= Int64(n)
    }

    /// Fills what the render left short with silence, then finishes the wrapped sink.
    public func finish() throws(AudioSinkError) {
        if remaining > 0 {
            let block = Int(min(remaining, 4096))
            let zeros = UnsafeMutablePointer<Float>.allocate(capacity: block)
            defer { zeros.deallocate() }
            zeros.initialize(repeating: 0, count: block)
            while remaining > 0 {
                let n = Int(min(remaining, Int64(block)))
                try sink.write(left: zeros, right: zeros, count: n)
                remaining -= Int64(n)
            }
        }
        try sink.finish()
    }

    /// Abandons the wrapped sink's output.
    public func cancel() { sink.cancel() }
}
