import Testing
@testable import MIDI

@Suite("MIDI byte stream parser")
struct ByteStreamParserTests {
    static let stream: [UInt8] = [
        0x90, 60, 100, 62, 100,          // note on + running status
        0xF8,                            // clock between messages
        0x80, 60, 0x00,
        0xB0, 7, 0xFE, 100,              // active sensing inside a message
        0xF0, 0x7E, 0x7F, 0xF8, 0x09, 0x01, 0xF7,  // sysex with a clock inside
        64, 0,                           // data bytes with no running status (sysex cancelled it): dropped
        0xE0, 0x00, 0x40,
        0xF1, 0x23,                      // quarter frame (system common)
        0xC5, 7, 8,                      // program change, then running status
    ]

    static func parse(_ chunks: [[UInt8]]) -> ([MIDIStreamEvent], Int) {
        var parser = MIDIByteStreamParser()
        var out: [MIDIStreamEvent] = []
        for chunk in chunks { parser.feed(chunk) { out.append($0) } }
        return (out, parser.droppedByteCount)
    }

    static let expected: [MIDIStreamEvent] = [
        .message(.noteOn(channel: 0, key: 60, velocity: 100)),
        .message(.noteOn(channel: 0, key: 62, velocity: 100)),
        .message(MIDIMessage(status: 0xF8)),
        .message(.noteOff(channel: 0, key: 60, velocity: 0)),
        .message(MIDIMessage(status: 0xFE)),
        .message(.controlChange(channel: 0, controller: 7, value: 100)),
        .message(MIDIMessage(status: 0xF8)),
        .systemExclusive(bytes: [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7], complete: true),
        .message(.pitchBend(channel: 0, value: 8192)),
        .message(MIDIMessage(status: 0xF1, data1: 0x23)),
        .message(.programChange(channel: 5, program: 7)),
        .message(.programChange(channel: 5, program: 8)),
    ]

    @Test("Running status, interleaved real-time bytes and sysex")
    func whole() {
        let (events, dropped) = Self.parse([Self.stream])
        #expect(events == Self.expected)
        #expect(dropped == 2)
    }

    @Test("Split at every position gives the same events")
    func splitEverywhere() {
        for cut in 0...Self.stream.count {
            let (events, _) = Self.parse([Array(Self.stream[..<cut]), Array(Self.stream[cut...])])
            #expect(events == Self.expected, "split at \(cut)")
        }
        let (oneByOne, _) = Self.parse(Self.stream.map { [$0] })
        #expect(oneByOne == Self.expected)
    }

    @Test("A sysex cut by a status byte is delivered incomplete")
    func cutSysex() {
        let (events, _) = Self.parse([[0xF0, 0x43, 0x10, 0x90, 60, 1]])
        #expect(events == [.systemExclusive(bytes: [0xF0, 0x43, 0x10], complete: false), .message(.noteOn(channel: 0, key: 60, velocity: 1))])
    }

    @Test("Message helpers")
    func messages() {
        #expect(MIDIMessage.pitchBend(channel: 2, value: 16383).pitchBendValue == 16383)
        #expect(MIDIMessage.noteOn(channel: 0, key: 1, velocity: 0).isNoteOff)
        #expect(MIDIMessage.programChange(channel: 0, program: 1).bytes == [0xC0, 1])
        #expect(MIDIStatus.dataByteCount(0xF4) == nil)
        #expect(MIDIMessage(status: 0xF2, data1: 1, data2: 2).bytes.count == 3)
    }
}
