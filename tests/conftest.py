"""Shared fixtures: where the real data files are, and a registry isolated from installed plugins.

pmkit's pytest plugin for plugin authors is enabled too, so its fixtures (``pmkit_registry``, ...)
are tested as plugin authors use them, and pytest's ``pytester`` runs the documentation's test
examples as a plugin author's pytest would.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pmkit.testing.plugins", "pytester"]

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
