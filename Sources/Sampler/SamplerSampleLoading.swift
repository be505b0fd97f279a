import SoundFont
import Synchronization

/// Which presets of a SoundFont 3 bank have their samples decoded, and which ones the audio
/// thread has asked for since: one atomic flag each, so asking neither locks nor allocates.
final class PresetSampleRequests: @unchecked Sendable {
    private let count: Int
    private let ready: UnsafeMutablePointer<Atomic<Bool>>
    private let wanted: UnsafeMutablePointer<Atomic<Bool>>

    init(presetCount: Int) {
        count = max(1, presetCount)
        ready = .allocate(capacity: count)
        wanted = .allocate(capacity: count)
        for i in 0..<count {
            (ready + i).initialize(to: Atomic(false))
            (wanted + i).initialize(to: Atomic(false))
        }
    }

    deinit {
        ready.deinitialize(count: count)
        ready.deallocate()
        wanted.deinitialize(count: count)
        wanted.deallocate()
    }

    /// Called on the audio thread when a channel selects `preset` (`evenIfPrepared` false: a
    /// preset prepared for the song is not asked for again) or a note of it finds a sample not
    /// decoded (`evenIfPrepared` true: the song's preparation left that region out).
    @inline(__always)
    func ask(_ preset: Int, evenIfPrepared: Bool) {
        guard preset >= 0, preset < count else { return }
        if !evenIfPrepared && ready[preset].load(ordering: .relaxed) { return }
        wanted[preset].store(true, ordering: .releasing)
    }

    func markReady(_ preset: Int) {
        guard preset >= 0, preset < count else { return }
        ready[preset].store(true, ordering: .releasing)
    }

    /// The presets asked for, clearing the requests.
    func takeWanted() -> [Int] {
        (0..<count).filter { wanted[$0].exchange(false, ordering: .acquiring) }
    }
}

extension SamplerNode {
    /// A channel's program choice, as the sampler resolves it to a preset: channel 10 (index 9)
    /// plays the percussion bank 128 whatever its bank select, the other channels the bank
    /// select MSB in force at the program change.
    public struct ProgramSelection: Hashable, Sendable {
        /// MIDI channel, 0-15.
        public var channel: UInt8
        /// The bank select MSB (controller 0) in force.
        public var bankMSB: UInt8
        /// The program.
        public var program: UInt8

        /// Creates a selection.
        public init(channel: UInt8, bankMSB: UInt8, program: UInt8) {
            self.channel = channel
            self.bankMSB = bankMSB
            self.program = program
        }
    }

    /// A note a song plays, with its channel's program choice: what decides which regions
    /// (and so which samples) sound.
    public struct PlayedNote: Hashable, Sendable {
        /// The program choice in force.
        public var selection: ProgramSelection
        /// The key.
        public var key: UInt8
        /// The note-on velocity (1-127).
        public var velocity: UInt8

        /// Creates a played note.
        public init(selection: ProgramSelection, key: UInt8, velocity: UInt8) {
            self.selection = selection
            self.key = key
            self.velocity = velocity
        }
    }

    /// True when the bank has Ogg Vorbis compressed samples (SoundFont 3), which must be
    /// decoded before they sound.
    public var hasCompressedSamples: Bool { compiled.compressed != nil }

    /// Decodes, off the audio thread, the compressed samples (SoundFont 3) of every preset the
    /// `selections` reach, so the notes of a song sound from its first block (see
    /// `MusicSequence.samplerProgramSelections()`). Samples of other presets stay compressed;
    /// a bank without
    /// compressed samples needs nothing and returns at once. Decoding runs in parallel on the
    /// machine's cores. Returns a warning for each sample that failed to decode (it is silent).
    /// - Throws: `SoundFontErrorReason.libraryUnavailable` when
    ///   libvorbisfile cannot be loaded.
    @discardableResult
    public func prepareSamples(for selections: some Sequence<ProgramSelection>) throws(SoundFontError) -> [SoundFontWarning] {
        guard compiled.compressed != nil else { return [] }
        var presets = Set<Int>()
        for s in selections {
            presets.insert(compiled.preset(bank: s.channel == 9 ? 128 : Int(s.bankMSB), program: Int(s.program)))
        }
        return try decodePresets(presets.filter { $0 >= 0 }.sorted())
    }

    /// Decodes, off the audio thread, the compressed samples (SoundFont 3) of just the regions
    /// `notes` play (key and velocity inside the region's ranges): the least a song needs. A
    /// note outside them while playing (live input, an edit) finds its sample missing, is
    /// silent, and asks for its whole preset (see ``decodeRequestedSamples()``).
    /// - Throws: as ``prepareSamples(for:)``.
    @discardableResult
    public func prepareSamples(forNotes notes: some Sequence<PlayedNote>) throws(SoundFontError) -> [SoundFontWarning] {
        guard let store = compiled.compressed else { return [] }
        var samples = Set<Int>()
        var presets = Set<Int>()
        for note in notes {
            let s = note.selection
            let p = compiled.preset(bank: s.channel == 9 ? 128 : Int(s.bankMSB), program: Int(s.program))
            guard p >= 0 else { continue }
            presets.insert(p)
            let (start, count) = compiled.presetRegions[p]
            for r in Int(start)..<Int(start + count) {
                let region = compiled.regions[r]
                if note.key >= region.keyLow, note.key <= region.keyHigh,
                   note.velocity >= region.velocityLow, note.velocity <= region.velocityHigh {
                    samples.insert(Int(region.sampleIndex))
                }
            }
        }
        let warnings = try store.decode(samples.sorted())
        // The song's program changes need not ask for these presets again.
        for p in presets { sampleRequests?.markReady(p) }
        return warnings
    }

    /// Decodes the samples of the presets that program changes selected while playing (live
    /// input, edits) and that are not decoded yet; call it from a control thread now and then
    /// (a player's status loop). A note whose samples are still compressed is silent until
    /// this has run. Returns warnings for samples that failed to decode.
    /// - Throws: as ``prepareSamples(for:)``.
    @discardableResult
    public func decodeRequestedSamples() throws(SoundFontError) -> [SoundFontWarning] {
        guard let requests = sampleRequests else { return [] }
        let wanted = requests.takeWanted()
        return wanted.isEmpty ? [] : try decodePresets(wanted)
    }

    private func decodePresets(_ presets: [Int]) throws(SoundFontError) -> [SoundFontWarning] {
        guard let store = compiled.compressed else { return [] }
        let samples = presets.flatMap { compiled.presetSamples[$0] }
        let warnings = try store.decode(samples)
        for p in presets { sampleRequests?.markReady(p) }
        return warnings
    }
}
