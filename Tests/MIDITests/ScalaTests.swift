import Foundation
import MIDI
import Testing

/// Scala scales and keyboard mappings: what the files say, what a user is told when they are
/// wrong, and the pitch each key gets.
@Suite struct ScalaTests {
    static let justIntonation = """
    ! just.scl
    !
    Twelve-tone just intonation (Ptolemy's intense diatonic, filled in)
     12
    !
     16/15
     9/8
     6/5
     5/4
     4/3
     45/32   augmented fourth
     3/2
     8/5
     5/3
     9/5
     15/8
     2/1
    """

    static let nineteen = """
    ! 19-EDO in cents
    19 equal divisions of the octave
    19

    """ + (1...19).map { String(format: "%.6f\n", Double($0) * 1200 / 19) }.joined()

    func cents(_ ratio: Double) -> Double { 1200 * log2(ratio) }

    @Test func justIntonationParsesRatiosAndIgnoresComments() throws {
        let scale = try ScalaScale(text: Self.justIntonation, path: "just.scl")
        #expect(scale.description == "Twelve-tone just intonation (Ptolemy's intense diatonic, filled in)")
        #expect(scale.cents.count == 12)
        #expect(abs(scale.cents[6] - cents(3.0 / 2)) < 1e-9)
        #expect(abs(scale.cents[5] - cents(45.0 / 32)) < 1e-9)
        #expect(scale.cents.last == 1200)
        #expect(scale.cents(ofDegree: 0) == 0)
        #expect(abs(scale.cents(ofDegree: 19) - (1200 + cents(3.0 / 2))) < 1e-9)
        #expect(abs(scale.cents(ofDegree: -5) - (cents(3.0 / 2) - 1200)) < 1e-9)
    }

    @Test func centsWholeNumbersAndLineEndsAllRead() throws {
        let scale = try ScalaScale(text: "!x\r\n\r\n3\r\n 100.5\r\n3/2 fifth\r\n2\r\n! trailing\r\n", path: "a.scl")
        #expect(scale.description == "")
        #expect(scale.cents.count == 3)
        #expect(scale.cents.first == 100.5 && scale.cents.last == 1200)
        #expect(abs(scale.cents[1] - cents(1.5)) < 1e-9)
        // Scala writes cents with a bare point too.
        #expect(try ScalaScale(text: "d\n3\n100.\n.5\n2/1\n", path: "p.scl").cents == [100, 0.5, 1200])
        let nineteen = try ScalaScale(text: Self.nineteen, path: "19.scl")
        #expect(nineteen.cents.count == 19 && abs(nineteen.cents[0] - 1200.0 / 19) < 1e-5)
    }

    @Test func badScalesSayFileLineAndReason() {
        func error(_ text: String) -> String {
            do {
                _ = try ScalaScale(text: text, path: "bad.scl")
                return "no error"
            } catch {
                return error.description
            }
        }
        #expect(error("d\n100000\n") == "bad.scl: line 2: 100000 notes: a scale has 1...1024")
        #expect(error("d\n0\n") == "bad.scl: line 2: 0 notes: a scale has 1...1024")
        #expect(error("d\ntwelve\n") == "bad.scl: line 2: expected the number of notes, found 'twelve'")
        #expect(error("d\n2\n100.0\nfifth\n") == "bad.scl: line 4: 'fifth' is not a ratio (such as 3/2) or cents (such as 701.955)")
        #expect(error("d\n1\n0/1\n") == "bad.scl: line 3: ratio 0/1 is not above 0")
        #expect(error("d\n1\n-3/2\n").hasPrefix("bad.scl: line 3: '-3/2' is not a ratio"))
        #expect(error("d\n1\n99999.0\n") == "bad.scl: line 3: 99999.0 is 99999.0 cents, beyond the ±12000 allowed")
        #expect(error("d\n1\n1e999.0\n") == "bad.scl: line 3: '1e999.0' is not a number of cents")
        #expect(error("d\n3\n100.0\n200.0\n") == "bad.scl: 3 notes announced, 2 found")
        #expect(error("d\n2\n100.0\n-5.0\n") == "bad.scl: the last note (the period the scale repeats at) must be above the unison")
        #expect(error("! only comments\n") == "bad.scl: no description line: not a Scala scale")
        #expect(error("d\n2\n100.0\n\n") == "bad.scl: line 4: expected a pitch (cents with a '.', or a ratio), found an empty line")
    }

    @Test func keyboardMappingReadsEveryFieldAndUnmappedKeys() throws {
        let text = """
        ! white keys only: a 7-note scale on the white keys, A = 432 Hz
        12
        0
        127
        60
        69
        432.0
        7
        ! mapping
        0
        x
        1
        x
        2
        3
        x
        4
        x
        5
        x
        6
        """
        let mapping = try KeyboardMapping(text: text, path: "white.kbm")
        #expect(mapping.size == 12 && mapping.firstKey == 0 && mapping.lastKey == 127)
        #expect(mapping.middleKey == 60 && mapping.referenceKey == 69 && mapping.referenceFrequency == 432 && mapping.octaveDegree == 7)
        #expect(mapping.degrees == [0, nil, 1, nil, 2, 3, nil, 4, nil, 5, nil, 6])
        // A short pattern's missing entries are unmapped.
        let short = try KeyboardMapping(text: "4\n0\n127\n60\n60\n261.6\n0\n0\n1\n", path: "s.kbm")
        #expect(short.degrees == [0, 1, nil, nil])
    }

    @Test func badMappingsSayFileLineAndReason() {
        func error(_ text: String) -> String {
            do {
                _ = try KeyboardMapping(text: text, path: "bad.kbm")
                return "no error"
            } catch {
                return error.description
            }
        }
        #expect(error("5000\n") == "bad.kbm: line 1: map size 5000 is outside 0...1024")
        #expect(error("12\n0\n128\n") == "bad.kbm: line 3: the last key 128 is outside 0...127")
        #expect(error("12\n0\n127\n60\n69\n-440\n") == "bad.kbm: line 6: reference frequency -440 Hz is outside (0, 100000]")
        #expect(error("12\n0\n127\n60.5\n") == "bad.kbm: line 4: the middle key must be a whole number, not 60.5")
        #expect(error("1\n0\n127\n60\n69\n440\n0\ny\n") == "bad.kbm: line 8: expected a scale degree or 'x', found 'y'")
        #expect(error("1\n0\n127\n60\n") == "bad.kbm: no reference key line: not a Scala keyboard mapping")
        #expect(error("0\n100\n20\n60\n69\n440\n0\n") == "bad.kbm: first key 100 is above last key 20")
    }

    @Test func standardLayoutKeepsMiddleCAndStacksTheScale() throws {
        let just = try KeyboardTuning(scale: ScalaScale(text: Self.justIntonation, path: "just.scl"))
        #expect(abs(just.cents[60] - 6000) < 1e-9)
        #expect(abs(just.cents[67] - (6000 + cents(1.5))) < 1e-9)
        #expect(abs(just.cents[48] - 4800) < 1e-9)
        #expect(abs(just.cents[57] - (4800 + cents(5.0 / 3))) < 1e-9)
        let equal = try KeyboardTuning(scale: ScalaScale(description: "12-EDO", cents: (1...12).map { Double($0) * 100 }))
        for key in 0..<128 { #expect(abs(equal.cents[key] - Double(key) * 100) < 1e-9) }
    }

    @Test func mappingPlacesTheReferenceFrequencyAndSkipsUnmappedKeys() throws {
        let just = try ScalaScale(text: Self.justIntonation, path: "just.scl")
        // Key 69 at 440 Hz playing degree 9 (5/3 above key 60).
        let mapping = KeyboardMapping(size: 12, firstKey: 10, lastKey: 120, middleKey: 60, referenceKey: 69, referenceFrequency: 440,
                                      octaveDegree: 12, degrees: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, nil])
        let tuning = try KeyboardTuning(scale: just, mapping: mapping)
        #expect(abs(tuning.cents[69] - 6900) < 1e-9)
        #expect(abs(tuning.cents[60] - (6900 - cents(5.0 / 3))) < 1e-9)
        #expect(abs(tuning.cents[72] - (6900 - cents(5.0 / 3) + 1200)) < 1e-9)
        // Unmapped and out-of-range keys keep their equal-tempered pitch.
        #expect(tuning.cents[71] == 7100 && tuning.cents[5] == 500 && tuning.cents[121] == 12_100)
        let unmappedReference = KeyboardMapping(size: 1, firstKey: 0, lastKey: 127, middleKey: 60, referenceKey: 69,
                                                referenceFrequency: 440, octaveDegree: 0, degrees: [nil])
        #expect(throws: ScalaFileError(path: "m.kbm", reason: "reference key 69 is not mapped to a scale degree")) {
            _ = try KeyboardTuning(scale: just, mapping: unmappedReference, mappingPath: "m.kbm")
        }
        // Values built in code are checked as a file's would be, never trapping.
        #expect(throws: ScalaFileError.self) { _ = try KeyboardTuning(scale: ScalaScale(description: "", cents: [])) }
        #expect(throws: ScalaFileError.self) { _ = try KeyboardTuning(scale: ScalaScale(description: "", cents: [100, -1])) }
        var wild = KeyboardMapping.standard
        wild.middleKey = .min
        #expect(throws: ScalaFileError.self) { _ = try KeyboardTuning(scale: just, mapping: wild) }
        wild = .standard
        wild.referenceFrequency = 0
        #expect(throws: ScalaFileError.self) { _ = try KeyboardTuning(scale: just, mapping: wild) }
        #expect(ScalaScale(description: "", cents: []).cents(ofDegree: 5) == 0)
    }

    @Test func filesLoadAndMissingOnesAreUnreadable() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("scala-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let scl = dir.appendingPathComponent("19.scl").path
        let kbm = dir.appendingPathComponent("a.kbm").path
        try Self.nineteen.write(toFile: scl, atomically: true, encoding: .utf8)
        try "0\n0\n127\n60\n69\n440\n0\n".write(toFile: kbm, atomically: true, encoding: .utf8)
        let tuning = try KeyboardTuning.load(scale: scl, mapping: kbm)
        #expect(abs(tuning.cents[69] - 6900) < 1e-9)
        #expect(abs(tuning.cents[70] - (6900 + 1200.0 / 19)) < 1e-5)
        let missing = dir.appendingPathComponent("none.scl").path
        #expect(throws: ScalaFileError(path: missing, reason: "no such file", isUnreadableInput: true)) {
            _ = try KeyboardTuning.load(scale: missing)
        }
        #expect(throws: ScalaFileError(path: dir.path, reason: "not a regular file", isUnreadableInput: true)) {
            _ = try KeyboardTuning.load(scale: dir.path)
        }
    }
}
