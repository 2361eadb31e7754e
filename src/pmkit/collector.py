"""Python's cycle collector, paused while pmkit makes many small objects that hold no cycles.

The collector runs whenever enough container objects were made since its last run, and a full run visits
every container alive — with 100,000 series that includes lists of 100,000 call paths and every structure
of the search — so the two-parameter search and the JSON writer, which make millions of short-lived tuples,
lists and strings, paid for runs that found nothing to free.  Measured on ``bench/end_to_end.py``'s
100,000 two-parameter series (``bench/README.md`` §12): ``pmkit.model`` 9.33 → 8.83 s CPU (best of 3,
alternated in one process; a full collection afterwards found 0 unreachable objects, so the pause holds no
garbage back); the one-parameter search's stage 1.40 → 1.33 s CPU on its 100,000-series file (best of 4 fresh
processes, medians 1.71 → 1.47; 0 unreachable objects there too).  Both modelers pause it for their whole call,
which also covers numba's import on first use (its collections were the ~0.1 s left in a fresh process's model
stage; afterwards the stage runs no collection at all).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off inside the block (as it was after it): for code that makes many objects and no
    reference cycles, so that nothing waits for a collection that the pause defers."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
