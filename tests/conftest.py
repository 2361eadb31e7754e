"""Shared fixtures: where the real data files are, and a registry isolated from installed plugins."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA_ENV = "PMKIT_SHARED_DATA"


def shared_data_dir() -> Path:
    """``$PMKIT_SHARED_DATA`` or ``../shared/data`` beside the project."""
    return Path(os.environ.get(DATA_ENV, ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real tool outputs; tests using it skip with a reason where it is absent."""
    path = shared_data_dir()
    if not path.is_dir():
        pytest.skip(f"real data folder {path} is absent (set {DATA_ENV} to point at shared/data)")
    return path


@pytest.fixture(scope="session")
def shared_data_if_present() -> Path | None:
    """The folder of real tool outputs, or None where it is absent (for tests that also run without it)."""
    path = shared_data_dir()
    return path if path.is_dir() else None
