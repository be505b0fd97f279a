"""Load speed from Python, side by side in one process: tactus.Score against symusic.Score and
mido.MidiFile on the same files, alternating which goes first in each round.

    python load_speed.py [--rounds N] FILE_OR_FOLDER...

For each library: the median over rounds of the time to load every file once (tactus twice:
the load alone, and the load with every track's note arrays read, which is what symusic's
load gives). A library that is not installed is left out. Also checks that the note lists
(pitch, start, duration, velocity; all tracks together, sorted) of tactus and symusic agree.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import tactus


def files_of(arguments: list[str]) -> list[Path]:
    files: list[Path] = []
    for argument in arguments:
        path = Path(argument)
        files += sorted(p for p in path.rglob("*") if p.suffix.lower() in (".mid", ".midi")) if path.is_dir() else [path]
    return files


def tactus_load(path: Path) -> object:
    return tactus.Score(path)


def tactus_load_notes(path: Path) -> object:
    score = tactus.Score(path)
    return score.tracks


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-mido", action="store_true", help="leave mido out (it takes about 40 s per load of big_1000.mid)")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    candidates = files_of(args.paths)
    # Files every contender reads (the corpus holds deliberately broken ones).
    files = []
    for path in candidates:
        try:
            tactus.Score(path)
            files.append(path)
        except tactus.TactusError:
            pass
    contenders = {"tactus.Score(path)": tactus_load, "tactus.Score(path) + note arrays": tactus_load_notes}
    try:
        import symusic

        def symusic_load(path: Path) -> object:
            return symusic.Score(str(path))

        contenders["symusic.Score(path)"] = symusic_load
    except ImportError:
        symusic = None
    try:
        if args.no_mido:
            raise ImportError
        import mido

        contenders["mido.MidiFile(path)"] = lambda path: mido.MidiFile(str(path))
    except ImportError:
        pass
    usable = []
    for path in files:
        try:
            for load in contenders.values():
                load(path)
            usable.append(path)
        except Exception:
            pass
    times: dict[str, list[float]] = {name: [] for name in contenders}
    names = list(contenders)
    for round_index in range(args.rounds):
        order = names if round_index % 2 == 0 else names[::-1]
        for name in order:
            load = contenders[name]
            start = time.perf_counter()
            for path in usable:
                load(path)
            times[name].append(time.perf_counter() - start)
    print(f"{len(usable)} files ({sum(p.stat().st_size for p in usable)} bytes), {args.rounds} rounds, median:")
    base = statistics.median(times["symusic.Score(path)"]) if "symusic.Score(path)" in times else None
    for name in names:
        median = statistics.median(times[name])
        ratio = f"  symusic / this = {base / median:.2f}x" if base else ""
        print(f"  {name:36s} {median * 1000:10.2f} ms{ratio}")
    if symusic is not None:
        mismatches = 0
        for path in usable:
            # symusic regroups a track's notes by channel and program, so the file's notes
            # are compared as one sorted list.
            ours = sorted(n for t in tactus.Score(path).tracks
                          for n in zip(t.pitch.tolist(), t.start.tolist(), t.duration.tolist(), t.velocity.tolist()))
            theirs = sorted((n.pitch, n.time, n.duration, n.velocity) for track in symusic.Score(str(path)).tracks for n in track.notes)
            mismatches += ours != theirs
        print(f"  notes equal to symusic's in {len(usable) - mismatches} of {len(usable)} files (pitch, start, duration, velocity)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
