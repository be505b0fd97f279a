"""Memory of one render from Python: how far the process's peak resident memory rises while
``tactus.render`` renders a song, against the size of the audio it returns. The issue's bound:
no more than twice the output buffer.

    python render_memory.py [--soundfont SF2] SONG...

The peak is reset before each render (``/proc/self/clear_refs``, Linux 4.0 or later), the song
is loaded first (its parse is not counted), and the audio is kept until the peak is read.
"""

from __future__ import annotations

import argparse
import sys

import tactus


def kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soundfont", help="a SoundFont for the sampler (default: the built-in synthesizer)")
    parser.add_argument("songs", nargs="+")
    arguments = parser.parse_args()
    worst = 0.0
    for path in arguments.songs:
        score = tactus.Score(path)
        tactus.render(score, soundfont=arguments.soundfont, tail=0)  # warm up: code pages, the bank
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        before = kib("VmRSS")
        audio = tactus.render(score, soundfont=arguments.soundfont)
        growth = (kib("VmHWM") - before) / 1024
        size = audio.nbytes / 2**20
        worst = max(worst, growth / size)
        print(f"{path}: peak RSS grew {growth:.1f} MiB for {size:.1f} MiB of audio ({growth / size:.2f}x)")
    print(f"largest ratio {worst:.2f}x (bound: 2x)")
    return 0 if worst <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
