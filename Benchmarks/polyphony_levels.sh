#!/usr/bin/env bash
# RMS level of Tactus's sampler against FluidSynth's on the polyphony stress files of
# ../shared/bench/anchors/gen_midi.py, both at the same polyphony (default 256), same bank,
# reverb and chorus off, gains low enough that neither FluidSynth's output nor Tactus's
# limiter clips (-g 0.05 and --gain -12.04, the same scale). Prints one row per file and exits
# 1 when a level differs by more than 1 dB.
#
#   Benchmarks/polyphony_levels.sh [SOUNDFONT]      (default /usr/share/sounds/sf2/FluidR3_GM.sf2)
# Environment: POLYPHONY (256), NS ("16 256 512 1024"), KINDS ("piano mix restrike").
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SF=${1:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
POLYPHONY=${POLYPHONY:-256}
NS=${NS:-"16 256 512 1024"}
KINDS=${KINDS:-"piano mix restrike"}
ANCHORS=$ROOT/../shared/bench/anchors
[ -d "$ANCHORS" ] || ANCHORS=/work/shared/bench/anchors
command -v fluidsynth >/dev/null || { echo "fluidsynth is not installed (apt-get install fluidsynth)" >&2; exit 2; }
(cd "$ROOT" && swift build -c release --product tactus >&2) || exit 2
TACTUS=$ROOT/.build/release/tactus
WORK=$(mktemp -d /tmp/tactus-polyphony.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
python3 "$ANCHORS/gen_midi.py" "$WORK" >/dev/null
printf '%-22s %12s %12s %10s\n' file fluidsynth tactus difference
worst=0
for kind in $KINDS; do
  for n in $NS; do
    f=poly_${kind}_$n
    fluidsynth -ni -q -g 0.05 -o synth.polyphony="$POLYPHONY" -o synth.reverb.active=0 -o synth.chorus.active=0 \
      -F "$WORK/$f.fs.wav" -r 44100 "$SF" "$WORK/$f.mid" >/dev/null 2>&1
    "$TACTUS" render "$WORK/$f.mid" -o "$WORK/$f.t.wav" --soundfont "$SF" --polyphony "$POLYPHONY" --no-reverb --no-chorus \
      --gain=-12.04 --tail 2 --quiet >/dev/null
    python3 - "$WORK/$f.fs.wav" "$WORK/$f.t.wav" "$f" <<'PY' || worst=1
import sys, wave
import numpy as np
def rms(path):
    w = wave.open(path)
    return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(float)
a, b = rms(sys.argv[1]), rms(sys.argv[2])
n = min(len(a), len(b))
la = 20 * np.log10(np.sqrt((a[:n] ** 2).mean()) / 32768)
lb = 20 * np.log10(np.sqrt((b[:n] ** 2).mean()) / 32768)
print("%-22s %9.2f dB %9.2f dB %7.2f dB" % (sys.argv[3], la, lb, la - lb))
sys.exit(0 if abs(la - lb) <= 1 else 1)
PY
  done
done
echo "polyphony $POLYPHONY, $(basename "$SF"), reverb and chorus off; FluidSynth -g 0.05, Tactus --gain -12.04"
exit $worst
