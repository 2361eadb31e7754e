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


@pytest.fixture(scope="session")
def builtin_registry():
    """The built-in plugins only, as ``PMKIT_DISABLE_PLUGIN_AUTOLOAD=1`` gives a command."""
    from pmkit.plugins import build_registry

    return build_registry(entry_points=False)


@pytest.fixture
def pmkit_cli(capsys, monkeypatch, builtin_registry):
    """``pmkit_cli("show", path, columns=80)``: run the command in this process, as a pipe would see it.

    Built-in plugins only, ``COLUMNS`` set, no colour forced; returns a CompletedProcess with the exit
    code and what was written to stdout and stderr.  A subprocess adds nothing for options and errors.
    """
    import subprocess

    from pmkit.cli import main
    from pmkit.testing.plugins import using_registry

    def run(*args: str, columns: int = 80) -> subprocess.CompletedProcess:
        monkeypatch.setenv("COLUMNS", str(columns))
        for name in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE"):
            monkeypatch.delenv(name, raising=False)
        capsys.readouterr()
        with using_registry(builtin_registry):
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:  # argparse's own usage errors and --help
                code = exc.code
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def shared_data_if_present() -> Path | None:
    """The folder of real tool outputs, or None where it is absent (for tests that also run without it)."""
    path = shared_data_dir()
    return path if path.is_dir() else None
