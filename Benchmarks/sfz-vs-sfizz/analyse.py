#!/usr/bin/env python3
"""Per-note comparison of two renders of the same song: onsets, levels, left/right balance.

    analyse.py A.wav B.wav NOTES.json [--onsets PATH/onsets.py] [--threshold-db -80] [--json] [--notes]

A is the reference (sfizz), B the candidate (Tactus); NOTES.json is what make_tests.py wrote
beside the song (note starts and ends in frames, which notes sound). Prints one summary line
(--json: one object; --notes: also a line per note).

Onsets: onsets.py (shared/bench) finds the onsets of each file in click mode (first frame
over the threshold after 10 ms of silence, exact to the frame), with the same threshold for
both files after the gain difference (--threshold-db, default -80 dBFS, for A; for B the same
plus the median level difference B - A below: sfizz_render's 16-bit output rests at -1 LSB,
-90.3 dBFS, where a float render rests at 0, so onsets.py's own noise-floor threshold would
differ between the two, and a fixed one would meet a fade-in or a quiet note at another point
of its rise in a file rendered at another gain); each sounding note's start is
paired with the nearest detection of each file within 50 ms, for the notes that start at
full level (make_tests.py's "timing"; a note with an attack or a delay is listed per note
only, as its onset shows the attack's shape, not its start). Reported: how many notes were
found in both, the mean and largest |B - A| in frames, and the jitter (largest deviation of
B - A from its median); and each file's median offset from the MIDI note times.

Levels: for each sounding note, the RMS level of each channel over a window from its start
to 0.5 s later or the note's end, whichever is later, cut 5 ms before the next sounding
note's start (so an engine that starts that note a few frames early does not put its first
frames into this window).
Level = power of both channels; balance = left minus right (dB). Reported: the median of
B - A over the notes (the engines' overall gain difference), the worst |B - A| and the worst
deviation of B - A from that median (a note louder or softer than the rest would make it),
and the worst |balance B - balance A|. A window silent (under -100 dBFS) in one file and not
the other counts as a 99 dB difference.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SILENT_DB = -100.0


def read_wav(path):
    sys.path.insert(0, os.path.dirname(ONSETS))
    import onsets  # shared/bench/onsets.py: reads every WAV flavour
    x, rate = onsets.read_wav(path)
    if x.shape[1] == 1:
        x = np.repeat(x, 2, axis=1)
    return x[:, :2], rate


def db(p):
    return 10 * np.log10(p) if p > 10 ** (SILENT_DB / 10) else SILENT_DB


def detected_onsets(path, threshold_db):
    out = subprocess.run([sys.executable, ONSETS, path, "--mode", "click", "--json",
                          "--threshold-db", str(threshold_db)],
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"analyse.py: onsets.py failed on {path}: {out.stderr.strip()}")
    return np.array([o["sample"] for o in json.loads(out.stdout)["onsets"]], dtype=float)


def nearest(det, frame, window):
    if det.size == 0:
        return None
    i = int(np.argmin(np.abs(det - frame)))
    return det[i] if abs(det[i] - frame) <= window else None


def main():
    global ONSETS
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("notes")
    ap.add_argument("--onsets", default=None)
    ap.add_argument("--threshold-db", type=float, default=-80.0)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--notes", dest="per_note", action="store_true")
    args = ap.parse_args()
    ONSETS = args.onsets or os.path.join(HERE, "..", "..", "..", "shared", "bench", "onsets.py")
    if not os.path.exists(ONSETS):
        ONSETS = "/work/shared/bench/onsets.py"
    doc = json.load(open(args.notes))
    notes = [n for n in doc["notes"] if n["sounds"]]
    notes.sort(key=lambda n: n["start_frame"])
    xa, ra = read_wav(args.a)
    xb, rb = read_wav(args.b)
    if ra != rb or ra != doc["rate"]:
        sys.exit(f"analyse.py: rates differ: {args.a} {ra}, {args.b} {rb}, song {doc['rate']}")
    rate = ra

    # levels and balance
    rows = []
    for i, n in enumerate(notes):
        s = n["start_frame"]
        e = max(n["end_frame"], s + int(0.5 * rate))
        later = [m["start_frame"] for m in notes[i + 1:] if m["start_frame"] > s]
        if later:
            e = min(e, later[0] - int(0.005 * rate))
        if e <= s:
            continue
        pa = np.mean(xa[s:e] ** 2, axis=0) if s < len(xa) else np.zeros(2)
        pb = np.mean(xb[s:e] ** 2, axis=0) if s < len(xb) else np.zeros(2)
        la, lb = db(pa.mean()), db(pb.mean())
        if la == SILENT_DB and lb == SILENT_DB:
            continue
        bal_a, bal_b = db(pa[0]) - db(pa[1]), db(pb[0]) - db(pb[1])
        rows.append({"label": n["label"], "key": n["key"], "vel": n["vel"],
                     "start_s": round(n["start"], 4), "level_a": la, "level_b": lb,
                     "diff": (lb - la) if SILENT_DB not in (la, lb) else (99.0 if lb > la else -99.0),
                     "bal_a": bal_a, "bal_b": bal_b,
                     "bal_diff": (bal_b - bal_a) if SILENT_DB not in (la, lb) else 99.0, "note": n})
    diff = np.array([r["diff"] for r in rows])
    bal = np.array([r["bal_diff"] for r in rows])
    gain = float(np.median(diff)) if diff.size else 0.0
    worst_dev = max(rows, key=lambda r: abs(r["diff"] - gain)) if rows else None
    worst_bal = max(rows, key=lambda r: abs(r["bal_diff"])) if rows else None
    level = {"notes": len(rows), "median_diff": gain,
             "worst_abs_diff": float(np.abs(diff).max()) if diff.size else None,
             "worst_dev": (worst_dev["diff"] - gain) if worst_dev else None,
             "worst_dev_note": worst_dev["label"] if worst_dev else None,
             "worst_bal": worst_bal["bal_diff"] if worst_bal else None,
             "worst_bal_note": worst_bal["label"] if worst_bal else None}
    # onsets
    thr_b = args.threshold_db + gain
    da, dbb = detected_onsets(args.a, args.threshold_db), detected_onsets(args.b, thr_b)
    window = 0.05 * rate
    diffs, off_a, off_b = [], [], []
    for n in notes:
        fa, fb = nearest(da, n["start_frame"], window), nearest(dbb, n["start_frame"], window)
        n["onset_a"], n["onset_b"] = fa, fb
        if not n.get("timing", True):
            continue  # fades in: its onset is not its start (listed per note all the same)
        if fa is not None:
            off_a.append(fa - n["start_frame"])
        if fb is not None:
            off_b.append(fb - n["start_frame"])
        if fa is not None and fb is not None:
            diffs.append(fb - fa)
    diffs = np.array(diffs)
    onset = {"notes": sum(1 for n in notes if n.get("timing", True)), "paired": int(diffs.size), "threshold_a_dbfs": args.threshold_db,
             "threshold_b_dbfs": thr_b}
    if diffs.size:
        med = float(np.median(diffs))
        onset.update(mean_diff=float(diffs.mean()), mean_abs_diff=float(np.abs(diffs).mean()),
                     max_abs_diff=float(np.abs(diffs).max()), median_diff=med,
                     jitter=float(np.abs(diffs - med).max()))
    onset["median_offset_a"] = float(np.median(off_a)) if off_a else None
    onset["median_offset_b"] = float(np.median(off_b)) if off_b else None

    for r in rows:
        r["onset_a"], r["onset_b"] = r["note"]["onset_a"], r["note"]["onset_b"]
        del r["note"]
    res = {"a": args.a, "b": args.b, "onsets": onset, "levels": level, "per_note": rows}
    if args.json:
        print(json.dumps(res, indent=1))
        return
    o = onset
    line = f"onsets {o['paired']}/{o['notes']} paired"
    if diffs.size:
        line += (f", B-A mean {o['mean_diff']:+.1f} max |{o['max_abs_diff']:.0f}| frames, "
                 f"jitter {o['jitter']:.0f}")
    line += (f" (vs MIDI: A {o['median_offset_a']}, B {o['median_offset_b']} frames median); "
             f"levels B-A median {gain:+.2f} dB, worst dev {level['worst_dev']:+.2f} dB "
             f"({level['worst_dev_note']}); worst balance diff {level['worst_bal']:+.2f} dB "
             f"({level['worst_bal_note']})")
    print(line)
    if args.per_note:
        print(f"  {'note':44s} {'t(s)':>7s} {'A dB':>7s} {'B dB':>7s} {'B-A':>7s} "
              f"{'balA':>6s} {'balB':>6s} {'onA':>8s} {'onB':>8s}")
        for r in rows:
            fmt = lambda v: "-" if v is None else f"{v:.0f}"
            print(f"  {r['label'][:44]:44s} {r['start_s']:7.3f} {r['level_a']:7.2f} "
                  f"{r['level_b']:7.2f} {r['diff']:+7.2f} {r['bal_a']:+6.2f} {r['bal_b']:+6.2f} "
                  f"{fmt(r['onset_a']):>8s} {fmt(r['onset_b']):>8s}")


if __name__ == "__main__":
    main()
