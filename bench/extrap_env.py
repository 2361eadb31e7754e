"""Extra-P in its own virtual environment, and calls into it for the benchmarks.

Extra-P (``pip install extrap``) pins numpy < 2, so it can never share pmkit's environment.  On first
use this module creates ``bench/.extrap-venv`` and installs Extra-P there; later runs reuse it.
``PMKIT_EXTRAP_PYTHON`` may name an existing interpreter that has Extra-P instead.  Calls go through
``extrap_runner.py`` with JSON on stdin/stdout, so the benchmarks give both tools the same numbers.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import venv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from pmkit.errors import PmkitError
from pmkit.pmnf import Function

BENCH_DIR = Path(__file__).resolve().parent
VENV_DIR = BENCH_DIR / ".extrap-venv"
RUNNER = BENCH_DIR / "extrap_runner.py"
PYTHON_ENV = "PMKIT_EXTRAP_PYTHON"
EXTRAP_MODELERS = ("Refining", "Basic")
"""Extra-P's refinement modeler (the paper's algorithm) and its default exhaustive-search modeler."""
ModelerSpec = str | dict[str, Any]
"""An Extra-P modeler for :func:`model_with_extrap`: its name, or ``{"name", "label", "options"}``
with Extra-P modeler options set (``{"name": "Basic", "label": "Basic neg",
"options": {"allow_negative_exponents": True}}``); results are keyed by the label."""


class ExtrapUnavailable(RuntimeError):
    """Extra-P could not be found or installed; the message says what was tried."""


def run_main(main: Callable[[], int]) -> NoReturn:
    """Exit with a benchmark's ``main()`` status; bad input or a missing Extra-P ends it with one
    line ``error: …`` on stderr and status 2 rather than a traceback."""
    try:
        sys.exit(main())
    except (PmkitError, ExtrapUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


def _venv_python(root: Path) -> Path:
    return root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def extrap_python(create: bool = True) -> Path:
    """The interpreter that runs Extra-P: ``$PMKIT_EXTRAP_PYTHON``, else ``bench/.extrap-venv``
    (created, with ``pip install extrap``, when ``create`` and it does not exist yet)."""
    given = os.environ.get(PYTHON_ENV)
    if given:
        path = Path(given)
        if not path.exists():
            raise ExtrapUnavailable(f"{PYTHON_ENV}={given} does not exist")
        return path
    python = _venv_python(VENV_DIR)
    if python.exists() and _has_extrap(python):
        return python
    if not create:
        raise ExtrapUnavailable(f"no Extra-P environment at {VENV_DIR} and {PYTHON_ENV} is not set")
    print(f"creating Extra-P's environment in {VENV_DIR} (pip install extrap; once)", file=sys.stderr)
    venv.EnvBuilder(with_pip=True, clear=python.exists()).create(VENV_DIR)
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "extrap"], check=False)
    if done.returncode != 0 or not _has_extrap(python):
        raise ExtrapUnavailable(f"pip install extrap into {VENV_DIR} failed (exit {done.returncode})")
    return python


def _has_extrap(python: Path) -> bool:
    done = subprocess.run([str(python), "-c", "import extrap"], capture_output=True, check=False)
    return done.returncode == 0


def call_runner(request: dict[str, Any], python: Path | None = None) -> dict[str, Any]:
    """Send one request to ``extrap_runner.py`` under Extra-P's interpreter and return its answer."""
    python = python or extrap_python()
    done = subprocess.run([str(python), str(RUNNER)], input=json.dumps(request, allow_nan=True),
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ExtrapUnavailable(f"Extra-P runner failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


@dataclass
class ExtrapSegments:
    """A segmented Extra-P model: each segment's function and interval (None for an open end), and
    Extra-P's change points (one measured point shared by both segments, or the two around the change)."""

    functions: list[Function]
    intervals: list[tuple[float | None, float | None]]
    change_points: list[float]


@dataclass
class ExtrapModels:
    """What one Extra-P modeler made of a batch: functions (as pmkit Functions; for a segmented model
    the last segment's), texts, predictions Extra-P computed itself, the seconds it spent modeling,
    and per series the segments of a segmented model (None otherwise)."""

    modeler: str
    functions: list[Function]
    texts: list[str]
    predictions: np.ndarray
    seconds: float
    segments: list[ExtrapSegments | None] | None = None

    @property
    def models_per_second(self) -> float:
        return len(self.functions) / self.seconds if self.seconds > 0 else math.inf


def model_with_extrap(parameters: Sequence[str], points: np.ndarray, values: np.ndarray,
                      predict_at: np.ndarray | None = None, modelers: Sequence[ModelerSpec] = EXTRAP_MODELERS,
                      warmup: int = 0, python: Path | None = None) -> dict[str, ExtrapModels]:
    """Model each series of ``values`` (series × points × repetitions, NaN where missing) with each
    Extra-P modeler (see :data:`ModelerSpec`); ``predict_at`` (k × parameters) are evaluated by Extra-P
    itself."""
    values = np.asarray(values, dtype=float)
    if values.ndim == 2:
        values = values[:, :, None]
    pts = np.asarray(points, dtype=float).reshape(-1, len(parameters))
    at = np.zeros((0, len(parameters))) if predict_at is None else np.asarray(predict_at, float).reshape(
        -1, len(parameters))
    series = [[[None if math.isnan(v) else v for v in rep] for rep in s] for s in values.tolist()]
    request = {"command": "model", "parameters": list(parameters), "points": pts.tolist(), "series": series,
               "modelers": list(modelers), "predict_at": at.tolist(), "warmup": warmup}
    answer = call_runner(request, python)
    out: dict[str, ExtrapModels] = {}
    for name, result in answer["results"].items():
        functions = [Function.from_json(m["function"], parameters) for m in result["models"]]
        texts = [m["text"] for m in result["models"]]
        preds = np.array([m["predictions"] for m in result["models"]], dtype=float).reshape(len(functions), -1)
        segments = [None if "segments" not in m else ExtrapSegments(
            [Function.from_json(s["function"], parameters) for s in m["segments"]],
            [tuple(s["interval"]) for s in m["segments"]], list(m["change_points"])) for m in result["models"]]
        out[name] = ExtrapModels(name, functions, texts, preds, float(result["seconds"]), segments)
    return out


def load_with_extrap(path: str | os.PathLike, reader: str | None = None,
                     python: Path | None = None) -> dict[str, Any]:
    """Read ``path`` with Extra-P's own reader: ``{"parameters", "points", "series": [{"callpath",
    "metric", "values"}]}`` with one mean value per point (None where missing)."""
    request: dict[str, Any] = {"command": "load", "path": str(Path(path).resolve())}
    if reader:
        request["reader"] = reader
    return call_runner(request, python)


def extrap_version(python: Path | None = None) -> str:
    """The installed Extra-P's version string."""
    python = python or extrap_python()
    done = subprocess.run([str(python), "-c", "import extrap; print(extrap.__version__)"], capture_output=True,
                          text=True, check=False)
    return done.stdout.strip() or "unknown"
