#!/usr/bin/env bash
# A SoundFont 2 bank against its SoundFont 3 conversion (`sf3convert -z`), through Tactus,
# per MIDI file of a folder, next to FluidSynth's own SF2-against-SF3 verdict on the same song
# (compare_audio.py, reverb and chorus off). Vorbis changes the samples a little (and
# sf3convert lowers them by about 1 dB), so the expectation is "same" for Tactus on every file,
# or, where Vorbis itself changes the sound, no worse than FluidSynth's verdict.
# Exits 1 when a Tactus verdict is worse than both "SAME" and FluidSynth's verdict.
#
#   Benchmarks/sf3_vs_sf2.sh [MIDI_DIR] [SF2]
#   (defaults: ../shared/corpus/files/openmsx, /usr/share/sounds/sf2/TimGM6mb.sf2)
# Needs: sf3convert, fluidsynth, libvorbisfile3, python3 with numpy and scipy.
# Environment: TACTUS (binary, default .build/release/tactus), KEEP=1 keeps the WAV files.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=$ROOT/../shared
[ -d "$SHARED/bench" ] || SHARED=/work/shared
MID_DIR=${1:-$SHARED/corpus/files/openmsx}
SF2=${2:-/usr/share/sounds/sf2/TimGM6mb.sf2}
TACTUS=${TACTUS:-$ROOT/.build/release/tactus}
COMPARE=$SHARED/bench/compare_audio.py
command -v sf3convert >/dev/null || { echo "sf3convert is not installed (apt-get install sf3convert)" >&2; exit 2; }
command -v fluidsynth >/dev/null || { echo "fluidsynth is not installed (apt-get install fluidsynth)" >&2; exit 2; }
[ -f "$SF2" ] || { echo "$SF2: no such SoundFont" >&2; exit 2; }
[ -x "$TACTUS" ] || (cd "$ROOT" && swift build -c release --product tactus >&2) || exit 2
OUT=$(mktemp -d /tmp/tactus-sf3-sf2.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$OUT"' EXIT
SF3=$OUT/$(basename "$SF2" .sf2).sf3
sf3convert -z "$SF2" "$SF3" >/dev/null 2>&1 || { echo "sf3convert failed on $SF2" >&2; exit 2; }
rank() { case "$1" in SAME) echo 0 ;; CLOSE) echo 1 ;; DIFFERENT) echo 2 ;; *) echo 3 ;; esac; }
worse=0; n=0; declare -A count
for mid in "$MID_DIR"/*.mid; do
  name=$(basename "$mid" .mid)
  for bank in "$SF2" "$SF3"; do
    ext=${bank##*.}
    "$TACTUS" render "$mid" -o "$OUT/$name.tactus.$ext.wav" --soundfont "$bank" --no-reverb --no-chorus --quiet >/dev/null || { echo "$name: tactus render failed"; worse=1; }
    fluidsynth -ni -q -F "$OUT/$name.fluidsynth.$ext.wav" -r 44100 -o synth.reverb.active=0 -o synth.chorus.active=0 "$bank" "$mid" >/dev/null 2>&1
  done
  tactus_line=$(python3 "$COMPARE" "$OUT/$name.tactus.sf2.wav" "$OUT/$name.tactus.sf3.wav")
  fluid_line=$(python3 "$COMPARE" "$OUT/$name.fluidsynth.sf2.wav" "$OUT/$name.fluidsynth.sf3.wav")
  tv=$(echo "$tactus_line" | cut -d: -f1); fv=$(echo "$fluid_line" | cut -d: -f1)
  level=$(echo "$tactus_line" | grep -oE "level A-B [-+0-9.]+ dB")
  printf '%-28s Tactus %-9s FluidSynth %-9s (Tactus %s)\n' "$name" "$tv" "$fv" "$level"
  count[$tv]=$(( ${count[$tv]:-0} + 1 )); n=$((n + 1))
  if [ "$tv" != SAME ] && [ "$(rank "$tv")" -gt "$(rank "$fv")" ]; then worse=1; fi
done
summary=""
for v in SAME CLOSE DIFFERENT UNRELATED; do [ -n "${count[$v]:-}" ] && summary="$summary ${count[$v]} $v"; done
echo "$n files, Tactus SF2 against SF3:$summary ($(basename "$SF2") and its sf3convert -z conversion, reverb and chorus off)"
exit $worse
