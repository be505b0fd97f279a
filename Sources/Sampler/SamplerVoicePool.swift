import AudioGraph
import Foundation
import MIDI
import SoundFont

// The voice pool: free slots, the active list, the voice limit and which voice is stolen.
extension SamplerNode {
    func takeSlot() -> Int {
        if freeCount == 0 {
            // Even the fade reserve is full: reuse a voice that ended, else cut the fading
            // voice closest to silence.
            var victim = -1
            forEachActive { i in
                if voices[i].state == .off { victim = i }
            }
            if victim < 0 {
                forEachActive { i in
                    if victim < 0 || voices[i].fadeRemaining < voices[victim].fadeRemaining { victim = i }
                }
            }
            removeActive(victim)
        }
        freeCount -= 1
        let i = Int(freeList[freeCount])
        activeList[activeCount] = Int32(i)
        activeCount += 1
        return i
    }

    func removeActive(_ slot: Int) {
        for n in 0..<activeCount where Int(activeList[n]) == slot {
            activeList[n] = activeList[activeCount - 1]
            activeCount -= 1
            break
        }
        voices[slot].state = .off
        freeList[freeCount] = Int32(slot)
        freeCount += 1
    }

    /// Steals voices until fewer than the limit are counted (one fewer when a voice is about
    /// to start).
    func enforceLimit(leavingRoomForOne: Bool) {
        let limit = Int(parameters[Parameter.voiceLimit]) - (leavingRoomForOne ? 1 : 0)
        var counted = 0
        forEachActive { i in if voices[i].isCounted { counted += 1 } }
        while counted > limit {
            var victim = -1
            var best = Double.infinity
            forEachActive { i in
                guard voices[i].isCounted else { return }
                let p = stealPriority(i)
                if p < best { best = p; victim = i }
            }
            guard victim >= 0 else { return }
            beginFade(victim)
            counted -= 1
        }
    }

    /// Lower is stolen first: released voices by their level (quietest first), then held
    /// voices by age (oldest first).
    func stealPriority(_ i: Int) -> Double {
        let v = voices + i
        if v.pointee.released {
            let level = Double(abs(v.pointee.gainL) + abs(v.pointee.gainR)) / Double(masterGain)
            return -2 + min(level, 1)
        }
        return Double(v.pointee.serial)
    }
}
