#!/usr/bin/env bash
# Ardour's ACE Fluid Synth (an LV2 plugin around libfluidsynth) hosted by Tactus, given a
# SoundFont through its file parameter (patch:Set), against FluidSynth itself and against
# Tactus's own sampler, over every MIDI file of a folder: compare_audio.py's verdict for both
# pairs per file. Reverb and chorus are off on all three sides; the plugin's level is lowered
# by LEVEL dB (default -14) to FluidSynth's loudness, which its default gain exceeds by about
# 13 dB, so that Tactus's limiter does not reshape it.
#
#   Benchmarks/lv2_fluidsynth_vs.sh [MIDI_DIR] [SOUNDFONT]
#   (defaults: /usr/share/games/openttd/baseset/openmsx, /usr/share/sounds/sf2/FluidR3_GM.sf2)
# Environment: TACTUS (default .build/release/tactus, built if missing), COMPARE
# (default ../shared/bench/compare_audio.py), LEVEL, KEEP=1 keeps the WAV files.
# Exits 1 when any verdict is worse than "close" (or a render fails), 2 when a tool is missing.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MID_DIR=${1:-/usr/share/games/openttd/baseset/openmsx}
SF=${2:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
TACTUS=${TACTUS:-$ROOT/.build/release/tactus}
COMPARE=${COMPARE:-$ROOT/../shared/bench/compare_audio.py}
LEVEL=${LEVEL:--14}
PLUGIN=urn:ardour:a-fluidsynth
command -v fluidsynth >/dev/null || { echo "fluidsynth is not installed (apt-get install fluidsynth)" >&2; exit 2; }
[ -d /usr/lib/lv2/a-fluidsynth.lv2 ] || { echo "ACE Fluid Synth is not installed (apt-get install ardour-lv2-plugins)" >&2; exit 2; }
[ -f "$SF" ] || { echo "$SF: no such SoundFont" >&2; exit 2; }
[ -f "$COMPARE" ] || { echo "$COMPARE: no such file" >&2; exit 2; }
if [ ! -x "$TACTUS" ]; then
  (cd "$ROOT" && swift build -c release --product tactus >&2) || exit 2
fi
OUT=$(mktemp -d /tmp/tactus-ace.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$OUT"' EXIT
worse=0; n=0
declare -A against_fluidsynth against_sampler
printf '%-28s %-10s %-10s\n' file FluidSynth sampler
for mid in "$MID_DIR"/*.mid; do
  name=$(basename "$mid" .mid)
  fluidsynth -ni -q -F "$OUT/$name.fluidsynth.wav" -r 44100 -o synth.reverb.active=0 -o synth.chorus.active=0 "$SF" "$mid" >/dev/null 2>&1
  if ! "$TACTUS" render "$mid" -o "$OUT/$name.sampler.wav" --soundfont "$SF" --no-reverb --no-chorus --quiet >/dev/null \
     || ! "$TACTUS" render "$mid" -o "$OUT/$name.plugin.wav" --quiet \
          --instrument "lv2:$PLUGIN,sf2file=$SF,rev_enable=0,chorus_enable=0,level=$LEVEL" >/dev/null; then
    echo "$name: tactus render failed"; worse=1; continue
  fi
  a=$(python3 "$COMPARE" "$OUT/$name.fluidsynth.wav" "$OUT/$name.plugin.wav" | cut -d: -f1)
  b=$(python3 "$COMPARE" "$OUT/$name.sampler.wav" "$OUT/$name.plugin.wav" | cut -d: -f1)
  printf '%-28s %-10s %-10s\n' "$name" "$a" "$b"
  against_fluidsynth[$a]=$(( ${against_fluidsynth[$a]:-0} + 1 )); against_sampler[$b]=$(( ${against_sampler[$b]:-0} + 1 )); n=$((n + 1))
  for v in "$a" "$b"; do case "$v" in SAME|CLOSE) ;; *) worse=1 ;; esac; done
done
summary() { local -n c=$1; local s=""; for v in SAME CLOSE DIFFERENT UNRELATED; do [ -n "${c[$v]:-}" ] && s="$s ${c[$v]} $v"; done; echo "$s"; }
echo "$n files, ACE Fluid Synth against FluidSynth:$(summary against_fluidsynth); against Tactus's sampler:$(summary against_sampler)"
echo "(SoundFont $(basename "$SF"), reverb and chorus off, plugin level $LEVEL dB)"
[ "${KEEP:-0}" = 1 ] && echo "renders kept in $OUT"
exit $worse
