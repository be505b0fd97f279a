"""The cases of Fuzz/sfz-mutations.py: a short song and samples, and SFZ instruments made of
random headers and opcodes with mutated values and structure, each from a seeded generator so a
case can be made again alone."""
import glob
import math
import os
import random
import re
import struct
import wave

# sfizz's test samples, from the shared material beside the repository (optional).
REAL_SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "sfz",
                            "sfizz-testfiles", "*.wav")

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
