"""An example study whose laws change at a threshold, as Extra-P text: ``segmented modeling`` at work.

``python -m pmkit.testing.segmented_study FILE`` writes an Extra-P text input with one parameter
``p`` = 2 … 2048 (11 points), 5 repetitions with ±2 % uniform noise from a fixed seed, metric
``time``, and call paths whose laws change (see :data:`LAWS` and :data:`CHANGES`):

* ``main->exchange`` — a message crossing the eager limit: cheap and slowly growing up to p = 128,
  then a rendezvous handshake and a steeper line;
* ``main->reduce`` — a library that switches algorithm: log p up to p = 64, then linear;
* ``main->stencil`` — a working set that stops fitting in cache: flat up to p = 256, then growing;
* ``main->compute`` and ``main->setup`` — one law each (linear, constant), which stay unsplit.

``pmkit show FILE`` marks the three changes (``changes at p ≈ …``) with no option.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

POINTS = tuple(2 ** k for k in range(1, 12))
REPETITIONS = 5
NOISE = 0.02
SEED = 20210521


def _exchange(p: float) -> float:
    return 2.0 + 0.01 * p if p < 128 else 4.0 + 0.06 * p


def _reduce(p: float) -> float:
    return 1.0 + 0.8 * np.log2(p) if p < 64 else 5.8 + 0.0125 * p


def _stencil(p: float) -> float:
    return 12.0 if p < 256 else 12.0 + 0.004 * (p - 256) ** 1.5 / 16


LAWS: dict[str, Callable[[float], float]] = {
    "main": lambda p: 0.5,
    "main->setup": lambda p: 3.0,
    "main->compute": lambda p: 20.0 + 0.01 * p,
    "main->exchange": _exchange,
    "main->reduce": _reduce,
    "main->stencil": _stencil,
}
"""Exclusive time (seconds) of each call path at p processes."""

CHANGES = {"main->exchange": 128.0, "main->reduce": 64.0, "main->stencil": 256.0}
"""The planted change points by call path."""


def write(path: str | Path) -> Path:
    """Write the study to ``path`` (an Extra-P text file) and return the path."""
    rng = np.random.default_rng(SEED)
    lines = ["PARAMETER p", ""] + [f"POINTS ( {p} )" for p in POINTS] + [""]
    for callpath, law in LAWS.items():
        lines += [f"REGION {callpath}", "METRIC time"]
        for p in POINTS:
            values = law(float(p)) * (1.0 + rng.uniform(-NOISE, NOISE, REPETITIONS))
            lines.append("DATA " + " ".join(f"{v:.6g}" for v in values))
        lines.append("")
    path = Path(path)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    from pmkit.testing.generator_cli import parse

    parsed = parse(argv, "pmkit.testing.segmented_study", "FILE", __doc__)
    if isinstance(parsed, int):
        return parsed
    print(f"wrote {write(parsed[0])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
