// The Downloadable Sounds (DLS Level 1 and 2) collection as the file stores it, before it is
// converted into the sampler's SoundFont model. Kept public so tests can compare what Tactus
// reads with what other readers (libinstpatch) read, field by field.

/// A DLS connection block (`art1`/`art2` record): a source, an optional control source and a
/// destination, a transform and a scale in the destination's 16.16 fixed-point units.
public struct DLSConnection: Sendable, Hashable {
    /// The modulation source (`CONN_SRC_*`: 0 none, 1 LFO, 2 velocity, 3 key number, 4 EG1,
    /// 5 EG2, 6 pitch wheel, 0x81 CC1...).
    public var source: UInt16
    /// The control source scaling the source (0: none).
    public var control: UInt16
    /// The destination (`CONN_DST_*`: 1 gain, 3 pitch, 4 pan, 0x206 EG1 attack...).
    public var destination: UInt16
    /// Transform and (DLS 2) polarity and invert bits of the source and control.
    public var transform: UInt16
    /// The amount, in the destination's units times 65,536.
    public var scale: Int32

    /// Creates a connection block.
    public init(source: UInt16, control: UInt16, destination: UInt16, transform: UInt16, scale: Int32) {
        self.source = source
        self.control = control
        self.destination = destination
        self.transform = transform
        self.scale = scale
    }
}

/// A `wsmp` loop record.
public struct DLSLoop: Sendable, Hashable {
    /// 0: forward loop, played through the release; 1 (DLS 2): loop until the key is released.
    public var type: UInt32
    /// The loop's first frame.
    public var start: UInt32
    /// Frames in the loop.
    public var length: UInt32

    /// Creates a loop record.
    public init(type: UInt32, start: UInt32, length: UInt32) {
        self.type = type
        self.start = start
        self.length = length
    }
}

/// A `wsmp` chunk: how a wave plays (root key, tuning, gain, loop), given by the wave and
/// overridden by a region.
public struct DLSSampleInfo: Sendable, Hashable {
    /// The key the wave sounds at unshifted.
    public var unityNote: UInt16
    /// Tuning offset, in cents.
    public var fineTune: Int16
    /// Gain in 1/655,360 dB (centibels times 65,536); negative values make the wave quieter.
    public var gain: Int32
    /// `F_WSMP_NO_TRUNCATION` (1) and `F_WSMP_NO_COMPRESSION` (2).
    public var options: UInt32
    /// The loops; players use the first.
    public var loops: [DLSLoop]

    /// Creates sample information.
    public init(unityNote: UInt16 = 60, fineTune: Int16 = 0, gain: Int32 = 0, options: UInt32 = 0, loops: [DLSLoop] = []) {
        self.unityNote = unityNote
        self.fineTune = fineTune
        self.gain = gain
        self.options = options
        self.loops = loops
    }
}

/// A region (`rgn `, or `rgn2` in DLS 2 banks): the keys and velocities it answers, the wave it
/// plays and how.
public struct DLSRegion: Sendable, Hashable {
    /// Lowest and highest key.
    public var keyLow: UInt16, keyHigh: UInt16
    /// Lowest and highest velocity (DLS 1 banks store 0...127 or leave both 0).
    public var velocityLow: UInt16, velocityHigh: UInt16
    /// `rgnh` options: bit 0 `F_RGN_OPTION_SELFNONEXCLUSIVE`.
    public var options: UInt16
    /// Notes of one non-zero key group cut each other off.
    public var keyGroup: UInt16
    /// The editing layer (DLS 2), 0 when the header has none.
    public var layer: UInt16
    /// Index into the pool table (``DLSCollection/poolTable``) of the wave played.
    public var waveIndex: UInt32
    /// `wlnk` options, phase group and channel (a bit mask, 1: left).
    public var linkOptions: UInt16, phaseGroup: UInt16, channel: UInt32
    /// The region's own `wsmp`, overriding the wave's.
    public var sampleInfo: DLSSampleInfo?
    /// The region's articulation (`lart`/`lar2` lists), in file order.
    public var connections: [DLSConnection]

    /// Creates a region playing pool entry `waveIndex` over all keys and velocities.
    public init(keyLow: UInt16 = 0, keyHigh: UInt16 = 127, velocityLow: UInt16 = 0, velocityHigh: UInt16 = 127,
                options: UInt16 = 0, keyGroup: UInt16 = 0, layer: UInt16 = 0, waveIndex: UInt32,
                linkOptions: UInt16 = 0, phaseGroup: UInt16 = 0, channel: UInt32 = 1,
                sampleInfo: DLSSampleInfo? = nil, connections: [DLSConnection] = []) {
        self.keyLow = keyLow
        self.keyHigh = keyHigh
        self.velocityLow = velocityLow
        self.velocityHigh = velocityHigh
        self.options = options
        self.keyGroup = keyGroup
        self.layer = layer
        self.waveIndex = waveIndex
        self.linkOptions = linkOptions
        self.phaseGroup = phaseGroup
        self.channel = channel
        self.sampleInfo = sampleInfo
        self.connections = connections
    }
}

/// An instrument (`ins ` list).
public struct DLSInstrument: Sendable, Hashable {
    /// The name (`INFO/INAM`), empty when it has none.
    public var name: String
    /// Bank select: MSB in bits 8-14, LSB in bits 0-6 (`ulBank` without the drum bit).
    public var bank: UInt32
    /// True when `ulBank` has `F_INSTRUMENT_DRUMS` (bit 31).
    public var isDrumKit: Bool
    /// MIDI program, 0-127.
    public var program: UInt32
    /// The regions, in file order.
    public var regions: [DLSRegion]
    /// The instrument's global articulation, which applies to regions without their own.
    public var connections: [DLSConnection]

    /// Creates an instrument.
    public init(name: String, bank: UInt32, isDrumKit: Bool, program: UInt32, regions: [DLSRegion], connections: [DLSConnection] = []) {
        self.name = name
        self.bank = bank
        self.isDrumKit = isDrumKit
        self.program = program
        self.regions = regions
        self.connections = connections
    }
}

/// A wave of the wave pool (`wave` list): its format, where its frames are, and its `wsmp`.
public struct DLSWave: Sendable, Hashable {
    /// The name (`INFO/INAM`), empty when it has none.
    public var name: String
    /// `WAVE_FORMAT_PCM` (1) is the only format DLS defines.
    public var formatTag: UInt16
    /// Channels (DLS banks hold mono waves; the first channel of others is played).
    public var channels: Int
    /// Frames per second.
    public var sampleRate: Int
    /// 8 (unsigned) or 16 (signed) bits per point.
    public var bitsPerSample: Int
    /// Frames in the `data` chunk.
    public var frameCount: Int
    /// Byte offset of the `data` chunk's first byte in the file.
    public var dataOffset: Int
    /// Byte offset of the wave's `LIST` header from the first byte after `wvpl`, the unit of
    /// the pool table.
    public var poolOffset: Int
    /// The wave's `wsmp`, if it has one.
    public var sampleInfo: DLSSampleInfo?
}

/// A whole DLS collection as read, with the version and names of its `INFO` list.
public struct DLSCollection: Sendable {
    /// The `vers` chunk (most significant, least significant word), if present.
    public var version: (UInt32, UInt32)?
    /// The collection's name (`INFO/INAM`).
    public var name: String?
    /// Copyright (`INFO/ICOP`).
    public var copyright: String?
    /// Software (`INFO/ISFT`).
    public var software: String?
    /// Comments (`INFO/ICMT`).
    public var comments: String?
    /// The instruments, in file order.
    public var instruments: [DLSInstrument]
    /// The waves, in file order.
    public var waves: [DLSWave]
    /// The pool table (`ptbl`): for each cue, the wave's index in ``waves``, or nil when the
    /// cue's offset names no wave.
    public var poolTable: [Int?]
    /// True when a region uses `rgn2`, `lar2` or `art2` (DLS Level 2).
    public var isLevel2: Bool
    /// What the reader tolerated or repaired.
    public var warnings: [SoundFontWarning]
}
