"""Tactus from Python: Standard MIDI Files as numpy arrays, and audio rendered in process.

>>> import tactus
>>> score = tactus.Score("song.mid")
>>> piano = score.tracks[1]
>>> piano.pitch, piano.start, piano.start_seconds
>>> audio = tactus.render(score, sample_rate=48000)   # (frames, 2) float32
>>> parts = tactus.render_stems(score, sample_rate=48000, frames=len(audio))   # by stem name
>>> notes = tactus.labels(score, sample_rate=48000)   # onset_frame, key, ... as numpy columns

The work is done by libTactusC (Swift, through ctypes); numpy is the only dependency.
"""

from __future__ import annotations

import ctypes
import os
from typing import Callable, NamedTuple, Optional, Union

import numpy as np

from ._errors import (
    InvalidArgumentError,
    InvalidFileError,
    InvalidHandleError,
    RenderError,
    TactusError,
    TactusFileNotFoundError,
    UnreadableFileError,
    WriteError,
    check,
)
from ._lib import lib

__all__ = [
    "Score",
    "Track",
    "Controls",
    "Lyric",
    "CONTROL_CHANGE",
    "PROGRAM_CHANGE",
    "PITCH_BEND",
    "CHANNEL_PRESSURE",
    "KEY_PRESSURE",
    "render",
    "write_audio",
    "Stem",
    "stems",
    "render_stems",
    "labels",
    "TactusError",
    "InvalidArgumentError",
    "InvalidHandleError",
    "TactusFileNotFoundError",
    "UnreadableFileError",
    "InvalidFileError",
    "RenderError",
    "WriteError",
]

PathLike = Union[str, "os.PathLike[str]", "os.PathLike[bytes]", bytes]

CONTROL_CHANGE = 0
"""``Controls.kind`` of a control change: ``number`` is the controller, ``value`` 0...127."""
PROGRAM_CHANGE = 1
"""``Controls.kind`` of a program change: ``number`` is the program (0-based), ``value`` 0."""
PITCH_BEND = 2
"""``Controls.kind`` of a pitch bend: ``value`` is -8192...8191 (0 is centre), ``number`` 0."""
CHANNEL_PRESSURE = 3
"""``Controls.kind`` of channel pressure (aftertouch): ``value`` 0...127, ``number`` 0."""
KEY_PRESSURE = 4
"""``Controls.kind`` of key (polyphonic) pressure: ``number`` is the key, ``value`` 0...127."""

_OVERFLOW = {"clamp": 0, "drop": 1, "fold": 2}


class Controls(NamedTuple):
    """Channel messages that are not notes, one row each, in file order (numpy columns)."""

    tick: np.ndarray
    """Ticks (int64)."""
    channel: np.ndarray
    """MIDI channels, 0...15 (uint8)."""
    kind: np.ndarray
    """``CONTROL_CHANGE``, ``PROGRAM_CHANGE``, ``PITCH_BEND``, ``CHANNEL_PRESSURE`` or ``KEY_PRESSURE`` (uint8)."""
    number: np.ndarray
    """The controller, program or key; 0 for pitch bend and channel pressure (uint8)."""
    value: np.ndarray
    """The controller value or pressure, or the bend centred on 0 (int16)."""

    def of_kind(self, kind: int) -> "Controls":
        """The rows of one kind, e.g. ``track.controls.of_kind(tactus.PITCH_BEND)``."""
        rows = self.kind == kind
        return Controls(*(column[rows] for column in self))


class Lyric(NamedTuple):
    """A lyric as ``tactus dump --lyrics`` lists it."""

    tick: int
    seconds: float
    """Through the tempo map; NaN for a file without timing (division 0)."""
    track: int
    """The file track it is in."""
    text: str


def _pointer(array: np.ndarray) -> int:
    # Much cheaper than array.ctypes.data, which builds a helper object per call.
    return array.__array_interface__["data"][0]


class _ScoreHandle:
    """Owns one C score handle. A score and its tracks share it, so neither holds the other:
    a cycle between them would leave each parsed file to the cyclic garbage collector."""

    __slots__ = ("value",)

    def __init__(self, value: Optional[int]) -> None:
        self.value = value

    def get(self) -> int:
        if self.value is None:
            raise InvalidHandleError("the score is closed", 2)
        return self.value

    def close(self) -> None:
        if self.value is not None:
            lib.tactus_score_free(self.value)
            self.value = None

    def __del__(self) -> None:
        self.close()


def _seconds(handle: int, ticks: "np.typing.ArrayLike") -> np.ndarray:
    source = np.ascontiguousarray(ticks, dtype=np.int64)
    out = np.empty(source.shape, np.float64)
    check(lib.tactus_score_ticks_to_seconds(handle, _pointer(source), _pointer(out), source.size))
    return out


class Score:
    """A Standard MIDI File (formats 0, 1 and 2, RIFF RMID) loaded by Tactus.

    Tracks are the file's track chunks in file order (the conductor track included), so
    track ``i`` is mido's ``MidiFile(path).tracks[i]``.
    """

    _owner: Optional[_ScoreHandle] = None

    def __init__(self, path: PathLike) -> None:
        """Loads the file at ``path``.

        Raises ``TactusFileNotFoundError`` (a ``FileNotFoundError``) when nothing is there,
        ``UnreadableFileError`` for a directory or a file that cannot be read, and
        ``InvalidFileError`` when the content is not a Standard MIDI File Tactus accepts.
        """
        handle = ctypes.c_void_p()
        check(lib.tactus_score_load_path(os.fsencode(path), ctypes.byref(handle)))
        self._adopt(handle)

    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> "Score":
        """Loads a Standard MIDI File held in memory (the bytes are copied by the parser)."""
        raw = bytes(data)
        handle = ctypes.c_void_p()
        check(lib.tactus_score_load_bytes(raw, len(raw), ctypes.byref(handle)))
        score = cls.__new__(cls)
        score._adopt(handle)
        return score

    def augmented(self, spec: str, seed: int = 0, key: Optional[str] = None) -> "Score":
        """A new score varied as ``tactus render --augment SPEC --seed SEED`` varies a file.

        ``spec`` is comma-separated ``knob=VALUE`` or ``knob=LOW..HIGH``: ``transpose``
        (semitones; the drums stay), ``tempo`` (a factor), ``velocity`` (a curve's exponent),
        ``gain`` (dB, added to every render of the new score), ``reverb`` and ``chorus``
        (factors 0...1 on the instrument's levels in every render of the new score) and
        ``programs`` (the chance each program is swapped for another of its family). Each value is drawn from
        ``seed``, ``key`` (default: the file's name, as a single-file render keys it; a batch
        keys a file by its path inside the folder) and the knob alone. ``augmentation`` gives
        the draw, which passed back as ``spec`` makes the same score. Raises
        ``InvalidArgumentError`` naming the part of a malformed spec.
        """
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise InvalidArgumentError(f"seed {seed!r} is not a whole number in 0...2**64-1", 1)
        handle = ctypes.c_void_p()
        check(lib.tactus_score_augment(self.handle, spec.encode("utf-8"), seed,
                                       key.encode("utf-8") if key is not None else None, ctypes.byref(handle)))
        score = Score.__new__(Score)
        score._adopt(handle)
        return score

    @property
    def augmentation(self) -> str:
        """The draw ``augmented`` made this score with (``"transpose=2,tempo=1.04..."``), or ""."""
        needed = ctypes.c_int64()
        check(lib.tactus_score_augmentation(self.handle, None, 0, ctypes.byref(needed)))
        buffer = ctypes.create_string_buffer(needed.value)
        check(lib.tactus_score_augmentation(self.handle, buffer, needed.value, ctypes.byref(needed)))
        return buffer.value.decode("utf-8")

    def _adopt(self, handle: ctypes.c_void_p) -> None:
        self._owner = _ScoreHandle(handle.value)
        self._tracks: Optional[list[Track]] = None
        fmt, division, tpq, count = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int64()
        check(lib.tactus_score_header(self._owner.get(), ctypes.byref(fmt), ctypes.byref(division), ctypes.byref(tpq), ctypes.byref(count)))
        self.format: int = fmt.value
        """The header's format word (0, 1 or 2)."""
        self.division: int = division.value
        """The header's division word as stored (bit 15 set for SMPTE time)."""
        self.ticks_per_quarter: int = tpq.value
        """Ticks per quarter note (for an SMPTE division, the ticks of half a second)."""
        self._track_count: int = count.value

    @property
    def handle(self) -> int:
        """The C handle; raises ``InvalidHandleError`` once the score is closed."""
        if self._owner is None:
            raise InvalidHandleError("the score is closed", 2)
        return self._owner.get()

    def close(self) -> None:
        """Frees the parsed file now, rather than when the score and its tracks are dropped
        (tracks keep their note arrays; names and seconds are no longer available)."""
        if self._owner is not None:
            self._owner.close()

    def __enter__(self) -> "Score":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<tactus.Score format {self.format}, {self._track_count} tracks, {self.ticks_per_quarter} ticks per quarter>"

    @property
    def tracks(self) -> list["Track"]:
        """The tracks in file order, read on first access: two C calls for the whole file,
        each track's arrays being views of one set of columns."""
        if self._tracks is None:
            handle = self.handle
            counts = np.empty(self._track_count, np.int64)
            total = ctypes.c_int64()
            check(lib.tactus_score_note_counts(handle, _pointer(counts), self._track_count, ctypes.byref(total)))
            n = total.value
            # One allocation and one pointer for the five columns (a pointer from numpy costs
            # microseconds, more than a small file's notes).
            block = np.empty(19 * n, np.uint8)
            base = _pointer(block)
            check(lib.tactus_score_notes(handle, base, base + 8 * n, base + 16 * n, base + 17 * n, base + 18 * n, n))
            start, duration = block[:8 * n].view(np.int64), block[8 * n:16 * n].view(np.int64)
            pitch, velocity, channel = block[16 * n:17 * n], block[17 * n:18 * n], block[18 * n:]
            tracks = []
            offset = 0
            for index, count in enumerate(counts.tolist()):
                rows = slice(offset, offset + count)
                tracks.append(Track(self._owner, index, start[rows], duration[rows], pitch[rows], velocity[rows], channel[rows]))
                offset += count
            self._tracks = tracks
        return self._tracks

    @property
    def end_tick(self) -> int:
        """The end of the longest track, in ticks."""
        out = ctypes.c_int64()
        check(lib.tactus_score_end_tick(self.handle, -1, ctypes.byref(out)))
        return out.value

    def tempos(self) -> tuple[np.ndarray, np.ndarray]:
        """Tempo changes of all tracks, sorted by tick: (ticks int64, microseconds per quarter int32)."""
        count = ctypes.c_int64()
        check(lib.tactus_score_tempo_count(self.handle, ctypes.byref(count)))
        ticks = np.empty(count.value, np.int64)
        micros = np.empty(count.value, np.int32)
        check(lib.tactus_score_tempos(self.handle, _pointer(ticks), _pointer(micros), count.value))
        return ticks, micros

    def time_signatures(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Time signatures of all tracks, sorted by tick: (ticks int64, numerator int32, denominator int32)."""
        count = ctypes.c_int64()
        check(lib.tactus_score_time_signature_count(self.handle, ctypes.byref(count)))
        ticks = np.empty(count.value, np.int64)
        numerator = np.empty(count.value, np.int32)
        denominator = np.empty(count.value, np.int32)
        check(lib.tactus_score_time_signatures(self.handle, _pointer(ticks), _pointer(numerator), _pointer(denominator), count.value))
        return ticks, numerator, denominator

    def seconds(self, ticks: "np.typing.ArrayLike") -> np.ndarray:
        """Seconds at ``ticks`` through the tempo map of all tracks (float64, the shape of ``ticks``).

        Raises ``InvalidFileError`` for a file without timing (division 0).
        """
        return _seconds(self.handle, ticks)

    @property
    def lyrics(self) -> list[Lyric]:
        """The lyrics in time order: lyric events, or a karaoke (``.kar``) file's words, as
        ``tactus dump --lyrics`` finds them."""
        count, size = ctypes.c_int64(), ctypes.c_int64()
        check(lib.tactus_score_lyric_count(self.handle, ctypes.byref(count), ctypes.byref(size)))
        n = count.value
        ticks, tracks, ends = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
        text = np.empty(size.value, np.uint8)
        check(lib.tactus_score_lyrics(self.handle, _pointer(ticks), _pointer(tracks), _pointer(ends), _pointer(text), n, size.value))
        try:
            seconds = _seconds(self.handle, ticks).tolist()
        except InvalidFileError:
            seconds = [float("nan")] * n
        raw = text.tobytes()
        starts = [0] + ends[:-1].tolist()
        return [Lyric(tick, second, track, raw[a:b].decode("utf-8"))
                for tick, second, track, a, b in zip(ticks.tolist(), seconds, tracks.tolist(), starts, ends.tolist())]

    def transposed(self, semitones: int, overflow: str = "clamp") -> "Score":
        """A new score with its notes moved by ``semitones`` (-127...127), as ``tactus edit
        --transpose N --overflow P`` moves them: the drums (channel 10) stay unless MPE makes
        that channel melodic. ``overflow`` says what happens to a note pushed past 0 or 127:
        ``"clamp"`` stops it there, ``"drop"`` removes it, ``"fold"`` moves it back by octaves.
        """
        if overflow not in _OVERFLOW:
            raise InvalidArgumentError(f"overflow {overflow!r} is not 'clamp', 'drop' or 'fold'", 1)
        return self._made_by(lambda out: lib.tactus_score_transpose(self.handle, _whole(semitones, "semitones", 32), _OVERFLOW[overflow], out))

    def shifted(self, ticks: int) -> "Score":
        """A new score with every event of the event tracks moved by ``ticks`` (negative is
        earlier; nothing goes before 0), as ``tactus edit --move N`` moves them. The tempo
        track stays where it is."""
        return self._made_by(lambda out: lib.tactus_score_shift(self.handle, _whole(ticks, "ticks"), out))

    def filter_notes(self, keep: Union["np.typing.ArrayLike", "Callable[[Track], np.typing.ArrayLike]"]) -> "Score":
        """A new score keeping only some notes; controllers, tempos, lyrics and the tracks stay.

        ``keep`` is either a function called with each ``Track`` that returns one boolean per
        note (``lambda t: t.velocity >= 20``), or one boolean per note of the whole score,
        track after track (the order of ``np.concatenate([t.pitch for t in score.tracks])``).
        """
        if callable(keep):
            parts = [np.asarray(keep(track), dtype=bool).reshape(-1) for track in self.tracks]
            for track, part in zip(self.tracks, parts):
                if len(part) != len(track):
                    raise InvalidArgumentError(f"the filter gave {len(part)} values for track {track.index}, which has {len(track)} notes", 1)
            mask = np.concatenate(parts) if parts else np.empty(0, bool)
        else:
            mask = np.asarray(keep, dtype=bool).reshape(-1)
        flags = np.ascontiguousarray(mask, dtype=np.uint8)
        return self._made_by(lambda out: lib.tactus_score_keep_notes(self.handle, _pointer(flags), len(flags), out))

    def to_bytes(self) -> bytes:
        """The score as a Standard MIDI File, as ``tactus edit`` would write it."""
        needed = ctypes.c_int64()
        check(lib.tactus_score_smf_bytes(self.handle, None, 0, ctypes.byref(needed)))
        buffer = (ctypes.c_uint8 * needed.value)()
        check(lib.tactus_score_smf_bytes(self.handle, buffer, needed.value, ctypes.byref(needed)))
        return bytes(buffer)

    def write(self, path: PathLike) -> None:
        """Writes the score as a Standard MIDI File: through a temporary file renamed into
        place, so a failed write leaves an earlier file whole. Raises ``WriteError`` (an
        ``OSError``) with the path and the reason."""
        check(lib.tactus_score_write(self.handle, os.fsencode(path)))

    def _made_by(self, make: "Callable[[ctypes._Pointer[ctypes.c_void_p]], int]") -> "Score":
        handle = ctypes.c_void_p()
        check(make(ctypes.byref(handle)))
        score = Score.__new__(Score)
        score._adopt(handle)
        return score


class Track:
    """One track chunk: its name and its notes as numpy arrays, one row per note.

    Notes are in note-on order, paired first in, first out per channel and key (as mido
    users pair them and as ``tactus dump --notes`` lists them); note-ons that never end are
    left out.
    """

    __slots__ = ("_owner", "index", "start", "duration", "pitch", "velocity", "channel", "_name", "_controls")

    def __init__(self, owner: _ScoreHandle, index: int, start: np.ndarray, duration: np.ndarray, pitch: np.ndarray,
                 velocity: np.ndarray, channel: np.ndarray) -> None:
        """Made by ``Score.tracks``: track ``index`` of the score behind ``owner``, and its note columns."""
        self._owner = owner
        self.index: int = index
        """The track's position in the file."""
        self.start: np.ndarray = start
        """Note-on ticks (int64)."""
        self.duration: np.ndarray = duration
        """Note lengths in ticks (int64)."""
        self.pitch: np.ndarray = pitch
        """Keys, 0...127 (uint8)."""
        self.velocity: np.ndarray = velocity
        """Note-on velocities, 1...127 (uint8)."""
        self.channel: np.ndarray = channel
        """MIDI channels, 0...15 (uint8)."""
        self._name: Optional[str] = None
        self._controls: Optional[Controls] = None

    @property
    def controls(self) -> Controls:
        """The track's channel messages that are not notes (controllers, program changes,
        pitch bends, pressure), in file order; ``controls.of_kind(tactus.PITCH_BEND)`` picks one kind."""
        if self._controls is None:
            handle = self._owner.get()
            count = ctypes.c_int64()
            check(lib.tactus_score_track_control_count(handle, self.index, ctypes.byref(count)))
            n = count.value
            columns = Controls(np.empty(n, np.int64), np.empty(n, np.uint8), np.empty(n, np.uint8), np.empty(n, np.uint8), np.empty(n, np.int16))
            check(lib.tactus_score_track_controls(handle, self.index, *(_pointer(c) for c in columns), n))
            self._controls = columns
        return self._controls

    @property
    def name(self) -> str:
        """The track's first name event, or ""."""
        if self._name is None:
            handle = self._owner.get()
            needed = ctypes.c_int64()
            check(lib.tactus_score_track_name(handle, self.index, None, 0, ctypes.byref(needed)))
            buffer = ctypes.create_string_buffer(needed.value)
            check(lib.tactus_score_track_name(handle, self.index, buffer, needed.value, ctypes.byref(needed)))
            self._name = buffer.value.decode("utf-8", "replace")
        return self._name

    def __len__(self) -> int:
        return len(self.start)

    def __repr__(self) -> str:
        return f"<tactus.Track {self.index} {self.name!r}, {len(self)} notes>"

    @property
    def end(self) -> np.ndarray:
        """Note-off ticks (start + duration)."""
        return self.start + self.duration

    @property
    def start_seconds(self) -> np.ndarray:
        """Note-on times in seconds through the score's tempo map."""
        return _seconds(self._owner.get(), self.start)

    @property
    def end_seconds(self) -> np.ndarray:
        """Note-off times in seconds through the score's tempo map."""
        return _seconds(self._owner.get(), self.end)

    @property
    def duration_seconds(self) -> np.ndarray:
        """Note lengths in seconds (tempo changes inside a note included)."""
        return self.end_seconds - self.start_seconds


_NO_REVERB = 1
_NO_CHORUS = 2


def render(song: Union[PathLike, Score], sample_rate: int = 44100, soundfont: Optional[PathLike] = None,
           gain_db: float = 0.0, tail: Union[str, float] = "auto", reverb: bool = True, chorus: bool = True) -> np.ndarray:
    """Renders a song to audio in memory: a (frames, 2) float32 array, left and right.

    The samples are those ``tactus render --format f32`` writes for the same song and options:
    ``soundfont=None`` is ``--instrument builtin`` (the built-in synthesizer; no bank is searched
    for), a path is ``--soundfont PATH``, or ``--instrument PATH`` for an SFZ instrument (a path
    ending in ``.sfz``). ``sample_rate`` is 44100, 48000 or 96000; ``gain_db``
    -24...24; ``tail`` "auto" (until below -90 dBFS, at most 30 s after the end) or seconds
    (0...600). ``reverb=False`` and ``chorus=False`` are ``--no-reverb`` and ``--no-chorus``
    (SoundFont sampler only).
    """
    _check_sample_rate(sample_rate)
    score = song if isinstance(song, Score) else Score(song)
    if tail == "auto":
        tail_seconds = -1.0
    elif isinstance(tail, (int, float)) and not isinstance(tail, bool) and tail >= 0:
        tail_seconds = float(tail)
    else:
        raise InvalidArgumentError(f"tail {tail!r} is not 'auto' or seconds in 0...600", 1)
    handle = ctypes.c_void_p()
    check(lib.tactus_render_score(score.handle, _bank(soundfont), int(sample_rate), float(gain_db), tail_seconds,
                                  _flags(reverb, chorus), ctypes.byref(handle)))
    return _take(handle)


def write_audio(path: PathLike, audio: np.ndarray, sample_rate: int = 44100, format: Optional[str] = None) -> None:
    """Writes audio as ``tactus render -o PATH --format FORMAT`` writes its output.

    ``audio`` is float32 samples, ``(frames, 2)`` (left, right) or ``(frames,)`` mono, as
    ``render`` and ``render_stems`` give them. ``format`` is the CLI's ``--format`` text
    (``"s24"``, ``"f32"``, ``"flac"``, ``"flac,s24"``, ``"ogg"``, ``"opus"``) or None to go by
    the extension (WAV, 16-bit, without one): ``write_audio("x.wav", render(song))`` writes the
    bytes ``tactus render song -o x.wav`` writes. FLAC, Ogg and Opus need libsndfile. Raises
    ``InvalidArgumentError`` for a format, shape or rate Tactus does not write and
    ``WriteError`` (an ``OSError``) when the file cannot be written.
    """
    _check_sample_rate(sample_rate)
    samples = np.ascontiguousarray(audio, dtype=np.float32)
    if samples.ndim == 2 and samples.shape[1] == 2:
        channels = 2
    elif samples.ndim == 1:
        channels = 1
    else:
        raise InvalidArgumentError(f"audio of shape {samples.shape} is neither (frames, 2) nor (frames,)", 1)
    check(lib.tactus_write_audio(_pointer(samples) if samples.size else None, samples.shape[0], channels, int(sample_rate),
                                 os.fsencode(path), format.encode("utf-8") if format is not None else None))


def _whole(value: int, name: str, bits: int = 64) -> int:
    """``value`` as an int that fits the C argument, refusing bools and floats, which ctypes
    would pass misread or cut short."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidArgumentError(f"{name} {value!r} is not a whole number", 1)
    if not -(2 ** (bits - 1)) <= int(value) < 2 ** (bits - 1):
        raise InvalidArgumentError(f"{name} {value} is out of range", 1)
    return int(value)


def _check_sample_rate(sample_rate: int) -> None:
    if sample_rate not in (44100, 48000, 96000):
        # Checked here too: ctypes would wrap a rate beyond 32 bits into a valid one.
        raise InvalidArgumentError(f"unsupported sample rate {sample_rate} (use 44100, 48000 or 96000)", 1)


def _bank(soundfont: Optional[PathLike]) -> Optional[bytes]:
    return os.fsencode(soundfont) if soundfont is not None else None


def _flags(reverb: bool, chorus: bool) -> int:
    return (0 if reverb else _NO_REVERB) | (0 if chorus else _NO_CHORUS)


def _take(handle: ctypes.c_void_p) -> np.ndarray:
    """The audio of a render handle as a (frames, 2) float32 array; frees the handle."""
    try:
        frames = ctypes.c_int64()
        check(lib.tactus_render_info(handle.value, ctypes.byref(frames), None))
        audio = np.empty((frames.value, 2), np.float32)
        # Taken rather than copied: the library frees its copy as this one fills.
        check(lib.tactus_render_take(handle.value, _pointer(audio), frames.value))
    finally:
        lib.tactus_render_free(handle.value)
    return audio


# Training data: stems and note labels, as `tactus render --stems DIR --labels FILE` writes them.

_STEMS_BY = {"track": 0, "class": 1}


def _stems_by(by: str) -> int:
    if by not in _STEMS_BY:
        raise InvalidArgumentError(f"stems by {by!r} is not 'track' or 'class'", 1)
    return _STEMS_BY[by]


class Stem(NamedTuple):
    """One stem of a song: its name (the file name ``tactus render --stems`` gives it, such as
    ``01-Piano`` or ``drums``) and the file tracks (indices into ``Score.tracks``) whose notes it
    plays."""

    name: str
    tracks: tuple[int, ...]


def stems(song: Union[PathLike, Score], by: str = "track") -> list[Stem]:
    """The stems ``tactus render --stems-by BY`` splits the song into: ``by="track"`` one per
    track with notes, ``by="class"`` one per General MIDI program family and one for the drums
    (channel 10), as Slakh groups its stems."""
    score = song if isinstance(song, Score) else Score(song)
    grouping = _stems_by(by)
    handle = score.handle
    count = ctypes.c_int64()
    check(lib.tactus_score_stem_count(handle, grouping, ctypes.byref(count)))
    result = []
    for index in range(count.value):
        needed = ctypes.c_int64()
        check(lib.tactus_score_stem_name(handle, grouping, index, None, 0, ctypes.byref(needed)))
        buffer = ctypes.create_string_buffer(needed.value)
        check(lib.tactus_score_stem_name(handle, grouping, index, buffer, needed.value, ctypes.byref(needed)))
        tracks = ctypes.c_int64()
        check(lib.tactus_score_stem_tracks(handle, grouping, index, None, 0, ctypes.byref(tracks)))
        indices = np.empty(tracks.value, np.int64)
        check(lib.tactus_score_stem_tracks(handle, grouping, index, _pointer(indices), tracks.value, ctypes.byref(tracks)))
        result.append(Stem(buffer.value.decode("utf-8", "replace"), tuple(indices.tolist())))
    return result


def render_stems(song: Union[PathLike, Score], by: str = "track", sample_rate: int = 44100,
                 soundfont: Optional[PathLike] = None, gain_db: float = 0.0, tail: Union[str, float] = "auto",
                 reverb: bool = True, chorus: bool = True, frames: Optional[int] = None) -> dict[str, np.ndarray]:
    """Renders each stem (see ``stems``) to a (frames, 2) float32 array, by stem name, in stem order.

    Each stem goes through a fresh instrument with the options of ``render`` and is exactly as
    long as ``render(song, ...)`` with the same options: the samples ``tactus render --stems``
    writes. Pass ``frames=len(mix)`` when the mix is rendered already; without it the mix is
    rendered once to learn its length. With ``reverb=False, chorus=False`` on a SoundFont the
    stems add up to the mix to float rounding (not through the built-in synthesizer, whose
    noise is seeded per voice, nor past the voice limit).
    """
    _check_sample_rate(sample_rate)
    score = song if isinstance(song, Score) else Score(song)
    grouping = _stems_by(by)
    if frames is None:
        frames = len(render(score, sample_rate, soundfont, gain_db, tail, reverb, chorus))
    elif isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or frames < 0:
        raise InvalidArgumentError(f"frames {frames!r} is not a frame count", 1)
    result = {}
    for index, stem in enumerate(stems(score, by)):
        handle = ctypes.c_void_p()
        check(lib.tactus_render_stem(score.handle, grouping, index, int(frames), _bank(soundfont), int(sample_rate),
                                     float(gain_db), _flags(reverb, chorus), ctypes.byref(handle)))
        result[stem.name] = _take(handle)
    return result


def labels(song: Union[PathLike, Score], sample_rate: int = 44100, stems_by: Optional[str] = None) -> dict[str, np.ndarray]:
    """Every note as the engine plays it, in the order it starts them: numpy columns by name.

    ``track`` (file track index, int64), ``channel`` (0...15), ``key``, ``velocity``, ``program``
    (the channel's when the note starts; uint8), ``bank`` (CC 0 x 128 + CC 32, int32),
    ``onset_frame`` and ``offset_frame`` (int64: a render from the start has the note's first
    sample at its onset frame), ``onset_seconds`` and ``offset_seconds`` (float64), and with
    ``stems_by`` ("track" or "class") ``stem``, the index of the note's stem in
    ``stems(song, stems_by)``. The values of ``tactus render --labels``.
    """
    _check_sample_rate(sample_rate)
    score = song if isinstance(song, Score) else Score(song)
    grouping = -1 if stems_by is None else _stems_by(stems_by)
    count = ctypes.c_int64()
    check(lib.tactus_score_label_count(score.handle, int(sample_rate), ctypes.byref(count)))
    n = count.value
    columns = {
        "track": np.empty(n, np.int64), "channel": np.empty(n, np.uint8), "key": np.empty(n, np.uint8),
        "velocity": np.empty(n, np.uint8), "program": np.empty(n, np.uint8), "bank": np.empty(n, np.int32),
        "stem": np.empty(n, np.int64), "onset_frame": np.empty(n, np.int64), "offset_frame": np.empty(n, np.int64),
    }
    check(lib.tactus_score_labels(score.handle, int(sample_rate), grouping,
                                  *(_pointer(columns[name]) for name in ("track", "channel", "key", "velocity", "program",
                                                                         "bank", "stem", "onset_frame", "offset_frame")),
                                  n))
    if stems_by is None:
        del columns["stem"]
    columns["onset_seconds"] = columns["onset_frame"] / sample_rate
    columns["offset_seconds"] = columns["offset_frame"] / sample_rate
    return columns
