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
        if i >= slotsTouched { slotsTouched = i + 1 }
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
            var best = Float.infinity
            forEachActive { i in
                guard voices[i].isCounted else { return }
                let p = stealPriority(i)
                // FluidSynth takes the first of equally scored voices in its voice array.
                if p < best || (p == best && voices[i].overflowSlot < voices[victim].overflowSlot) { best = p; victim = i }
            }
            guard victim >= 0 else { return }
            beginFade(victim)
            counted -= 1
        }
    }

    /// Where a new voice sits in FluidSynth's voice array: its first place no sounding voice
    /// holds (a stolen voice's place is free at once, as FluidSynth reuses it). Ties between
    /// equally scored voices go by this place, as in FluidSynth, so a chord larger than the
    /// polyphony keeps the same notes.
    func lowestFreeOverflowSlot() -> Int32 {
        let limit = min(Int(parameters[Parameter.voiceLimit]), poolSize)
        overflowSlotTaken.update(repeating: false, count: limit)
        forEachActive { i in
            let slot = Int(voices[i].overflowSlot)
            if voices[i].isCounted && slot < limit { overflowSlotTaken[slot] = true }
        }
        for slot in 0..<limit where !overflowSlotTaken[slot] { return Int32(slot) }
        return Int32(limit)
    }

    /// Lower is stolen first, scored as FluidSynth scores a voice when polyphony overflows
    /// (its defaults): drums +4000; else a released voice -2000, else one held by a pedal
    /// -1000; youth, 1000 x the sample rate / the voice's age in frames (a chord just struck
    /// is not cut into). In single precision, as FluidSynth computes it. FluidSynth also adds
    /// 500 / the voice's attenuation; next to the youth of voices struck together (44,100,000)
    /// that term vanishes in single precision for FluidSynth's attenuations, and with it left
    /// out Tactus keeps the same notes as FluidSynth on every stress file of gen_midi.py
    /// (Benchmarks/polyphony_levels.sh: within 0.11 dB), where with it in, the 15-program
    /// mix kept 2 to 7 dB more (the attenuations Tactus holds are smaller than FluidSynth's).
    func stealPriority(_ i: Int) -> Float {
        let v = voices + i
        var priority: Float = 0
        if isDrumChannel(Int(v.pointee.channel)) {
            priority += 4000
        } else if v.pointee.released {
            priority += -2000
        } else if v.pointee.sustained || v.pointee.sostenuto {
            priority += -1000
        }
        let age = Float(max(1, position - v.pointee.startFrame))
        priority += (1000 * Float(sampleRate)) / age
        return priority
    }
}
