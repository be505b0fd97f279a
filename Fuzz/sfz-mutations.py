#!/usr/bin/env python3
"""Mutation harness for the SFZ instrument path of `tactus render`.

Usage:
    python3 Fuzz/sfz-mutations.py --tactus PATH [--cases 10000] [--seed N] [--jobs 1]
                                  [--keep-failures DIR] [--only I] [--no-reduce]

Builds a short Standard MIDI File (one track, 8 notes over ~2 s across keys 36..96, several
velocities, a pitch bend, CC 1 and CC 64) and two small WAV samples (16-bit mono 44.1 kHz) in a
temporary folder, then for each case writes an SFZ instrument made of random headers and opcodes
with mutated values (boundary, huge, tiny, NaN/inf, non-numbers, empty, very long, unicode,
random bytes) and structural mutations (duplicate opcodes, missing samples, empty headers, many
regions, #define chains, #include of a generated, missing or the including file), and runs

    TACTUS render SONG.mid --instrument CASE.sfz -o OUT.wav   (sometimes .flac, --format, --mono)

with a 10 s wall-clock timeout, measuring the child's peak RSS (wait4's ru_maxrss, and /proc
polling that kills it past 1 GiB; RLIMIT_AS is 4 GiB as a backstop only).

Outcomes: crash (a signal, or an exit code >= 128 not caused by the harness), hang (over 10 s),
memory (peak RSS over 1 GiB), NaN/inf samples in an f32 WAV that exited 0 (no file may hold
them); also reported without failing the run: unexpected exit codes (not 0 and not 64..78), noisy stderr (> 50 lines or > 64 KiB), and
exit-0 renders whose summary says "peak silence" (only counted). Each case's SFZ comes from
random.Random(f"{seed}:{case}"), so `--only I` regenerates case I alone. Crashing cases are
reduced to the single opcode lines that crash on their own in a one-region instrument.

Exit status 0 when no crash, hang, memory or NaN finding; 1 otherwise; 2 for a usage problem.
"""
import argparse
import glob
import math
import os
import random
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

TIMEOUT = 10.0
RSS_LIMIT_KB = 1024 * 1024          # 1 GiB
AS_LIMIT = 4 * 1024 ** 3            # backstop for the child's address space
CRASH_SIGNALS = {signal.SIGILL, signal.SIGTRAP, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS,
                 signal.SIGFPE}
CLEAN_CODES = {0} | set(range(64, 79))
NOISY_LINES = 50
NOISY_BYTES = 64 * 1024

from sfz_mutation_cases import ASSETS, REAL_SAMPLES, Case, make_assets  # noqa: E402 (beside this script)




# --------------------------------------------------------------------------- running


def set_limits():
    try:
        resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))
    except (ValueError, OSError):
        pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def rss_kb(pid):
    try:
        with open("/proc/%d/statm" % pid) as f:
            return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return 0


def run(cmd, cwd, stdout_path, stderr_path):
    """Returns dict(code, signal, wall, rss_kb, killed) for the command."""
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        start = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             preexec_fn=set_limits, start_new_session=True)
    killed = None
    peak_polled = 0
    delay = 0.002
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        now = time.monotonic() - start
        if killed is None:
            r = rss_kb(p.pid)
            peak_polled = max(peak_polled, r)
            if now > TIMEOUT:
                killed = "hang"
            elif r > RSS_LIMIT_KB:
                killed = "memory"
            if killed:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
        time.sleep(delay)
        delay = min(delay * 1.5, 0.02)
    wall = time.monotonic() - start
    p.returncode = os.waitstatus_to_exitcode(status)   # keep subprocess from reaping it again
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    return {"code": code, "signal": sig, "wall": wall, "rss_kb": max(ru.ru_maxrss, peak_polled),
            "killed": killed}


def float_wav_nonfinite(path):
    """Counts NaN/inf samples in a float WAV (None when not a float WAV or unreadable)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    pos, fmt, bits, body = 12, None, None, None
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        chunk = data[pos + 8:pos + 8 + size]
        if cid == b"fmt ":
            fmt, _, _, _, _, bits = struct.unpack("<HHIIHH", chunk[:16])
            if fmt == 0xFFFE and len(chunk) >= 26:
                fmt = struct.unpack("<H", chunk[24:26])[0]
        elif cid == b"data":
            body = chunk
        pos += 8 + size + (size & 1)
    if fmt != 3 or body is None:
        return None
    width = bits // 8
    if width not in (4, 8):
        return None
    hi = body[width - 1::width]
    count = 0
    for m in re.finditer(rb"[\x7f\xff]", hi):
        i = m.start() * width
        if width == 4:
            v = struct.unpack("<f", body[i:i + 4])[0]
        else:
            v = struct.unpack("<d", body[i:i + 8])[0]
        if not math.isfinite(v):
            count += 1
    return count


def classify(res, stderr_bytes, stdout_bytes):
    if res["killed"] == "hang":
        return "hang"
    if res["killed"] == "memory" or res["rss_kb"] > RSS_LIMIT_KB:
        return "memory"
    if res["signal"]:
        return "crash"
    if res["code"] is not None and res["code"] >= 128:
        return "crash"
    return "ok"


FRAME = re.compile(r"\s\d+ .*?0x[0-9a-f]+ (.+?) \+ \d+ in .*? at (/\S+?\.swift:\d+(?::\d+)?)")


def stderr_tail(data, lines=4):
    """The Swift runtime failure / fatal error message and the first project frame, else the
    last lines of stderr."""
    text = data.decode("utf-8", "replace").rstrip("\n").splitlines()
    parts = []
    for l in text:
        m = re.search(r"\*\*\* (Swift runtime failure: .*?) \*\*\*", l)
        if m:
            parts.append(m.group(1))
            break
    for l in text:
        if "Fatal error" in l or "fatal error" in l or "Precondition failed" in l:
            parts.append(l.strip())
            break
    for l in text:
        m = FRAME.search(l)
        if m and "<compiler-generated>" not in l:
            parts.append("%s at %s" % (m.group(1), m.group(2)))
            break
    if parts:
        return " | ".join(p[:300] for p in parts)
    return " | ".join(l[:300] for l in text[-lines:] if l.strip())


class Harness:
    def __init__(self, args):
        self.args = args
        self.tactus = os.path.abspath(args.tactus)
        self.tmp = tempfile.mkdtemp(prefix="sfz-mut-")
        self.assets = os.path.join(self.tmp, "assets")
        os.makedirs(self.assets)
        make_assets(self.assets)
        reals = sorted(glob.glob(REAL_SAMPLES))
        reals = [r for r in reals if os.path.getsize(r) < 2_000_000]
        self.real = reals[0] if reals else None
        self.lock = threading.Lock()
        self.codes = Counter()
        self.kinds = Counter()
        self.findings = []            # (kind, index, detail)
        self.silence = 0
        self.noisy = []
        self.nonfinite = []
        self.unexpected = []
        self.max_wall = (0.0, -1)
        self.max_rss = (0, -1)
        self.done = 0
        self.slots = []
        for j in range(max(1, args.jobs)):
            d = os.path.join(self.tmp, "slot%d" % j)
            os.makedirs(d)
            for a in ASSETS:
                os.symlink(os.path.join(self.assets, a), os.path.join(d, a))
            self.slots.append(d)
        self.free = list(range(len(self.slots)))

    def command(self, case, folder):
        out = os.path.join(folder, "out" + case.output_ext)
        return [self.tactus, "render", "song.mid", "--instrument", "case.sfz", "-o",
                "out" + case.output_ext] + case.extra_args, out

    def write_case(self, case, folder, lines=None):
        with open(os.path.join(folder, "case.sfz"), "wb") as f:
            f.write(case.render_text(lines))
        inc = os.path.join(folder, "inc.sfz")
        if case.include is not None:
            with open(inc, "w") as f:
                f.write(case.include)
        elif os.path.exists(inc):
            os.unlink(inc)

    def execute(self, case, folder, lines=None):
        self.write_case(case, folder, lines)
        cmd, out = self.command(case, folder)
        if os.path.exists(out):
            os.unlink(out)
        res = run(cmd, folder, os.path.join(folder, "stdout"), os.path.join(folder, "stderr"))
        with open(os.path.join(folder, "stderr"), "rb") as f:
            err = f.read()
        with open(os.path.join(folder, "stdout"), "rb") as f:
            sout = f.read()
        return cmd, out, res, err, sout

    def keep(self, case, folder, kind, cmd, err):
        if not self.args.keep_failures:
            return None
        dest = os.path.join(os.path.abspath(self.args.keep_failures),
                            "case-%05d-%s" % (case.index, kind))
        os.makedirs(dest, exist_ok=True)
        for name in ["case.sfz", "inc.sfz"]:
            src = os.path.join(folder, name)
            if os.path.exists(src) and (name != "inc.sfz" or case.include is not None):
                shutil.copy(src, dest)
        for a in ASSETS:
            shutil.copy(os.path.join(self.assets, a), dest)
        with open(os.path.join(dest, "stderr.txt"), "wb") as f:
            f.write(err)
        repro = "cd %s && %s" % (shlex.quote(dest), " ".join(shlex.quote(c) for c in cmd))
        with open(os.path.join(dest, "repro.sh"), "w") as f:
            f.write("#!/bin/sh\n# case %d of seed %s: %s\n%s\n" % (case.index, self.args.seed,
                                                                    kind, repro))
        return repro

    def one(self, index):
        case = Case(self.args.seed, index, self.real).generate()
        with self.lock:
            slot = self.free.pop()
        folder = self.slots[slot]
        try:
            cmd, out, res, err, sout = self.execute(case, folder)
            kind = classify(res, err, sout)
            with self.lock:
                self.done += 1
                label = ("sig %s" % signal.Signals(res["signal"]).name) if res["signal"] else \
                        ("timeout" if res["killed"] else "exit %s" % res["code"])
                if res["killed"]:
                    label = "killed (%s)" % res["killed"]
                self.codes[label] += 1
                self.kinds[kind] += 1
                if res["wall"] > self.max_wall[0]:
                    self.max_wall = (res["wall"], index)
                if res["rss_kb"] > self.max_rss[0]:
                    self.max_rss = (res["rss_kb"], index)
            extra = None
            if kind == "ok":
                if res["code"] == 0 and b"peak silence" in sout + err:
                    with self.lock:
                        self.silence += 1
                if res["code"] == 0 and case.float_wav:
                    bad = float_wav_nonfinite(out)
                    if bad:
                        extra = ("nonfinite", "%d NaN/inf samples" % bad)
                if res["code"] not in CLEAN_CODES:
                    extra = ("unexpected", "exit %s: %s" % (res["code"], stderr_tail(err)))
                if err.count(b"\n") > NOISY_LINES or len(err) > NOISY_BYTES:
                    with self.lock:
                        self.noisy.append((index, err.count(b"\n"), len(err)))
            if kind != "ok":
                repro = self.keep(case, folder, kind, cmd, err)
                with self.lock:
                    self.findings.append({"kind": kind, "index": index, "res": res,
                                          "tail": stderr_tail(err), "repro": repro,
                                          "lines": list(case.lines), "case": case})
            elif extra:
                repro = self.keep(case, folder, extra[0], cmd, err)
                with self.lock:
                    (self.nonfinite if extra[0] == "nonfinite" else self.unexpected).append(
                        (index, extra[1], repro))
            if os.path.exists(out):
                os.unlink(out)
        finally:
            with self.lock:
                self.free.append(slot)

    # ------------------------------------------------------------------ reduction
    def reduce(self, budget=400):
        """Tries each opcode line of crashing cases alone in `<region> sample=sine.wav`."""
        tried = {}
        causes = {}                    # signature -> list of minimal lines
        folder = self.slots[0]
        runs = 0
        for f in self.findings:
            if f["kind"] != "crash":
                continue
            case = f["case"]
            f["minimal"] = []
            for line in case.lines:
                if line.startswith("<") or line.startswith("#") or "=" not in line or \
                        line.startswith("sample="):
                    continue
                if line not in tried:
                    if runs >= budget:
                        continue
                    runs += 1
                    saved = case.include
                    case.include = None
                    _, out, res, err, _ = self.execute(
                        case, folder, ["<region>", "sample=sine.wav", line])
                    case.include = saved
                    tried[line] = (classify(res, err, b"") == "crash", res, stderr_tail(err))
                    if os.path.exists(out):
                        os.unlink(out)
                hit, res, tail = tried[line]
                if hit:
                    f["minimal"].append(line)
                    code = ("sig %d" % res["signal"]) if res["signal"] else "exit %s" % res["code"]
                    causes.setdefault((code, tail), set()).add(line)
        return causes, runs

    def summary(self, total, elapsed, causes, runs):
        a = self.args
        print("\n=== SFZ mutation summary ===")
        print("binary: %s  seed: %s  cases run: %d/%d  jobs: %d" %
              (self.tactus, a.seed, self.done, total, a.jobs))
        print("outcomes by exit: " + ", ".join("%s: %d" % kv for kv in sorted(self.codes.items())))
        print("classes: " + ", ".join("%s: %d" % kv for kv in sorted(self.kinds.items())))
        print("exit 0 with 'peak silence': %d" % self.silence)
        print("max wall time: %.2f s (case %d)" % self.max_wall)
        print("max RSS: %.1f MiB (case %d)" % (self.max_rss[0] / 1024, self.max_rss[1]))
        print("total time: %.1f s (%.1f ms/case)" % (elapsed, 1000 * elapsed / max(1, self.done)))
        for kind in ("crash", "hang", "memory"):
            items = sorted((f for f in self.findings if f["kind"] == kind),
                           key=lambda f: f["index"])
            print("\n%s findings: %d" % (kind, len(items)))
            for f in items[:40]:
                r = f["res"]
                print("  case %d: exit %s signal %s wall %.2f s rss %.0f MiB :: %s" %
                      (f["index"], r["code"], r["signal"], r["wall"], r["rss_kb"] / 1024,
                       f["tail"][:300]))
                if f.get("minimal"):
                    print("    alone crashes: " + "; ".join(l[:80] for l in f["minimal"]))
                if f["repro"]:
                    print("    repro: " + f["repro"])
            if len(items) > 40:
                print("  ... %d more" % (len(items) - 40))
        print("\nNaN/inf in f32 output: %d" % len(self.nonfinite))
        for idx, d, repro in self.nonfinite[:20]:
            print("  case %d: %s%s" % (idx, d, ("\n    repro: " + repro) if repro else ""))
        print("unexpected exit codes (not 0, 64..78, not crash): %d" % len(self.unexpected))
        for idx, d, repro in self.unexpected[:20]:
            print("  case %d: %s" % (idx, d[:300]))
        print("noisy stderr (> %d lines or > %d bytes): %d" % (NOISY_LINES, NOISY_BYTES,
                                                               len(self.noisy)))
        for idx, nl, nb in self.noisy[:10]:
            print("  case %d: %d lines, %d bytes" % (idx, nl, nb))
        if causes is not None:
            print("\ndistinct crash causes (single opcode lines that crash alone in "
                  "'<region> sample=sine.wav'; %d reduction runs):" % runs)
            if not causes:
                print("  (none reproduced by a single line)")
            for (code, tail), lines in sorted(causes.items(), key=lambda kv: -len(kv[1])):
                ls = sorted(lines, key=len)
                print("  [%s] %s" % (code, tail[:400]))
                print("    %d lines, e.g.: %s" % (len(ls), "; ".join(l[:60] for l in ls[:12])))
            unreduced = [f["index"] for f in self.findings
                         if f["kind"] == "crash" and not f.get("minimal")]
            if unreduced:
                print("  crashes not explained by a single line: cases %s" %
                      ", ".join(map(str, unreduced[:30])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tactus")
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--keep-failures", metavar="DIR")
    ap.add_argument("--only", type=int, metavar="I", help="run case I alone (keeps it in DIR)")
    ap.add_argument("--print-case", type=int, metavar="I", help="print case I's SFZ and exit")
    ap.add_argument("--no-reduce", action="store_true")
    ap.add_argument("--reduce-budget", type=int, default=400)
    args = ap.parse_args()
    if args.print_case is not None:
        sys.stdout.buffer.write(Case(args.seed, args.print_case, None).generate().render_text())
        return 0
    if not args.tactus or not os.access(args.tactus, os.X_OK):
        print("not executable: %s" % args.tactus, file=sys.stderr)
        return 2
    h = Harness(args)
    indices = [args.only] if args.only is not None else list(range(args.cases))
    started = time.monotonic()
    try:
        if args.jobs <= 1:
            for n, i in enumerate(indices):
                h.one(i)
                if (n + 1) % 500 == 0:
                    print("%d cases, %.0f s, crash %d hang %d memory %d" % (
                        n + 1, time.monotonic() - started, h.kinds["crash"], h.kinds["hang"],
                        h.kinds["memory"]), file=sys.stderr, flush=True)
        else:
            with ThreadPoolExecutor(args.jobs) as pool:
                list(pool.map(h.one, indices))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    elapsed = time.monotonic() - started
    causes, runs = (None, 0)
    if not args.no_reduce and any(f["kind"] == "crash" for f in h.findings):
        causes, runs = h.reduce(args.reduce_budget)
    h.summary(len(indices), elapsed, causes, runs)
    shutil.rmtree(h.tmp, ignore_errors=True)
    failed = any(f["kind"] in ("crash", "hang", "memory") for f in h.findings) or h.nonfinite
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
