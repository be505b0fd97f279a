#!/usr/bin/env bash
# Load and write speed and peak memory of the Tactus SMF codec against symusic (C++ behind
# Python), side by side in one run, on the 1.25M-event file of the shared anchor benchmarks.
#
#   Benchmarks/smf_vs_symusic.sh [ROUNDS [RUNS]]      (defaults: 5 rounds of 9 runs)
#
# Needs: swift, python3 with symusic, /usr/bin/time (apt package `time`), and ../shared next
# to the repository (SHARED=... overrides). Steps:
#   1. gen_midi.py --big writes big_1000.mid (format 1, 16 tracks, 1,251,073 events).
#   2. swift build -c release --product smf-bench.
#   3. ROUNDS rounds, alternating Tactus and symusic processes; each process loads the file
#      RUNS times, then writes it RUNS times (to /dev/shm), and reports its medians of wall
#      and CPU time. Times are the median over rounds; ratios the median of per-round ratios
#      (the two processes of a round run back to back). Like the anchors' parse_bench.py, only the operation
#      is timed (no process start or import), and before each process the script waits up to
#      30 s for the machine to be quiet (shared cores).
#   4. Peak RSS of separate load-only processes (one load each) with /usr/bin/time -v, and of
#      processes that start but load nothing (the baseline), median of 3 each.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}
ROUNDS=${1:-5}
RUNS=${2:-9}
ANCHORS="$SHARED/bench/anchors"
[ -f "$ANCHORS/gen_midi.py" ] || { echo "smf_vs_symusic.sh: $ANCHORS/gen_midi.py not found (set SHARED)" >&2; exit 66; }
[ -x /usr/bin/time ] || { echo "smf_vs_symusic.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 69; }
python3 -c 'import symusic' 2>/dev/null || { echo "smf_vs_symusic.sh: python3 cannot import symusic (pip install symusic)" >&2; exit 69; }

WORK=$(mktemp -d /tmp/smf-vs-symusic.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
MID="$WORK/big_1000.mid"
python3 "$ANCHORS/gen_midi.py" --big "$MID" 1000 500000

(cd "$ROOT" && swift build -c release --product smf-bench 2>&1 | grep -v "^warning: '" | tail -1)
BENCH="$(cd "$ROOT" && swift build -c release --show-bin-path)/smf-bench"

python3 - "$BENCH" "$MID" "$ROUNDS" "$RUNS" "$ANCHORS" <<'PY'
import json, os, platform, re, statistics, subprocess, sys

bench, mid, rounds, runs, anchors = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, anchors)
from quiet import wait_quiet

# The symusic side: the same protocol as smf-bench (median of RUNS loads, then RUNS dumps).
SYMUSIC = r'''
import json, os, statistics, sys, time
import symusic
path, runs, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = f"/dev/shm/symusic-smf-bench-{os.getpid()}.mid"
r = {"tool": "symusic " + symusic.__version__, "mode": mode, "runs": runs}
if mode != "none":
    lt, lc = [], []
    score = None
    for _ in range(runs):
        score = None  # free the previous load outside the timed part, as smf-bench does
        a, c = time.perf_counter(), time.process_time()
        score = symusic.Score.from_file(path)
        lt.append(time.perf_counter() - a); lc.append(time.process_time() - c)
    r["load_s"], r["load_cpu_s"] = statistics.median(lt), statistics.median(lc)
    if mode == "both":
        wt, wc = [], []
        for _ in range(runs):
            a, c = time.perf_counter(), time.process_time()
            score.dump_midi(out)
            wt.append(time.perf_counter() - a); wc.append(time.process_time() - c)
        os.unlink(out)
        r["write_s"], r["write_cpu_s"] = statistics.median(wt), statistics.median(wc)
print(json.dumps(r))
'''


def tactus(mode, n):
    return [bench, mid, '--runs', str(n), '--mode', mode]


def symusic(mode, n):
    return [sys.executable, '-c', SYMUSIC, mid, str(n), mode]


def run_json(cmd):
    wait_quiet(timeout=30)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def peak_rss_mib(cmd):
    wait_quiet(timeout=30)
    r = subprocess.run(['/usr/bin/time', '-v'] + cmd, check=True, capture_output=True, text=True)
    kib = int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', r.stderr).group(1))
    return kib / 1024.0


KEYS = ('load_s', 'write_s', 'load_cpu_s', 'write_cpu_s')
times = {tool: {k: [] for k in KEYS} for tool in ('tactus', 'symusic')}
ratios = {k: [] for k in KEYS}   # per round: symusic time / Tactus time, measured back to back
events = None
version = None
for i in range(rounds):
    # Alternate which tool goes first, so drifting background load hits both alike.
    if i % 2 == 0:
        t = run_json(tactus('both', runs)); s = run_json(symusic('both', runs))
    else:
        s = run_json(symusic('both', runs)); t = run_json(tactus('both', runs))
    events, version = t['events'], s['tool']
    for k in KEYS:
        times['tactus'][k].append(t[k])
        times['symusic'][k].append(s[k])
        ratios[k].append(s[k] / t[k])
    print(f'round {i + 1}/{rounds}: tactus load {t["load_s"] * 1e3:.1f} ms write {t["write_s"] * 1e3:.1f} ms | '
          f'symusic load {s["load_s"] * 1e3:.1f} ms write {s["write_s"] * 1e3:.1f} ms', flush=True)

rss = {}
for tool, make in (('tactus', tactus), ('symusic', symusic)):
    rss[tool] = {
        'peak': statistics.median(peak_rss_mib(make('load', 1)) for _ in range(3)),
        'base': statistics.median(peak_rss_mib(make('none', 1)) for _ in range(3)),
    }

med = {tool: {k: statistics.median(v) for k, v in d.items()} for tool, d in times.items()}
mev = lambda s: events / s / 1e6
b_per_ev = lambda mib: mib * 1048576 / events

print()
print(f'file: big_1000.mid from gen_midi.py --big, {events:,} events, {os.path.getsize(mid):,} bytes; '
      f'{rounds} rounds x {runs} runs; {os.cpu_count()} cores, {platform.machine()}; {version}')
print()
print('| | Tactus | symusic | speed ratio (Tactus / symusic), median of rounds |')
print('|---|---:|---:|---:|')
for k, label in (('load_s', 'load, wall'), ('write_s', 'write, wall'), ('load_cpu_s', 'load, CPU time'), ('write_cpu_s', 'write, CPU time')):
    a, b = med['tactus'][k], med['symusic'][k]
    print(f'| {label} | {a * 1e3:.1f} ms ({mev(a):.1f} M events/s) | {b * 1e3:.1f} ms ({mev(b):.1f} M events/s) | '
          f'{statistics.median(ratios[k]):.2f}x (rounds {min(ratios[k]):.2f}-{max(ratios[k]):.2f}) |')
print()
print('| memory, load only | Tactus | symusic | ratio (Tactus / symusic) |')
print('|---|---:|---:|---:|')
pt, ps = rss['tactus']['peak'], rss['symusic']['peak']
bt, bs = rss['tactus']['base'], rss['symusic']['base']
print(f'| peak RSS, load only | {pt:.1f} MiB ({b_per_ev(pt):.1f} B/event) | {ps:.1f} MiB ({b_per_ev(ps):.1f} B/event) | {pt / ps:.2f} |')
print(f'| RSS of the process before loading | {bt:.1f} MiB | {bs:.1f} MiB (python3 + symusic) | |')
print(f'| peak RSS minus that baseline | {pt - bt:.1f} MiB ({b_per_ev(pt - bt):.1f} B/event) | {ps - bs:.1f} MiB ({b_per_ev(ps - bs):.1f} B/event) | {(pt - bt) / (ps - bs):.2f} |')
PY
