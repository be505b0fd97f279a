/// The tuning an instrument's sixteen channels play in: MIDI Tuning Standard programs, each
/// channel's choice among them (RPN 3 and 4), scale/octave tunings, and a base tuning (a
/// Scala scale, say) that stands in for equal temperament.
///
/// It keeps FluidSynth's model: a bulk dump or single note change writes a program, and a
/// channel plays the program it last selected (bank 0 program 0 until then, so a dump to that
/// program retunes every channel at once, as MIDI RP-020 suggests). A scale/octave message
/// gives the channels in its mask their own octave of offsets (added to the base tuning) until
/// they select a program again: FluidSynth writes them into bank 0 program 0 instead, which
/// would retune every channel still on that program, where the specification retunes only the
/// channels named. A program nothing has written plays the base tuning.
///
/// Every table is allocated when the state is created, and every method but
/// ``setBaseTuning(_:)`` runs without allocating, locking or I/O, so instruments call them on
/// the audio thread.
public final class MIDITuningState {
    /// The registered parameter (LSB, with MSB 0) whose data entry selects a tuning program.
    public static let programSelectRPN: UInt8 = 3
    /// The registered parameter (LSB, with MSB 0) whose data entry selects a tuning bank.
    public static let bankSelectRPN: UInt8 = 4
    /// Tuning banks kept (FluidSynth has 128; a bank select beyond these selects nothing and
    /// messages to them are ignored).
    public static let bankCount = 4
    /// Cents per key of every program, bank by bank, program by program; a program's keys are
    /// initialised when something first writes it.
    private let programs: UnsafeMutablePointer<Double>
    private let defined: UnsafeMutablePointer<Bool>
    /// The base tuning in cents per key, and whether it is equal temperament.
    private let base: UnsafeMutablePointer<Double>
    private var baseIsEqual = true
    /// Per channel: the selected bank and program (-1 for none), the bank RPN 4 chose for the
    /// next program select, and the offsets of a scale/octave tuning when it plays one.
    private let selected: UnsafeMutablePointer<Int32>
    private let pendingBank: UnsafeMutablePointer<UInt8>
    private let octave: UnsafeMutablePointer<Double>
    private let playsOctave: UnsafeMutablePointer<Bool>

    /// What a tuning message changed, so an instrument can retune the notes already sounding.
    public struct Update: Sendable, Hashable {
        /// The channels whose keys may play at another pitch, bit n for channel n.
        public var channels: UInt16
        /// True when notes already sounding on those channels should follow the change.
        public var realTime: Bool

        /// Creates an update.
        public init(channels: UInt16, realTime: Bool) {
            self.channels = channels
            self.realTime = realTime
        }
    }

    /// Creates a state in equal temperament with bank 0 program 0 selected on every channel.
    public init() {
        let programCount = Self.bankCount * 128
        // Left uninitialised: a program's keys are written before `defined` lets anything read
        // them, and untouched pages of the half megabyte cost no memory.
        programs = .allocate(capacity: programCount * 128)
        defined = .allocate(capacity: programCount)
        defined.initialize(repeating: false, count: programCount)
        base = .allocate(capacity: 128)
        base.initialize(repeating: 0, count: 128)
        selected = .allocate(capacity: 16)
        selected.initialize(repeating: 0, count: 16)
        pendingBank = .allocate(capacity: 16)
        pendingBank.initialize(repeating: 0, count: 16)
        octave = .allocate(capacity: 16 * 12)
        octave.initialize(repeating: 0, count: 16 * 12)
        playsOctave = .allocate(capacity: 16)
        playsOctave.initialize(repeating: false, count: 16)
        for key in 0..<128 { base[key] = Double(key) * 100 }
    }

    deinit {
        programs.deallocate()
        defined.deallocate()
        base.deallocate()
        selected.deallocate()
        pendingBank.deallocate()
        octave.deallocate()
        playsOctave.deallocate()
    }

    /// The pitch of `key` on `channel` in cents above MIDI key 0, or nil when the channel plays
    /// plain equal temperament, so an instrument can keep its untuned arithmetic (and its
    /// output to the bit) until a tuning arrives.
    public func cents(channel: Int, key: Int) -> Double? {
        let c = channel & 15, k = min(max(key, 0), 127)
        if playsOctave[c] { return base[k] + octave[c * 12 + k % 12] }
        let program = Int(selected[c])
        if program >= 0, defined[program] { return programs[program * 128 + k] }
        return baseIsEqual ? nil : base[k]
    }

    /// Acts on a tuning command; nil for any other command (and for a program in a bank
    /// beyond ``bankCount``).
    public func apply(_ command: SystemExclusiveCommand) -> Update? {
        switch command {
        case .tuningBulkDump(let change), .singleNoteTuningChange(let change):
            guard Int(change.bank) < Self.bankCount else { return nil }
            let program = Int(change.bank) * 128 + Int(change.program)
            let table = programs + program * 128
            if !defined[program] {
                // A note change to a program nothing wrote edits equal temperament, as
                // FluidSynth's new tunings start from it.
                for key in 0..<128 { table[key] = Double(key) * 100 }
                defined[program] = true
            }
            for key in 0..<128 {
                if let cents = change.cents(forKey: key) { table[key] = cents }
            }
            var channels: UInt16 = 0
            for c in 0..<16 where !playsOctave[c] && Int(selected[c]) == program { channels |= 1 << c }
            return Update(channels: channels, realTime: change.realTime)
        case .scaleOctaveTuning(let tuning):
            for c in 0..<16 where tuning.channels & (1 << c) != 0 {
                playsOctave[c] = true
                for pc in 0..<12 { octave[c * 12 + pc] = tuning.cents(forPitchClass: pc) }
            }
            return Update(channels: tuning.channels, realTime: tuning.realTime)
        default:
            return nil
        }
    }

    /// RPN 4 (tuning bank select): remembered for the channel's next program select.
    public func selectBank(channel: Int, bank: UInt8) {
        pendingBank[channel & 15] = bank & 0x7F
    }

    /// RPN 3 (tuning program select): the channel plays `program` of the bank RPN 4 chose.
    /// FluidSynth retunes the channel's sounding notes at once, so the update is real-time.
    public func selectProgram(channel: Int, program: UInt8) -> Update {
        let c = channel & 15
        let bank = Int(pendingBank[c])
        selected[c] = bank < Self.bankCount ? Int32(bank * 128 + Int(program & 0x7F)) : -1
        playsOctave[c] = false
        return Update(channels: 1 << c, realTime: true)
    }

    /// A system reset (GM, GM2, GS, XG): every channel back to bank 0 program 0, and that
    /// program back to the base tuning, as FluidSynth resets its default tuning. Other
    /// programs keep what was written to them.
    public func reset() {
        defined[0] = false
        for c in 0..<16 {
            selected[c] = 0
            pendingBank[c] = 0
            playsOctave[c] = false
        }
    }

    /// The power-up state: every program erased (the base tuning stays), every channel on bank
    /// 0 program 0. Instruments call it when they are reset, so each render starts the same.
    public func clear() {
        defined.update(repeating: false, count: Self.bankCount * 128)
        reset()
    }

    /// Sets the base tuning: cents above MIDI key 0 for each of the 128 keys (a ``KeyboardTuning``'s
    /// ``KeyboardTuning/cents``), or nil for equal temperament. Not for the audio thread: call it
    /// before the instrument renders or between renders.
    public func setBaseTuning(_ cents: [Double]?) {
        baseIsEqual = cents == nil
        for key in 0..<128 {
            let value = cents.flatMap { key < $0.count ? $0[key] : nil } ?? Double(key) * 100
            base[key] = value.isFinite ? value : Double(key) * 100
        }
    }
}
