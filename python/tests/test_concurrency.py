"""Threads and forked data loader workers get the same results as one thread."""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import tactus
from conftest import CORPUS, REPO

SONGS = [REPO / "Songs" / name for name in ("little-waltz.mid", "seven-eight.mid", "morning-steps.mid")] + \
        sorted((CORPUS / "openmsx").glob("*.mid"))[:5]


def digest(score: tactus.Score, audio: bool) -> str:
    h = hashlib.sha256()
    for track in score.tracks:
        for column in (track.start, track.duration, track.pitch, track.velocity, track.channel):
            h.update(column.tobytes())
    if audio:
        h.update(tactus.render(score, tail=0.25).tobytes())
    return h.hexdigest()


def test_threads_load_and_render_alike() -> None:
    expected = [digest(tactus.Score(p), audio=i < 2) for i, p in enumerate(SONGS)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda item: digest(tactus.Score(item[1]), audio=item[0] < 2), enumerate(SONGS)))
    assert got == expected


def test_a_forked_child_uses_scores_loaded_before_the_fork() -> None:
    score = tactus.Score(SONGS[0])
    expected = digest(score, audio=True) + digest(tactus.Score(SONGS[1]), audio=False)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            fresh = tactus.Score(SONGS[0])  # a new handle as well as the inherited one
            text = digest(score, audio=True) + digest(tactus.Score(SONGS[1]), audio=False)
            assert digest(fresh, audio=False) == digest(score, audio=False)
            os.write(write_end, text.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    received = b""
    while chunk := os.read(read_end, 4096):
        received += chunk
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert received.decode() == expected
