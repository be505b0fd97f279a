#!/usr/bin/env bash
# Renders every MIDI file of a folder with FluidSynth and with `tactus render`, from the same
# SoundFont, reverb and chorus off on both sides (EFFECTS=on: both programs' defaults, reverb
# and chorus on), and prints compare_audio.py's verdict per file.
# Exits 1 when any verdict is worse than "close" (or a render fails), 0 otherwise.
#
#   Benchmarks/compare_with_fluidsynth.sh [MIDI_DIR] [SOUNDFONT]
#   (defaults: /usr/share/games/openttd/baseset/openmsx, /usr/share/sounds/sf2/FluidR3_GM.sf2)
# Environment: TACTUS (binary, default .build/release/tactus, built if missing), COMPARE
# (compare_audio.py, default ../shared/bench/compare_audio.py), KEEP=1 keeps the WAV files,
# EFFECTS=on renders with reverb and chorus on.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MID_DIR=${1:-/usr/share/games/openttd/baseset/openmsx}
SF=${2:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
TACTUS=${TACTUS:-$ROOT/.build/release/tactus}
COMPARE=${COMPARE:-$ROOT/../shared/bench/compare_audio.py}
[ -f "$COMPARE" ] || COMPARE=/work/shared/bench/compare_audio.py
command -v fluidsynth >/dev/null || { echo "fluidsynth is not installed (apt-get install fluidsynth)" >&2; exit 2; }
[ -f "$SF" ] || { echo "$SF: no such SoundFont" >&2; exit 2; }
if [ ! -x "$TACTUS" ]; then
  (cd "$ROOT" && swift build -c release --product tactus >&2) || exit 2
fi
OUT=$(mktemp -d /tmp/tactus-compare.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$OUT"' EXIT
worse=0; n=0
declare -A count
if [ "${EFFECTS:-off}" = on ]; then
  fs_effects=(); tactus_effects=(); effects="reverb and chorus on (both programs' defaults)"
else
  fs_effects=(-o synth.reverb.active=0 -o synth.chorus.active=0); tactus_effects=(--no-reverb --no-chorus)
  effects="reverb and chorus off on both sides"
fi
for mid in "$MID_DIR"/*.mid; do
  name=$(basename "$mid" .mid)
  fluidsynth -ni -q -F "$OUT/$name.fluidsynth.wav" -r 44100 "${fs_effects[@]}" "$SF" "$mid" >/dev/null 2>&1
  if ! "$TACTUS" render "$mid" -o "$OUT/$name.tactus.wav" --soundfont "$SF" "${tactus_effects[@]}" --quiet >/dev/null; then
    echo "$name: tactus render failed"; worse=1; continue
  fi
  line=$(python3 "$COMPARE" "$OUT/$name.fluidsynth.wav" "$OUT/$name.tactus.wav")
  verdict=$(echo "$line" | cut -d: -f1)
  printf '%-28s %s\n' "$name" "$line"
  count[$verdict]=$(( ${count[$verdict]:-0} + 1 )); n=$((n + 1))
  case "$verdict" in SAME|CLOSE) ;; *) worse=1 ;; esac
done
summary=""
for v in SAME CLOSE DIFFERENT UNRELATED; do [ -n "${count[$v]:-}" ] && summary="$summary ${count[$v]} $v"; done
echo "$n files:$summary (SoundFont $(basename "$SF"), $effects)"
[ "${KEEP:-0}" = 1 ] && echo "renders kept in $OUT"
exit $worse
