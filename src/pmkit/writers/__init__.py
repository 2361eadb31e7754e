"""Writers of many models: the ``pmkit.models/1`` JSON document, JSON Lines, Parquet and Arrow.

They stream from :class:`~pmkit.modelcolumns.ModelColumns` in chunks of :data:`CHUNK` series, so a
million models are written without a Model object each and without the whole document in memory.
:mod:`pmkit.writers.entries` turns a chunk of columns into the JSON entries (the keys of
:meth:`pmkit.models.Model.to_json` and ``source``), :mod:`pmkit.writers.jsonfiles` writes them as
one document or one line each (orjson), :mod:`pmkit.writers.arrowfiles` lays the columns out as an
Arrow table for Parquet and Arrow IPC files (pyarrow, an optional extra).

Choices, measured with ``python bench/end_to_end.py`` (see bench/README.md): orjson over the
standard library's json (several times faster for the same document; NaN and infinity become null as
:func:`pmkit.schema.finite_json` makes them), pyarrow for Parquet and Arrow (the only writer of both;
the term table's offsets are Arrow's list offsets).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pmkit.analysis import Skipped
    from pmkit.findings import Finding
    from pmkit.models import ModelSet

FORMATS = ("json", "jsonl", "parquet", "arrow")
"""What ``pmkit model --format`` writes besides the terminal table."""

BINARY_FORMATS = ("parquet", "arrow")

CHUNK = 10_000
"""Series per chunk: large enough that per-chunk work is negligible, small enough to bound memory."""

EXTRA = {"parquet": ("pyarrow", "parquet"), "arrow": ("pyarrow", "parquet")}
"""The module a format needs and the extra of pmkit-hpc that installs it."""


def missing_dependency(fmt: str) -> str | None:
    """A one-line message naming what to install when ``fmt`` needs a package that is missing, else None."""
    if fmt not in EXTRA:
        return None
    module, extra = EXTRA[fmt]
    import importlib.util

    if importlib.util.find_spec(module) is not None:
        return None
    return f"--format {fmt} needs {module}: pip install 'pmkit-hpc[{extra}]'"


def write_models(fmt: str, stream: Any, parameters: Sequence[str], sets: Sequence[tuple[str, ModelSet]], *,
                 sources: Sequence[str] = (), skipped: Iterable[Skipped] = (),
                 findings: Iterable[Finding] = (), chunk: int = CHUNK) -> None:
    """Write the models of every (source, model set) to the binary ``stream`` in format ``fmt``, ``chunk``
    series at a time.  A format whose package is not installed (pyarrow for Parquet and Arrow) is a
    UsageError naming what to install, not a ModuleNotFoundError from inside."""
    problem = missing_dependency(fmt)
    if problem:
        from pmkit.errors import UsageError

        raise UsageError(problem)
    if fmt in ("json", "jsonl"):
        from pmkit.writers.jsonfiles import write_document, write_lines

        writer = write_document if fmt == "json" else write_lines
    elif fmt in BINARY_FORMATS:
        from pmkit.writers.arrowfiles import write_arrow, write_parquet

        writer = write_parquet if fmt == "parquet" else write_arrow
    else:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    writer(stream, parameters, sets, sources=sources, skipped=skipped, findings=findings, chunk=chunk)
