/// Oscillator shapes of the built-in synthesizer.
public enum Waveform: UInt8, Sendable {
    /// A pure tone.
    case sine
    /// A band-limited sawtooth (PolyBLEP).
    case saw
    /// A band-limited square (PolyBLEP).
    case square
    /// A triangle; its harmonics fall so fast that aliasing stays inaudible.
    case triangle
    /// White noise.
    case noise
    /// Two-operator FM: a sine carrier phase-modulated by a sine at `fmRatio` times its pitch.
    case fm
}

/// Which output of the state-variable filter a patch uses.
public enum FilterMode: UInt8, Sendable {
    /// The low-pass output.
    case lowPass
    /// The band-pass output.
    case bandPass
    /// The high-pass output.
    case highPass
}

/// Everything that makes one sound of the built-in synthesizer: a General MIDI family or one
/// drum. Times are in seconds, levels 0...1.
public struct SynthPatch: Sendable {
    /// Main oscillator.
    public var waveA: Waveform = .saw
    /// Second oscillator and its level (0 turns it off).
    public var waveB: Waveform = .sine
    /// Level of oscillator B (0 turns it off).
    public var levelB: Float = 0
    /// Pitch of oscillator B relative to A (2 = an octave up), and a detune in cents.
    public var ratioB: Float = 1
    /// Detune of oscillator B in cents.
    public var detuneCentsB: Float = 0
    /// Noise added to the oscillators.
    public var noiseLevel: Float = 0
    /// FM modulator pitch ratio, index at the attack, index it decays to, and decay time.
    public var fmRatio: Float = 1
    /// FM modulation index at the attack.
    public var fmIndex: Float = 0
    /// FM modulation index the attack decays to.
    public var fmIndexSustain: Float = 0
    /// Time constant of the FM index decay, in seconds.
    public var fmDecay: Float = 1
    /// Amplitude envelope.
    public var attack: Float = 0.002
    /// Seconds for the decay to fall 80 dB towards the sustain level.
    public var decay: Float = 1
    /// Sustain level; 0 makes the note die away while held.
    public var sustain: Float = 1
    /// Seconds for the release to fall 80 dB.
    public var release: Float = 0.2
    /// Filter: mode, cutoff as a multiple of the note's frequency (or in Hz when `cutoffHz`
    /// is set), resonance 0...1, envelope depth in octaves and its own envelope.
    public var filterMode: FilterMode = .lowPass
    /// Filter cutoff as a multiple of the note frequency.
    public var cutoffRatio: Float = 8
    /// Fixed filter cutoff in hertz; overrides `cutoffRatio` when above 0.
    public var cutoffHz: Float = 0
    /// Filter resonance, 0...1.
    public var resonance: Float = 0.1
    /// How many octaves the filter envelope opens the cutoff.
    public var filterEnvOctaves: Float = 0
    /// Filter envelope attack in seconds.
    public var filterAttack: Float = 0.001
    /// Filter envelope decay in seconds.
    public var filterDecay: Float = 0.5
    /// Filter envelope sustain level.
    public var filterSustain: Float = 0
    /// How many octaves a full velocity opens the filter beyond a soft one.
    public var velocityToCutoff: Float = 1
    /// Vibrato: rate in Hz, depth in cents, delay before it fades in.
    public var vibratoRate: Float = 5.5
    /// Vibrato depth in cents (the mod wheel adds up to 50).
    public var vibratoCents: Float = 0
    /// Seconds before the vibrato fades in.
    public var vibratoDelay: Float = 0.25
    /// Pitch envelope: start offset in semitones, decaying with this time constant.
    public var pitchEnvSemitones: Float = 0
    /// Time constant of the pitch envelope, in seconds.
    public var pitchEnvDecay: Float = 0.05
    /// A fixed pitch in Hz (drums); 0 plays the key's pitch.
    public var fixedFrequency: Float = 0
    /// Output level.
    public var gain: Float = 1
    /// Stereo position offset (-1...1) added to the channel pan (drums spread across the kit).
    public var pan: Float = 0
    /// Drums ignore note-off and play their envelope to the end.
    public var oneShot = false
    /// Voices of the same channel with the same non-zero group cut each other (hi-hats).
    public var exclusiveGroup: UInt8 = 0

    /// A plain saw patch; the GM tables start from it.
    public init() {}
}

/// The built-in sounds: one patch per General MIDI family, and a synthesized drum kit.
public enum GMPatches {
    /// The sixteen GM families, program / 8.
    public static let familyNames = [
        "Piano", "Chromatic percussion", "Organ", "Guitar", "Bass", "Strings", "Ensemble", "Brass",
        "Reed", "Pipe", "Synth lead", "Synth pad", "Synth effects", "Ethnic", "Percussive", "Sound effects",
    ]

    /// The patch for a GM program (0...127).
    public static func melodic(program: Int) -> SynthPatch {
        let family = (program >> 3) & 15
        let variant = program & 7
        var p = SynthPatch()
        switch family {
        case 0: // Piano: bright hammer that mellows; FM gives the inharmonic attack.
            p.waveA = .fm; p.fmRatio = 1; p.fmIndex = 1.6; p.fmIndexSustain = 0.15; p.fmDecay = 0.6
            p.waveB = .triangle; p.levelB = 0.5
            p.attack = 0.002; p.decay = 2.8; p.sustain = 0; p.release = 0.35
            p.cutoffRatio = 6; p.filterEnvOctaves = 2; p.filterDecay = 0.5; p.resonance = 0.05
            p.velocityToCutoff = 2; p.gain = 1.2
            if variant >= 4 { p.fmRatio = 14; p.fmIndex = 0.9; p.fmDecay = 0.3 } // electric pianos: tine
        case 1: // Chromatic percussion: FM bells and mallets.
            p.waveA = .fm; p.fmRatio = variant < 4 ? 3.5 : 4; p.fmIndex = 2.2; p.fmIndexSustain = 0.2; p.fmDecay = 0.4
            p.attack = 0.001; p.decay = variant == 6 || variant == 7 ? 3 : 1.4; p.sustain = 0; p.release = 0.6
            p.cutoffRatio = 16; p.gain = 1.0
        case 2: // Organ: drawbar-like additive sines, no decay.
            p.waveA = .sine; p.waveB = .sine; p.levelB = 0.5; p.ratioB = 2
            p.noiseLevel = 0; p.attack = 0.006; p.decay = 0.1; p.sustain = 1; p.release = 0.06
            p.cutoffRatio = 30; p.vibratoCents = 6; p.vibratoRate = 6.5; p.vibratoDelay = 0.05; p.gain = 0.9
            if variant >= 4 { p.waveB = .square; p.levelB = 0.25 } // reed and accordion organs
        case 3: // Guitar: plucked saw with a closing filter.
            p.waveA = .saw; p.waveB = .triangle; p.levelB = 0.4; p.ratioB = 1; p.detuneCentsB = 4
            p.attack = 0.002; p.decay = 1.6; p.sustain = 0; p.release = 0.25
            p.cutoffRatio = 2.5; p.filterEnvOctaves = 3; p.filterDecay = 0.25; p.resonance = 0.15
            if variant >= 5 { p.sustain = 0.5; p.cutoffRatio = 5; p.decay = 0.8 } // overdriven, distortion
            p.gain = 0.9
        case 4: // Bass: saw plus a sub-octave sine.
            p.waveA = .saw; p.waveB = .sine; p.levelB = 0.6; p.ratioB = 0.5
            p.attack = 0.003; p.decay = 0.9; p.sustain = 0.45; p.release = 0.08
            p.cutoffRatio = 3; p.filterEnvOctaves = 2.5; p.filterDecay = 0.18; p.resonance = 0.25
            p.gain = 1.1
            if variant <= 1 { p.waveA = .triangle; p.filterEnvOctaves = 1 } // acoustic, finger
        case 5: // Strings: two detuned saws, slow bow, vibrato.
            p.waveA = .saw; p.waveB = .saw; p.levelB = 0.8; p.detuneCentsB = 9
            p.attack = 0.12; p.decay = 1; p.sustain = 0.9; p.release = 0.35
            p.cutoffRatio = 4.5; p.resonance = 0.05; p.vibratoCents = 14; p.vibratoDelay = 0.3
            p.gain = 0.6
            if variant == 5 || variant == 6 { // pizzicato, harp
                p.attack = 0.002; p.sustain = 0; p.decay = 0.7; p.release = 0.3; p.filterEnvOctaves = 2; p.filterDecay = 0.15
                p.waveB = .triangle; p.gain = 0.9
            } else if variant == 7 { p.waveA = .sine; p.waveB = .triangle; p.decay = 0.4; p.sustain = 0; p.pitchEnvSemitones = 5; p.pitchEnvDecay = 0.03; p.gain = 1.3 } // timpani
        case 6: // Ensemble and choir: softer, slower.
            p.waveA = .saw; p.waveB = .triangle; p.levelB = 0.9; p.detuneCentsB = 12
            p.attack = 0.18; p.decay = 1; p.sustain = 0.9; p.release = 0.45
            p.cutoffRatio = 3.5; p.vibratoCents = 10; p.vibratoDelay = 0.2; p.gain = 0.6
            if variant >= 4 { p.waveA = .triangle; p.cutoffRatio = 3; p.vibratoCents = 16 } // voices
        case 7: // Brass: filter swell on the attack.
            p.waveA = .saw; p.waveB = .saw; p.levelB = 0.6; p.detuneCentsB = 6
            p.attack = 0.03; p.decay = 0.4; p.sustain = 0.8; p.release = 0.12
            p.cutoffRatio = 2; p.filterEnvOctaves = 2.5; p.filterAttack = 0.05; p.filterDecay = 0.4; p.filterSustain = 0.4
            p.vibratoCents = 8; p.vibratoDelay = 0.35; p.gain = 0.7
        case 8: // Reed: hollow square, breathy.
            p.waveA = .square; p.waveB = .saw; p.levelB = 0.3; p.noiseLevel = 0.02
            p.attack = 0.03; p.decay = 0.5; p.sustain = 0.85; p.release = 0.1
            p.cutoffRatio = 3.5; p.resonance = 0.2; p.vibratoCents = 12; p.vibratoDelay = 0.3; p.gain = 0.6
        case 9: // Pipe: flutes, near-sine with breath.
            p.waveA = .triangle; p.waveB = .sine; p.levelB = 0.6; p.ratioB = 2; p.noiseLevel = 0.03
            p.attack = 0.05; p.decay = 0.5; p.sustain = 0.9; p.release = 0.12
            p.cutoffRatio = 6; p.vibratoCents = 12; p.vibratoRate = 5; p.vibratoDelay = 0.2; p.gain = 0.9
        case 10: // Synth lead.
            p.waveA = variant == 0 ? .square : .saw; p.waveB = .saw; p.levelB = 0.5; p.detuneCentsB = 7
            p.attack = 0.004; p.decay = 0.5; p.sustain = 0.8; p.release = 0.12
            p.cutoffRatio = 5; p.resonance = 0.35; p.filterEnvOctaves = 1; p.filterDecay = 0.3
            p.vibratoCents = 10; p.vibratoDelay = 0.4; p.gain = 0.55
        case 11: // Synth pad: wide, slow, resonant.
            p.waveA = .saw; p.waveB = .saw; p.levelB = 0.9; p.detuneCentsB = 14
            p.attack = 0.35; p.decay = 2; p.sustain = 0.85; p.release = 0.9
            p.cutoffRatio = 2.5; p.resonance = 0.3; p.filterEnvOctaves = 1.2; p.filterAttack = 0.6; p.filterDecay = 1.5; p.filterSustain = 0.3
            p.vibratoCents = 5; p.gain = 0.5
        case 12: // Synth effects: inharmonic FM.
            p.waveA = .fm; p.fmRatio = 1.41; p.fmIndex = 3; p.fmIndexSustain = 1; p.fmDecay = 1.5
            p.attack = 0.08; p.decay = 2; p.sustain = 0.6; p.release = 0.8; p.cutoffRatio = 8; p.gain = 0.6
        case 13: // Ethnic: plucked FM (sitar, koto, banjo...).
            p.waveA = .fm; p.fmRatio = 2; p.fmIndex = 2.5; p.fmIndexSustain = 0.3; p.fmDecay = 0.3
            p.attack = 0.002; p.decay = 1.2; p.sustain = 0; p.release = 0.25; p.cutoffRatio = 10; p.gain = 0.9
            if variant >= 6 { p.waveA = .saw; p.attack = 0.04; p.sustain = 0.8; p.cutoffRatio = 3; p.vibratoCents = 12 } // fiddle, shanai
        case 14: // Percussive: tuned drums and blocks.
            p.waveA = .fm; p.fmRatio = 1.47; p.fmIndex = 2; p.fmIndexSustain = 0; p.fmDecay = 0.15
            p.attack = 0.001; p.decay = 0.5; p.sustain = 0; p.release = 0.2
            p.pitchEnvSemitones = 3; p.pitchEnvDecay = 0.04; p.cutoffRatio = 12; p.gain = 1.0
        default: // Sound effects: filtered noise and saw.
            p.waveA = .saw; p.noiseLevel = 0.5; p.attack = 0.05; p.decay = 1; p.sustain = 0.6; p.release = 0.5
            p.cutoffRatio = 4; p.resonance = 0.4; p.filterEnvOctaves = 1.5; p.filterDecay = 0.5; p.gain = 0.45
        }
        return p
    }

    /// The drum sound for GM key `key` on the percussion channel.
    public static func drum(key: Int) -> SynthPatch {
        var p = SynthPatch()
        p.oneShot = true
        p.attack = 0.0005
        p.sustain = 0
        p.release = 0.05
        p.cutoffRatio = 0
        p.velocityToCutoff = 0.5
        func noise(_ cutoff: Float, _ mode: FilterMode, decay: Float, resonance: Float = 0.1) {
            p.waveA = .noise; p.filterMode = mode; p.cutoffHz = cutoff; p.decay = decay; p.resonance = resonance
        }
        func tone(_ hz: Float, _ wave: Waveform = .sine, decay: Float, bend: Float = 0, bendDecay: Float = 0.04) {
            p.waveA = wave; p.fixedFrequency = hz; p.decay = decay
            p.pitchEnvSemitones = bend; p.pitchEnvDecay = bendDecay; p.cutoffHz = 12_000
        }
        switch key {
        case 35, 36: // bass drums
            tone(key == 35 ? 48 : 55, decay: 0.45, bend: 30, bendDecay: 0.025); p.noiseLevel = 0.06; p.gain = 2.6
            p.cutoffHz = 3000
        case 37: tone(420, .triangle, decay: 0.07, bend: 5, bendDecay: 0.01); p.noiseLevel = 0.4; p.gain = 1.1 // side stick
        case 38, 40: // snares: body plus noise
            tone(key == 38 ? 185 : 205, .triangle, decay: 0.2, bend: 7, bendDecay: 0.02); p.noiseLevel = 1.4
            p.cutoffHz = 7000; p.gain = 1.2
        case 39: noise(1300, .bandPass, decay: 0.16, resonance: 0.3); p.gain = 2.2 // clap
        case 42: noise(8000, .highPass, decay: 0.05); p.exclusiveGroup = 1; p.pan = 0.3; p.gain = 0.8 // closed hat
        case 44: noise(7500, .highPass, decay: 0.08); p.exclusiveGroup = 1; p.pan = 0.3; p.gain = 0.7 // pedal hat
        case 46: noise(7000, .highPass, decay: 0.45); p.exclusiveGroup = 1; p.pan = 0.3; p.gain = 0.75 // open hat
        case 41, 43, 45, 47, 48, 50: // toms, low to high, spread across the stereo field
            let index = [41, 43, 45, 47, 48, 50].firstIndex(of: key)!
            tone(80 + Float(index) * 25, decay: 0.4, bend: 7, bendDecay: 0.06); p.noiseLevel = 0.05
            p.pan = -0.5 + Float(index) * 0.2; p.gain = 1.7
        case 49, 57, 52, 55: // crash, china, splash: noise with metallic partials
            noise(5000, .highPass, decay: key == 55 ? 0.6 : 1.4); p.waveB = .square; p.levelB = 0.35
            p.fixedFrequency = 587; p.ratioB = 1.43; p.pan = key == 57 ? 0.4 : -0.35; p.gain = 0.8
        case 51, 59: noise(6500, .highPass, decay: 0.9); p.waveB = .square; p.levelB = 0.25; p.fixedFrequency = 480; p.ratioB = 1.5; p.pan = 0.35; p.gain = 0.55 // rides
        case 53: tone(760, .square, decay: 0.7); p.waveB = .sine; p.levelB = 0.6; p.ratioB = 1.5; p.cutoffHz = 4000; p.pan = 0.35; p.gain = 0.45 // ride bell
        case 54: noise(8500, .highPass, decay: 0.16); p.pan = 0.25; p.gain = 0.9 // tambourine
        case 56: tone(560, .square, decay: 0.25); p.waveB = .square; p.levelB = 0.8; p.ratioB = 1.51; p.filterMode = .bandPass; p.cutoffHz = 800; p.resonance = 0.3; p.gain = 1.2 // cowbell
        case 58: noise(2500, .bandPass, decay: 0.6, resonance: 0.6); p.gain = 1.2 // vibraslap
        case 60, 61, 62, 63, 64: // bongos and congas
            let hz: [Float] = [400, 300, 330, 240, 190]
            tone(hz[key - 60], decay: 0.18, bend: 3, bendDecay: 0.02); p.noiseLevel = 0.05; p.pan = key < 62 ? -0.3 : 0.2; p.gain = 1.4
        case 65, 66: tone(key == 65 ? 330 : 250, .triangle, decay: 0.25, bend: 4); p.noiseLevel = 0.2; p.gain = 1.1 // timbales
        case 67, 68: tone(key == 67 ? 900 : 680, .fm, decay: 0.3); p.fmRatio = 2.4; p.fmIndex = 1.5; p.gain = 0.9 // agogo
        case 69, 70: noise(6000, .highPass, decay: key == 69 ? 0.12 : 0.07); p.gain = 0.8 // cabasa, maracas
        case 71, 72: tone(2300, decay: key == 71 ? 0.12 : 0.45); p.sustain = 0; p.vibratoCents = 40; p.vibratoDelay = 0; p.vibratoRate = 12; p.gain = 0.6 // whistles
        case 73, 74: noise(3000, .bandPass, decay: key == 73 ? 0.08 : 0.3, resonance: 0.5); p.gain = 1.3 // guiro
        case 75: tone(2500, decay: 0.06); p.gain = 1.0 // claves
        case 76, 77: tone(key == 76 ? 1050 : 800, .triangle, decay: 0.07, bend: 2, bendDecay: 0.01); p.gain = 1.1 // wood blocks
        case 78, 79: tone(key == 78 ? 600 : 400, decay: 0.25, bend: -7, bendDecay: 0.1); p.gain = 1.0 // cuica
        case 80, 81: tone(3800, decay: key == 80 ? 0.2 : 1.0); p.waveB = .sine; p.levelB = 0.5; p.ratioB = 2.76; p.pan = 0.4; p.gain = 0.5 // triangle
        default: // keys outside the GM kit: a short tick, so nothing goes unheard
            noise(4000, .bandPass, decay: 0.05, resonance: 0.2); p.gain = 0.8
        }
        return p
    }
}
