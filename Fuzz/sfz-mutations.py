#!/usr/bin/env python3
"""Mutation harness for the SFZ instrument path of `tactus render`.

Usage:
    python3 Fuzz/sfz-mutations.py --tactus PATH [--cases 10000] [--seed N] [--jobs 1]
                                  [--keep-failures DIR] [--only I] [--no-reduce]

Builds a short Standard MIDI File (one track, 8 notes over ~2 s across keys 36..96, several
velocities, a pitch bend, CC 1 and CC 64) and two small WAV samples (16-bit mono 44.1 kHz) in a
temporary folder, then for each case writes an SFZ instrument made of random headers and opcodes
with mutated values (boundary, huge, tiny, NaN/inf, non-numbers, empty, very long, unicode,
random bytes) and structural mutations (duplicate opcodes, missing samples, empty headers, many
regions, #define chains, #include of a generated, missing or the including file), and runs

    TACTUS render SONG.mid --instrument CASE.sfz -o OUT.wav   (sometimes .flac, --format, --mono)

with a 10 s wall-clock timeout, measuring the child's peak RSS (wait4's ru_maxrss, and /proc
polling that kills it past 1 GiB; RLIMIT_AS is 4 GiB as a backstop only).

Outcomes: crash (a signal, or an exit code >= 128 not caused by the harness), hang (over 10 s),
memory (peak RSS over 1 GiB), NaN/inf samples in an f32 WAV that exited 0 (no file may hold
them); also reported without failing the run: unexpected exit codes (not 0 and not 64..78), noisy stderr (> 50 lines or > 64 KiB), and
exit-0 renders whose summary says "peak silence" (only counted). Each case's SFZ comes from
random.Random(f"{seed}:{case}"), so `--only I` regenerates case I alone. Crashing cases are
reduced to the single opcode lines that crash on their own in a one-region instrument.

Exit status 0 when no crash, hang, memory or NaN finding; 1 otherwise; 2 for a usage problem.
"""
import argparse
import glob
import math
import os
import random
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import wave
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

TIMEOUT = 10.0
RSS_LIMIT_KB = 1024 * 1024          # 1 GiB
AS_LIMIT = 4 * 1024 ** 3            # backstop for the child's address space
CRASH_SIGNALS = {signal.SIGILL, signal.SIGTRAP, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS,
                 signal.SIGFPE}
CLEAN_CODES = {0} | set(range(64, 79))
NOISY_LINES = 50
NOISY_BYTES = 64 * 1024
REAL_SAMPLES = "/work/shared/sfz/sfizz-testfiles/*.wav"

# --------------------------------------------------------------------------- assets


def vlq(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def write_song(path):
    """Format 0, 480 ticks per quarter, 120 bpm: 8 notes over ~2 s, keys 36..96."""
    events = []  # (tick, bytes)
    events.append((0, b"\xFF\x51\x03" + (500000).to_bytes(3, "big")))
    events.append((0, b"\xC0\x00"))              # program 0
    events.append((0, b"\xB0\x07\x64"))          # volume
    notes = [(36, 100), (48, 40), (60, 127), (64, 1), (67, 90), (72, 64), (84, 110), (96, 20)]
    for i, (key, vel) in enumerate(notes):
        start = i * 240                           # an eighth apart (0.25 s)
        events.append((start, bytes([0x90, key, vel])))
        events.append((start + 360, bytes([0x80, key, 0x40])))
    events.append((120, b"\xB0\x01\x50"))        # mod wheel
    events.append((480, b"\xB0\x40\x7F"))        # sustain on
    events.append((600, b"\xE0\x00\x60"))        # pitch bend up
    events.append((900, b"\xE0\x00\x20"))        # pitch bend down
    events.append((1200, b"\xE0\x00\x40"))       # centre
    events.append((1320, b"\xB0\x40\x00"))       # sustain off
    events.append((1400, b"\xB0\x01\x00"))
    events.sort(key=lambda e: e[0])
    track = bytearray()
    now = 0
    for tick, data in events:
        track += vlq(tick - now) + data
        now = tick
    track += vlq(240) + b"\xFF\x2F\x00"
    with open(path, "wb") as f:
        f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, 480))
        f.write(b"MTrk" + struct.pack(">I", len(track)) + track)


def write_wav(path, seconds, kind):
    rate = 44100
    n = int(rate * seconds)
    frames = bytearray()
    for i in range(n):
        t = i / rate
        if kind == "sine":
            v = math.sin(2 * math.pi * 261.6256 * t) * math.exp(-6 * t)
        else:  # decaying saw
            ph = (t * 440.0) % 1.0
            v = (2 * ph - 1) * math.exp(-12 * t) * 0.8
        frames += struct.pack("<h", int(max(-1.0, min(1.0, v)) * 32000))
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(bytes(frames))


ASSETS = ["song.mid", "sine.wav", "saw.wav"]


def make_assets(folder):
    write_song(os.path.join(folder, "song.mid"))
    write_wav(os.path.join(folder, "sine.wav"), 0.4, "sine")
    write_wav(os.path.join(folder, "saw.wav"), 0.15, "saw")


# --------------------------------------------------------------------------- values

SPECIAL = ["0", "-1", "1", "127", "128", "-128", "255", "256", "65535", "65536",
           "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296",
           "9223372036854775807", "9223372036854775808", "-9223372036854775808",
           "-9223372036854775809", "18446744073709551616", "1e17", "-1e17", "1e18", "1e19",
           "1e39", "-1e39", "3.4028235e38", "1e300", "-1e300", "1e308", "1.8e308", "-1.8e308",
           "1e-300", "-1e-300", "1e-45", "5e-324", "-0", "-0.0", "0.0000001", "nan", "NaN",
           "-nan", "inf", "-inf", "+inf", "Infinity", "1e", "e5", ".", "-", "+", "1.2.3",
           "0x7f", "1_000", "12abc", "abc", "", " ", "=", "c4", "c#4", "db-1", "g9", "c-2",
           "h4", "true", "on", "off"]
HUGE = ["1e17", "-1e17", "1e19", "1e39", "-1e39", "1e300", "-1e300", "1e308", "2147483648",
        "-2147483649", "9223372036854775808", "-9223372036854775809", "inf", "-inf", "nan"]
UNICODE = ["\u00e4\u00f6\u00fc", "c\u266f4", "\u200b", "\U0001F3B9", "\u0661\u0662\u0667",
           "\uFF11\uFF12", "e\u0301", "\u221e", "\u2212" + "5", "\ufeff60"]


def long_token(rng):
    n = rng.choice([64, 300, 1000, 4000])
    return rng.choice([lambda: "9" * n, lambda: "a" * n, lambda: "1" + "0" * n,
                       lambda: "0." + "0" * n + "1", lambda: "-" + "9" * n,
                       lambda: "1e" + "9" * min(n, 400), lambda: "$" * n])()


def typical(rng, kind):
    if kind == "key":
        if rng.random() < 0.25:
            return rng.choice("cdefgab") + rng.choice(["", "#", "b"]) + str(rng.randint(-1, 9))
        return str(rng.randint(0, 127))
    if kind == "vel":
        return str(rng.randint(0, 127))
    if kind == "cc":
        return str(rng.randint(0, 127))
    if kind == "pct":
        return str(round(rng.uniform(-100, 100), 2))
    if kind == "db":
        return str(round(rng.uniform(-60, 12), 2))
    if kind == "cents":
        return str(rng.randint(-2400, 2400))
    if kind == "semis":
        return str(rng.randint(-24, 24))
    if kind == "time":
        return str(round(rng.choice([0, 0.001, 0.01, 0.1, 0.5, 1, 2]) * rng.random(), 4))
    if kind == "hz":
        return str(round(rng.uniform(0.1, 20000), 1))
    if kind == "frames":
        return str(rng.randint(0, 20000))
    if kind == "int":
        return str(rng.randint(0, 16))
    if kind == "unit":
        return str(round(rng.random(), 3))
    if kind == "float":
        return str(round(rng.uniform(-10, 10), 3))
    if isinstance(kind, tuple):      # enum
        return rng.choice(kind)
    return str(rng.randint(0, 127))


def mutated(rng, kind):
    r = rng.random()
    if r < 0.50:
        return typical(rng, kind)
    if r < 0.62:
        return rng.choice(HUGE)
    if r < 0.90:
        return rng.choice(SPECIAL)
    if r < 0.94:
        return long_token(rng)
    if r < 0.97:
        return rng.choice(UNICODE)
    if r < 0.985:
        return typical(rng, kind) + rng.choice(["", " ", "  junk", "\t", " // c", " /* c */"])
    return "\0RAWBYTES%d\0" % rng.randint(1, 64)     # replaced by random bytes on write


# --------------------------------------------------------------------------- opcodes

FIL_TYPES = ("lpf_1p", "hpf_1p", "lpf_2p", "hpf_2p", "bpf_2p", "brf_2p", "lpf_4p", "hpf_4p",
             "lpf_6p", "hpf_6p", "pkf_2p", "lsh", "hsh", "apf_1p", "lpf_2p_sv", "bogus")
LOOP_MODES = ("no_loop", "one_shot", "loop_continuous", "loop_sustain", "bogus")
TRIGGERS = ("attack", "release", "first", "legato", "release_key", "bogus")
OFF_MODES = ("fast", "normal", "time", "bogus")
VELCURVE = ("curve",)


def region_opcodes(rng):
    """A fresh (name, kind) list: some names carry random indices (amp_velcurve_N, ccN, lfoN)."""
    n = lambda lo=0, hi=127: rng.choice([rng.randint(lo, hi), rng.randint(lo, hi), 0, 127, 128,
                                        -1, 1000, 2 ** 31 - 1, 2 ** 32])
    e = lambda: rng.choice([1, 1, 2, 3, 0, 9, 100])
    return [
        ("tune", "cents"), ("transpose", "semis"), ("pitch_keycenter", "key"),
        ("pitch_keytrack", "cents"), ("pitch_veltrack", "cents"), ("pitch_random", "cents"),
        ("pitch", "cents"),
        ("lokey", "key"), ("hikey", "key"), ("key", "key"), ("lovel", "vel"), ("hivel", "vel"),
        ("lochan", "int"), ("hichan", "int"), ("lobend", "float"), ("hibend", "float"),
        ("volume", "db"), ("pan", "pct"), ("width", "pct"), ("position", "pct"),
        ("amplitude", "pct"), ("amp_veltrack", "pct"), ("amp_keytrack", "db"),
        ("amp_keycenter", "key"), ("amp_random", "db"), ("rt_decay", "db"),
        ("amp_velcurve_%d" % n(), "unit"), ("amp_velcurve_%d" % n(), "unit"),
        ("gain_cc%d" % n(), "db"), ("volume_oncc%d" % n(), "db"), ("pan_oncc%d" % n(), "pct"),
        ("amplitude_oncc%d" % n(), "pct"), ("tune_oncc%d" % n(), "cents"),
        ("ampeg_attack", "time"), ("ampeg_decay", "time"), ("ampeg_sustain", "pct"),
        ("ampeg_release", "time"), ("ampeg_hold", "time"), ("ampeg_delay", "time"),
        ("ampeg_start", "pct"), ("ampeg_vel2attack", "time"), ("ampeg_vel2release", "time"),
        ("ampeg_attack_oncc%d" % n(), "time"), ("ampeg_release_oncc%d" % n(), "time"),
        ("fileg_attack", "time"), ("fileg_decay", "time"), ("fileg_sustain", "pct"),
        ("fileg_release", "time"), ("fileg_depth", "cents"), ("fileg_hold", "time"),
        ("fileg_delay", "time"),
        ("pitcheg_attack", "time"), ("pitcheg_decay", "time"), ("pitcheg_sustain", "pct"),
        ("pitcheg_release", "time"), ("pitcheg_depth", "cents"),
        ("cutoff", "hz"), ("cutoff2", "hz"), ("resonance", "db"), ("resonance2", "db"),
        ("fil_type", FIL_TYPES), ("fil2_type", FIL_TYPES), ("fil_keytrack", "cents"),
        ("fil_keycenter", "key"), ("fil_veltrack", "cents"), ("fil_random", "cents"),
        ("cutoff_oncc%d" % n(), "cents"), ("fil_gain", "db"),
        ("offset", "frames"), ("offset_random", "frames"), ("offset_oncc%d" % n(), "frames"),
        ("end", "frames"), ("loop_mode", LOOP_MODES), ("loopmode", LOOP_MODES),
        ("loop_start", "frames"), ("loop_end", "frames"), ("loopstart", "frames"),
        ("loopend", "frames"), ("loop_count", "int"), ("loop_crossfade", "time"),
        ("count", "int"), ("trigger", TRIGGERS), ("group", "int"), ("off_by", "int"),
        ("off_mode", OFF_MODES), ("off_time", "time"), ("polyphony", "int"),
        ("note_polyphony", "int"), ("polyphony_group", "int"), ("seq_length", "int"),
        ("seq_position", "int"), ("lorand", "unit"), ("hirand", "unit"), ("delay", "time"),
        ("delay_random", "time"), ("delay_oncc%d" % n(), "time"),
        ("xfin_lokey", "key"), ("xfin_hikey", "key"), ("xfout_lokey", "key"),
        ("xfout_hikey", "key"), ("xfin_lovel", "vel"), ("xfin_hivel", "vel"),
        ("xfout_lovel", "vel"), ("xfout_hivel", "vel"), ("xf_keycurve", ("gain", "power", "x")),
        ("xf_velcurve", ("gain", "power", "x")),
        ("xfin_locc%d" % n(), "cc"), ("xfin_hicc%d" % n(), "cc"),
        ("locc%d" % n(), "cc"), ("hicc%d" % n(), "cc"), ("on_locc%d" % n(), "cc"),
        ("on_hicc%d" % n(), "cc"),
        ("lfo%d_freq" % e(), "hz"), ("lfo%d_pitch" % e(), "cents"), ("lfo%d_volume" % e(), "db"),
        ("lfo%d_cutoff" % e(), "cents"), ("lfo%d_wave" % e(), "int"), ("lfo%d_delay" % e(), "time"),
        ("lfo%d_fade" % e(), "time"), ("lfo%d_phase" % e(), "unit"),
        ("amplfo_freq", "hz"), ("amplfo_depth", "db"), ("pitchlfo_freq", "hz"),
        ("pitchlfo_depth", "cents"), ("fillfo_freq", "hz"), ("fillfo_depth", "cents"),
        ("eq%d_gain" % e(), "db"), ("eq%d_freq" % e(), "hz"), ("eq%d_bw" % e(), "float"),
        ("bend_up", "cents"), ("bend_down", "cents"), ("bend_step", "cents"),
        ("bend_smooth", "time"),
        ("sw_lokey", "key"), ("sw_hikey", "key"), ("sw_last", "key"), ("sw_down", "key"),
        ("sw_up", "key"), ("sw_previous", "key"), ("sw_default", "key"), ("sw_vel",
                                                                          ("current", "previous")),
        ("note_offset", "semis"), ("octave_offset", "int"), ("set_cc%d" % n(), "cc"),
        ("set_hdcc%d" % n(), "unit"), ("direction", ("forward", "reverse", "x")),
        ("sample_fadeout", "time"), ("oscillator", ("on", "off", "auto")),
        ("oscillator_phase", "unit"), ("sustain_sw", ("on", "off")),
        ("sustain_cc", "cc"), ("sostenuto_sw", ("on", "off")), ("key_release", "key"),
        ("random_%d" % n(), "unit"), ("hint_ram_based", "int"), ("label_cc%d" % n(), "float"),
        ("sample_quality", "int"), ("output", "int"), ("image", "float"),
    ]


CURVE_OPCODES = [("curve_index", "int")] + [("v%03d" % k, "unit") for k in range(0, 128, 7)]
CONTROL_OPCODES = [("default_path", "path"), ("note_offset", "semis"),
                   ("octave_offset", "int"), ("set_cc1", "cc"), ("set_cc64", "cc"),
                   ("label_cc1", "float"), ("hint_ram_based", "int")]


class Case:
    def __init__(self, seed, index, real_sample):
        self.rng = random.Random("%s:%d" % (seed, index))
        self.index = index
        self.real = real_sample
        self.include = None          # text of inc.sfz, if generated
        self.lines = []              # each line: one header or one opcode or directive
        self.output_ext = ".wav"
        self.extra_args = []
        self.float_wav = False

    def sample_value(self):
        rng = self.rng
        r = rng.random()
        if r < 0.60:
            return rng.choice(["sine.wav", "saw.wav", "sine.wav"])
        if r < 0.68 and self.real:
            return self.real
        if r < 0.74:
            return rng.choice(["*sine", "*saw", "*square", "*triangle", "*noise", "*silence",
                               "*bogus"])
        if r < 0.80:
            return rng.choice(["missing.wav", "nope/none.flac", "song.mid", "case.sfz", "",
                               "./sine.wav", "../sine.wav", "SINE.WAV", "sine.wav ",
                               "sub\\sine.wav", "/", "/dev/null", "/dev/zero", "."])
        if r < 0.85:
            return "sine.wav" + " " * rng.randint(1, 3) + rng.choice(["x", "y=1", ""])
        return rng.choice(["sine.wav", "saw.wav"])

    def value_for(self, kind):
        if kind == "path":
            return self.rng.choice(["", "./", "sub/", "../", "/nonexistent/", "a\\b\\",
                                    long_token(self.rng)[:200] + "/"])
        return mutated(self.rng, kind)

    def opcode_lines(self, pool, count):
        rng = self.rng
        out = []
        for _ in range(count):
            name, kind = rng.choice(pool)
            out.append("%s=%s" % (name, self.value_for(kind)))
            if rng.random() < 0.06:   # duplicate with another value
                out.append("%s=%s" % (name, self.value_for(kind)))
        return out

    def generate(self):
        rng = self.rng
        pool = region_opcodes(rng)
        L = self.lines
        defines = []
        if rng.random() < 0.15:
            depth = rng.choice([1, 2, 5, 20, 60])
            first = self.value_for(rng.choice(["key", "cents", "db", "semis", "float"]))
            L.append("#define $V0 %s" % first)
            for d in range(1, depth):
                L.append("#define $V%d $V%d" % (d, d - 1))
            defines.append("$V%d" % (depth - 1))
            if rng.random() < 0.2:
                L.append("#define $SELF $SELF")
                defines.append("$SELF")
            if rng.random() < 0.2:
                L.append("#define $UNDEF_%s x" % ("Q" * rng.randint(1, 300)))
        if rng.random() < 0.2:
            L.append("<control>")
            L += self.opcode_lines(CONTROL_OPCODES, rng.randint(1, 4))
        if rng.random() < 0.12:
            L.append("<curve>")
            L += self.opcode_lines(CURVE_OPCODES, rng.randint(1, 8))
        if rng.random() < 0.12:
            r = rng.random()
            if r < 0.5:
                self.include = "\n".join(["<region>", "sample=%s" % self.sample_value()] +
                                         self.opcode_lines(pool, rng.randint(0, 6))) + "\n"
                L.append('#include "inc.sfz"')
            elif r < 0.75:
                L.append('#include "%s"' % rng.choice(["missing.sfz", "sub/../missing.sfz", "",
                                                        "/dev/null", "song.mid", "/"]))
            else:
                L.append('#include "case.sfz"')        # itself: an include cycle
        if rng.random() < 0.3:
            L.append("<global>")
            L += self.opcode_lines(pool, rng.randint(0, 5))
        if rng.random() < 0.15:
            L.append("<master>")
            L += self.opcode_lines(pool, rng.randint(0, 4))
        many = rng.random() < 0.01
        groups = rng.randint(1, 3)
        for _ in range(groups):
            if rng.random() < 0.7:
                L.append("<group>")
                L += self.opcode_lines(pool, rng.randint(0, 5))
            if rng.random() < 0.05:
                continue                      # a group without regions
            regions = rng.randint(500, 3000) if many else rng.randint(1, 6)
            for _ in range(regions):
                L.append("<region>")
                if rng.random() < 0.93:
                    L.append("sample=%s" % self.sample_value())
                if many:
                    L.append("key=%d" % rng.randint(0, 127))
                    L += self.opcode_lines(pool, rng.randint(0, 2))
                else:
                    L += self.opcode_lines(pool, rng.randint(0, 8))
                if defines and rng.random() < 0.5:
                    name, _ = rng.choice(pool)
                    L.append("%s=%s" % (name, rng.choice(defines)))
        if rng.random() < 0.05:
            L.append(rng.choice(["<region>", "<group>", "<bogus>", "<", "<region", "region>",
                                 "</region>", "<>"]))
        if rng.random() < 0.05:     # structural junk
            L.append(rng.choice(["=5", "tune", "tune==5", "tune= 5", "/* unterminated",
                                 "// comment", "sample", "sample=", "key=60 key=61",
                                 "#", "#bogus", "#define", "#define $", "#include",
                                 "$undefined=3", "lokey=$undefined"]))
        # output variants
        r = rng.random()
        if r < 0.40:
            self.extra_args = ["--format", "wav,f32"]
            self.float_wav = True
        elif r < 0.48:
            self.extra_args = ["--format", "wav,s24"]
        elif r < 0.54:
            self.output_ext = ".flac"
        elif r < 0.57:
            self.output_ext = ".flac"
            self.extra_args = ["--format", "flac,s24"]
        elif r < 0.62:
            self.extra_args = ["--mono", "--format", "f32"]
            self.float_wav = True
        return self

    def render_text(self, lines=None):
        rng = random.Random("bytes:%d" % self.index)
        data = bytearray()
        for line in (self.lines if lines is None else lines):
            raw = line.encode("utf-8", "surrogatepass")
            if b"\0RAWBYTES" in raw:
                def rep(m):
                    return bytes(rng.randrange(256) for _ in range(int(m.group(1))))
                raw = re.sub(rb"\0RAWBYTES(\d+)\0", rep, raw)
            data += raw + b"\n"
        return bytes(data)


# --------------------------------------------------------------------------- running


def set_limits():
    try:
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    except (ValueError, OSError):
        pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def rss_kb(pid):
    try:
        with open("/proc/%d/statm" % pid) as f:
            return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return 0


def run(cmd, cwd, stdout_path, stderr_path):
    """Returns dict(code, signal, wall, rss_kb, killed) for the command."""
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        start = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             preexec_fn=set_limits, start_new_session=True)
    killed = None
    peak_polled = 0
    delay = 0.002
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        now = time.monotonic() - start
        if killed is None:
            r = rss_kb(p.pid)
            peak_polled = max(peak_polled, r)
            if now > TIMEOUT:
                killed = "hang"
            elif r > RSS_LIMIT_KB:
                killed = "memory"
            if killed:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(delay)
        delay = min(delay * 1.5, 0.02)
    wall = time.monotonic() - start
    p.returncode = os.waitstatus_to_exitcode(status)   # keep subprocess from reaping it again
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    return {"code": code, "signal": sig, "wall": wall, "rss_kb": max(ru.ru_maxrss, peak_polled),
            "killed": killed}


def float_wav_nonfinite(path):
    """Counts NaN/inf samples in a float WAV (None when not a float WAV or unreadable)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    pos, fmt, bits, body = 12, None, None, None
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        chunk = data[pos + 8:pos + 8 + size]
        if cid == b"fmt ":
            fmt, _, _, _, _, bits = struct.unpack("<HHIIHH", chunk[:16])
            if fmt == 0xFFFE and len(chunk) >= 26:
                fmt = struct.unpack("<H", chunk[24:26])[0]
        elif cid == b"data":
            body = chunk
        pos += 8 + size + (size & 1)
    if fmt != 3 or body is None:
        return None
    width = bits // 8
    if width not in (4, 8):
        return None
    hi = body[width - 1::width]
    count = 0
    for m in re.finditer(rb"[\x7f\xff]", hi):
        i = m.start() * width
        if width == 4:
            v = struct.unpack("<f", body[i:i + 4])[0]
        else:
            v = struct.unpack("<d", body[i:i + 8])[0]
        if not math.isfinite(v):
            count += 1
    return count


def classify(res, stderr_bytes, stdout_bytes):
    if res["killed"] == "hang":
        return "hang"
    if res["killed"] == "memory" or res["rss_kb"] > RSS_LIMIT_KB:
        return "memory"
    if res["signal"]:
        return "crash"
    if res["code"] is not None and res["code"] >= 128:
        return "crash"
    return "ok"


FRAME = re.compile(r"\s\d+ .*?0x[0-9a-f]+ (.+?) \+ \d+ in .*? at (/\S+?\.swift:\d+(?::\d+)?)")


def stderr_tail(data, lines=4):
    """The Swift runtime failure / fatal error message and the first project frame, else the
    last lines of stderr."""
    text = data.decode("utf-8", "replace").rstrip("\n").splitlines()
    parts = []
    for l in text:
        m = re.search(r"\*\*\* (Swift runtime failure: .*?) \*\*\*", l)
        if m:
            parts.append(m.group(1))
            break
    for l in text:
        if "Fatal error" in l or "fatal error" in l or "Precondition failed" in l:
            parts.append(l.strip())
            break
    for l in text:
        m = FRAME.search(l)
        if m and "<compiler-generated>" not in l:
            parts.append("%s at %s" % (m.group(1), m.group(2)))
            break
    if parts:
        return " | ".join(p[:300] for p in parts)
    return " | ".join(l[:300] for l in text[-lines:] if l.strip())


class Harness:
    def __init__(self, args):
        self.args = args
        self.tactus = os.path.abspath(args.tactus)
        self.tmp = tempfile.mkdtemp(prefix="sfz-mut-")
        self.assets = os.path.join(self.tmp, "assets")
        os.makedirs(self.assets)
        make_assets(self.assets)
        reals = sorted(glob.glob(REAL_SAMPLES))
        reals = [r for r in reals if os.path.getsize(r) < 2_000_000]
        self.real = reals[0] if reals else None
        self.lock = threading.Lock()
        self.codes = Counter()
        self.kinds = Counter()
        self.findings = []            # (kind, index, detail)
        self.silence = 0
        self.noisy = []
        self.nonfinite = []
        self.unexpected = []
        self.max_wall = (0.0, -1)
        self.max_rss = (0, -1)
        self.done = 0
        self.slots = []
        for j in range(max(1, args.jobs)):
            d = os.path.join(self.tmp, "slot%d" % j)
            os.makedirs(d)
            for a in ASSETS:
                os.symlink(os.path.join(self.assets, a), os.path.join(d, a))
            self.slots.append(d)
        self.free = list(range(len(self.slots)))

    def command(self, case, folder):
        out = os.path.join(folder, "out" + case.output_ext)
        return [self.tactus, "render", "song.mid", "--instrument", "case.sfz", "-o",
                "out" + case.output_ext] + case.extra_args, out

    def write_case(self, case, folder, lines=None):
        with open(os.path.join(folder, "case.sfz"), "wb") as f:
            f.write(case.render_text(lines))
        inc = os.path.join(folder, "inc.sfz")
        if case.include is not None:
            with open(inc, "w") as f:
                f.write(case.include)
        elif os.path.exists(inc):
            os.unlink(inc)

    def execute(self, case, folder, lines=None):
        self.write_case(case, folder, lines)
        cmd, out = self.command(case, folder)
        if os.path.exists(out):
            os.unlink(out)
        res = run(cmd, folder, os.path.join(folder, "stdout"), os.path.join(folder, "stderr"))
        with open(os.path.join(folder, "stderr"), "rb") as f:
            err = f.read()
        with open(os.path.join(folder, "stdout"), "rb") as f:
            sout = f.read()
        return cmd, out, res, err, sout

    def keep(self, case, folder, kind, cmd, err):
        if not self.args.keep_failures:
            return None
        dest = os.path.join(os.path.abspath(self.args.keep_failures),
                            "case-%05d-%s" % (case.index, kind))
        os.makedirs(dest, exist_ok=True)
        for name in ["case.sfz", "inc.sfz"]:
            src = os.path.join(folder, name)
            if os.path.exists(src) and (name != "inc.sfz" or case.include is not None):
                shutil.copy(src, dest)
        for a in ASSETS:
            shutil.copy(os.path.join(self.assets, a), dest)
        with open(os.path.join(dest, "stderr.txt"), "wb") as f:
            f.write(err)
        repro = "cd %s && %s" % (shlex.quote(dest), " ".join(shlex.quote(c) for c in cmd))
        with open(os.path.join(dest, "repro.sh"), "w") as f:
            f.write("#!/bin/sh\n# case %d of seed %s: %s\n%s\n" % (case.index, self.args.seed,
                                                                    kind, repro))
        return repro

    def one(self, index):
        case = Case(self.args.seed, index, self.real).generate()
        with self.lock:
            slot = self.free.pop()
        folder = self.slots[slot]
        try:
            cmd, out, res, err, sout = self.execute(case, folder)
            kind = classify(res, err, sout)
            with self.lock:
                self.done += 1
                label = ("sig %s" % signal.Signals(res["signal"]).name) if res["signal"] else \
                        ("timeout" if res["killed"] else "exit %s" % res["code"])
                if res["killed"]:
                    label = "killed (%s)" % res["killed"]
                self.codes[label] += 1
                self.kinds[kind] += 1
                if res["wall"] > self.max_wall[0]:
                    self.max_wall = (res["wall"], index)
                if res["rss_kb"] > self.max_rss[0]:
                    self.max_rss = (res["rss_kb"], index)
            extra = None
            if kind == "ok":
                if res["code"] == 0 and b"peak silence" in sout + err:
                    with self.lock:
                        self.silence += 1
                if res["code"] == 0 and case.float_wav:
                    bad = float_wav_nonfinite(out)
                    if bad:
                        extra = ("nonfinite", "%d NaN/inf samples" % bad)
                if res["code"] not in CLEAN_CODES:
                    extra = ("unexpected", "exit %s: %s" % (res["code"], stderr_tail(err)))
                if err.count(b"\n") > NOISY_LINES or len(err) > NOISY_BYTES:
                    with self.lock:
                        self.noisy.append((index, err.count(b"\n"), len(err)))
            if kind != "ok":
                repro = self.keep(case, folder, kind, cmd, err)
                with self.lock:
                    self.findings.append({"kind": kind, "index": index, "res": res,
                                          "tail": stderr_tail(err), "repro": repro,
                                          "lines": list(case.lines), "case": case})
            elif extra:
                repro = self.keep(case, folder, extra[0], cmd, err)
                with self.lock:
                    (self.nonfinite if extra[0] == "nonfinite" else self.unexpected).append(
                        (index, extra[1], repro))
            if os.path.exists(out):
                os.unlink(out)
        finally:
            with self.lock:
                self.free.append(slot)

    # ------------------------------------------------------------------ reduction
    def reduce(self, budget=400):
        """Tries each opcode line of crashing cases alone in `<region> sample=sine.wav`."""
        tried = {}
        causes = {}                    # signature -> list of minimal lines
        folder = self.slots[0]
        runs = 0
        for f in self.findings:
            if f["kind"] != "crash":
                continue
            case = f["case"]
            f["minimal"] = []
            for line in case.lines:
                if line.startswith("<") or line.startswith("#") or "=" not in line or \
                        line.startswith("sample="):
                    continue
                if line not in tried:
                    if runs >= budget:
                        continue
                    runs += 1
                    saved = case.include
                    case.include = None
                    _, out, res, err, _ = self.execute(
                        case, folder, ["<region>", "sample=sine.wav", line])
                    case.include = saved
                    tried[line] = (classify(res, err, b"") == "crash", res, stderr_tail(err))
                    if os.path.exists(out):
                        os.unlink(out)
                hit, res, tail = tried[line]
                if hit:
                    f["minimal"].append(line)
                    code = ("sig %d" % res["signal"]) if res["signal"] else "exit %s" % res["code"]
                    causes.setdefault((code, tail), set()).add(line)
        return causes, runs

    def summary(self, total, elapsed, causes, runs):
        a = self.args
        print("\n=== SFZ mutation summary ===")
        print("binary: %s  seed: %s  cases run: %d/%d  jobs: %d" %
              (self.tactus, a.seed, self.done, total, a.jobs))
        print("outcomes by exit: " + ", ".join("%s: %d" % kv for kv in sorted(self.codes.items())))
        print("classes: " + ", ".join("%s: %d" % kv for kv in sorted(self.kinds.items())))
        print("exit 0 with 'peak silence': %d" % self.silence)
        print("max wall time: %.2f s (case %d)" % self.max_wall)
        print("max RSS: %.1f MiB (case %d)" % (self.max_rss[0] / 1024, self.max_rss[1]))
        print("total time: %.1f s (%.1f ms/case)" % (elapsed, 1000 * elapsed / max(1, self.done)))
        for kind in ("crash", "hang", "memory"):
            items = sorted((f for f in self.findings if f["kind"] == kind),
                           key=lambda f: f["index"])
            print("\n%s findings: %d" % (kind, len(items)))
            for f in items[:40]:
                r = f["res"]
                print("  case %d: exit %s signal %s wall %.2f s rss %.0f MiB :: %s" %
                      (f["index"], r["code"], r["signal"], r["wall"], r["rss_kb"] / 1024,
                       f["tail"][:300]))
                if f.get("minimal"):
                    print("    alone crashes: " + "; ".join(l[:80] for l in f["minimal"]))
                if f["repro"]:
                    print("    repro: " + f["repro"])
            if len(items) > 40:
                print("  ... %d more" % (len(items) - 40))
        print("\nNaN/inf in f32 output: %d" % len(self.nonfinite))
        for idx, d, repro in self.nonfinite[:20]:
            print("  case %d: %s%s" % (idx, d, ("\n    repro: " + repro) if repro else ""))
        print("unexpected exit codes (not 0, 64..78, not crash): %d" % len(self.unexpected))
        for idx, d, repro in self.unexpected[:20]:
            print("  case %d: %s" % (idx, d[:300]))
        print("noisy stderr (> %d lines or > %d bytes): %d" % (NOISY_LINES, NOISY_BYTES,
                                                               len(self.noisy)))
        for idx, nl, nb in self.noisy[:10]:
            print("  case %d: %d lines, %d bytes" % (idx, nl, nb))
        if causes is not None:
            print("\ndistinct crash causes (single opcode lines that crash alone in "
                  "'<region> sample=sine.wav'; %d reduction runs):" % runs)
            if not causes:
                print("  (none reproduced by a single line)")
            for (code, tail), lines in sorted(causes.items(), key=lambda kv: -len(kv[1])):
                ls = sorted(lines, key=len)
                print("  [%s] %s" % (code, tail[:400]))
                print("    %d lines, e.g.: %s" % (len(ls), "; ".join(l[:60] for l in ls[:12])))
            unreduced = [f["index"] for f in self.findings
                         if f["kind"] == "crash" and not f.get("minimal")]
            if unreduced:
                print("  crashes not explained by a single line: cases %s" %
                      ", ".join(map(str, unreduced[:30])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tactus")
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--keep-failures", metavar="DIR")
    ap.add_argument("--only", type=int, metavar="I", help="run case I alone (keeps it in DIR)")
    ap.add_argument("--print-case", type=int, metavar="I", help="print case I's SFZ and exit")
    ap.add_argument("--no-reduce", action="store_true")
    ap.add_argument("--reduce-budget", type=int, default=400)
    args = ap.parse_args()
    if args.print_case is not None:
        sys.stdout.buffer.write(Case(args.seed, args.print_case, None).generate().render_text())
        return 0
    if not args.tactus or not os.access(args.tactus, os.X_OK):
        print("not executable: %s" % args.tactus, file=sys.stderr)
        return 2
    h = Harness(args)
    indices = [args.only] if args.only is not None else list(range(args.cases))
    started = time.monotonic()
    try:
        if args.jobs <= 1:
            for n, i in enumerate(indices):
                h.one(i)
                if (n + 1) % 500 == 0:
                    print("%d cases, %.0f s, crash %d hang %d memory %d" % (
                        n + 1, time.monotonic() - started, h.kinds["crash"], h.kinds["hang"],
                        h.kinds["memory"]), file=sys.stderr, flush=True)
        else:
            with ThreadPoolExecutor(args.jobs) as pool:
                list(pool.map(h.one, indices))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    elapsed = time.monotonic() - started
    causes, runs = (None, 0)
    if not args.no_reduce and any(f["kind"] == "crash" for f in h.findings):
        causes, runs = h.reduce(args.reduce_budget)
    h.summary(len(indices), elapsed, causes, runs)
    shutil.rmtree(h.tmp, ignore_errors=True)
    failed = any(f["kind"] in ("crash", "hang", "memory") for f in h.findings) or h.nonfinite
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
