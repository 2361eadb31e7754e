"""Progress for long loading and modeling, drawn on stderr with rich, only on a terminal.

:class:`Steps` shows a spinner per step of a command and listens to what library code reports
through :mod:`pmkit.progress` (a bar per reported task with a known total).  Off a terminal (pipes,
files, CI logs) nothing is drawn, so the output stays free of control codes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from pmkit import progress
from pmkit.progress import ProgressEvent


class Steps:
    """``with steps.step("reading study/"):`` shows a spinner with the elapsed time while the step runs.

    Inside the ``with Steps()`` block, tasks reported through :mod:`pmkit.progress` appear as bars.
    """

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        stream = stream or sys.stderr
        self.enabled = stream.isatty() if enabled is None else enabled
        self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20),
                                  TimeElapsedColumn(), console=Console(file=stream), transient=True,
                                  disable=not self.enabled)
        self._tasks: dict[int, Any] = {}
        self._stack = ExitStack()

    def __enter__(self) -> Steps:
        self._progress.start()
        if self.enabled:
            self._stack.enter_context(progress.listening(self.listen))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        self._progress.stop()

    def listen(self, event: ProgressEvent) -> None:
        """Draw a reported task: a bar while it runs, removed when it ends."""
        shown = self._tasks.get(event.task_id)
        if event.finished:
            if shown is not None:
                self._progress.remove_task(self._tasks.pop(event.task_id))
            return
        if shown is None:
            self._tasks[event.task_id] = self._progress.add_task(_shown(event.description), total=event.total,
                                                                 completed=event.completed)
        else:
            self._progress.update(shown, completed=event.completed, total=event.total,
                                  description=_shown(event.description))

    @contextmanager
    def step(self, description: str) -> Iterator[None]:
        """Show ``description`` with a pulsing bar until the block ends."""
        task = self._progress.add_task(_shown(description), total=None)
        try:
            yield
        finally:
            self._progress.remove_task(task)


def _shown(description: str) -> str:
    """A task's description as the progress line's markup shows it: control characters visible, brackets as text."""
    from rich.markup import escape

    from pmkit.names import printable

    return escape(printable(description))
