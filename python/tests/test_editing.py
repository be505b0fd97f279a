"""Controllers, lyrics, edits and writing from Python, held to mido and to `tactus edit`."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import mido
import numpy as np
import pytest

import tactus
from conftest import CORPUS, REPO

KARAOKE = CORPUS / "jazz-soft" / "midi" / "test-karaoke-kar.mid"
SONG = REPO / "Songs" / "seven-eight.mid"
# Files with controllers, program changes, pitch bends and pressure among them.
CONTROL_FILES = sorted((CORPUS / "pretty-midi").rglob("*.mid"))[:12] + [SONG, KARAOKE]

_MIDO_KINDS = {"control_change": tactus.CONTROL_CHANGE, "program_change": tactus.PROGRAM_CHANGE,
               "pitchwheel": tactus.PITCH_BEND, "aftertouch": tactus.CHANNEL_PRESSURE, "polytouch": tactus.KEY_PRESSURE}


def _mido_controls(track: mido.MidiTrack) -> list[tuple[int, int, int, int, int]]:
    rows, tick = [], 0
    for message in track:
        tick += message.time
        kind = _MIDO_KINDS.get(message.type)
        if kind is None:
            continue
        number = {"control_change": getattr(message, "control", 0), "program_change": getattr(message, "program", 0),
                  "polytouch": getattr(message, "note", 0)}.get(message.type, 0)
        value = {"control_change": getattr(message, "value", 0), "pitchwheel": getattr(message, "pitch", 0),
                 "aftertouch": getattr(message, "value", 0), "polytouch": getattr(message, "value", 0)}.get(message.type, 0)
        rows.append((tick, message.channel, kind, number, value))
    return rows


@pytest.mark.parametrize("path", CONTROL_FILES, ids=lambda p: p.name)
def test_controls_equal_midos(path: Path) -> None:
    score = tactus.Score(path)
    reference = mido.MidiFile(path)
    assert len(score.tracks) == len(reference.tracks)
    for track, expected in zip(score.tracks, reference.tracks):
        c = track.controls
        got = list(zip(c.tick.tolist(), c.channel.tolist(), c.kind.tolist(), c.number.tolist(), c.value.tolist()))
        assert got == _mido_controls(expected), f"{path.name} track {track.index}"


def test_the_corpus_has_every_control_kind() -> None:
    kinds = set()
    for path in CONTROL_FILES:
        for track in tactus.Score(path).tracks:
            kinds.update(track.controls.kind.tolist())
    # Key pressure is rare in real files; the four others must be exercised by the comparison.
    assert {tactus.CONTROL_CHANGE, tactus.PROGRAM_CHANGE, tactus.PITCH_BEND} <= kinds


def test_of_kind_picks_rows() -> None:
    track = tactus.Score(SONG).tracks[1]
    programs = track.controls.of_kind(tactus.PROGRAM_CHANGE)
    assert len(programs.tick) >= 1 and set(programs.kind.tolist()) == {tactus.PROGRAM_CHANGE}


def test_lyrics_equal_the_cli_and_mido(tactus_cli: str) -> None:
    lyrics = tactus.Score(KARAOKE).lyrics
    dumped = subprocess.run([tactus_cli, "dump", "--lyrics", str(KARAOKE)], check=True, capture_output=True, text=True).stdout
    rows = [line.split("\t") for line in dumped.splitlines() if not line.startswith("#")]
    assert len(lyrics) == len(rows) > 10
    for lyric, row in zip(lyrics, rows):
        assert (lyric.track, lyric.tick) == (int(row[0]), int(row[1]))
        assert abs(lyric.seconds - float(row[3])) < 1e-6
    # The karaoke words are the text events of track 1 that are not "@" header fields.
    tick, words = 0, []
    for message in mido.MidiFile(KARAOKE).tracks[1]:
        tick += message.time
        if message.type == "text" and not message.text.startswith("@"):
            words.append((tick, message.text))
    assert [(lyric.tick, lyric.text) for lyric in lyrics] == words


def test_lyric_events_are_read_from_a_file_without_karaoke_words(tmp_path: Path) -> None:
    song = mido.MidiFile(ticks_per_beat=96)
    track = mido.MidiTrack([mido.MetaMessage("lyrics", text="Hél", time=0), mido.MetaMessage("lyrics", text="lo", time=96),
                            mido.Message("note_on", note=60, velocity=90, time=0), mido.Message("note_off", note=60, time=96)])
    song.tracks.append(track)
    path = tmp_path / "lyrics.mid"
    song.save(path)
    lyrics = tactus.Score(path).lyrics
    assert [(lyric.tick, lyric.text, lyric.seconds) for lyric in lyrics] == [(0, "Hél", 0.0), (96, "lo", 0.5)]


def _edit(tactus_cli: str, source: Path, output: Path, *options: str) -> bytes:
    subprocess.run([tactus_cli, "edit", str(source), *options, "-o", str(output)], check=True, capture_output=True)
    return output.read_bytes()


@pytest.mark.parametrize("path", [SONG, REPO / "Songs" / "little-waltz.mid", KARAOKE], ids=lambda p: p.name)
def test_transposed_and_shifted_write_what_tactus_edit_writes(tactus_cli: str, tmp_path: Path, path: Path) -> None:
    score = tactus.Score(path)
    assert score.transposed(5).to_bytes() == _edit(tactus_cli, path, tmp_path / "up.mid", "--transpose", "5")
    assert score.transposed(-70, overflow="drop").to_bytes() == _edit(tactus_cli, path, tmp_path / "drop.mid", "--transpose", "-70", "--overflow", "drop")
    assert score.shifted(240).to_bytes() == _edit(tactus_cli, path, tmp_path / "late.mid", "--move", "240")


def test_transposed_moves_notes_but_not_drums() -> None:
    score = tactus.Score(SONG)
    up = score.transposed(2)
    for before, after in zip(score.tracks, up.tracks):
        drums = before.channel == 9
        assert np.array_equal(after.pitch[drums], before.pitch[drums])
        assert np.array_equal(after.pitch[~drums], before.pitch[~drums] + 2)
        assert np.array_equal(after.start, before.start)
    assert score.tracks[4].channel.tolist().count(9) > 0


def test_shifted_moves_every_note_and_keeps_the_tempo() -> None:
    score = tactus.Score(SONG)
    late = score.shifted(96)
    for before, after in zip(score.tracks, late.tracks):
        assert np.array_equal(after.start, before.start + 96)
    assert [a.tolist() for a in late.tempos()] == [a.tolist() for a in score.tempos()]
    early = late.shifted(-late.end_tick - 1)
    assert all((track.start == 0).all() for track in early.tracks)


def test_filter_notes_keeps_exactly_the_chosen_notes_and_everything_else() -> None:
    score = tactus.Score(SONG)
    loud = score.filter_notes(lambda t: t.velocity >= 90)
    kept = 0
    for before, after in zip(score.tracks, loud.tracks):
        rows = before.velocity >= 90
        for column in ("start", "duration", "pitch", "velocity", "channel"):
            assert np.array_equal(getattr(after, column), getattr(before, column)[rows])
        for a, b in zip(after.controls, before.controls):
            assert np.array_equal(a, b)
        kept += int(rows.sum())
    assert 0 < kept < sum(len(t) for t in score.tracks)
    # The flat mask form, and a round trip through the file's bytes.
    flat = np.concatenate([t.velocity for t in score.tracks]) >= 90
    assert score.filter_notes(flat).to_bytes() == loud.to_bytes()
    again = tactus.Score.from_bytes(loud.to_bytes())
    assert [t.pitch.tolist() for t in again.tracks] == [t.pitch.tolist() for t in loud.tracks]


def test_filter_notes_removes_both_messages_of_a_paired_note(tmp_path: Path) -> None:
    # A note-off further away than a note's longest duration keeps the pair as messages.
    song = mido.MidiFile(ticks_per_beat=96)
    song.tracks.append(mido.MidiTrack([mido.Message("note_on", note=60, velocity=90, time=0),
                                       mido.Message("note_on", note=64, velocity=80, time=0),
                                       mido.Message("note_off", note=64, time=96),
                                       mido.Message("note_off", note=60, time=2**26)]))
    path = tmp_path / "long.mid"
    song.save(path)
    score = tactus.Score(path)
    assert score.tracks[0].pitch.tolist() == [60, 64]
    only_short = score.filter_notes([False, True])
    notes = [m for m in mido.MidiFile(file=__import__("io").BytesIO(only_short.to_bytes())).tracks[0] if m.type.startswith("note")]
    assert [(m.type, m.note) for m in notes] == [("note_on", 64), ("note_off", 64)]


def test_write_then_read_gives_the_same_score(tmp_path: Path) -> None:
    score = tactus.Score(SONG).transposed(3)
    target = tmp_path / "out.mid"
    score.write(target)
    assert target.read_bytes() == score.to_bytes()
    assert [t.pitch.tolist() for t in tactus.Score(target).tracks] == [t.pitch.tolist() for t in score.tracks]


def test_write_fails_with_the_path_and_leaves_devices_alone(tmp_path: Path) -> None:
    score = tactus.Score(SONG)
    with pytest.raises(tactus.WriteError) as failure:
        score.write(tmp_path / "missing" / "out.mid")
    assert "missing/out.mid" in str(failure.value) and isinstance(failure.value, OSError)
    score.write("/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_bad_edit_arguments_are_refused() -> None:
    score = tactus.Score(SONG)
    with pytest.raises(tactus.InvalidArgumentError, match="-127...127"):
        score.transposed(200)
    with pytest.raises(tactus.InvalidArgumentError, match="overflow"):
        score.transposed(1, overflow="wrap")
    with pytest.raises(tactus.InvalidArgumentError, match="whole number"):
        score.transposed(1.5)  # type: ignore[arg-type]
    with pytest.raises(tactus.InvalidArgumentError, match="out of range"):
        score.shifted(2**70)
    with pytest.raises(tactus.InvalidArgumentError, match="notes"):
        score.filter_notes([True])
    with pytest.raises(tactus.InvalidArgumentError, match="not within"):
        score.shifted(2**40)
    with pytest.raises(tactus.InvalidArgumentError, match="track 0, which has 0 notes"):
        score.filter_notes(lambda t: [True])
