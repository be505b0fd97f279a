"""Stems and note labels from Python: the files `tactus render --stems DIR --labels FILE` writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tactus
from conftest import REPO
from test_render import BANK, assert_same_samples, read_f32_wav

# Four tracks with notes after a conductor track: lead, bass, pad and drums on channel 10.
SONG = REPO / "Songs" / "seven-eight.mid"
DRY = {"soundfont": BANK, "reverb": False, "chorus": False}


@pytest.fixture(scope="module")
def mix() -> np.ndarray:
    return tactus.render(SONG, **DRY)


@pytest.fixture(scope="module")
def parts(mix: np.ndarray) -> dict[str, np.ndarray]:
    return tactus.render_stems(SONG, frames=len(mix), **DRY)


def test_stems_and_labels_equal_the_cli(tactus_cli: str, tmp_path: Path, mix: np.ndarray, parts: dict[str, np.ndarray]) -> None:
    stems_dir, labels_path = tmp_path / "stems", tmp_path / "labels.json"
    subprocess.run([tactus_cli, "render", str(SONG), "-o", str(tmp_path / "mix.wav"), "--format", "f32", "--quiet",
                    "--soundfont", str(BANK), "--no-reverb", "--no-chorus", "--stems", str(stems_dir), "--labels", str(labels_path)],
                   check=True, capture_output=True)
    assert_same_samples(mix, read_f32_wav(tmp_path / "mix.wav")[1])
    assert sorted(parts) == sorted(p.stem for p in stems_dir.iterdir())
    for name, audio in parts.items():
        assert_same_samples(audio, read_f32_wav(stems_dir / f"{name}.wav")[1])

    written = json.loads(labels_path.read_text())["notes"]
    ours = tactus.labels(SONG, stems_by="track")
    names = [stem.name for stem in tactus.stems(SONG)]
    assert len(ours["key"]) == len(written) > 0
    for column in ("key", "velocity", "program", "bank", "onset_frame", "offset_frame", "onset_seconds", "offset_seconds"):
        assert ours[column].tolist() == [note[column] for note in written], column
    assert ours["channel"].tolist() == [note["channel"] - 1 for note in written]
    assert [names[i] for i in ours["stem"]] == [note["stem"] for note in written]
    # Tracks are file indices: the conductor track comes first, so the CLI's event track N is file track N.
    assert ours["track"].tolist() == [note["track"] for note in written]


def test_npz_labels_hold_the_json_labels_as_columns(tactus_cli: str, tmp_path: Path) -> None:
    common = [tactus_cli, "render", str(SONG), "--quiet", "--soundfont", str(BANK), "--no-reverb", "--no-chorus",
              "--stems", str(tmp_path / "stems"), "--stems-by", "class", "--augment", "transpose=2"]
    subprocess.run(common + ["-o", str(tmp_path / "a.wav"), "--labels", str(tmp_path / "labels.json")], check=True, capture_output=True)
    subprocess.run(common + ["-o", str(tmp_path / "b.wav"), "--labels", str(tmp_path / "labels.npz")], check=True, capture_output=True)
    document = json.loads((tmp_path / "labels.json").read_text())
    with np.load(tmp_path / "labels.npz") as archive:  # no pickle needed: plain columns and strings
        columns = {name: archive[name] for name in archive.files}
    notes = document["notes"]
    assert len(notes) == len(columns["key"]) > 0
    for name in ("track", "channel", "key", "velocity", "program", "bank", "is_drum", "onset_frame", "offset_frame",
                 "onset_seconds", "offset_seconds"):
        assert columns[name].tolist() == [note[name] for note in notes], name
    names = columns["stem_names"].tolist()
    assert [names[i] for i in columns["stem"]] == [note["stem"] for note in notes]
    # The stem indices are those of tactus.stems, as tactus.labels gives them.
    assert names == [stem.name for stem in tactus.stems(SONG, by="class")]
    ours = tactus.labels(tactus.Score(SONG).augmented("transpose=2"), stems_by="class")
    assert columns["stem"].tolist() == ours["stem"].tolist()
    assert columns["key"].tolist() == ours["key"].tolist()
    assert int(columns["sample_rate"]) == document["sample_rate"] and str(columns["augmentation"]) == document["augmentation"]


def test_the_stems_add_up_to_the_mix_and_hold_only_their_tracks_notes(mix: np.ndarray, parts: dict[str, np.ndarray]) -> None:
    score = tactus.Score(SONG)
    stems = tactus.stems(score)
    assert [stem.tracks for stem in stems] == [(1,), (2,), (3,), (4,)]
    assert [stem.name for stem in stems] == [f"0{i}-{score.tracks[i].name}" for i in range(1, 5)]
    assert all(audio.shape == mix.shape and audio.dtype == np.float32 for audio in parts.values())
    total = np.sum(list(parts.values()), axis=0, dtype=np.float64)
    assert np.abs(total - mix).max() < 1e-5
    assert np.abs(mix).max() > 1e-3

    notes = tactus.labels(score, stems_by="track")
    for index, stem in enumerate(stems):
        audio = parts[stem.name]
        onsets = notes["onset_frame"][notes["stem"] == index]
        assert len(onsets) == sum(len(score.tracks[t]) for t in stem.tracks)
        # Silent until its own first note, sounding from there: no other track's note is in it.
        first = int(onsets.min())
        assert not audio[:first].any(), stem.name
        assert np.abs(audio[first:first + 4410]).max() > 1e-4, stem.name


def test_stems_by_class_group_the_drums_and_the_program_families() -> None:
    score = tactus.Score(SONG)
    by_class = tactus.stems(score, by="class")
    names = [stem.name for stem in by_class]
    assert "drums" in names and len(set(names)) == len(names)
    assert sorted(t for stem in by_class for t in stem.tracks) == [1, 2, 3, 4]
    notes = tactus.labels(score, stems_by="class")
    drums = names.index("drums")
    assert set(notes["channel"][notes["stem"] == drums].tolist()) == {9}
    rendered = tactus.render_stems(score, by="class", frames=4410)
    assert list(rendered) == names and all(audio.shape == (4410, 2) for audio in rendered.values())


def test_labels_follow_the_sample_rate_and_the_tempo_map() -> None:
    score = tactus.Score(SONG)
    at44 = tactus.labels(score)
    at96 = tactus.labels(score, sample_rate=96000)
    assert "stem" not in at44
    starts = np.sort(np.concatenate([track.start_seconds for track in score.tracks]))
    assert np.abs(np.sort(at44["onset_seconds"]) - starts).max() < 1 / 44100
    assert np.abs(at96["onset_seconds"] - at44["onset_seconds"]).max() < 1 / 44100
    assert (at44["offset_frame"] > at44["onset_frame"]).all()


AUGMENT = "transpose=-3..3,tempo=0.8..1.25,velocity=0.7..1.4,gain=-6..0"


def test_augmented_scores_render_as_the_cli_augments(tactus_cli: str, tmp_path: Path) -> None:
    # A format 1 song with a conductor track and a format 0 one: the varied score is written
    # back as a file and read again, and must still play as the CLI's varied sequence.
    for name in ("seven-eight.mid", "little-waltz.mid"):
        song = REPO / "Songs" / name
        varied = tactus.Score(song).augmented(AUGMENT, seed=9)
        assert varied.augmentation.startswith("transpose=") and ",gain=" in varied.augmentation
        out = tmp_path / "varied.wav"
        run = subprocess.run([tactus_cli, "render", str(song), "-o", str(out), "--format", "f32", "--instrument", "builtin",
                              "--tail", "0.5", "--augment", AUGMENT, "--seed", "9"], check=True, capture_output=True, text=True)
        assert f"augmented with {varied.augmentation}\n" in run.stdout
        assert_same_samples(tactus.render(varied, tail=0.5), read_f32_wav(out)[1])


def test_effect_and_program_knobs_render_as_the_cli(tactus_cli: str, tmp_path: Path) -> None:
    song = REPO / "Songs" / "little-waltz.mid"
    score = tactus.Score(song)
    # A reverb factor of 0 is the sampler's reverb switched off.
    dry = tactus.render(score.augmented("reverb=0"), soundfont=BANK, tail=0.5)
    assert_same_samples(dry, tactus.render(score, soundfont=BANK, tail=0.5, reverb=False))
    spec = "reverb=0.2..0.8,chorus=0..1,programs=1"
    varied = score.augmented(spec, seed=4)
    out = tmp_path / "varied.wav"
    subprocess.run([tactus_cli, "render", str(song), "-o", str(out), "--format", "f32", "--soundfont", str(BANK),
                    "--tail", "0.5", "--augment", spec, "--seed", "4"], check=True, capture_output=True)
    assert_same_samples(tactus.render(varied, soundfont=BANK, tail=0.5), read_f32_wav(out)[1])
    before, after = tactus.labels(score), tactus.labels(varied)
    melodic = before["channel"] != 9
    assert (after["program"][melodic] != before["program"][melodic]).all()
    assert (after["program"][melodic] // 8 == before["program"][melodic] // 8).all()


def test_augmentation_draws_repeat_and_differ_by_seed_and_key() -> None:
    score = tactus.Score(SONG)
    assert score.augmentation == ""
    first = score.augmented(AUGMENT, seed=3)
    assert score.augmented(AUGMENT, seed=3).augmentation == first.augmentation
    assert {score.augmented(AUGMENT, seed=s).augmentation for s in range(8)} != {first.augmentation}
    assert score.augmented(AUGMENT, seed=3, key="other/seven-eight.mid").augmentation != first.augmentation
    # The draw given back as the spec makes the same score: same notes, same labels.
    again = score.augmented(first.augmentation, seed=12345, key="anything")
    assert again.augmentation == first.augmentation
    for a, b in zip(first.tracks, again.tracks):
        assert np.array_equal(a.pitch, b.pitch) and np.array_equal(a.start, b.start) and np.array_equal(a.velocity, b.velocity)
    assert np.array_equal(tactus.labels(first)["onset_frame"], tactus.labels(again)["onset_frame"])
    # Transposed notes but drums, and a tempo factor: the labels move as the draw says.
    fixed = score.augmented("transpose=2,tempo=2")
    plain, moved = tactus.labels(score), tactus.labels(fixed)
    drums = plain["channel"] == 9
    assert np.array_equal(moved["key"][~drums], plain["key"][~drums] + 2)
    assert np.array_equal(moved["key"][drums], plain["key"][drums])
    assert np.abs(moved["onset_seconds"] - plain["onset_seconds"] / 2).max() <= 1 / 44100
    with pytest.raises(tactus.InvalidArgumentError, match="unknown knob 'pitch'"):
        score.augmented("pitch=2")
    with pytest.raises(tactus.InvalidArgumentError, match="seed -1"):
        score.augmented(AUGMENT, seed=-1)


def test_bad_dataset_arguments_are_refused() -> None:
    with pytest.raises(tactus.InvalidArgumentError, match="'colour' is not 'track' or 'class'"):
        tactus.stems(SONG, by="colour")
    with pytest.raises(tactus.InvalidArgumentError, match="unsupported sample rate 22050"):
        tactus.labels(SONG, sample_rate=22050)
    with pytest.raises(tactus.InvalidArgumentError, match="frames -1"):
        tactus.render_stems(SONG, frames=-1)
    with pytest.raises(tactus.InvalidFileError):
        tactus.labels(tactus.Score.from_bytes(b"MThd\x00\x00\x00\x06\x00\x00\x00\x01\x00\x00MTrk\x00\x00\x00\x04\x00\xff\x2f\x00"))
