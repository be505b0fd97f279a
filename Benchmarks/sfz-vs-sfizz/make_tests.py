#!/usr/bin/env python3
"""Make the samples and MIDI files of the SFZ test instruments beside this script.

    make_tests.py OUTDIR

Copies every *.sfz of this folder into OUTDIR, writes the samples they name into
OUTDIR/samples/ and, for each instrument NAME.sfz, writes OUTDIR/NAME.mid (the song) and
OUTDIR/NAME.notes.json (every note: start and end in seconds, key, velocity, label, whether
it is expected to sound, and whether it starts at full level so that its onset times the
note start). Everything is made at 48 kHz, deterministic (fixed seeds),
so the same files come out on every machine. Needs numpy and mido.

The samples (48 kHz, 16-bit PCM):
  saw.wav      mono, band-limited sawtooth of period 184 frames (260.87 Hz), 2 s, constant
               level -6 dBFS: every level change heard comes from the engine
  loopy.wav    mono, the same saw for 0.5 s with a level ramp from 0 dB down to -12 dB
               (relative to -6 dBFS) and a 1 ms rise, so where a loop jumps shows as a level
               step; loop_start 11960 / loop_end 23919 (65 and 130 periods) are given by
               the opcodes, not stored in the file
  click.wav    mono, 40 ms: a 500 Hz square wave at full level (-6 dBFS) from its first
               frame, decaying with a 6 ms time constant: the note-start probe
  stereo.wav   stereo, 2 s: left the saw at -6 dBFS, right a sine an octave up at -12 dBFS
"""
import json
import os
import shutil
import sys

import numpy as np
import mido

RATE = 48000
PERIOD = 184                      # frames: 48000 / 184 = 260.87 Hz
TPQ = 960                         # ticks per quarter; tempo 500000 us -> 1 tick = 25 frames
TEMPO = 500000
HERE = os.path.dirname(os.path.abspath(__file__))


def saw(n, period=PERIOD, harmonics=None):
    t = np.arange(n)
    f0 = 1.0 / period
    if harmonics is None:
        harmonics = int(0.45 / f0)  # below 0.45 x the rate: no aliasing
    x = np.zeros(n)
    for k in range(1, harmonics + 1):
        x += np.sin(2 * np.pi * k * f0 * t) / k
    return x / np.max(np.abs(x))


def write_wav(path, x):
    """x: (frames,) or (frames, channels) floats in -1..1 -> 16-bit PCM WAV."""
    import wave
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    pcm = np.clip(np.round(x * 32767), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(x.shape[1])
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.tobytes())


def make_samples(out):
    os.makedirs(out, exist_ok=True)
    half = 10 ** (-6 / 20)
    s = saw(2 * RATE)
    write_wav(os.path.join(out, "saw.wav"), half * s)
    n = RATE // 2
    ramp = 10 ** (np.linspace(0, -12, n) / 20)
    rise = np.minimum(1.0, np.arange(n) / (0.001 * RATE))
    write_wav(os.path.join(out, "loopy.wav"), half * s[:n] * ramp * rise)
    n = int(0.04 * RATE)
    # a 500 Hz square wave starting at +1 on its first frame, decaying with a 6 ms time constant
    c = np.where((np.arange(n) // 48) % 2 == 0, 1.0, -1.0) * np.exp(-np.arange(n) / (0.006 * RATE))
    write_wav(os.path.join(out, "click.wav"), half * c)
    t = np.arange(2 * RATE)
    right = 10 ** (-12 / 20) * np.sin(2 * np.pi * 2 * t / PERIOD)
    write_wav(os.path.join(out, "stereo.wav"), np.stack([half * s, right], axis=1))


# ------------------------------------------------------------------------------------------
# The songs: each a list of events (seconds, kind, ...) and the notes with their labels.

class Song:
    def __init__(self):
        self.events = []          # (seconds, order, message)
        self.notes = []

    def note(self, t, dur, key, vel=100, label="", sounds=True, timing=True):
        """timing=False: the note fades in (attack, delay), so where its onset crosses a
        threshold says more about the attack's shape than about when the note started."""
        self.events.append((t, 1, mido.Message("note_on", note=key, velocity=vel)))
        self.events.append((t + dur, 0, mido.Message("note_off", note=key, velocity=0)))
        self.notes.append({"start": t, "end": t + dur, "key": key, "vel": vel,
                           "label": label, "sounds": sounds, "timing": timing})

    def cc(self, t, num, val):
        self.events.append((t, 0, mido.Message("control_change", control=num, value=val)))

    def write(self, mid_path, notes_path, tail=2.5):
        end = max(e[0] for e in self.events) + tail
        track = mido.MidiTrack()
        track.append(mido.MetaMessage("set_tempo", tempo=TEMPO, time=0))
        tick_s = TEMPO / 1e6 / TPQ
        last = 0
        for t, _, msg in sorted(self.events, key=lambda e: (round(e[0] / tick_s), e[1])):
            tick = int(round(t / tick_s))
            track.append(msg.copy(time=tick - last))
            last = tick
        # a controller nothing reads (CC 3, undefined) at the end: sfizz_render --use-eot stops
        # at the last event, not at the End of Track's time, and tactus --tail 0 stops there
        track.append(mido.Message("control_change", control=3, value=0,
                                  time=int(round(end / tick_s)) - last))
        track.append(mido.MetaMessage("end_of_track", time=0))
        mf = mido.MidiFile(type=0, ticks_per_beat=TPQ)
        mf.tracks.append(track)
        mf.save(mid_path)
        # note times as the MIDI file has them (rounded to ticks), in seconds and frames
        for n in self.notes:
            for k in ("start", "end"):
                n[k] = round(n[k] / tick_s) * tick_s
                n[k + "_frame"] = int(round(n[k] * RATE))
        with open(notes_path, "w") as f:
            json.dump({"rate": RATE, "end": round(end / tick_s) * tick_s, "notes": self.notes},
                      f, indent=1)


def song_envelope():
    s = Song()
    t = 0.25
    # ampeg shapes, one region per key (see envelope.sfz)
    for key, label in [(60, "gate rel 50ms"), (62, "att .1 hold .05 dec .3 sus 40 rel .3"),
                       (64, "att .5 rel 1"), (65, "delay .1 att .01 dec 1 sus 0"),
                       (67, "start 20 att .2 sus 100 rel .2"), (69, "vel2attack/vel2release")]:
        s.note(t, 0.8, key, 100, label, timing=key == 60)
        t += 2.0
    s.note(t, 0.8, 69, 30, "vel2attack/vel2release, vel 30", timing=False)
    t += 2.0
    # note starts: the click at frames that are not on a 64- or 1024-frame grid, several
    # velocities (amp_veltrack default: (vel/127)^2)
    for i, vel in enumerate([127, 100, 64, 32, 127, 90, 10, 127]):
        s.note(t + 0.013 * i, 0.05, 72, vel, f"click vel {vel}")
        t += 0.25
    # two clicks on different keys, 0.2 s plus one tick (25 frames) apart
    s.note(t, 0.1, 72, 127, "click pair a")
    s.note(t + 0.2 + 1 / 1920, 0.1, 74, 127, "click pair b")
    return s


def song_loops():
    s = Song()
    t = 0.25
    for key, dur, label in [(60, 1.2, "no_loop"), (62, 1.2, "loop_continuous"),
                            (64, 1.2, "loop_sustain"), (65, 0.05, "one_shot, short note"),
                            (67, 1.2, "no_loop offset 6000 end 18000"),
                            (69, 1.2, "loop_continuous offset 2000, rel .5"),
                            (71, 1.2, "no loop_mode, loop points given")]:
        s.note(t, dur, key, 100, label)
        t += 2.5
    return s


def song_chokes():
    s = Song()
    t = 0.25
    # open hat (group 1, off_by 2) choked by the closed hat (group 2), fast
    s.note(t, 1.0, 60, 100, "open (group 1) choked at +0.4 s")
    s.note(t + 0.4, 0.3, 62, 100, "closed (group 2, chokes group 1)")
    t += 2.5
    # the same with off_mode=normal (the choked voice releases over 0.5 s)
    s.note(t, 1.0, 64, 100, "open normal-off choked at +0.4 s")
    s.note(t + 0.4, 0.3, 62, 100, "closed chokes normal-off")
    t += 2.5
    # off_mode=time off_time=0.1
    s.note(t, 1.0, 65, 100, "open off_time .1 choked at +0.4 s")
    s.note(t + 0.4, 0.3, 62, 100, "closed chokes off_time")
    t += 2.5
    # a group that chokes itself: each new note stops the last one
    for i in range(3):
        s.note(t + 0.3 * i, 0.6, 67, 100, f"self-choke {i + 1}/3")
    t += 2.5
    # note_polyphony=2: four overlapping notes on one key, each louder than the last, so
    # each new one may stop the quietest (note_selfmask, on by default). At equal velocities
    # sfizz stops whichever its active-voice list holds first, an order its swap-and-pop
    # removals scramble; Tactus stops the oldest.
    for i in range(4):
        s.note(t + 0.3 * i, 1.5, 69, 70 + 10 * i, f"note_polyphony 2, note {i + 1}/4")
    t += 3.5
    # ...and three getting softer: the self-mask spares the louder earlier notes, so all three sound
    for i in range(3):
        s.note(t + 0.3 * i, 1.5, 69, 110 - 15 * i, f"note_selfmask, note {i + 1}/3")
    t += 3.5
    # polyphony=2 on a group: three keys overlapping
    for i, key in enumerate([71, 72, 74]):
        s.note(t + 0.3 * i, 1.5, key, 100, f"group polyphony 2, key {key}")
    return s


def song_keyswitch():
    s = Song()
    t = 0.25
    melody = [60, 64, 67]
    def phrase(label):
        nonlocal t
        for k in melody:
            s.note(t, 0.4, k, 100, f"{label} key {k}")
            t += 0.6
        t += 0.6
    phrase("default switch (sw_default 36)")
    s.note(t, 0.1, 37, 100, "switch to 37", sounds=False); t += 0.3
    phrase("switch 37")
    s.note(t, 0.1, 38, 100, "switch to 38", sounds=False); t += 0.3
    phrase("switch 38")
    s.note(t, 0.1, 36, 100, "switch to 36", sounds=False); t += 0.3
    phrase("back to 36")
    # CC1 layers (locc1/hicc1) on keys 72-84
    for v in [0, 40, 63, 64, 100, 127]:
        s.cc(t - 0.1, 1, v)
        s.note(t, 0.4, 74, 100, f"cc1={v}")
        t += 0.7
    return s


def song_filters():
    s = Song()
    t = 0.25
    for key, vel, label in [(48, 100, "lpf_2p 500 Hz res 0"), (50, 100, "lpf_2p 1 kHz res 12"),
                            (52, 100, "hpf_2p 2 kHz res 6"), (53, 100, "lpf_1p 800 Hz"),
                            (55, 100, "hpf_1p 1.5 kHz"),
                            (57, 100, "fil_keytrack 100, key 57"), (63, 100, "fil_keytrack 100, key 63"),
                            (69, 100, "fil_keytrack 100, key 69"),
                            (72, 30, "fil_veltrack 2400, vel 30"), (72, 127, "fil_veltrack 2400, vel 127"),
                            (74, 100, "fileg depth 3600"), (76, 100, "lpf_2p 4 kHz res 24")]:
        s.note(t, 1.0, key, vel, label)
        t += 1.8
    return s


def song_pan():
    s = Song()
    t = 0.25
    for key, label in [(60, "mono pan 0"), (62, "mono pan -100"), (64, "mono pan 50"),
                       (65, "mono pan 100 width 50"), (67, "stereo width 100"),
                       (69, "stereo width 0"), (71, "stereo width -100"),
                       (72, "stereo width 50 pan -50"), (74, "stereo pan 100"),
                       (76, "mono pan -30 width 0")]:
        s.note(t, 0.8, key, 100, label)
        t += 1.3
    return s


def song_sfizz_looped():
    """For sfizz's own looped_regions.sfz (flute with a smpl loop; key range: all)."""
    s = Song()
    t = 0.25
    for key in [60, 67, 72]:
        s.note(t, 1.0, key, 100, f"all three regions, key {key}")
        t += 2.0
    return s


def song_sfizz_off_by():
    """For sfizz's own off_by.sfz (keys 63-65)."""
    s = Song()
    t = 0.25
    s.note(t, 0.5, 63, 100, "group 1"); s.note(t + 0.1, 0.5, 64, 100, "group 2 chokes 1")
    t += 1.5
    s.note(t, 0.5, 64, 100, "group 2"); s.note(t + 0.1, 0.5, 65, 100, "group 3 chokes 2")
    t += 1.5
    s.note(t, 0.5, 65, 100, "group 3 (two regions)"); s.note(t + 0.1, 0.5, 65, 100, "group 3 again")
    return s


SONGS = {"envelope": song_envelope, "loops": song_loops, "chokes": song_chokes,
         "keyswitch": song_keyswitch, "filters": song_filters, "pan": song_pan}
# sfizz's own test files (shared/sfz/sfizz-testfiles): name -> (sfz file, song)
SFIZZ_FILES = {"sfizz-looped_regions": ("looped_regions.sfz", song_sfizz_looped),
               "sfizz-off_by": ("off_by.sfz", song_sfizz_off_by)}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    make_samples(os.path.join(out, "samples"))
    for name, fn in SONGS.items():
        shutil.copy(os.path.join(HERE, name + ".sfz"), os.path.join(out, name + ".sfz"))
        fn().write(os.path.join(out, name + ".mid"), os.path.join(out, name + ".notes.json"))
    for name, (_, fn) in SFIZZ_FILES.items():
        fn().write(os.path.join(out, name + ".mid"), os.path.join(out, name + ".notes.json"))
    print(out)


if __name__ == "__main__":
    main()
