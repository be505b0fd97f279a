import MIDI

/// Feeds bytes to the raw MIDI stream parser whole and split at a position chosen by the
/// input: the events must be the same either way.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzByteStream(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let cut = bytes.isEmpty ? 0 : Int(data[0]) % (bytes.count + 1)
    var whole = MIDIByteStreamParser(maximumSysexLength: 64)
    var split = MIDIByteStreamParser(maximumSysexLength: 64)
    var a: [MIDIStreamEvent] = [], b: [MIDIStreamEvent] = []
    whole.feed(bytes) { a.append($0) }
    split.feed(bytes[..<cut]) { b.append($0) }
    split.feed(bytes[cut...]) { b.append($0) }
    if a != b { fatalError("splitting the stream changed the events") }
    for event in a {
        switch event {
        case .message(let m):
            if m.isChannelMessage && (m.data1 > 127 || m.data2 > 127) { fatalError("data byte above 127 in \(m)") }
        case .systemExclusive(let sysex, _):
            if sysex.count > 65 + 1 { fatalError("sysex grew past its bound") }
        }
    }
    return 0
}
