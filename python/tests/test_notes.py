"""Scores read through Tactus hold the notes mido reads, track by track."""

from __future__ import annotations

from collections import defaultdict, deque
from fractions import Fraction
from pathlib import Path

import mido
import numpy as np
import pytest

import tactus
from conftest import CORPUS, REPO

FILES = [
    CORPUS / "openmsx" / "5432gone_redfarn.mid",
    CORPUS / "openmsx" / "be_sharp_bw_redfarn.mid",
    CORPUS / "openmsx" / "busy_schedule.mid",
    CORPUS / "tonejs" / "bach" / "bach_846.mid",
    CORPUS / "tonejs" / "bach" / "bach_format0.mid",
    CORPUS / "tonejs" / "bartok" / "concerto_for_orchestra_1.mid",
    CORPUS / "tonejs" / "230_bpm_multitrack.mid",
    CORPUS / "synthetic" / "note_pairing_edge_cases.mid",
    CORPUS / "synthetic" / "tempo_changes_format1.mid",
    REPO / "Songs" / "little-waltz.mid",
    REPO / "Songs" / "seven-eight.mid",
]


def mido_notes(path: Path) -> list[list[tuple[int, int, int, int, int]]]:
    """Per track: (start, duration, pitch, velocity, channel), paired first in, first out."""
    result = []
    for track in mido.MidiFile(str(path)).tracks:
        waiting: dict[tuple[int, int], deque] = defaultdict(deque)
        notes = []
        tick = 0
        for message in track:
            tick += message.time
            if message.type == "note_on" and message.velocity > 0:
                waiting[(message.channel, message.note)].append((tick, message.velocity))
            elif message.type in ("note_on", "note_off"):
                queue = waiting[(message.channel, message.note)]
                if queue:
                    start, velocity = queue.popleft()
                    notes.append((start, tick - start, message.note, velocity, message.channel))
        result.append(sorted(notes))
    return result


def tactus_notes(track: tactus.Track) -> list[tuple[int, int, int, int, int]]:
    return sorted(zip(track.start.tolist(), track.duration.tolist(), track.pitch.tolist(),
                      track.velocity.tolist(), track.channel.tolist()))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_notes_equal_mido(path: Path) -> None:
    score = tactus.Score(path)
    expected = mido_notes(path)
    assert len(score.tracks) == len(expected)
    assert sum(len(t) for t in score.tracks) > 0
    for track, notes in zip(score.tracks, expected):
        assert tactus_notes(track) == notes, f"track {track.index}"
    assert score.ticks_per_quarter == mido.MidiFile(str(path)).ticks_per_beat


def test_arrays_have_the_documented_types() -> None:
    track = tactus.Score(FILES[0]).tracks[1]
    assert (track.start.dtype, track.duration.dtype) == (np.int64, np.int64)
    assert (track.pitch.dtype, track.velocity.dtype, track.channel.dtype) == (np.uint8, np.uint8, np.uint8)
    assert np.array_equal(track.end, track.start + track.duration)


def test_from_bytes_equals_path() -> None:
    path = FILES[3]
    from_path = tactus.Score(path)
    from_bytes = tactus.Score.from_bytes(path.read_bytes())
    assert [tactus_notes(t) for t in from_path.tracks] == [tactus_notes(t) for t in from_bytes.tracks]
    assert [t.name for t in from_path.tracks] == [t.name for t in from_bytes.tracks]


def test_track_names_equal_mido() -> None:
    path = FILES[6]
    names = [track.name for track in mido.MidiFile(str(path)).tracks]
    assert [t.name for t in tactus.Score(path).tracks] == names


def mido_seconds(path: Path, ticks: list[int]) -> list[float]:
    """Exact seconds of `ticks` through the tempo changes of every track."""
    midi = mido.MidiFile(str(path))
    changes = []
    for track in midi.tracks:
        tick = 0
        for message in track:
            tick += message.time
            if message.type == "set_tempo":
                changes.append((tick, message.tempo))
    changes.sort(key=lambda c: c[0])
    result = []
    for t in ticks:
        micros, last, tempo = Fraction(0), 0, 500_000
        for tick, value in changes:
            if tick > t:
                break
            micros += (tick - last) * tempo
            last, tempo = tick, value
        micros += (t - last) * tempo
        result.append(float(micros / midi.ticks_per_beat / 1_000_000))
    return result


def test_seconds_follow_every_tempo_change() -> None:
    path = CORPUS / "synthetic" / "tempo_changes_format1.mid"
    score = tactus.Score(path)
    ticks, micros = score.tempos()
    assert len(ticks) >= 2 and len(set(micros.tolist())) >= 2
    starts = np.concatenate([t.start for t in score.tracks])
    assert len(starts) > 0
    assert np.allclose(np.concatenate([t.start_seconds for t in score.tracks]), mido_seconds(path, starts.tolist()), rtol=0, atol=1e-9)
    probe = np.arange(0, score.end_tick + 1, max(1, score.end_tick // 97))
    assert np.allclose(score.seconds(probe), mido_seconds(path, probe.tolist()), rtol=0, atol=1e-9)


def test_tempos_and_time_signatures_equal_mido() -> None:
    path = REPO / "Songs" / "seven-eight.mid"
    midi = mido.MidiFile(str(path))
    tempos, signatures = [], []
    for track in midi.tracks:
        tick = 0
        for message in track:
            tick += message.time
            if message.type == "set_tempo":
                tempos.append((tick, message.tempo))
            elif message.type == "time_signature":
                signatures.append((tick, message.numerator, message.denominator))
    score = tactus.Score(path)
    ticks, micros = score.tempos()
    assert list(zip(ticks.tolist(), micros.tolist())) == sorted(tempos, key=lambda t: t[0])
    sig_ticks, numerators, denominators = score.time_signatures()
    assert list(zip(sig_ticks.tolist(), numerators.tolist(), denominators.tolist())) == sorted(signatures, key=lambda s: s[0])
    assert len(signatures) > 0


def test_per_track_calls_equal_the_whole_file_call() -> None:
    import ctypes

    from tactus._lib import lib

    score = tactus.Score(FILES[5])
    for track in score.tracks:
        count = ctypes.c_int64()
        assert lib.tactus_score_track_note_count(score.handle, track.index, ctypes.byref(count)) == 0
        start, pitch = np.empty(count.value, np.int64), np.empty(count.value, np.uint8)
        assert lib.tactus_score_track_notes(score.handle, track.index, start.ctypes.data, None, pitch.ctypes.data,
                                            None, None, count.value) == 0
        assert np.array_equal(start, track.start) and np.array_equal(pitch, track.pitch)


def _mido_reads(path: Path) -> bool:
    try:
        mido.MidiFile(str(path))
        return True
    except Exception:
        return False


# Every corpus file mido reads, but the deliberately broken ones (where MANIFEST.md allows
# either reading, or asks for a refusal mido does not make).
WHOLE_CORPUS = [p for p in sorted(CORPUS.rglob("*.mid")) if "malformed" not in p.parts and _mido_reads(p)]


def test_whole_corpus_notes_equal_mido() -> None:
    assert len(WHOLE_CORPUS) > 100
    for path in WHOLE_CORPUS:
        score = tactus.Score(path)
        assert [tactus_notes(t) for t in score.tracks] == mido_notes(path), path.name
