import MIDI
import Testing

/// The General MIDI name tables, spot-checked against the GM 1 sound set's numbering (which
/// counts from 1, where program changes count from 0).
@Suite struct GeneralMIDITests {
    @Test func programNamesFollowTheGMTableShiftedToCountFromZero() {
        #expect(GeneralMIDI.programNames.count == 128)
        #expect(Set(GeneralMIDI.programNames).count == 128)
        #expect(GeneralMIDI.programName(0) == "Acoustic Grand Piano")      // GM 1
        #expect(GeneralMIDI.programName(24) == "Acoustic Guitar (nylon)")  // GM 25
        #expect(GeneralMIDI.programName(40) == "Violin")                   // GM 41
        #expect(GeneralMIDI.programName(56) == "Trumpet")                  // GM 57
        #expect(GeneralMIDI.programName(80) == "Lead 1 (square)")          // GM 81
        #expect(GeneralMIDI.programName(127) == "Gunshot")                 // GM 128
        #expect(GeneralMIDI.programName(128) == nil)
    }

    @Test func percussionNamesCoverKeys35To81() {
        #expect(GeneralMIDI.percussionNames.count == GeneralMIDI.percussionKeys.count)
        #expect(GeneralMIDI.percussionName(key: 34) == nil)
        #expect(GeneralMIDI.percussionName(key: 35) == "Acoustic Bass Drum")
        #expect(GeneralMIDI.percussionName(key: 36) == "Bass Drum 1")
        #expect(GeneralMIDI.percussionName(key: 38) == "Acoustic Snare")
        #expect(GeneralMIDI.percussionName(key: 42) == "Closed Hi Hat")
        #expect(GeneralMIDI.percussionName(key: 56) == "Cowbell")
        #expect(GeneralMIDI.percussionName(key: 81) == "Open Triangle")
        #expect(GeneralMIDI.percussionName(key: 82) == nil)
    }

    @Test func theDrumChannelNamesKitsNotPrograms() {
        #expect(GeneralMIDI.programName(25, channel: 9) == "TR-808 Kit")
        #expect(GeneralMIDI.programName(25, channel: 0) == "Acoustic Guitar (steel)")
        #expect(GeneralMIDI.programName(3, channel: 9) == nil)
    }
}
