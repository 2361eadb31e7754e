"""Progress for long loading and modeling: a rich spinner per step on stderr, only on a terminal.

Off a terminal (pipes, files, CI logs) nothing is drawn, so the output stays free of control codes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn


class Steps:
    """``with steps.step("reading study/"):`` shows a spinner with the elapsed time while the step runs."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        stream = stream or sys.stderr
        self.enabled = stream.isatty() if enabled is None else enabled
        self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20),
                                  TimeElapsedColumn(), console=Console(file=stream), transient=True,
                                  disable=not self.enabled)

    def __enter__(self) -> Steps:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    @contextmanager
    def step(self, description: str) -> Iterator[None]:
        """Show ``description`` with a pulsing bar until the block ends."""
        task = self._progress.add_task(description, total=None)
        try:
            yield
        finally:
            self._progress.remove_task(task)
