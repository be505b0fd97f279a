#!/usr/bin/env bash
# Speed of the SoundFont sampler against FluidSynth, side by side in one run, one core
# (taskset -c 0), release build, same bank, with reverb and chorus on (both programs' defaults)
# and off (EFFECTS="on off"):
#   1. voice throughput on the polyphony stress files of ../shared/bench/anchors/gen_midi.py
#      (voice-seconds rendered per second of CPU wall time: mean sounding voices x times real
#      time), FluidSynth measured in-process by anchors/fs_render.c (libfluidsynth), Tactus
#      by tactus-render-benchmark; both with a polyphony above what the files need;
#   2. the openmsx corpus: FluidSynth's `fluidsynth -F` over all files in one process against
#      one `tactus render FILES -o DIR --jobs 1` process, whole processes, WAV files written to
#      /dev/shm; best of CORPUS_RUNS (2) alternating runs each, as the host is shared; compared
#      as throughput (seconds of audio written per wall second), as Tactus also renders each
#      file's release and reverb tail while FluidSynth moves straight on to the next file;
#   3. peak resident memory of those processes;
#   4. time from start to the first rendered block (one_sec.mid): fs_render's first_audio_s and
#      tactus-render-benchmark's first block, both from process start, bank loading included.
# Prints one table with the ratios (Tactus better when > 1).
#
#   Benchmarks/sampler_vs_fluidsynth.sh [SOUNDFONT]     (default /usr/share/sounds/sf2/FluidR3_GM.sf2)
# Environment: NS="128 256 512" (stress sizes), KINDS="piano mix restrike", EFFECTS="on off", MID_DIR (corpus),
# STRESS_RUNS=3 (alternating runs per stress row, best kept), CORPUS_RUNS=2,
# CORE=0 (the core both run on).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SF=${1:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
NS=${NS:-"128 256 512"}
KINDS=${KINDS:-"piano mix restrike"}
EFFECTS=${EFFECTS:-"on off"}
MID_DIR=${MID_DIR:-/usr/share/games/openttd/baseset/openmsx}
[ -d "$MID_DIR" ] || MID_DIR=$ROOT/../shared/corpus/files/openmsx
CORE=${CORE:-0}
ANCHORS=$ROOT/../shared/bench/anchors
[ -d "$ANCHORS" ] || ANCHORS=/work/shared/bench/anchors
WORK=$(mktemp -d /tmp/tactus-speed.XXXXXX)
OUT=/dev/shm/tactus-speed-$$.wav
OUT_DIR=/dev/shm/tactus-speed-$$
trap 'rm -rf "$WORK" "$OUT" "$OUT_DIR"' EXIT
RUN="taskset -c $CORE"
command -v fluidsynth >/dev/null || { echo "fluidsynth is not installed" >&2; exit 2; }
(cd "$ROOT" && swift build -c release --product tactus >&2 && swift build -c release --product tactus-render-benchmark >&2) || exit 2
TACTUS=$ROOT/.build/release/tactus
BENCH=$ROOT/.build/release/tactus-render-benchmark
python3 "$ANCHORS/gen_midi.py" "$WORK" >/dev/null
FS_RENDER=""
if pkg-config --exists fluidsynth 2>/dev/null; then
  cc -O2 -o "$WORK/fs_render" "$ANCHORS/fs_render.c" $(pkg-config --cflags --libs fluidsynth) && FS_RENDER=$WORK/fs_render
else
  echo "(libfluidsynth-dev missing: FluidSynth's voice throughput and first block are not measured)" >&2
fi
cat "$SF" > /dev/null   # page-cache the bank for both

# Seconds of audio in WAV files, summed.
audio_seconds() {
  python3 -c "import sys, wave; print(round(sum(w.getnframes() / w.getframerate() for w in map(wave.open, sys.argv[1:])), 1))" "$@"
}

# Seconds of wall time and peak RSS (KiB) of a command: "SECONDS KIB".
measure() { /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$@" >/dev/null 2>&1; cat "$WORK/time.txt" | tail -1; }

printf '%-44s %14s %14s %8s\n' "measure" "FluidSynth" "Tactus" "ratio"
row() { printf '%-44s %14s %14s %8s\n' "$1" "$2" "$3" "$4"; }

# 1.-3. for each effects setting: voice throughput, the corpus and its peak memory.
files=$(ls "$MID_DIR"/*.mid)
nfiles=$(echo $files | wc -w)
for effects in $EFFECTS; do
  if [ "$effects" = on ]; then
    fs_fx="-R 1 -C 1"; fs_cli_fx=""; tx_fx=""
  else
    fs_fx="-R 0 -C 0"; fs_cli_fx="-o synth.reverb.active=0 -o synth.chorus.active=0"; tx_fx="--no-reverb --no-chorus"
  fi
  for kind in $KINDS; do
    for n in $NS; do
      f=$WORK/poly_${kind}_$n.mid
      # Best of STRESS_RUNS alternating runs each: the host's cores are shared, and a
      # neighbour's burst during one run would otherwise decide the row.
      fs="n/a"; tx=0
      for run in $(seq ${STRESS_RUNS:-3}); do
        if [ -n "$FS_RENDER" ]; then
          v=$($RUN "$FS_RENDER" -c 1 -p 8192 $fs_fx "$SF" "$f" | python3 -c "import json,sys; d=json.load(sys.stdin); print(round(d['voices_mean']*d['rtf']))")
          [ "$fs" = "n/a" ] || [ "$v" -gt "$fs" ] && fs=$v
        fi
        v=$($RUN "$BENCH" --soundfont "$SF" --polyphony 4096 $tx_fx "$f" | tail -1 | sed -E 's/.* ([0-9]+) voice-seconds per second.*/\1/')
        [ "$v" -gt "$tx" ] && tx=$v
      done
      ratio=$( [ "$fs" != "n/a" ] && python3 -c "print(f'{$tx/$fs:.2f}x')" || echo "-")
      row "voice-s/s, poly_${kind}_$n, effects $effects" "$fs" "$tx" "$ratio"
    done
  done

  # The corpus, one process each: FluidSynth's `fluidsynth -F` renders every file into one
  # output, Tactus's batch render writes a file each, one job at a time. The host is shared:
  # each side runs ${CORPUS_RUNS:-2} times, alternating, and keeps its best time.
  # The two do not write the same amount of audio (FluidSynth starts the next file as soon
  # as one ends; Tactus lets each file's releases and reverb ring out), so the ratio is of
  # throughput: seconds of audio written per second of wall time.
  fs_s=""; tx_s=""; fs_kib=0; tx_kib=0
  for run in $(seq ${CORPUS_RUNS:-2}); do
    read s kib < <(measure $RUN fluidsynth -ni -q $fs_cli_fx -F "$OUT" -r 44100 "$SF" $files)
    fs_s=$(python3 -c "print(min(x for x in [$s, ${fs_s:-1e9}]))"); [ "$kib" -gt "$fs_kib" ] && fs_kib=$kib
    rm -rf "$OUT_DIR"
    read s kib < <(measure $RUN "$TACTUS" render $files -o "$OUT_DIR" --jobs 1 --soundfont "$SF" $tx_fx --quiet)
    tx_s=$(python3 -c "print(min(x for x in [$s, ${tx_s:-1e9}]))"); [ "$kib" -gt "$tx_kib" ] && tx_kib=$kib
  done
  fs_audio=$(audio_seconds "$OUT"); tx_audio=$(audio_seconds "$OUT_DIR"/*.wav)
  row "corpus render time, s ($nfiles files), effects $effects" "$fs_s" "$tx_s" ""
  row "corpus audio written, s, effects $effects" "$fs_audio" "$tx_audio" ""
  row "corpus throughput, audio s/s, effects $effects" "$(python3 -c "print(f'{$fs_audio/$fs_s:.1f}')")" \
      "$(python3 -c "print(f'{$tx_audio/$tx_s:.1f}')")" "$(python3 -c "print(f'{($tx_audio/$tx_s)/($fs_audio/$fs_s):.2f}x')")"
  row "peak RSS, MB (corpus), effects $effects" "$((fs_kib / 1024))" "$((tx_kib / 1024))" "$(python3 -c "print(f'{$fs_kib/$tx_kib:.2f}x')")"
done

# The ratios above compare equal work only if both play the same voices: check the levels at
# the same polyphony (Benchmarks/polyphony_levels.sh, dry, gains out of the way) and say so.
if levels=$(POLYPHONY=4096 NS="$NS" KINDS="$KINDS" "$ROOT/Benchmarks/polyphony_levels.sh" "$SF" 2>/dev/null); then
  echo "(equal work: every stress file's level is within 1 dB of FluidSynth's at this polyphony)"
else
  echo "(NOT equal work: these stress files' levels differ by more than 1 dB, so their ratios compare different work:)"
  echo "$levels" | awk '$1 ~ /^poly_/ { d = $(NF-1); if (d > 1 || d < -1) print "   " $0 }'
fi

# 4. Start to first block.
fs_first="n/a"
if [ -n "$FS_RENDER" ]; then
  fs_first=$($RUN "$FS_RENDER" -c 1 "$SF" "$WORK/one_sec.mid" | python3 -c "import json,sys; print(round(json.load(sys.stdin)['first_audio_s']*1000, 1))")
fi
tx_first=$($RUN "$BENCH" --soundfont "$SF" "$WORK/one_sec.mid" | tail -1 | sed -E 's/.*first block ([0-9.]+) ms.*/\1/')
row "start to first block, ms (one_sec.mid)" "$fs_first" "$tx_first" "$( [ "$fs_first" != "n/a" ] && python3 -c "print(f'{$fs_first/$tx_first:.1f}x')" || echo -)"
read fs1 _ < <(measure $RUN fluidsynth -ni -q -F "$OUT" -r 44100 "$SF" "$WORK/one_sec.mid")
read tx1 _ < <(measure $RUN "$TACTUS" render "$WORK/one_sec.mid" -o "$OUT" --soundfont "$SF" --quiet)
row "whole process, one_sec.mid, s" "$fs1" "$tx1" "$(python3 -c "print(f'{$fs1/$tx1:.2f}x')")"
echo "($(basename "$SF"), 44.1 kHz, core $CORE, effects on = reverb and chorus on as both programs' defaults; FluidSynth $(fluidsynth --version 2>/dev/null | head -1 | sed 's/.*version //'))"
