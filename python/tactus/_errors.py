"""Typed exceptions for the result codes of the C interface."""

from __future__ import annotations

from ._lib import lib


class TactusError(Exception):
    """Any failure reported by the Tactus library; ``code`` is its C result code."""

    code: int

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class InvalidArgumentError(TactusError, ValueError):
    """An argument out of range (a sample rate, a gain, a track index)."""


class InvalidHandleError(TactusError):
    """A score or render used after it was closed."""


class TactusFileNotFoundError(TactusError, FileNotFoundError):
    """No file at the given path."""


class UnreadableFileError(TactusError, OSError):
    """The path is a directory, or cannot be read (permission, I/O error)."""


class InvalidFileError(TactusError, ValueError):
    """The file was read but its content is refused (not a MIDI file, damaged, no timing)."""


class RenderError(TactusError):
    """The render failed after it started."""


class WriteError(TactusError, OSError):
    """A file could not be written (no space, no permission, no such folder)."""


_BY_CODE: dict[int, type[TactusError]] = {
    1: InvalidArgumentError,
    2: InvalidHandleError,
    3: TactusFileNotFoundError,
    4: UnreadableFileError,
    5: InvalidFileError,
    6: TactusError,
    7: RenderError,
    8: WriteError,
}


def check(code: int) -> None:
    """Raises the exception for a non-zero result code, with the library's message."""
    if code == 0:
        return
    raw = lib.tactus_last_error_message()
    message = raw.decode("utf-8", "replace") if raw else ""
    raise _BY_CODE.get(code, TactusError)(message or f"Tactus error {code}", code)
