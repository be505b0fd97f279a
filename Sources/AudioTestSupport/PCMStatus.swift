import Foundation

/// The state ALSA reports for one PCM substream (`/proc/asound/CARD/pcmDEVICE{p,c}/subN/status`),
/// for tests that must wait until another program's stream runs rather than for a fixed time.
public enum PCMStatus {
    /// The status file of a substream; `card` is the card's id (`Loopback`) or number.
    public static func path(card: String, device: Int, subdevice: Int, capture: Bool) -> String {
        "/proc/asound/\(card)/pcm\(device)\(capture ? "c" : "p")/sub\(subdevice)/status"
    }

    /// Whether the substream's state is RUNNING now (the file says `state: RUNNING`).
    public static func isRunning(card: String, device: Int, subdevice: Int, capture: Bool) -> Bool {
        guard let text = try? String(contentsOfFile: path(card: card, device: device, subdevice: subdevice, capture: capture), encoding: .utf8)
        else { return false }
        return text.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == "state: RUNNING" }
    }

    /// Waits until the substream runs, or `seconds` pass; true when it ran.
    public static func waitUntilRunning(card: String, device: Int, subdevice: Int, capture: Bool, seconds: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if isRunning(card: card, device: device, subdevice: subdevice, capture: capture) { return true }
            usleep(2_000)
        } while Date() < deadline
        return false
    }
}
