#!/usr/bin/env bash
# Exact timing: renders Songs/click-track.mid (one click a beat through four tempos) with
# `tactus render` and with FluidSynth from the same SoundFont, reverb and chorus off, and checks
# every click's onset (onsets.py, click mode: the first non-zero sample after silence) against
# the frame the tempo map gives its tick. Both render 32-bit float: in 16-bit the first, tiny
# points of a click round to zero, and where the first audible sample falls would depend on the
# level, not the timing. Prints the error figures of both renders; exits 1 unless every Tactus
# onset is on its exact frame.
#
#   Benchmarks/onsets_click_track.sh [SOUNDFONT]   (default /usr/share/sounds/sf2/FluidR3_GM.sf2)
# Environment: TACTUS (binary, default .build/release/tactus), ONSETS (onsets.py).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SF=${1:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
TACTUS=${TACTUS:-$ROOT/.build/release/tactus}
ONSETS=${ONSETS:-$ROOT/../shared/bench/onsets.py}
[ -f "$ONSETS" ] || ONSETS=/work/shared/bench/onsets.py
SONG=$ROOT/Songs/click-track.mid
if [ ! -x "$TACTUS" ]; then
  (cd "$ROOT" && swift build -c release --product tactus >&2) || exit 2
fi
OUT=$(mktemp -d /tmp/tactus-onsets.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
# Expected frames, from the file's own tempo map, in exact integer arithmetic (round half up,
# as Tactus's tempo map rounds).
python3 - "$SONG" > "$OUT/expected.txt" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
fmt, ntrk, ppq = struct.unpack('>HHH', data[8:14])
pos, tempos, notes = 14, [(0, 500000)], []
for _ in range(ntrk):
    size = struct.unpack('>I', data[pos + 4:pos + 8])[0]
    p, end, tick, status = pos + 8, pos + 8 + size, 0, 0
    while p < end:
        v = 0
        while True:
            b = data[p]; p += 1; v = (v << 7) | (b & 0x7F)
            if b < 0x80: break
        tick += v
        if data[p] >= 0x80: status = data[p]; p += 1
        if status == 0xFF:
            kind = data[p]; p += 1
            n = 0
            while True:
                b = data[p]; p += 1; n = (n << 7) | (b & 0x7F)
                if b < 0x80: break
            if kind == 0x51: tempos.append((tick, int.from_bytes(data[p:p + 3], 'big')))
            p += n
        elif status in (0xF0, 0xF7):
            n = 0
            while True:
                b = data[p]; p += 1; n = (n << 7) | (b & 0x7F)
                if b < 0x80: break
            p += n
        else:
            d = data[p:p + (1 if status & 0xF0 in (0xC0, 0xD0) else 2)]
            p += len(d)
            if status & 0xF0 == 0x90 and d[1] > 0: notes.append(tick)
    pos = end
tempos.sort()
def frame(t):
    us = 0; last_tick, last_tempo = 0, 500000
    for tt, tempo in tempos:
        if tt > t: break
        us += (tt - last_tick) * last_tempo; last_tick, last_tempo = tt, tempo
    us += (t - last_tick) * last_tempo          # microseconds x ppq
    num, den = us * 44100, ppq * 1000000
    return (2 * num + den) // (2 * den)
for t in sorted(notes): print(frame(t))
PY
"$TACTUS" render "$SONG" -o "$OUT/tactus.wav" --format f32 --soundfont "$SF" --no-reverb --no-chorus --quiet >/dev/null || exit 2
fluidsynth -ni -q -F "$OUT/fluidsynth.wav" -O float -r 44100 -o synth.reverb.active=0 -o synth.chorus.active=0 "$SF" "$SONG" >/dev/null 2>&1
status=0
for who in tactus fluidsynth; do
  python3 "$ONSETS" "$OUT/$who.wav" --mode click --threshold-db -300 --expect "$OUT/expected.txt" --expect-unit samples \
      --tolerance-samples 0 --json > "$OUT/$who.json"
  python3 - "$OUT/$who.json" "$who" <<'PY' || status=1
import json, sys
e = json.load(open(sys.argv[1]))['expect']; who = sys.argv[2]
print(f"{who:10s}: {e['paired']}/{e['expected']} clicks found, {e['within_tolerance']} on their exact frame; "
      f"worst error {e['max_abs_error_samples']:.0f} samples ({e['max_abs_error_ms']:.2f} ms), "
      f"median offset {e['median_offset_samples']:.0f} samples, jitter up to {e['max_abs_jitter_samples']:.0f} samples")
if who == 'tactus' and (e['within_tolerance'] != e['expected'] or e['misses'] != 0): sys.exit(1)
PY
done
exit $status
