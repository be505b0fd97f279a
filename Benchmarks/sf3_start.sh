#!/usr/bin/env bash
# SoundFont 3 start: time from process start to the first rendered block, and peak resident
# memory, for one song with a SoundFont 3 bank, Tactus against FluidSynth side by side in one
# run, one core (taskset -c CORE), release build, best of RUNS (3) alternating runs.
#   - FluidSynth decodes every Ogg Vorbis sample of the bank when it loads it; measured
#     in-process by ../shared/bench/anchors/fs_render.c (libfluidsynth: first non-zero output
#     sample after process start, VmHWM), and as a whole `fluidsynth -F` process (/usr/bin/time).
#   - Tactus decodes only the samples of the presets the song selects, before the first block;
#     measured by tactus-render-benchmark (first block after process start, peak RSS), and as a
#     whole `tactus render` process.
# Prints one table with the ratios (Tactus better when > 1).
#
#   Benchmarks/sf3_start.sh [SONG.mid] [SOUNDFONT]
#   (defaults: ../shared/corpus/files/openmsx/<first file>, /usr/share/sounds/sf3/MuseScore_General_Lite.sf3)
# Needs: fluidsynth, libfluidsynth-dev (fs_render), musescore-general-soundfont-small,
# libvorbisfile3. Environment: RUNS=3, CORE=0, BUILD=0 uses the release binaries as they are.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=$ROOT/../shared
[ -d "$SHARED/bench" ] || SHARED=/work/shared
SONG=${1:-$(ls "$SHARED"/corpus/files/openmsx/*.mid | head -1)}
SF=${2:-/usr/share/sounds/sf3/MuseScore_General_Lite.sf3}
RUNS=${RUNS:-3}
CORE=${CORE:-0}
RUN="taskset -c $CORE"
[ -f "$SF" ] || { echo "$SF: no such SoundFont (apt-get install musescore-general-soundfont-small)" >&2; exit 2; }
[ -f "$SONG" ] || { echo "$SONG: no such MIDI file" >&2; exit 2; }
command -v fluidsynth >/dev/null || { echo "fluidsynth is not installed (apt-get install fluidsynth)" >&2; exit 2; }
pkg-config --exists fluidsynth || { echo "libfluidsynth-dev is not installed (needed to build fs_render)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/tactus-sf3-start.XXXXXX)
OUT=/dev/shm/tactus-sf3-start-$$.wav
trap 'rm -rf "$WORK" "$OUT"' EXIT
if [ "${BUILD:-1}" = 1 ]; then
  for product in tactus tactus-render-benchmark; do
    (cd "$ROOT" && swift build -c release --product "$product" >&2) || exit 2
  done
fi
BIN=$(cd "$ROOT" && swift build -c release --show-bin-path)
cc -O2 -o "$WORK/fs_render" "$SHARED/bench/anchors/fs_render.c" $(pkg-config --cflags --libs fluidsynth) || exit 2

best() { sort -g | head -1; }
fs_first=(); fs_mem=(); tx_first=(); tx_mem=(); fs_wall=(); fs_rss=(); tx_wall=(); tx_rss=()
for run in $(seq "$RUNS"); do
  json=$($RUN "$WORK/fs_render" -c 1 "$SF" "$SONG")
  fs_first+=("$(echo "$json" | python3 -c "import json,sys; print(round(json.load(sys.stdin)['first_audio_s']*1000, 1))")")
  fs_mem+=("$(echo "$json" | python3 -c "import json,sys; d=json.load(sys.stdin); print(round(d['maxrss_mib'], 1))")")
  line=$($RUN "$BIN/tactus-render-benchmark" --soundfont "$SF" "$SONG" | tail -1)
  tx_first+=("$(echo "$line" | sed -E 's/.*first block ([0-9.]+) ms.*/\1/')")
  tx_mem+=("$(echo "$line" | sed -E 's/.*peak memory ([0-9.]+) MB.*/\1/')")
  /usr/bin/time -f "%e %M" -o "$WORK/time" $RUN fluidsynth -ni -q -F "$OUT" -r 44100 "$SF" "$SONG" >/dev/null 2>&1
  read w m < "$WORK/time"
  fs_wall+=("$w"); fs_rss+=("$(python3 -c "print(round($m/1024, 1))")")
  /usr/bin/time -f "%e %M" -o "$WORK/time" $RUN "$BIN/tactus" render "$SONG" -o "$OUT" --soundfont "$SF" --quiet >/dev/null
  read w m < "$WORK/time"
  tx_wall+=("$w"); tx_rss+=("$(python3 -c "print(round($m/1024, 1))")")
done
row() { printf '%-52s %12s %12s %10s\n' "$1" "$2" "$3" "$4"; }
ratio() { python3 -c "print(f'{$1/$2:.1f}x')"; }
f1=$(printf '%s\n' "${fs_first[@]}" | best); t1=$(printf '%s\n' "${tx_first[@]}" | best)
f2=$(printf '%s\n' "${fs_mem[@]}" | best); t2=$(printf '%s\n' "${tx_mem[@]}" | best)
f3=$(printf '%s\n' "${fs_wall[@]}" | best); t3=$(printf '%s\n' "${tx_wall[@]}" | best)
f4=$(printf '%s\n' "${fs_rss[@]}" | best); t4=$(printf '%s\n' "${tx_rss[@]}" | best)
echo "song $(basename "$SONG"), SoundFont $(basename "$SF"), core $CORE, best of $RUNS"
row "" "FluidSynth" "Tactus" "ratio"
row "start to first block, ms (in-process)" "$f1" "$t1" "$(ratio "$f1" "$t1")"
row "peak memory, MB (in-process)" "$f2" "$t2" "$(ratio "$f2" "$t2")"
row "whole render process, s" "$f3" "$t3" "$(ratio "$f3" "$t3")"
row "whole render process, peak RSS MB" "$f4" "$t4" "$(ratio "$f4" "$t4")"
