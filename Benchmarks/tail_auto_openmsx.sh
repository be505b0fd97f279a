#!/usr/bin/env bash
# Checks `--tail auto` (the default) on a folder of songs: renders every file as a batch with
# FluidR3_GM (reverb and chorus on, as users render), 32-bit float, then for each output
# checks that the last 100 ms are more than 60 dB under the file's peak (no cut release) and
# that the file ends at most 0.5 s after its sound (the last sample above -90 dBFS). Also
# prints the old fixed 2-second tail's last-100-ms level for comparison. Exits 1 on any miss.
#
#   Benchmarks/tail_auto_openmsx.sh [MIDI_DIR] [SOUNDFONT]
#   (defaults: ../shared/corpus/files/openmsx, /usr/share/sounds/sf2/FluidR3_GM.sf2)
# Environment: TACTUS (binary, default .build/release/tactus). Needs python3 with numpy.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MID_DIR=${1:-$ROOT/../shared/corpus/files/openmsx}
SF=${2:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
TACTUS=${TACTUS:-$ROOT/.build/release/tactus}
[ -x "$TACTUS" ] || (cd "$ROOT" && swift build -c release --product tactus >&2)
WORK=$(mktemp -d /tmp/tactus-tail.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
"$TACTUS" render "$MID_DIR" -o "$WORK/auto" --soundfont "$SF" --format f32 --quiet --jobs 2 || true
"$TACTUS" render "$MID_DIR" -o "$WORK/fixed" --soundfont "$SF" --format f32 --tail 2 --quiet --jobs 2 || true
python3 - "$WORK/auto" "$WORK/fixed" <<'PY'
import os, sys, numpy as np
def levels(path):
    data = open(path, "rb").read()
    at = 12
    while at + 8 <= len(data):
        cid, size = data[at:at + 4], int.from_bytes(data[at + 4:at + 8], "little")
        if cid == b"data":
            x = np.frombuffer(data[at + 8:at + 8 + size], dtype="<f4").reshape(-1, 2)
            return np.abs(x).max(axis=1)
        at += 8 + size + (size & 1)
    raise ValueError(path)
rate, misses = 44100, 0
print(f"{'file':30} {'auto s':>8} {'end-100ms dB':>13} {'past sound s':>12} {'fixed 2 s: end-100ms dB':>24}")
for name in sorted(os.listdir(sys.argv[1])):
    if not name.endswith(".wav"):
        continue
    a = levels(os.path.join(sys.argv[1], name)); f = levels(os.path.join(sys.argv[2], name))
    peak = a.max()
    end_db = 20 * np.log10(max(a[-rate // 10:].max(), 1e-12) / peak)
    fixed_db = 20 * np.log10(max(f[-rate // 10:].max(), 1e-12) / f.max())
    loud = np.nonzero(a > 10 ** (-90 / 20))[0]
    past = (len(a) - (loud[-1] + 1 if len(loud) else 0)) / rate
    ok = end_db < -60 and past <= 0.5
    misses += not ok
    print(f"{name[:-4]:30} {len(a) / rate:8.2f} {end_db:13.1f} {past:12.3f} {fixed_db:24.1f} {'' if ok else 'MISS'}")
print(f"{misses} misses")
sys.exit(1 if misses else 0)
PY
