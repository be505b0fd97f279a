/// Audio decoded from a file, ready to become bank samples: every channel as 24-bit integers
/// (-8,388,608...8,388,607), the form the sampler's 16-bit words plus low bytes hold.
public struct PCMAudio: Sendable, Hashable {
    /// Frames per second.
    public var sampleRate: Int
    /// One array per channel (1 or 2), all of the same length.
    public var channels: [[Int32]]
    /// True when the source held more than 16 bits per sample, so the low byte matters.
    public var hasLowBytes: Bool
    /// The loop stored in the file (a WAV `smpl` chunk's first loop, or libsndfile's
    /// instrument loop), nil when it stores none.
    public var loop: PCMLoop?
    /// The key at which the file plays unshifted, as the file stores it (a WAV `smpl`
    /// chunk's unity note), nil when it stores none.
    public var rootKey: Int?

    /// Wraps decoded channels, with the loop and root key the file stores.
    public init(sampleRate: Int, channels: [[Int32]], hasLowBytes: Bool, loop: PCMLoop? = nil, rootKey: Int? = nil) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.hasLowBytes = hasLowBytes
        self.loop = loop
        self.rootKey = rootKey
    }

    /// Frames in each channel.
    public var frameCount: Int { channels.first?.count ?? 0 }

    /// Reads a WAV file (PCM 8, 16, 24 or 32-bit integer, 32-bit float; mono or stereo).
    /// Errors carry no path: the caller names the file.
    public static func readWAV(contentsOf path: String) throws(PCMAudioError) -> PCMAudio {
        do {
            let audio = try WAVReader.read(contentsOf: path)
            return PCMAudio(sampleRate: audio.sampleRate, channels: audio.channels, hasLowBytes: audio.hasLowBytes,
                            loop: audio.loop.map { PCMLoop(start: $0.start, end: $0.end) }, rootKey: audio.rootKey)
        } catch {
            throw PCMAudioError(reason: error.reason, isUnreadableInput: error.isUnreadableInput)
        }
    }
}

/// A loop stored in an audio file, in frames from the file's first.
public struct PCMLoop: Sendable, Hashable {
    /// The loop's first frame.
    public var start: Int
    /// The loop's last frame (played: the loop goes back to ``start`` after it).
    public var end: Int

    /// A loop from `start` to `end`, both played.
    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }
}

/// Why an audio file cannot be used, without its path (the caller adds it).
public struct PCMAudioError: Error, Hashable, Sendable {
    /// What is wrong.
    public var reason: String
    /// True when the file could not be read at all (missing, unreadable), as opposed to
    /// content that was refused.
    public var isUnreadableInput: Bool

    /// Creates an error.
    public init(reason: String, isUnreadableInput: Bool = false) {
        self.reason = reason
        self.isUnreadableInput = isUnreadableInput
    }
}

/// Collects decoded audio into one bank's sample memory and headers, for banks built from
/// audio files rather than read from a SoundFont (JSON patches, SFZ instruments).
public struct SoundFontBankBuilder: Sendable {
    /// The sample headers so far; callers may adjust root keys and loops, or append headers
    /// of their own over the same points.
    public var samples: [SoundFontSample] = []
    private var words: [Int16] = []
    private var lowBytes: [UInt8] = []
    private var anyLowBytes = false

    /// An empty builder.
    public init() {}

    /// Sample points stored so far (each channel's frames plus the 46 zero points after it).
    public var pointCount: Int { words.count }

    /// Bytes of sample memory a file of `frames` frames and `channels` channels adds: 2 per
    /// point, 3 once any sample needs its low byte.
    public static func bytes(frames: Int, channels: Int, lowBytes: Bool) -> Int {
        (frames + 46) * channels * (lowBytes ? 3 : 2)
    }

    /// Appends `audio`'s channels as samples named after `name` (with ` L` and ` R` for a
    /// stereo file, linked to each other) at root key 60 with the whole sample as loop, and
    /// returns the index of the first header. Returns nil when the bank would pass
    /// `Int32.max` points, the most a sample header can address.
    public mutating func append(_ audio: PCMAudio, name: String) -> Int? {
        guard words.count + (audio.frameCount + 46) * audio.channels.count < Int(Int32.max) else { return nil }
        let first = samples.count
        anyLowBytes = anyLowBytes || audio.hasLowBytes
        let stereo = audio.channels.count == 2
        for (c, channel) in audio.channels.enumerated() {
            let sampleStart = words.count
            words.reserveCapacity(words.count + channel.count + 46)
            lowBytes.reserveCapacity(words.count + channel.count + 46)
            for value in channel {
                words.append(Int16(truncatingIfNeeded: value >> 8))
                lowBytes.append(UInt8(truncatingIfNeeded: value))
            }
            // The specification's 46 zero points after each sample, which interpolation may read.
            words.append(contentsOf: repeatElement(0, count: 46))
            lowBytes.append(contentsOf: repeatElement(0, count: 46))
            samples.append(SoundFontSample(
                name: stereo ? "\(name) \(c == 0 ? "L" : "R")" : name,
                start: sampleStart, end: sampleStart + channel.count, loopStart: sampleStart, loopEnd: sampleStart + channel.count,
                sampleRate: audio.sampleRate, originalPitch: 60, pitchCorrection: 0,
                link: stereo ? first + 1 - c : nil, kind: stereo ? (c == 0 ? .left : .right) : .mono))
        }
        return first
    }

    /// The bank: these samples, `presets`, and the sample memory (24-bit when any appended
    /// audio had more than 16 bits).
    public func makeBank(name: String, presets: [SoundFontPreset]) -> SoundFontBank {
        SoundFontBank(name: name, presets: presets, samples: samples, words: words, lowBytes: anyLowBytes ? lowBytes : nil)
    }
}
