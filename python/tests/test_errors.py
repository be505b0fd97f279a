"""Failures arrive as typed exceptions with the library's message; none crashes Python."""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

import numpy as np
import pytest

import tactus
from tactus._lib import lib
from conftest import CORPUS, REPO


def test_missing_file() -> None:
    with pytest.raises(tactus.TactusFileNotFoundError, match="no such file") as caught:
        tactus.Score("/nonexistent/song.mid")
    assert isinstance(caught.value, FileNotFoundError) and isinstance(caught.value, tactus.TactusError)
    assert caught.value.code == 3


def test_directory() -> None:
    with pytest.raises(tactus.UnreadableFileError, match="directory"):
        tactus.Score(REPO / "Songs")


def test_not_a_midi_file() -> None:
    with pytest.raises(tactus.InvalidFileError):
        tactus.Score(REPO / "Package.swift")
    with pytest.raises(tactus.InvalidFileError) as caught:
        tactus.Score.from_bytes(b"MThd\x00\x00\x00\x06\x00")
    assert isinstance(caught.value, ValueError)
    with pytest.raises(tactus.InvalidFileError):
        tactus.Score.from_bytes(b"")


def test_every_malformed_corpus_file_loads_or_raises_invalid_file() -> None:
    outcomes = {"loaded": 0, "refused": 0}
    for path in sorted((CORPUS / "malformed").glob("*.mid")):
        try:
            score = tactus.Score(path)
            _ = [len(t) for t in score.tracks]
            outcomes["loaded"] += 1
        except tactus.InvalidFileError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 0 and outcomes["loaded"] > 0


def test_closed_score() -> None:
    score = tactus.Score(REPO / "Songs" / "little-waltz.mid")
    score.close()
    with pytest.raises(tactus.InvalidHandleError):
        score.tracks
    with pytest.raises(tactus.InvalidHandleError):
        tactus.render(score)


def test_the_c_interface_refuses_bad_handles_and_buffers() -> None:
    # Straight through ctypes, as another binding would call it.
    assert lib.tactus_score_free(12345678) == 2
    assert b"not a live score" in lib.tactus_last_error_message()
    assert lib.tactus_score_load_path(None, None) == 1
    handle = ctypes.c_void_p()
    assert lib.tactus_score_load_path(str(REPO / "Songs" / "little-waltz.mid").encode(), ctypes.byref(handle)) == 0
    # A success leaves the last failure's message, as errno is left.
    assert b"NULL" in lib.tactus_last_error_message()
    count = ctypes.c_int64()
    assert lib.tactus_score_track_note_count(handle.value, 0, ctypes.byref(count)) == 0 and count.value > 1
    small = np.empty(count.value - 1, np.int64)
    assert lib.tactus_score_track_notes(handle.value, 0, small.ctypes.data, None, None, None, None, len(small)) == 6
    assert lib.tactus_score_track_notes(handle.value, 0, None, None, None, None, None, -1) == 1
    assert lib.tactus_score_track_note_count(handle.value, 99, ctypes.byref(count)) == 1
    assert b"track 99" in lib.tactus_last_error_message()
    assert lib.tactus_score_free(handle.value) == 0
    assert lib.tactus_score_free(handle.value) == 2


def test_messages_are_per_thread() -> None:
    assert lib.tactus_score_free(1 << 40) == 2
    seen = []
    thread = threading.Thread(target=lambda: seen.append(lib.tactus_last_error_message()))
    thread.start()
    thread.join()
    assert seen == [b""]
    assert b"not a live score" in lib.tactus_last_error_message()


def test_a_dropped_score_is_freed_at_once_even_with_its_tracks_read() -> None:
    import gc

    gc.disable()
    try:
        score = tactus.Score(REPO / "Songs" / "little-waltz.mid")
        tracks = score.tracks
        handle = score.handle
        del score, tracks
        # Freed by reference counting, not left to the cyclic collector.
        assert lib.tactus_score_free(handle) == 2
    finally:
        gc.enable()
