/// The lyrics of a song gathered into the lines a singer reads, so a player can show the line
/// being sung at any tick.
///
/// A line ends where the karaoke marks say: a syllable that starts with `/` (new line) or `\`
/// (new paragraph) begins a new line, the mark itself not shown; a carriage return or line
/// feed in a syllable ends the line there (lyric meta events often end a line that way).
/// Lines with nothing but spaces are dropped.
public struct LyricSheet: Hashable, Sendable {
    /// A syllable of a line: its tick, and how many characters of the line are sung once it
    /// starts (the characters up to its end).
    public struct Syllable: Hashable, Sendable {
        /// The syllable's tick.
        public var tick: Int64
        /// Characters of the line's text sung once this syllable starts.
        public var sungCharacters: Int

        /// Creates a syllable.
        public init(tick: Int64, sungCharacters: Int) {
            self.tick = tick
            self.sungCharacters = sungCharacters
        }
    }

    /// One line of the lyrics.
    public struct Line: Hashable, Sendable {
        /// The tick of the line's first syllable.
        public var tick: Int64
        /// The line's text, without the marks and without trailing spaces.
        public var text: String
        /// True when the line starts a paragraph (its first syllable started with `\`).
        public var startsParagraph: Bool
        /// The line's syllables, in order.
        public var syllables: [Syllable]

        /// Creates a line.
        public init(tick: Int64, text: String, startsParagraph: Bool = false, syllables: [Syllable] = []) {
            self.tick = tick
            self.text = text
            self.startsParagraph = startsParagraph
            self.syllables = syllables
        }
    }

    /// The lines, in time order.
    public let lines: [Line]

    /// Gathers `events` (in time order, as ``Lyrics/events(in:)`` returns them) into lines.
    public init(_ events: [LyricEvent]) {
        var lines: [Line] = []
        var text = ""
        var tick: Int64 = 0
        var paragraph = false
        var syllables: [Syllable] = []
        func close() {
            var trimmed = text
            while let last = trimmed.last, last == " " || last == "\t" { trimmed.removeLast() }
            if !trimmed.allSatisfy({ $0 == " " || $0 == "\t" }) {
                let count = trimmed.count
                let clipped = syllables.map { Syllable(tick: $0.tick, sungCharacters: min($0.sungCharacters, count)) }
                lines.append(Line(tick: tick, text: trimmed, startsParagraph: paragraph, syllables: clipped))
            }
            text = ""
            syllables = []
            paragraph = false
        }
        for event in events {
            var words = Substring(event.text)
            if let first = words.first, first == "/" || first == "\\" {
                close()
                paragraph = first == "\\"
                words = words.dropFirst()
            }
            // A syllable split by a line break: the part before ends this line, the rest
            // starts the next one.
            var pieces = words.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
            if pieces.isEmpty { pieces = [""] }
            for (i, piece) in pieces.enumerated() {
                if i > 0 { close() }
                if text.isEmpty && syllables.isEmpty { tick = event.tick }
                text += piece
                if !piece.isEmpty { syllables.append(Syllable(tick: event.tick, sungCharacters: text.count)) }
            }
        }
        close()
        self.lines = lines
    }

    /// The index of the line being sung at `tick`: the last line whose first syllable is at
    /// or before it; nil before the first line.
    public func lineIndex(atTick tick: Int64) -> Int? {
        var lo = 0, hi = lines.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if lines[mid].tick <= tick { lo = mid + 1 } else { hi = mid }
        }
        return lo == 0 ? nil : lo - 1
    }

    /// The line being sung at `tick` and how many of its characters have been sung (those of
    /// the syllables that started at or before `tick`); nil before the first line.
    public func line(atTick tick: Int64) -> (line: Line, sungCharacters: Int)? {
        guard let index = lineIndex(atTick: tick) else { return nil }
        let line = lines[index]
        let sung = line.syllables.last { $0.tick <= tick }?.sungCharacters ?? 0
        return (line, sung)
    }
}
