/// Audio -> control: a user event (or text event) that playback passed. `data` shares the
/// schedule's storage (a retain, never a copy), so the audio thread allocates nothing.
struct UserEventRecord {
    var tick: Int64
    var track: Int
    var data: [UInt8]
    var metaType: UInt8?
}
