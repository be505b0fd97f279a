#!/usr/bin/env bash
# What hosting an LV2 instrument costs beyond the plugin's own work: one `tactus render` of a
# song with the plugin as instrument runs under callgrind, which counts the instructions of the
# whole process, of Tactus's render loop (`Engine.render`, inclusive: the graph, the node's
# grid and atom sequences, the limiter, everything but the file's decoding and writing), and of
# the plugin's own `run` (inclusive: with what it calls), all in that one run. Prints the
# three counts and the host's share over the plugin's run, for the loop and the process; and
# the output limiter's share of the loop (its cost depends on how much it limits, not on the
# plugin's hosting).
# Instruction counts repeat exactly from run to run, where times on a shared machine do not.
#
#   Benchmarks/lv2_hosting_cost.sh [SONG] [PLUGIN_URI] [PLUGIN_LIBRARY]
#   (defaults: Songs/morning-steps.mid, MDA Piano, /usr/lib/lv2/mda.lv2/Piano.so)
# Environment: TACTUS (binary, default .build/release/tactus, built if missing), TACTUS_ARGS
# (more render options, as `--gain -6`).
# Exits 0 with the figures, 2 when a tool or input is missing.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SONG=${1:-$ROOT/Songs/morning-steps.mid}
URI=${2:-http://drobilla.net/plugins/mda/Piano}
LIBRARY=${3:-/usr/lib/lv2/mda.lv2/Piano.so}
TACTUS=${TACTUS:-$ROOT/.build/release/tactus}
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null \
  || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
[ -f "$SONG" ] || { echo "$SONG: no such file" >&2; exit 2; }
[ -f "$LIBRARY" ] || { echo "$LIBRARY: no such plugin library (for MDA Piano: apt-get install mda-lv2)" >&2; exit 2; }
if [ ! -x "$TACTUS" ]; then
  (cd "$ROOT" && swift build -c release --product tactus >&2) || exit 2
fi
OUT=$(mktemp -d /tmp/tactus-lv2-cost.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
# Valgrind 3.19 cannot read the Swift toolchain's debug information ("possibly corrupted"); a
# copy without it keeps the symbol table, which is all the counts need.
objcopy --strip-debug "$TACTUS" "$OUT/tactus"
valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" \
  "$OUT/tactus" render "$SONG" --instrument "lv2:$URI" -o "$OUT/song.wav" ${TACTUS_ARGS:-} >"$OUT/render.log" 2>&1 \
  || { echo "the render failed under callgrind:" >&2; tail -5 "$OUT/render.log" >&2; exit 2; }
callgrind_annotate --inclusive=yes --threshold=100 "$OUT/callgrind.out" >"$OUT/inclusive.txt" 2>/dev/null
python3 - "$OUT/inclusive.txt" "$LIBRARY" "$SONG" "$URI" <<'EOF'
import re, sys
path, library, song, uri = sys.argv[1:]
total = loop = plugin = None
limiter = 0
for line in open(path, encoding="utf-8", errors="replace"):
    m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$", line)
    if not m:
        continue
    count, name = int(m.group(1).replace(",", "")), m.group(2)
    if name.startswith("PROGRAM TOTALS"):
        total = count
    elif "6EngineC6render10frameCount" in name and loop is None:
        loop = count
    elif "11LimiterNodeC" in name and "render" in name and limiter == 0:
        limiter = count
    elif library in name and plugin is None:
        # The plugin's entry point called by the host is its costliest function inclusive.
        plugin = count
if total is None:
    # Older callgrind_annotate prints the totals on a line of their own.
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"\s*([\d,]+)\s+\(100\.0%\)\s+PROGRAM TOTALS", line) or re.match(r"\s*([\d,]+)\s+PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
if None in (total, loop, plugin):
    sys.exit(f"could not read the counts (total {total}, render loop {loop}, plugin {plugin}) from {path}")
print(f"song: {song}")
print(f"plugin: {uri} ({library})")
print(f"instructions, whole process:          {total:>15,}")
print(f"instructions, Engine.render:          {loop:>15,}")
print(f"instructions, the plugin's run:       {plugin:>15,}")
print(f"instructions, the output limiter:     {limiter:>15,}")
print(f"render loop over the plugin's run:    {100 * (loop - plugin) / plugin:+.2f}%")
print(f"  without the limiter:                {100 * (loop - limiter - plugin) / plugin:+.2f}%")
print(f"whole process over the plugin's run:  {100 * (total - plugin) / plugin:+.2f}%")
EOF
