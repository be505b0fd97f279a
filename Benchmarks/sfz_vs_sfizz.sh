#!/usr/bin/env bash
# SFZ instruments against sfizz, the reference SFZ player: each test instrument of
# Benchmarks/sfz-vs-sfizz/ (one per opcode family: envelope, loops, chokes, keyswitch,
# filters, pan; samples and songs made at run time by make_tests.py) and two of sfizz's own
# test files (shared/sfz/sfizz-testfiles) is rendered by sfizz_render and by
# `tactus render --instrument X.sfz` (both through the same wrapper NAME.run.sfz, below), both
# at 48 kHz and both ending at the song's last event, an unused CC 3 2.5 s after the last
# note-off (sfizz_render --use-eot, tactus --tail 0), and for each pair prints:
#   - compare_audio.py's verdict (sfizz = A, the reference; Tactus = B) and its metrics;
#   - analyse.py: note onsets of both (onsets.py, click mode) paired with each note's start,
#     B - A in frames (mean, largest, jitter around the median); per-note levels over each
#     note's window (B - A: the median, i.e. the engines' overall gain difference, and the
#     worst note's deviation from it); the worst left/right balance difference.
# Tactus renders in float and its render is then rounded to 16 bits as sfizz_render rounds
# its own (below). Then one table.
#
#   Benchmarks/sfz_vs_sfizz.sh [NAME...]      (default: every test; names as in the table)
# Environment: SFIZZ_RENDER (default /work/tools/sfizz/bin/sfizz_render; build it with
# Benchmarks/build_sfizz.sh), TACTUS (default .build/release/tactus, built if missing),
# KEEP=1 keeps the renders (printed at the end), OUT (work folder, default a new one under
# /tmp), NOTES=1 prints a line per note, SFIZZ_BLOCKSIZE (default 1024, sfizz_render's),
# SFIZZ_QUALITY (default 2, sfizz_render's). Exits 2 when a tool is missing.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HERE=$ROOT/Benchmarks/sfz-vs-sfizz
SHARED=$ROOT/../shared
[ -d "$SHARED/bench" ] || SHARED=/work/shared
COMPARE=${COMPARE:-$SHARED/bench/compare_audio.py}
ONSETS=${ONSETS:-$SHARED/bench/onsets.py}
SFIZZ_TESTFILES=${SFIZZ_TESTFILES:-$SHARED/sfz/sfizz-testfiles}
SFIZZ_RENDER=${SFIZZ_RENDER:-/work/tools/sfizz/bin/sfizz_render}
TACTUS=${TACTUS:-$ROOT/.build/release/tactus}
[ -x "$SFIZZ_RENDER" ] || { echo "$SFIZZ_RENDER: no sfizz_render (Benchmarks/build_sfizz.sh builds it)" >&2; exit 2; }
[ -f "$COMPARE" ] && [ -f "$ONSETS" ] || { echo "compare_audio.py / onsets.py not found under $SHARED/bench" >&2; exit 2; }
python3 -c "import numpy, scipy, mido" 2>/dev/null || { echo "python3 needs numpy, scipy and mido (pip install mido)" >&2; exit 2; }
if [ ! -x "$TACTUS" ]; then
  (cd "$ROOT" && nice -n 19 swift build -c release --product tactus -j 2 >&2) || exit 2
fi
OUT=${OUT:-$(mktemp -d /tmp/sfz-vs-sfizz.XXXXXX)}
mkdir -p "$OUT"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$OUT"' EXIT
python3 "$HERE/make_tests.py" "$OUT" >/dev/null || exit 2

# sfizz's own test files, copied beside the wrappers below (their samples are found from the
# folder of the file loaded)
[ -d "$SFIZZ_TESTFILES" ] || { echo "$SFIZZ_TESTFILES: missing (sfizz's test files)" >&2; exit 2; }
cp -r "$SFIZZ_TESTFILES" "$OUT/sfizz-testfiles"
# NAME -> SFZ file (ours in OUT, sfizz's own in OUT/sfizz-testfiles); songs are OUT/NAME.mid
declare -A SFZ=(
  [envelope]=$OUT/envelope.sfz [loops]=$OUT/loops.sfz [chokes]=$OUT/chokes.sfz
  [keyswitch]=$OUT/keyswitch.sfz [filters]=$OUT/filters.sfz [pan]=$OUT/pan.sfz
  [sfizz-looped_regions]=$OUT/sfizz-testfiles/looped_regions.sfz [sfizz-off_by]=$OUT/sfizz-testfiles/off_by.sfz
)
# Both engines play a wrapper, NAME.run.sfz beside the instrument: `<control>
# hint_ram_based=1` and an #include of the instrument. Without it sfizz_render streams each
# sample past its first 8192 frames from a background thread, and its freewheeling wait
# misses a load not yet dispatched when the block starts: on a busy machine a note then
# stops after 8192 frames (seen on the first note of a render). Tactus reads the opcode and
# warns that it does not play it (it loads whole samples anyway).
wrap() {  # SFZ -> prints the wrapper's path
  local dir=$(dirname "$1") base=$(basename "$1" .sfz)
  printf '// sfz_vs_sfizz.sh: whole samples in memory for sfizz_render\n<control> hint_ram_based=1\n#include "%s"\n' \
    "$base.sfz" > "$dir/$base.run.sfz"
  echo "$dir/$base.run.sfz"
}
ORDER="envelope loops chokes keyswitch filters pan sfizz-looped_regions sfizz-off_by"
NAMES=${*:-$ORDER}

rows=()
for name in $NAMES; do
  sfz=${SFZ[$name]:-}
  [ -n "$sfz" ] || { echo "$name: no such test (one of: $ORDER)" >&2; exit 2; }
  [ -f "$sfz" ] || { echo "$sfz: missing" >&2; exit 2; }
  run=$(wrap "$sfz")
  mid=$OUT/$name.mid
  a=$OUT/$name.sfizz.wav; b=$OUT/$name.tactus.wav
  echo "== $name: $sfz"
  if ! "$SFIZZ_RENDER" --sfz "$run" --midi "$mid" --wav "$a" --samplerate 48000 --use-eot \
       --blocksize "${SFIZZ_BLOCKSIZE:-1024}" --quality "${SFIZZ_QUALITY:-2}" --polyphony 256 >"$OUT/$name.sfizz.log" 2>&1; then
    echo "   sfizz_render failed: $(tail -1 "$OUT/$name.sfizz.log")"; rows+=("$name|sfizz failed"); continue
  fi
  if ! "$TACTUS" render "$mid" --instrument "$run" -o "$b" --sample-rate 48000 --format f32 --tail 0 \
       >"$OUT/$name.tactus.log" 2>&1; then
    echo "   tactus render failed: $(tail -1 "$OUT/$name.tactus.log")"; rows+=("$name|tactus failed"); continue
  fi
  grep -i "warn" "$OUT/$name.tactus.log" | grep -v hint_ram_based | sed 's/^/   tactus: /'
  # sfizz_render writes 16-bit words with dr_wav's drwav_f32_to_s16, floor((x + 1) * 32767.5)
  # - 32768 (silence is -1); Tactus's float render gets the same rounding, so quiet note
  # starts cross the onset threshold on the same words and hard-panned silent sides match.
  python3 - "$b" <<'PY2' || exit 2
import sys, numpy as np
from scipy.io import wavfile
rate, x = wavfile.read(sys.argv[1])
words = np.floor((np.clip(x.astype(np.float32), -1, 1) + 1) * np.float32(32767.5)).astype(np.int32) - 32768
wavfile.write(sys.argv[1], rate, words.astype(np.int16))
PY2
  cmp=$(python3 "$COMPARE" "$a" "$b")
  echo "   compare_audio.py: $cmp"
  python3 "$HERE/analyse.py" "$a" "$b" "$OUT/$name.notes.json" --onsets "$ONSETS" --json > "$OUT/$name.analysis.json" || exit 2
  python3 "$HERE/analyse.py" "$a" "$b" "$OUT/$name.notes.json" --onsets "$ONSETS" $([ "${NOTES:-0}" = 1 ] && echo --notes) | sed 's/^/   /'
  row=$(python3 - "$OUT/$name.analysis.json" "$cmp" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); o, l = d["onsets"], d["levels"]
verdict = sys.argv[2].split(":")[0]
f = lambda v, fmt: "-" if v is None else format(v, fmt)
print("|".join([verdict, f"{o['paired']}/{o['notes']}", f(o.get("mean_diff"), "+.1f"),
                f(o.get("max_abs_diff"), ".0f"), f(o.get("jitter"), ".0f"),
                f(l["median_diff"], "+.1f"), f(l["worst_dev"], "+.1f"), l["worst_dev_note"] or "-",
                f(l["worst_bal"], "+.1f"), l["worst_bal_note"] or "-"]))
PY
)
  rows+=("$name|$row")
done

echo
printf '%-21s %-9s %-7s %-8s %-7s %-6s %-7s %-8s %-30s %-7s %s\n' test verdict onsets "mean B-A" "max|d|" jitter "gain" "worst dB" "(note)" "bal dB" "(note)"
for r in "${rows[@]}"; do
  IFS='|' read -r n v p m x j g w wn bl bn <<<"$r"
  printf '%-21s %-9s %-7s %-8s %-7s %-6s %-7s %-8s %-30s %-7s %s\n' "$n" "$v" "${p:--}" "${m:--}" "${x:--}" "${j:--}" "${g:--}" "${w:--}" "${wn:0:30}" "${bl:--}" "${bn:-}"
done
echo "(A = sfizz_render $(cat "$(dirname "$SFIZZ_RENDER")/../BUILD-INFO.txt" 2>/dev/null | head -1 | cut -d' ' -f2 | cut -c1-12), B = tactus built from $(git -C "$ROOT" log -1 --format=%h -- Sources Package.swift) (last commit touching Sources/); 48 kHz; onsets in frames (B - A); gain = median per-note level B - A, dB; worst = the worst note's deviation from it; bal = worst L/R balance difference B - A)"
[ "${KEEP:-0}" = 1 ] && echo "renders kept in $OUT"
exit 0
