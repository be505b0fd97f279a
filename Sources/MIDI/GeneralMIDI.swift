/// The names General MIDI (Level 1) gives to program numbers and to the drum notes of the
/// percussion channel, as the MIDI Manufacturers Association's GM 1 sound set lists them.
///
/// Program numbers here count from 0, as a program change message carries them (the GM
/// tables count from 1: program 0 is the table's "1 Acoustic Grand Piano").
public enum GeneralMIDI {
    /// The channel GM reserves for percussion: 9 counting from 0 (channel 10 to a musician).
    public static let percussionChannel: UInt8 = 9

    /// The GM name of `program` (0...127); nil beyond 127.
    public static func programName(_ program: UInt8) -> String? {
        Int(program) < programNames.count ? programNames[Int(program)] : nil
    }

    /// The GM percussion name of `key` on the percussion channel (35 Acoustic Bass Drum
    /// ... 81 Open Triangle); nil for keys GM leaves unassigned.
    public static func percussionName(key: UInt8) -> String? {
        let index = Int(key) - Int(percussionKeys.lowerBound)
        return percussionNames.indices.contains(index) ? percussionNames[index] : nil
    }

    /// The name of the drum kit `program` selects on the percussion channel, for the kits
    /// Roland GS defines (GM2 numbers its kits the same way); nil for other programs. GM 1
    /// itself has one kit, whatever the program.
    public static func drumKitName(_ program: UInt8) -> String? {
        switch program {
        case 0: return "Standard Kit"
        case 8: return "Room Kit"
        case 16: return "Power Kit"
        case 24: return "Electronic Kit"
        case 25: return "TR-808 Kit"
        case 32: return "Jazz Kit"
        case 40: return "Brush Kit"
        case 48: return "Orchestra Kit"
        case 56: return "SFX Kit"
        default: return nil
        }
    }

    /// The name of `program` on `channel` (0...15): a drum kit's on the percussion channel,
    /// else the GM program's; nil where neither table names it.
    public static func programName(_ program: UInt8, channel: UInt8) -> String? {
        channel == percussionChannel ? drumKitName(program) : programName(program)
    }

    /// The keys GM assigns a percussion sound.
    public static let percussionKeys: ClosedRange<UInt8> = 35...81

    /// The 128 program names, in program order.
    public static let programNames: [String] = [
        // Piano
        "Acoustic Grand Piano", "Bright Acoustic Piano", "Electric Grand Piano", "Honky-tonk Piano",
        "Electric Piano 1", "Electric Piano 2", "Harpsichord", "Clavi",
        // Chromatic percussion
        "Celesta", "Glockenspiel", "Music Box", "Vibraphone", "Marimba", "Xylophone", "Tubular Bells", "Dulcimer",
        // Organ
        "Drawbar Organ", "Percussive Organ", "Rock Organ", "Church Organ", "Reed Organ", "Accordion", "Harmonica",
        "Tango Accordion",
        // Guitar
        "Acoustic Guitar (nylon)", "Acoustic Guitar (steel)", "Electric Guitar (jazz)", "Electric Guitar (clean)",
        "Electric Guitar (muted)", "Overdriven Guitar", "Distortion Guitar", "Guitar Harmonics",
        // Bass
        "Acoustic Bass", "Electric Bass (finger)", "Electric Bass (pick)", "Fretless Bass", "Slap Bass 1", "Slap Bass 2",
        "Synth Bass 1", "Synth Bass 2",
        // Strings
        "Violin", "Viola", "Cello", "Contrabass", "Tremolo Strings", "Pizzicato Strings", "Orchestral Harp", "Timpani",
        // Ensemble
        "String Ensemble 1", "String Ensemble 2", "SynthStrings 1", "SynthStrings 2", "Choir Aahs", "Voice Oohs",
        "Synth Voice", "Orchestra Hit",
        // Brass
        "Trumpet", "Trombone", "Tuba", "Muted Trumpet", "French Horn", "Brass Section", "SynthBrass 1", "SynthBrass 2",
        // Reed
        "Soprano Sax", "Alto Sax", "Tenor Sax", "Baritone Sax", "Oboe", "English Horn", "Bassoon", "Clarinet",
        // Pipe
        "Piccolo", "Flute", "Recorder", "Pan Flute", "Blown Bottle", "Shakuhachi", "Whistle", "Ocarina",
        // Synth lead
        "Lead 1 (square)", "Lead 2 (sawtooth)", "Lead 3 (calliope)", "Lead 4 (chiff)", "Lead 5 (charang)",
        "Lead 6 (voice)", "Lead 7 (fifths)", "Lead 8 (bass + lead)",
        // Synth pad
        "Pad 1 (new age)", "Pad 2 (warm)", "Pad 3 (polysynth)", "Pad 4 (choir)", "Pad 5 (bowed)", "Pad 6 (metallic)",
        "Pad 7 (halo)", "Pad 8 (sweep)",
        // Synth effects
        "FX 1 (rain)", "FX 2 (soundtrack)", "FX 3 (crystal)", "FX 4 (atmosphere)", "FX 5 (brightness)",
        "FX 6 (goblins)", "FX 7 (echoes)", "FX 8 (sci-fi)",
        // Ethnic
        "Sitar", "Banjo", "Shamisen", "Koto", "Kalimba", "Bag pipe", "Fiddle", "Shanai",
        // Percussive
        "Tinkle Bell", "Agogo", "Steel Drums", "Woodblock", "Taiko Drum", "Melodic Tom", "Synth Drum", "Reverse Cymbal",
        // Sound effects
        "Guitar Fret Noise", "Breath Noise", "Seashore", "Bird Tweet", "Telephone Ring", "Helicopter", "Applause",
        "Gunshot",
    ]

    /// The percussion names of keys 35...81, in key order.
    public static let percussionNames: [String] = [
        "Acoustic Bass Drum", "Bass Drum 1", "Side Stick", "Acoustic Snare", "Hand Clap", "Electric Snare",
        "Low Floor Tom", "Closed Hi Hat", "High Floor Tom", "Pedal Hi-Hat", "Low Tom", "Open Hi-Hat", "Low-Mid Tom",
        "Hi-Mid Tom", "Crash Cymbal 1", "High Tom", "Ride Cymbal 1", "Chinese Cymbal", "Ride Bell", "Tambourine",
        "Splash Cymbal", "Cowbell", "Crash Cymbal 2", "Vibraslap", "Ride Cymbal 2", "Hi Bongo", "Low Bongo",
        "Mute Hi Conga", "Open Hi Conga", "Low Conga", "High Timbale", "Low Timbale", "High Agogo", "Low Agogo",
        "Cabasa", "Maracas", "Short Whistle", "Long Whistle", "Short Guiro", "Long Guiro", "Claves", "Hi Wood Block",
        "Low Wood Block", "Mute Cuica", "Open Cuica", "Mute Triangle", "Open Triangle",
    ]
}
