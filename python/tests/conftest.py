"""Where the tests find their inputs: the repository's songs, the shared MIDI corpus and the
tactus CLI. A missing input is an error, not a skip (CI fails on skipped tests)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _corpus() -> Path:
    corpus = Path(os.environ.get("TACTUS_CORPUS", REPO.parent / "shared" / "corpus"))
    if not (corpus / "files").is_dir():
        raise RuntimeError(f"the MIDI corpus is not at {corpus} (set TACTUS_CORPUS)")
    return corpus / "files"


CORPUS = _corpus()


@pytest.fixture(scope="session")
def tactus_cli() -> str:
    """The tactus executable built with the library (python/run-tests.sh sets TACTUS_CLI)."""
    path = os.environ.get("TACTUS_CLI") or str(REPO / ".build" / "release" / "tactus")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"no tactus executable at {path} (set TACTUS_CLI)")
    return path
