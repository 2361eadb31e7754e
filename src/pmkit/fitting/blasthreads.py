"""One OpenBLAS thread while the prediction intervals' alternatives are built (issues 14 and 18).

Building every series' alternatives (:mod:`pmkit.fitting.alternatives`) makes hundreds of small matrix
products (a chunk of ~3,000 series × 5 points by 5 points × 257 hypotheses, three per chunk).  OpenBLAS runs
each on all its threads, and between them its helper threads spin, waiting for the next one: the spinning
is CPU time of the process (``OPENBLAS_NUM_THREADS=1`` took the one-parameter alternatives of
``bench/end_to_end.py``'s 100,000 series from 4.7–5.1 s to 2.9–3.7 s of CPU, one process each on a machine at
load 2–3, the same bounds to the last bit).
:func:`one_blas_thread` asks OpenBLAS for one thread while a build runs and gives it back its own count after.

OpenBLAS splits a product's output between its threads, not the sums behind each element, and the alternatives
come out the same to the last bit: ``tests/test_blasthreads.py`` checks the tables of a one- and a two-parameter
study built both ways, ``bench/interval_speed.py`` ``pmkit show --json`` on 100,000 series byte for byte.

Measured with the other interval changes of the ``speed9`` branch (``intervals.student_quantile``,
``kernels.single_ratios`` and ``kernels.smallest``), ``cd bench && nice -n 10 python interval_speed.py
--reference-rev 41cec61``: CPU seconds of a fresh process, best of three runs, on a shared machine; the stage is
in one process after modeling::

    100,000 series                               41cec61      speed9
    1 parameter   pmkit show FILE --json         14.7 s       11.8 s
                  pmkit show FILE --rank-by low  13.7 s       10.4 s
                  stage: alternatives             3.99 s       2.02 s
    2 parameters  pmkit show FILE --json         48.1 s       38.0 s
                  pmkit show FILE --rank-by low  46.4 s       36.1 s

``bench/README.md`` §15, "Every interval, faster again".

OpenBLAS is found among the libraries the process has loaded at the first use (``/proc/self/maps``: numpy's and
scipy's copies, their symbols plain or with scipy-openblas's prefix and 64-bit-integer suffix); elsewhere (another
BLAS, another system) the context does nothing.  A process-wide setting: entries nest and may come from several
threads at once (a lock and a count), the count restored when the last leaves.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_NAMES = tuple(f"{prefix}openblas_{{}}_num_threads{suffix}" for prefix in ("", "scipy_") for suffix in ("", "64_"))
"""The names OpenBLAS builds give ``openblas_get_num_threads`` / ``openblas_set_num_threads``."""

_lock = threading.Lock()
_depth = 0
_saved: list[int] = []
_controls: list[tuple[Callable[[], int], Callable[[int], None]]] | None = None


def _loaded_openblas() -> list[str]:
    """Paths of the OpenBLAS libraries this process has loaded (Linux; none elsewhere)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6}
    except OSError:
        return []
    return sorted(p for p in paths if "openblas" in p.rsplit("/", 1)[-1].lower() and ".so" in p)


def controls() -> list[tuple[Callable[[], int], Callable[[int], None]]]:
    """Per OpenBLAS library loaded, its ``(get, set)`` thread count functions (found once, on first use)."""
    global _controls
    if _controls is None:
        found = []
        for path in _loaded_openblas():
            try:
                library = ctypes.CDLL(path)
            except OSError:
                continue
            for name in _NAMES:
                get, put = getattr(library, name.format("get"), None), getattr(library, name.format("set"), None)
                if get is not None and put is not None:
                    get.restype, get.argtypes = ctypes.c_int, []
                    put.restype, put.argtypes = None, [ctypes.c_int]
                    found.append((get, put))
                    break
        _controls = found
    return _controls


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within: OpenBLAS computes on the calling thread alone; after: on as many threads as before."""
    global _depth
    with _lock:
        if _depth == 0:
            found = controls()
            _saved[:] = [get() for get, _ in found]
            for _, put in found:
                put(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for (_, put), count in zip(controls(), _saved, strict=True):
                    put(count)
