"""render() gives the samples `tactus render --format f32` writes, in process."""

from __future__ import annotations

import struct
import sys
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tactus
from conftest import REPO

SONG = REPO / "Songs" / "little-waltz.mid"
BANK = REPO / "Fuzz" / "seeds" / "fuzz-sf2" / "layered.sf2"


def read_f32_wav(path: Path) -> tuple[int, np.ndarray]:
    """The sample rate and (frames, channels) float32 samples of an IEEE-float WAV file."""
    data = path.read_bytes()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    offset, rate, channels, samples = 12, 0, 0, None
    while offset + 8 <= len(data):
        tag, size = data[offset:offset + 4], struct.unpack_from("<I", data, offset + 4)[0]
        body = data[offset + 8:offset + 8 + size]
        if tag == b"fmt ":
            encoding, channels, rate = struct.unpack_from("<HHI", body)
            assert encoding == 3, "not float samples"
        elif tag == b"data":
            samples = np.frombuffer(body, dtype="<f4").reshape(-1, channels)
        offset += 8 + size + (size & 1)
    assert samples is not None
    return rate, samples


def cli_render(cli: str, tmp_path: Path, song: Path, *options: str) -> np.ndarray:
    out = tmp_path / "out.wav"
    subprocess.run([cli, "render", str(song), "-o", str(out), "--format", "f32", "--quiet", *options],
                   check=True, capture_output=True)
    return read_f32_wav(out)[1]


def assert_same_samples(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert ours.dtype == np.float32 and ours.shape == theirs.shape
    # Bit patterns, so -0.0 against 0.0 or a NaN would count as a difference.
    assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))


def test_builtin_render_equals_cli(tactus_cli: str, tmp_path: Path) -> None:
    ours = tactus.render(SONG)
    assert ours.shape[1] == 2 and ours.shape[0] > 44100
    assert np.abs(ours).max() > 0.01
    assert_same_samples(ours, cli_render(tactus_cli, tmp_path, SONG, "--instrument", "builtin"))


def test_render_options_equal_cli(tactus_cli: str, tmp_path: Path) -> None:
    song = REPO / "Songs" / "seven-eight.mid"
    ours = tactus.render(tactus.Score(song), sample_rate=48000, gain_db=-6.0, tail=1.5)
    theirs = cli_render(tactus_cli, tmp_path, song, "--instrument", "builtin", "--sample-rate", "48000",
                        "--gain=-6", "--tail", "1.5")
    assert_same_samples(ours, theirs)


def test_soundfont_render_equals_cli(tactus_cli: str, tmp_path: Path) -> None:
    ours = tactus.render(SONG, soundfont=BANK, reverb=False)
    assert np.abs(ours).max() > 0
    assert_same_samples(ours, cli_render(tactus_cli, tmp_path, SONG, "--soundfont", str(BANK), "--no-reverb"))


def test_sfz_render_equals_cli(tactus_cli: str, tmp_path: Path) -> None:
    # An SFZ instrument from sfizz's test files (a kick on every key), as --instrument plays it.
    kick = REPO.parent / "shared" / "sfz" / "sfizz-testfiles" / "kick.sfz"
    ours = tactus.render(SONG, soundfont=kick, tail=0.5)
    assert np.abs(ours).max() > 0
    assert_same_samples(ours, cli_render(tactus_cli, tmp_path, SONG, "--instrument", str(kick), "--tail", "0.5"))
    with pytest.raises(tactus.TactusFileNotFoundError):
        tactus.render(SONG, soundfont=tmp_path / "missing.sfz")


def test_write_audio_writes_the_files_tactus_render_writes(tactus_cli: str, tmp_path: Path) -> None:
    audio = tactus.render(SONG, tail=0.5)
    for name, options in (("a.wav", []), ("b.wav", ["--format", "s24"]), ("c.flac", [])):
        theirs = tmp_path / ("cli-" + name)
        subprocess.run([tactus_cli, "render", str(SONG), "-o", str(theirs), "--instrument", "builtin", "--tail", "0.5", "--quiet", *options],
                       check=True, capture_output=True)
        ours = tmp_path / name
        tactus.write_audio(ours, audio, format=options[1] if options else None)
        assert ours.read_bytes() == theirs.read_bytes(), name
    mono = tmp_path / "mono.wav"
    tactus.write_audio(mono, audio[:, 0], format="f32")
    rate, samples = read_f32_wav(mono)
    assert rate == 44100 and np.array_equal(samples.reshape(-1), audio[:, 0])
    with pytest.raises(tactus.InvalidArgumentError, match="unknown format 'mp3'"):
        tactus.write_audio(tmp_path / "x.wav", audio, format="mp3")
    with pytest.raises(tactus.InvalidArgumentError, match="48000 Hz"):
        tactus.write_audio(tmp_path / "x.opus", audio, sample_rate=44100)
    with pytest.raises(tactus.InvalidArgumentError, match="neither"):
        tactus.write_audio(tmp_path / "x.wav", np.zeros((4, 3), np.float32))
    with pytest.raises(tactus.WriteError, match="missing"):
        tactus.write_audio(tmp_path / "missing" / "x.wav", audio)
    assert not (tmp_path / "x.wav").exists()


def test_render_is_identical_across_runs() -> None:
    score = tactus.Score(SONG)
    assert np.array_equal(tactus.render(score, tail=0.5), tactus.render(score, tail=0.5))


def test_render_checks_its_options() -> None:
    with pytest.raises(tactus.InvalidArgumentError, match="sample rate"):
        tactus.render(SONG, sample_rate=22050)
    with pytest.raises(tactus.InvalidArgumentError, match="sample rate"):
        tactus.render(SONG, sample_rate=2**32 + 44100)
    with pytest.raises(tactus.InvalidArgumentError, match="gain"):
        tactus.render(SONG, gain_db=40)
    with pytest.raises(tactus.InvalidArgumentError):
        tactus.render(SONG, tail="long")
    with pytest.raises(tactus.TactusFileNotFoundError):
        tactus.render(SONG, soundfont="/nonexistent/bank.sf2")
    with pytest.raises(tactus.InvalidFileError):
        tactus.render(SONG, soundfont=SONG)


def test_rendering_allocates_at_most_twice_the_output() -> None:
    # In a fresh process, whose peak RSS the earlier tests have not raised.
    script = (
        "import resource, sys, tactus\n"
        "score = tactus.Score(sys.argv[1])\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "audio = tactus.render(score)\n"
        "grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024\n"
        "print(audio.nbytes, grown)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(SONG)], check=True, capture_output=True, text=True)
    output, grown = map(int, result.stdout.split())
    assert output > 10 << 20
    assert grown <= 2 * output, f"peak RSS grew {grown} bytes for {output} bytes of audio"


def test_take_releases_the_audio_copy_keeps_it() -> None:
    import ctypes

    from tactus._lib import lib

    score = tactus.Score(REPO / "Songs" / "seven-eight.mid")
    handle = ctypes.c_void_p()
    assert lib.tactus_render_score(score.handle, None, 44100, 0.0, 0.25, 0, ctypes.byref(handle)) == 0
    frames = ctypes.c_int64()
    assert lib.tactus_render_info(handle.value, ctypes.byref(frames), None) == 0
    first, second, third = (np.empty((frames.value, 2), np.float32) for _ in range(3))
    assert lib.tactus_render_copy(handle.value, first.ctypes.data, frames.value) == 0
    assert lib.tactus_render_take(handle.value, second.ctypes.data, frames.value) == 0
    assert np.array_equal(first, second) and np.abs(first).max() > 0
    assert lib.tactus_render_take(handle.value, third.ctypes.data, frames.value) == 1
    assert lib.tactus_render_copy(handle.value, third.ctypes.data, frames.value) == 1
    assert b"already taken" in lib.tactus_last_error_message()
    assert lib.tactus_render_free(handle.value) == 0
