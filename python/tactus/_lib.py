"""Loading libTactusC and declaring its functions for ctypes (see tactus.h beside this file)."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

ABI_VERSION = 2
LIBRARY_NAME = "libTactusC.so"


def _library_path() -> str:
    explicit = os.environ.get("TACTUS_LIBRARY")
    if explicit:
        return explicit
    return str(Path(__file__).resolve().parent / LIBRARY_NAME)


def _load() -> ctypes.CDLL:
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as error:
        raise ImportError(
            f"tactus: cannot load the Tactus library at {path} ({error}); "
            "build it with python/build.sh or point TACTUS_LIBRARY at libTactusC.so"
        ) from error
    # The version first: an older library lacks functions this package declares.
    lib.tactus_abi_version.restype = ctypes.c_int32
    lib.tactus_abi_version.argtypes = []
    version = lib.tactus_abi_version()
    if version != ABI_VERSION:
        raise ImportError(f"tactus: {path} has C interface version {version}, this package needs {ABI_VERSION}")
    declare(lib)
    return lib


_i32 = ctypes.c_int32
_i64 = ctypes.c_int64
_p = ctypes.c_void_p
_pi32 = ctypes.POINTER(ctypes.c_int32)
_pi64 = ctypes.POINTER(ctypes.c_int64)
_pp = ctypes.POINTER(ctypes.c_void_p)

_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "tactus_abi_version": (_i32, []),
    "tactus_last_error_message": (ctypes.c_char_p, []),
    "tactus_score_load_path": (_i32, [ctypes.c_char_p, _pp]),
    "tactus_score_load_bytes": (_i32, [ctypes.c_char_p, _i64, _pp]),
    "tactus_score_free": (_i32, [_p]),
    "tactus_score_header": (_i32, [_p, _pi32, _pi32, _pi32, _pi64]),
    "tactus_score_end_tick": (_i32, [_p, _i64, _pi64]),
    "tactus_score_track_name": (_i32, [_p, _i64, ctypes.c_char_p, _i64, _pi64]),
    "tactus_score_track_note_count": (_i32, [_p, _i64, _pi64]),
    "tactus_score_track_notes": (_i32, [_p, _i64, _p, _p, _p, _p, _p, _i64]),
    "tactus_score_note_counts": (_i32, [_p, _p, _i64, _pi64]),
    "tactus_score_notes": (_i32, [_p, _p, _p, _p, _p, _p, _i64]),
    "tactus_score_tempo_count": (_i32, [_p, _pi64]),
    "tactus_score_tempos": (_i32, [_p, _p, _p, _i64]),
    "tactus_score_time_signature_count": (_i32, [_p, _pi64]),
    "tactus_score_time_signatures": (_i32, [_p, _p, _p, _p, _i64]),
    "tactus_score_ticks_to_seconds": (_i32, [_p, _p, _p, _i64]),
    "tactus_render_score": (_i32, [_p, ctypes.c_char_p, _i32, ctypes.c_float, ctypes.c_double, ctypes.c_uint32, _pp]),
    "tactus_render_info": (_i32, [_p, _pi64, _pi32]),
    "tactus_render_copy": (_i32, [_p, _p, _i64]),
    "tactus_render_take": (_i32, [_p, _p, _i64]),
    "tactus_render_free": (_i32, [_p]),
    "tactus_score_stem_count": (_i32, [_p, _i32, _pi64]),
    "tactus_score_stem_name": (_i32, [_p, _i32, _i64, ctypes.c_char_p, _i64, _pi64]),
    "tactus_score_stem_tracks": (_i32, [_p, _i32, _i64, _p, _i64, _pi64]),
    "tactus_render_stem": (_i32, [_p, _i32, _i64, _i64, ctypes.c_char_p, _i32, ctypes.c_float, ctypes.c_uint32, _pp]),
    "tactus_score_label_count": (_i32, [_p, _i32, _pi64]),
    "tactus_score_augment": (_i32, [_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_char_p, _pp]),
    "tactus_score_augmentation": (_i32, [_p, ctypes.c_char_p, _i64, _pi64]),
    "tactus_score_labels": (_i32, [_p, _i32, _i32, _p, _p, _p, _p, _p, _p, _p, _p, _p, _i64]),
    "tactus_score_track_control_count": (_i32, [_p, _i64, _pi64]),
    "tactus_score_track_controls": (_i32, [_p, _i64, _p, _p, _p, _p, _p, _i64]),
    "tactus_score_lyric_count": (_i32, [_p, _pi64, _pi64]),
    "tactus_score_lyrics": (_i32, [_p, _p, _p, _p, _p, _i64, _i64]),
    "tactus_score_transpose": (_i32, [_p, _i32, _i32, _pp]),
    "tactus_score_shift": (_i32, [_p, _i64, _pp]),
    "tactus_score_keep_notes": (_i32, [_p, _p, _i64, _pp]),
    "tactus_score_smf_bytes": (_i32, [_p, _p, _i64, _pi64]),
    "tactus_score_write": (_i32, [_p, ctypes.c_char_p]),
    "tactus_write_audio": (_i32, [_p, _i64, _i32, _i32, ctypes.c_char_p, ctypes.c_char_p]),
}


def declare(lib: ctypes.CDLL) -> None:
    """Sets the argument and result types of every function the package calls."""
    for name, (result, arguments) in _SIGNATURES.items():
        function = getattr(lib, name)
        function.restype = result
        function.argtypes = arguments


lib = _load()
