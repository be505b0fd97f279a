#!/usr/bin/env bash
# Batch rendering throughput, side by side in one run: `tactus render DIR -o OUT --jobs 2`
# against FluidSynth run by GNU parallel -j 2, both from FluidR3_GM with reverb and chorus off
# (dry), on the openmsx set repeated REPEAT times (default 2) so each side runs for minutes; then
# Tactus's scaling from --jobs 1 to --jobs 2 on the same files. Throughput is seconds of audio
# written per wall-clock second (also files per second, and audio per CPU second, which a busy
# machine disturbs less). Both write 16-bit 44.1 kHz WAV files to a temporary folder; Tactus
# also hashes every output and writes its manifest.
#
#   Benchmarks/batch_vs_fluidsynth.sh [MIDI_DIR] [SOUNDFONT]
#   (defaults: ../shared/corpus/files/openmsx, /usr/share/sounds/sf2/FluidR3_GM.sf2)
# Environment: TACTUS (binary, default .build/release/tactus, built if missing), REPEAT.
# Needs: fluidsynth, parallel (GNU), python3.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MID_DIR=${1:-$ROOT/../shared/corpus/files/openmsx}
SF=${2:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
TACTUS=${TACTUS:-$ROOT/.build/release/tactus}
REPEAT=${REPEAT:-2}
command -v fluidsynth >/dev/null || { echo "fluidsynth is not installed (apt-get install fluidsynth)" >&2; exit 2; }
command -v parallel >/dev/null || { echo "GNU parallel is not installed (apt-get install parallel)" >&2; exit 2; }
[ -f "$SF" ] || { echo "$SF: no such SoundFont" >&2; exit 2; }
[ -x "$TACTUS" ] || (cd "$ROOT" && swift build -c release --product tactus >&2)

WORK=$(mktemp -d /tmp/tactus-batch-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/in"
for r in $(seq 1 "$REPEAT"); do
  mkdir -p "$WORK/in/r$r"
  cp "$MID_DIR"/*.mid "$WORK/in/r$r/"
done
# The scaling from 1 to 2 jobs needs two idle cores: on a shared machine, read the load
# average printed before and after, and the CPU columns, which do not depend on it.
files=$(find "$WORK/in" -name '*.mid' | wc -l)

# Runs a command; prints its wall-clock seconds and the CPU seconds (user + system) of it and
# its children, so a run on a busy shared machine can still be judged by CPU cost.
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t0 = time.monotonic()
subprocess.run(sys.argv[1:], check=False)
wall = time.monotonic() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{wall:.2f} {r.ru_utime + r.ru_stime:.2f}")
PY
}
# Seconds of audio in the WAV files under a folder.
audio_seconds() {
  python3 - "$1" <<'PY'
import os, sys, wave
total = 0.0
for root, _, names in os.walk(sys.argv[1]):
    for n in names:
        if n.endswith(".wav"):
            with wave.open(os.path.join(root, n)) as w:
                total += w.getnframes() / w.getframerate()
print(f"{total:.1f}")
PY
}

echo "$files files ($REPEAT x $(ls "$MID_DIR"/*.mid | wc -l) from $MID_DIR), $(basename "$SF"), dry; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r fs_wall fs_cpu < <(measure bash -c "find '$WORK/in' -name '*.mid' | parallel -j 2 'fluidsynth -ni -q -F {.}.wav -r 44100 -o synth.reverb.active=0 -o synth.chorus.active=0 $SF {} >/dev/null 2>&1'")
# FluidSynth's files are written beside the copies of the inputs.
fs_audio=$(audio_seconds "$WORK/in")
read -r t2_wall t2_cpu < <(measure "$TACTUS" render "$WORK/in" -o "$WORK/t2" --jobs 2 --soundfont "$SF" --no-reverb --no-chorus --quiet)
t2_audio=$(audio_seconds "$WORK/t2")
read -r t1_wall t1_cpu < <(measure "$TACTUS" render "$WORK/in" -o "$WORK/t1" --jobs 1 --soundfont "$SF" --no-reverb --no-chorus --quiet)
t1_audio=$(audio_seconds "$WORK/t1")
python3 - "$files" "$fs_wall" "$fs_cpu" "$fs_audio" "$t2_wall" "$t2_cpu" "$t2_audio" "$t1_wall" "$t1_cpu" "$t1_audio" <<'PY'
import sys
n = int(sys.argv[1])
fw, fc, fa, t2w, t2c, t2a, t1w, t1c, t1a = map(float, sys.argv[2:])
print(f"{'':32} {'wall s':>8} {'CPU s':>8} {'audio s':>9} {'files/s':>8} {'audio/wall':>11} {'audio/CPU':>10}")
for name, w, c, a in [("FluidSynth, GNU parallel -j 2", fw, fc, fa), ("tactus render --jobs 2", t2w, t2c, t2a),
                      ("tactus render --jobs 1", t1w, t1c, t1a)]:
    print(f"{name:32} {w:8.1f} {c:8.1f} {a:9.1f} {n / w:8.3f} {a / w:11.1f} {a / c:10.1f}")
print(f"Tactus --jobs 2 / FluidSynth -j 2: {(t2a / t2w) / (fa / fw):.2f}x audio per wall second, "
      f"{t2w and fw / t2w:.2f}x files per wall second, {(t2a / t2c) / (fa / fc):.2f}x audio per CPU second (target 2x)")
print(f"Tactus scaling --jobs 1 -> 2: {(t2a / t2w) / (t1a / t1w):.2f}x audio per wall second (target 1.8x); "
      f"CPU per audio second {t2c / t2a * 1000:.1f} ms with 2 jobs, {t1c / t1a * 1000:.1f} ms with 1")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
