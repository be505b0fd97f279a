import Foundation
import Playback
import Sequencing

/// The live status line, with the lyric line being sung when the song has lyrics.
struct StatusLine {
    let session: PlaybackSession
    let tempoMap: TempoMap
    let totalSeconds: Double
    let lyrics: LyricSheet

    init(session: PlaybackSession, endTick: Int64) {
        self.session = session
        tempoMap = session.sequence.makeTempoMap()
        totalSeconds = tempoMap.seconds(atTick: endTick)
        lyrics = LyricSheet(Lyrics.events(in: session.sequence))
    }

    func text() -> String {
        guard let position = session.position else { return "" }
        let bpm = tempoMap.bpm(atTick: position.tick)
        let state = position.isPlaying ? ">" : "||"
        var line = String(format: "%@ %4lld:%-2lld  %6.1f BPM  %@ / %@  rate %.2f  xruns %d",
                          state, position.barBeatTick.bar, position.barBeatTick.beat, bpm,
                          formatDuration(position.seconds), formatDuration(totalSeconds), position.rate, position.underruns)
        if let sung = lyrics.line(atTick: position.tick) { line += "  \u{266A} " + sung.line.text }
        // A line longer than the terminal would wrap, and the next redraw would not replace it.
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 1, line.count >= Int(size.ws_col) {
            line = String(line.prefix(Int(size.ws_col) - 1))
        }
        return line
    }
}

/// A key the player reacts to.
enum PlayerKey: Equatable {
    case space, left, right, plus, minus, quit
}

/// The terminal in a mode that delivers keys without Enter and without echo, restored on
/// every exit path (normal end, q, Ctrl-C, errors).
final class TerminalSession {
    let enabled: Bool
    private var saved = termios()
    private var restored = false
    private var pending: [UInt8] = []

    init(enabled: Bool) {
        self.enabled = enabled
        guard enabled else { return }
        tcgetattr(STDIN_FILENO, &saved)
        var raw = saved
        // Keep ISIG, so Ctrl-C still raises SIGINT and stops with all notes off.
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        FileHandle.standardError.write(Data("\u{1B}[?25l".utf8)) // hide the cursor
    }

    deinit { restore() }

    /// Puts the terminal back as it was (idempotent).
    func restore() {
        guard enabled, !restored else { return }
        restored = true
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        FileHandle.standardError.write(Data("\u{1B}[?25h".utf8))
    }

    /// The next key pressed, if any (never blocks).
    func readKey() -> PlayerKey? {
        var byte: UInt8 = 0
        while read(STDIN_FILENO, &byte, 1) == 1 { pending.append(byte) }
        while !pending.isEmpty {
            let first = pending.removeFirst()
            switch first {
            case 0x20: return .space
            case UInt8(ascii: "+"), UInt8(ascii: "="): return .plus
            case UInt8(ascii: "-"), UInt8(ascii: "_"): return .minus
            case UInt8(ascii: "q"), UInt8(ascii: "Q"): return .quit
            case 0x1B where pending.count >= 2 && pending[0] == UInt8(ascii: "["):
                let code = pending[1]
                pending.removeFirst(2)
                if code == UInt8(ascii: "D") { return .left }
                if code == UInt8(ascii: "C") { return .right }
            default: continue
            }
        }
        return nil
    }

    /// Redraws the status line in place.
    func draw(_ line: String) {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
    }

    /// Leaves the last status on its own line.
    func finish(_ line: String) {
        guard enabled, !restored else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)\n".utf8))
    }
}
