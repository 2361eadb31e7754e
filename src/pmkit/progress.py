"""Progress of long work, reported by library code and drawn only by whoever listens.

Library code (readers, modelers, detectors, executors) never draws.  It reports::

    with progress.task("reading Cube files", total=len(files)) as task:
        for file in files:
            ...
            task.advance()

and the CLI (or a notebook) listens::

    with progress.listening(callback):
        pmkit.read(path)

``callback(event)`` receives a :class:`ProgressEvent` for every start, advance and end of a task.
Without a listener the calls cost next to nothing.  A task captures the listener when it starts,
so worker threads it hands to may advance it; listeners must therefore be thread-safe (rich's
``Progress`` is).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class ProgressEvent:
    """One report about a task: ``completed`` of ``total`` units (``total`` None when unknown).

    ``finished`` is set on the task's last event; ``task_id`` tells tasks apart.
    """

    task_id: int
    description: str
    completed: float
    total: float | None
    finished: bool = False


Listener = Callable[[ProgressEvent], None]

_listener: ContextVar[Listener | None] = ContextVar("pmkit_progress_listener", default=None)
_ids = itertools.count(1)


class Task:
    """A unit of long work in progress; advance it as work completes, end it by leaving the block."""

    def __init__(self, description: str, total: float | None, listener: Listener | None) -> None:
        self.task_id = next(_ids)
        self.description = description
        self.total = total
        self.completed = 0.0
        self._listener = listener
        self._lock = threading.Lock()
        self._emit(False)

    def advance(self, amount: float = 1.0) -> None:
        """Count ``amount`` more units as done (safe to call from worker threads)."""
        if self._listener is None:
            return
        with self._lock:
            self.completed += amount
        self._emit(False)

    def update(self, *, completed: float | None = None, total: float | None = None,
               description: str | None = None) -> None:
        """Set the done count, the total or the description outright."""
        with self._lock:
            if completed is not None:
                self.completed = completed
            if total is not None:
                self.total = total
            if description is not None:
                self.description = description
        self._emit(False)

    def finish(self) -> None:
        """Report the task as ended (leaving the ``with`` block does this)."""
        self._emit(True)

    def __enter__(self) -> Task:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finish()

    def _emit(self, finished: bool) -> None:
        if self._listener is not None:
            self._listener(ProgressEvent(self.task_id, self.description, self.completed, self.total, finished))


def task(description: str, total: float | None = None) -> Task:
    """Start reporting a task to the current listener (a no-op task when nobody listens)."""
    return Task(description, total, _listener.get())


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Send the progress of everything started inside the block to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
