#!/usr/bin/env bash
# System exclusive against FluidSynth: every corpus file that sends a GM, GM2, GS or XG
# message (found by reading each file with ../shared/corpus/oracle.py) is rendered by FluidSynth
# and by `tactus render` from the same SoundFont, reverb and chorus off on both sides
# (EFFECTS=on: both programs' defaults), and compare_audio.py's verdict is printed per file:
# once for the file as it is, and once for the file with its sysex removed (`tactus edit
# --remove sysex`), which is how Tactus played it before instruments received sysex.
#
#   Benchmarks/sysex_vs_fluidsynth.sh [CORPUS_DIR] [SOUNDFONT]
#   (defaults: ../shared/corpus/files, /usr/share/sounds/sf2/FluidR3_GM.sf2)
# Environment: TACTUS (binary, default .build/release/tactus, built if missing), COMPARE
# (compare_audio.py), KEEP=1 keeps the WAV files, EFFECTS=on, MAX_SECONDS=N leaves out files
# longer than N seconds (the corpus's "all sounds" files play for up to an hour each),
# FS_DEVICE_ID (default 16): FluidSynth's synth.device-id. FluidSynth has answered to device
# 0x10, as Roland and Yamaha reset messages address it, by default since 2.4; Debian 12's 2.3.1
# defaults to 0 and ignores them, so the script sets what current FluidSynth does.
# Exits 1 when any file's verdict with sysex is worse than "close", 0 otherwise.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=$ROOT/../shared
[ -d "$SHARED/corpus" ] || SHARED=/work/shared
CORPUS=${1:-$SHARED/corpus/files}
SF=${2:-/usr/share/sounds/sf2/FluidR3_GM.sf2}
TACTUS=${TACTUS:-$ROOT/.build/release/tactus}
COMPARE=${COMPARE:-$SHARED/bench/compare_audio.py}
ORACLE=$SHARED/corpus/oracle.py
command -v fluidsynth >/dev/null || { echo "fluidsynth is not installed (apt-get install fluidsynth)" >&2; exit 2; }
[ -f "$SF" ] || { echo "$SF: no such SoundFont" >&2; exit 2; }
if [ ! -x "$TACTUS" ]; then
  (cd "$ROOT" && swift build -c release --product tactus >&2) || exit 2
fi
OUT=$(mktemp -d /tmp/tactus-sysex.XXXXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$OUT"' EXIT
if [ "${EFFECTS:-off}" = on ]; then
  fs_effects=(); tactus_effects=(); effects="reverb and chorus on (both programs' defaults)"
else
  fs_effects=(-o synth.reverb.active=0 -o synth.chorus.active=0); tactus_effects=(--no-reverb --no-chorus)
  effects="reverb and chorus off on both sides"
fi

# "PATH<TAB>KINDS" for each file sending a reset or another message instruments act on.
python3 - "$CORPUS" "$ORACLE" > "$OUT/files.tsv" <<'PY'
import glob, json, os, subprocess, sys
corpus, oracle = sys.argv[1], sys.argv[2]
paths = sorted(set(glob.glob(os.path.join(corpus, "**", "*.mid"), recursive=True)))
for path in paths:
    out = subprocess.run([sys.executable, oracle, path], capture_output=True, text=True).stdout
    try:
        doc = json.loads(out)
    except ValueError:
        continue
    kinds = []
    for track in doc.get("tracks", []):
        for _, kind, hexs in track["events"]:
            if kind != "sysex" or not hexs.startswith("f0") or "len=" in hexs:
                continue
            b = bytes.fromhex(hexs)
            name = None
            if len(b) == 6 and b[1] == 0x7E and b[3] == 0x09 and b[4] in (1, 3):
                name = {1: "GM-on", 3: "GM2-on"}[b[4]]
            elif len(b) == 11 and b[1] == 0x41 and b[3:5] == b"\x42\x12":
                if b[5:8] == b"\x40\x00\x7f":
                    name = "GS-reset"
                elif b[5] == 0x40 and b[6] & 0xF0 == 0x10 and b[7] == 0x15:
                    name = "GS-rhythm-part"
            elif len(b) == 9 and b[1] == 0x43 and b[3] == 0x4C and b[4:7] in (b"\x00\x00\x7e", b"\x00\x00\x7f"):
                name = "XG-on"
            elif len(b) == 8 and b[1] == 0x7F and b[3] == 0x04 and b[4] in (1, 3, 4):
                name = {1: "master-volume", 3: "master-fine-tuning", 4: "master-coarse-tuning"}[b[4]]
            if name and name not in kinds:
                kinds.append(name)
    if any(k.endswith("-on") or k.startswith("GS-") for k in kinds):
        print(os.path.relpath(path, corpus) + "\t" + ",".join(kinds) + "\t" + str(doc.get("length_seconds") or 0))
PY

declare -A count
worse=0; n=0
printf '%-58s %-36s %-10s %s\n' "file" "sends" "no sysex" "with sysex (compare_audio.py)"
while IFS=$'\t' read -r rel kinds seconds; do
  mid=$CORPUS/$rel
  if [ -n "${MAX_SECONDS:-}" ] && python3 -c "import sys; sys.exit(0 if $seconds > $MAX_SECONDS else 1)"; then
    printf '%-58s %-36s left out: %.0f s long (MAX_SECONDS=%s)\n' "$rel" "$kinds" "$seconds" "$MAX_SECONDS"; continue
  fi
  name=$(echo "$rel" | tr '/' '_'); name=${name%.mid}
  fluidsynth -ni -q -F "$OUT/$name.fs.wav" -r 44100 -o synth.device-id=${FS_DEVICE_ID:-16} "${fs_effects[@]}" "$SF" "$mid" >/dev/null 2>&1
  "$TACTUS" edit "$mid" -o "$OUT/$name.nosysex.mid" --remove sysex --quiet >/dev/null 2>&1
  if ! "$TACTUS" render "$mid" -o "$OUT/$name.tactus.wav" --soundfont "$SF" "${tactus_effects[@]}" --quiet >/dev/null 2>&1 ||
     ! "$TACTUS" render "$OUT/$name.nosysex.mid" -o "$OUT/$name.nosysex.wav" --soundfont "$SF" "${tactus_effects[@]}" --quiet >/dev/null 2>&1; then
    echo "$rel: tactus render failed"; worse=1; continue
  fi
  before=$(python3 "$COMPARE" "$OUT/$name.fs.wav" "$OUT/$name.nosysex.wav" | cut -d: -f1)
  line=$(python3 "$COMPARE" "$OUT/$name.fs.wav" "$OUT/$name.tactus.wav")
  verdict=$(echo "$line" | cut -d: -f1)
  printf '%-58s %-36s %-10s %s\n' "$rel" "$kinds" "$before" "$line"
  count[$verdict]=$(( ${count[$verdict]:-0} + 1 )); n=$((n + 1))
  case "$verdict" in SAME|CLOSE) ;; *) worse=1 ;; esac
done < "$OUT/files.tsv"
summary=""
for v in SAME CLOSE DIFFERENT UNRELATED; do [ -n "${count[$v]:-}" ] && summary="$summary ${count[$v]} $v"; done
echo "$n files:$summary (SoundFont $(basename "$SF"), $effects; FluidSynth $(fluidsynth --version 2>/dev/null | head -1 | sed 's/.*version //'))"
[ "${KEEP:-0}" = 1 ] && echo "renders kept in $OUT"
exit $worse
