"""Collects the speed benchmarks' figures and prints them, side by side with Extra-P, at the end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

FIGURES = pytest.StashKey[list]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[FIGURES] = []


@pytest.fixture(scope="session")
def figures(request: pytest.FixtureRequest) -> list:
    """Append ``(label, text)`` rows; they are printed in the terminal summary."""
    return request.config.stash[FIGURES]


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    rows = config.stash.get(FIGURES, [])
    if not rows:
        return
    terminalreporter.section("pmkit vs Extra-P: speed and memory")
    width = max(len(label) for label, _ in rows)
    for label, text in rows:
        terminalreporter.write_line(f"{label:<{width}}  {text}")
