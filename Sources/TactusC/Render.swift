#if canImport(Glibc)
import AudioFileOutput
import Glibc
#endif
import AudioGraph
import MIDIFile
import Playback
import Sampler
import SFZPlayback
import Sequencing
import SoundFont
import Synchronization

/// Interleaved stereo frames in fixed chunks, so a long render never copies what it already
/// holds (a growing array would, and would hold up to twice the audio while it grows). Chunks
/// are mapped pages of their own, so ``take(into:)`` hands each back to the kernel as soon as
/// it is copied: moving the audio out then needs little more memory than the audio.
final class ChunkedAudio: AudioSink, @unchecked Sendable {
    static let chunkFrames = 1 << 16
    private static let chunkBytes = 2 * chunkFrames * MemoryLayout<Float>.size

    // Written by the backend's render thread only, and read after the session has finished:
    // the backend joins its thread before the session reports the end, which orders the two.
    // Afterwards the handle's calls read and take them under `taken`'s lock.
    private var chunks: [UnsafeMutablePointer<Float>] = []
    private(set) var frameCount = 0
    private let taken = Mutex<Bool>(false)

    func write(left: UnsafePointer<Float>, right: UnsafePointer<Float>, count: Int) throws(AudioSinkError) {
        var done = 0
        while done < count {
            let inChunk = frameCount % Self.chunkFrames
            if inChunk == 0 {
                guard let pages = mmap(nil, Self.chunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                      pages != MAP_FAILED else { throw .failed(output: "the rendered audio", reason: "out of memory") }
                chunks.append(pages.bindMemory(to: Float.self, capacity: 2 * Self.chunkFrames))
            }
            let chunk = chunks[chunks.count - 1] + 2 * inChunk
            let n = min(count - done, Self.chunkFrames - inChunk)
            for i in 0..<n {
                chunk[2 * i] = left[done + i]
                chunk[2 * i + 1] = right[done + i]
            }
            done += n
            frameCount += n
        }
    }

    func finish() throws(AudioSinkError) {}

    func cancel() {}

    /// Copies every frame into `destination` (room for ``frameCount`` frames), and with
    /// `release` unmaps each chunk once copied; false when the audio was already released.
    func copy(into destination: UnsafeMutablePointer<Float>, release: Bool) -> Bool {
        taken.withLock { taken in
            guard !taken else { return false }
            var left = frameCount
            for (i, chunk) in chunks.enumerated() {
                let n = min(left, Self.chunkFrames)
                (destination + 2 * i * Self.chunkFrames).update(from: chunk, count: 2 * n)
                left -= n
                if release { munmap(chunk, Self.chunkBytes) }
            }
            if release {
                chunks = []
                taken = true
            }
            return true
        }
    }

    deinit {
        for chunk in chunks { munmap(chunk, Self.chunkBytes) }
    }
}

/// A finished render behind a `TactusRender` handle.
final class RenderBox: Sendable {
    let audio: ChunkedAudio
    let sampleRate: Int

    init(audio: ChunkedAudio, sampleRate: Int) {
        self.audio = audio
        self.sampleRate = sampleRate
    }
}

let renders = HandleTable<RenderBox>(kind: "render")

/// `TACTUS_RENDER_NO_REVERB`: the SoundFont sampler's reverb off (the CLI's --no-reverb).
let renderFlagNoReverb: UInt32 = 1
/// `TACTUS_RENDER_NO_CHORUS`: the SoundFont sampler's chorus off (the CLI's --no-chorus).
let renderFlagNoChorus: UInt32 = 2

/// The options of one render, checked as `tactus render` checks its own.
struct RenderRequest {
    var soundFont: String?
    var sampleRate: Int
    var gainDecibels: Float
    var tail: RenderTail
    var flags: UInt32
    /// An augmented score's draw: its reverb and chorus factors apply to the instrument.
    var augmentation: AugmentationDraw?

    init(soundFont: UnsafePointer<CChar>?, sampleRate: Int32, gainDecibels: Float, tailSeconds: Double, flags: UInt32) throws(CFailure) {
        try Self.checkSampleRate(sampleRate)
        guard gainDecibels.isFinite, (-24...24).contains(gainDecibels) else { throw CFailure(.invalidArgument, "gain \(gainDecibels) dB is outside -24...24") }
        if tailSeconds < 0 {
            tail = .automatic
        } else if tailSeconds <= 600 {
            tail = .seconds(tailSeconds)
        } else {
            throw CFailure(.invalidArgument, "tail \(tailSeconds) s is outside 0...600 (negative for 'auto')")
        }
        guard flags & ~(renderFlagNoReverb | renderFlagNoChorus) == 0 else { throw CFailure(.invalidArgument, "unknown render flags \(flags)") }
        if let soundFont {
            if let problem = pathProblem(soundFont) { throw problem }
            self.soundFont = String(cString: soundFont)
        }
        self.sampleRate = Int(sampleRate)
        self.gainDecibels = gainDecibels
        self.flags = flags
    }

    /// Takes an augmented score's draw: its gain is added (held to -24...24 dB), its effect
    /// factors scale the instrument's reverb and chorus.
    mutating func apply(_ draw: AugmentationDraw?) {
        guard let draw else { return }
        gainDecibels = draw.gain(addedTo: gainDecibels)
        augmentation = draw
    }

    /// The sample rates `tactus render` offers.
    static func checkSampleRate(_ sampleRate: Int32) throws(CFailure) {
        guard [44_100, 48_000, 96_000].contains(sampleRate) else {
            throw CFailure(.invalidArgument, "unsupported sample rate \(sampleRate) (use 44100, 48000 or 96000)")
        }
    }

    /// What plays the tracks: the built-in synthesizer, or a sampler over the SoundFont (or
    /// the SFZ instrument, by its `.sfz` extension), configured as `tactus render --soundfont`
    /// (`--instrument FILE.sfz`) configures it.
    func instrument() throws(CFailure) -> DefaultInstrument {
        guard let soundFont else { return DefaultInstrument.builtIn.applyingEffectFactors(of: augmentation) }
        let sampler: SamplerNode
        if soundFont.lowercased().hasSuffix(".sfz") {
            let loaded: SFZPlayableInstrument
            do {
                loaded = try SFZBank.load(contentsOf: soundFont, options: SFZPlaybackOptions())
            } catch {
                throw CFailure(error.isUnreadableInput ? .unreadable : .invalidFile, error.description)
            }
            sampler = SamplerNode(bank: loaded.bank, regionRules: loaded.regionRules)
            if loaded.outputGain != 0 { sampler.setParameter(SamplerNode.Parameter.volume, value: Float(loaded.outputGain)) }
        } else {
            let bank: SoundFontFile
            do {
                bank = try SoundFontReader.read(contentsOf: soundFont)
            } catch {
                throw CFailure(error.isUnreadableInput ? .unreadable : .invalidFile, error.description)
            }
            sampler = SamplerNode(bank: bank.bank)
        }
        if flags & renderFlagNoReverb != 0 { sampler.setParameter(SamplerNode.Parameter.reverbLevel, value: 0) }
        if flags & renderFlagNoChorus != 0 { sampler.setParameter(SamplerNode.Parameter.chorusLevel, value: 0) }
        return DefaultInstrument.sampler(sampler).applyingEffectFactors(of: augmentation)
    }

    /// Renders `file` through a ``PlaybackSession`` on an ``OfflineBackend``, the path of
    /// `tactus render`, so the samples are the ones it writes.
    func render(_ file: StandardMIDIFile, name: String) throws(CFailure) -> RenderBox {
        guard file.timeBase.isUsable else {
            throw CFailure(.invalidFile, "\(name): division is 0, so the file has no timing and cannot be rendered")
        }
        return try render(file.makeSequence(), name: name, tail: tail, frameCount: nil)
    }

    /// Renders `sequence` with this request's options but `tail`; with `frameCount`, exactly
    /// that many frames (cut, or padded with silence), as `tactus render --stems` writes a stem.
    func render(_ sequence: MusicSequence, name: String, tail: RenderTail, frameCount: Int64?) throws(CFailure) -> RenderBox {
        let audio = ChunkedAudio()
        do {
            let chosen = try instrument()
            let options = PlaybackSession.Options(instrument: .custom(chosen), gainDecibels: gainDecibels,
                                                  tail: tail, sampleRate: sampleRate)
            let session = try PlaybackSession(sequence: sequence, options: options)
            // What `tactus render` sets up for a plain render (rate 1, no end, no loop).
            session.setRate(1)
            session.setEnd(tick: nil)
            let sink: any AudioSink = frameCount.map { FixedLengthSink(audio, frameCount: $0) } ?? audio
            try session.start(on: OfflineBackend(sink: sink, name: name, blockSize: 512))
            _ = try session.waitUntilFinished()
        } catch let error as PlaybackSessionError {
            switch error {
            case .unreadableFile: throw CFailure(.unreadable, error.description)
            case .invalidFile: throw CFailure(.invalidFile, error.description)
            default: throw CFailure(.renderFailed, "\(name): \(error.description)")
            }
        } catch let error as CFailure {
            throw error
        } catch {
            throw CFailure(.renderFailed, "\(name): \(error)")
        }
        return RenderBox(audio: audio, sampleRate: sampleRate)
    }
}

/// Renders a loaded score. `soundfont` is a SoundFont 2 or 3 path, or NULL for the built-in
/// synthesizer (no search of $TACTUS_SOUNDFONT or standard paths). `sample_rate` is 44100,
/// 48000 or 96000; `gain_db` -24...24; `tail_seconds` a fixed tail of 0...600 s, or negative
/// for the CLI's 'auto' (until below -90 dBFS, at most 30 s). Blocks until the audio is done.
@_cdecl("tactus_render_score")
public func tactus_render_score(_ score: OpaquePointer?, _ soundFont: UnsafePointer<CChar>?, _ sampleRate: Int32,
                                _ gainDecibels: Float, _ tailSeconds: Double, _ flags: UInt32,
                                _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guarded { () throws(CFailure) in
        let out = try checkedOut(out)
        let box = try scores.object(score)
        var request = try RenderRequest(soundFont: soundFont, sampleRate: sampleRate, gainDecibels: gainDecibels,
                                        tailSeconds: tailSeconds, flags: flags)
        request.apply(box.augmentation)
        let rendered = try request.render(box.file, name: box.name)
        out.pointee = renders.insert(rendered)
    }
}

/// The number of frames of a render, and its sample rate (either pointer may be NULL).
@_cdecl("tactus_render_info")
public func tactus_render_info(_ render: OpaquePointer?, _ frames: UnsafeMutablePointer<Int64>?,
                               _ sampleRate: UnsafeMutablePointer<Int32>?) -> Int32 {
    guarded { () throws(CFailure) in
        let box = try renders.object(render)
        frames?.pointee = Int64(box.audio.frameCount)
        sampleRate?.pointee = Int32(box.sampleRate)
    }
}

/// Copies a render's audio, interleaved float32 stereo (left, right), into `buffer`, which
/// holds `capacity_frames` frames; fewer than the render's frames gives
/// `TACTUS_ERROR_BUFFER_TOO_SMALL` and writes nothing.
@_cdecl("tactus_render_copy")
public func tactus_render_copy(_ render: OpaquePointer?, _ buffer: UnsafeMutablePointer<Float>?, _ capacityFrames: Int64) -> Int32 {
    guarded { () throws(CFailure) in try copyAudio(render, buffer, capacityFrames, release: false) }
}

/// As `tactus_render_copy`, but the render's memory is released as it is copied, so moving
/// the audio out takes little more than the audio itself; afterwards the render holds no
/// audio (copy and take fail with `TACTUS_ERROR_INVALID_ARGUMENT`; info still answers).
@_cdecl("tactus_render_take")
public func tactus_render_take(_ render: OpaquePointer?, _ buffer: UnsafeMutablePointer<Float>?, _ capacityFrames: Int64) -> Int32 {
    guarded { () throws(CFailure) in try copyAudio(render, buffer, capacityFrames, release: true) }
}

private func copyAudio(_ render: OpaquePointer?, _ buffer: UnsafeMutablePointer<Float>?, _ capacityFrames: Int64,
                       release: Bool) throws(CFailure) {
    let audio = try renders.object(render).audio
    let capacity = try checkedCount(capacityFrames, "the capacity")
    guard capacity >= audio.frameCount else { throw CFailure(.bufferTooSmall, "the render has \(audio.frameCount) frames, the buffer holds \(capacity)") }
    guard let buffer else {
        guard audio.frameCount == 0 else { throw CFailure(.invalidArgument, "the buffer is NULL") }
        return
    }
    guard audio.copy(into: buffer, release: release) else { throw CFailure(.invalidArgument, "the render's audio was already taken") }
}

/// Frees a render and its audio.
@_cdecl("tactus_render_free")
public func tactus_render_free(_ render: OpaquePointer?) -> Int32 {
    guarded { () throws(CFailure) in
        guard renders.remove(render) else { throw CFailure(.invalidHandle, "not a live render handle (already freed, or never made)") }
    }
}

/// The message of the last failed call on this thread ("" before any failed). A call that
/// succeeds leaves it; owned by the library, valid until this thread's next failed call.
@_cdecl("tactus_last_error_message")
public func tactus_last_error_message() -> UnsafePointer<CChar> {
    lastMessage()
}

/// The version of the C interface: 1 for the functions of this header. It changes when a
/// function's signature or meaning changes.
@_cdecl("tactus_abi_version")
public func tactus_abi_version() -> Int32 {
    2
}
