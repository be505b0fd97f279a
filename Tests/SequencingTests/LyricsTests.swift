import Sequencing
import Testing

/// Which events are lyrics, and how they gather into the lines a singer reads.
@Suite struct LyricsTests {
    static func lyric(_ tick: Int64, _ text: String, type: UInt8 = MetaType.lyric) -> LyricEvent {
        LyricEvent(tick: tick, track: 1, type: type, bytes: Array(text.utf8))
    }

    @Test func lyricEventsWinOverKaraokeTextAndComeInTimeOrderAcrossTracks() {
        var a = MusicTrack(), b = MusicTrack()
        a.add(.meta(.text(MetaType.text, "\\Hel")), at: 0)
        a.add(.meta(.text(MetaType.lyric, "lo")), at: 200)
        b.add(.meta(.text(MetaType.lyric, "Hel")), at: 100)
        b.add(.meta(.text(MetaType.marker, "Intro")), at: 0)
        let events = Lyrics.events(in: [a, b])
        #expect(events.map(\.text) == ["Hel", "lo"])
        #expect(events.map(\.track) == [1, 0])
        #expect(events.map(\.tick) == [100, 200])
    }

    @Test func karaokeWordsComeFromTracksWithLineMarksOrNamedWordsWithoutHeaderFields() {
        var header = MusicTrack()
        header.add(.meta(.text(MetaType.text, "@KMIDI KARAOKE FILE")), at: 0)
        header.add(.meta(.text(MetaType.text, "A comment")), at: 0)
        var words = MusicTrack()
        words.name = "Words"
        words.add(.meta(.text(MetaType.text, "@LENG")), at: 0)
        words.add(.meta(.text(MetaType.text, "Sing ")), at: 10)
        words.add(.meta(.text(MetaType.text, "on")), at: 20)
        var marked = MusicTrack()
        marked.add(.meta(.text(MetaType.text, "/Hey")), at: 15)
        let events = Lyrics.events(in: [header, words, marked])
        #expect(events.map(\.text) == ["Sing ", "/Hey", "on"])
        #expect(events.allSatisfy { $0.type == MetaType.text })
        #expect(Lyrics.events(in: [header]).isEmpty)
    }

    @Test func linesEndAtSlashesBackslashesAndLineBreaks() {
        let sheet = LyricSheet([
            Self.lyric(0, "\\Ma", type: MetaType.text), Self.lyric(10, "ry "), Self.lyric(20, "had\r"),
            Self.lyric(30, "a lit"), Self.lyric(40, "tle\nlamb "), Self.lyric(50, "/"), Self.lyric(60, "/Its "),
            Self.lyric(70, "fleece"), Self.lyric(80, "\r\n"), Self.lyric(90, "   "),
        ])
        #expect(sheet.lines.map(\.text) == ["Mary had", "a little", "lamb", "Its fleece"])
        #expect(sheet.lines.map(\.tick) == [0, 30, 40, 60])
        #expect(sheet.lines.map(\.startsParagraph) == [true, false, false, false])
        #expect(sheet.lines[0].syllables == [.init(tick: 0, sungCharacters: 2), .init(tick: 10, sungCharacters: 5), .init(tick: 20, sungCharacters: 8)])
    }

    @Test func theLineAtATickIsTheLastStartedWithTheSyllablesSungSoFar() throws {
        let sheet = LyricSheet([Self.lyric(100, "Row, "), Self.lyric(200, "row\n"), Self.lyric(400, "your "), Self.lyric(500, "boat")])
        #expect(sheet.line(atTick: 99) == nil)
        let first = try #require(sheet.line(atTick: 150))
        #expect(first.line.text == "Row, row")
        #expect(first.sungCharacters == 5)
        #expect(sheet.line(atTick: 399)?.sungCharacters == 8)
        let second = try #require(sheet.line(atTick: 450))
        #expect(second.line.text == "your boat")
        #expect(second.sungCharacters == 5)
        #expect(sheet.line(atTick: 10_000)?.sungCharacters == 9)
    }
}
