"""A calibration reference: ``t_max`` per (operation, processes, bytes) and the function ``T_f(p, b)``.

Paper 004 §8 defines, per MPI function, ``T_f : (p, b) → t_max`` on base points and interpolates
bilinearly between them.  :func:`interpolate` is that interpolation: within each measured process
count it interpolates in bytes between the neighbouring base points, then linearly in ``p`` between
the two neighbouring process counts.  Outside the measured range it clamps to the nearest base point
and says so.  Bytes are interpolated linearly — chosen by measurement, see :data:`BYTES_SCALE`.

MPI changes protocol at the eager limit: t_max over bytes follows one Hockney line below it and a
steeper or higher one above.  Interpolating between the last eager and the first rendezvous base
point mixes both laws.  So every (operation, processes) series of at least 8 sizes is tested for
such a change (:func:`pmkit.modelers.hockney.fit_switch`, the segment test of the refining
modeler), and where one is found, sizes between the two segments' measured points take the line of
the segment that holds there (below or above the change point); everywhere else the interpolation
is unchanged, and series with one law keep exactly today's ``T_f``.  Measured on generated t_max
series (``python bench/calibration.py --switch-only --per-case 100``, bench/README.md §8; eager
limits log-uniform in 2 KiB … 256 KiB, sizes 8 B … 1 MiB in powers of 2, ±2 % noise): sizes
between the base points around the limit are predicted within 5 % in 71 % of cases against 25 %
by interpolation alone (median error 1.2 % against 12.4 %); drawing the two lines over the whole
series instead (no interpolation) gives 69 % there and loses on the other sizes at 5 % noise (96.4 %
within 5 % against 97.8 %).  One-law series: 0–2 % get a false switch, median errors unchanged.

A reference is written as versioned JSON (:data:`SCHEMA`, with the switches found under
``switches``); :meth:`Reference.load` reads it back (and files of ``pmkit.calibration/1``, whose
switches it finds again from their groups) and rejects anything else with one line naming the file.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pmkit.calibration.distributions import DEFAULT_Q_MAX, SampleFit, fit_sample
from pmkit.errors import InputError
from pmkit.modelers.hockney import ProtocolSwitch, fit_switch

SCHEMA = "pmkit.calibration/2"
READABLE = ("pmkit.calibration/1", SCHEMA)
"""Schemas :meth:`Reference.load` reads: version 1 has no ``switches`` (they are found on loading)."""

SEGMENTS = ("auto", "off")
"""``auto`` tests each (operation, processes) series of 8+ sizes for a change of law in bytes."""

BYTES_SCALE = "linear"
"""How ``T_f`` interpolates between message sizes: ``linear`` in bytes, or ``log`` (in log2(1 + b)).
Measured by leave-one-out on the benchmark's real MPI samples (bench/calibration.py, bench/README.md
§8: 36 interior sizes of 8 B … 256 KB held out): linear interpolation misses by a median 35 %,
log-scale interpolation by 49 % — a latency + size/bandwidth law is linear in bytes between
neighbouring sizes."""


@dataclass
class Group:
    """The calibration of one (operation, processes, bytes) group."""

    op: str
    nprocs: int
    nbytes: float
    fit: SampleFit

    @property
    def t_max(self) -> float:
        return self.fit.t_max

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "nprocs": self.nprocs, "bytes": self.nbytes, **self.fit.to_json()}


@dataclass
class Reference:
    """``t_max`` of every calibrated group, the settings that made them, and ``T_f`` over them."""

    groups: list[Group]
    settings: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    notes: list[str] = field(default_factory=list)
    self_calibrated: bool = False
    switches: dict[tuple[str, int], ProtocolSwitch] | None = None

    def protocol_switches(self) -> dict[tuple[str, int], ProtocolSwitch]:
        """The change of law in bytes of each (operation, processes) series that has one (found once)."""
        if self.switches is None:
            self.switches = find_switches(self.groups, self.settings.get("segments", "auto"))
        return self.switches

    def ops(self) -> list[str]:
        return sorted({g.op for g in self.groups})

    def base_points(self, op: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(processes, bytes, t_max) of ``op``'s groups with a finite t_max."""
        rows = [(g.nprocs, g.nbytes, g.t_max) for g in self.groups if g.op == op and math.isfinite(g.t_max)]
        if not rows:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        p, b, t = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
        return p, b, t

    def t_max(self, op: str, nprocs: np.ndarray | float, nbytes: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """``T_f(p, b)`` for ``op`` at each (p, b), and whether each was clamped to the measured range.

        NaN where the reference has no base point of ``op``.
        """
        p, b = np.broadcast_arrays(np.asarray(nprocs, dtype=float), np.asarray(nbytes, dtype=float))
        base = self.base_points(op)
        if not len(base[0]):
            return np.full(p.shape, np.nan), np.zeros(p.shape, bool)
        switches = {float(n): s for (o, n), s in self.protocol_switches().items() if o == op}
        return interpolate(*base, p, np.nan_to_num(b, nan=0.0), BYTES_SCALE, switches)

    def to_json(self) -> dict[str, Any]:
        from pmkit.distribution import version

        return {"schema": SCHEMA, "pmkit": version(), "source": self.source, "self_calibrated": self.self_calibrated,
                "settings": dict(self.settings, bytes_scale=BYTES_SCALE), "notes": list(self.notes),
                "groups": [g.to_json() for g in self.groups],
                "switches": [{"op": op, "nprocs": n, **s.to_json()}
                             for (op, n), s in sorted(self.protocol_switches().items())]}

    def save(self, path: str | Path) -> None:
        """Write the JSON reference atomically (a temporary file renamed into place)."""
        from pmkit.schema import finite_json

        path = Path(path)
        text = json.dumps(finite_json(self.to_json()), indent=2, allow_nan=False) + "\n"
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)

    @classmethod
    def load(cls, path: str | Path) -> Reference:
        """Read a reference written by :meth:`save`; InputError naming the file otherwise."""
        path = Path(path)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError(path, "no such calibration reference") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(path, f"is not a readable JSON calibration reference: {exc}") from None
        if not isinstance(document, dict) or document.get("schema") not in READABLE:
            found = document.get("schema") if isinstance(document, dict) else None
            raise InputError(path, f"is not a pmkit calibration reference (schema {found!r}, expected {SCHEMA!r}); "
                                   "write one with pmkit calibrate --out")
        groups = []
        for i, entry in enumerate(document.get("groups") or []):
            try:
                fit = SampleFit(int(entry["n"]), _number(entry.get("min")), _number(entry.get("window")),
                                str(entry["model"]), _number(entry["t_max"]), notes=list(entry.get("notes") or []))
                groups.append(Group(str(entry["op"]), int(entry["nprocs"]), float(entry["bytes"]), fit))
            except (KeyError, TypeError, ValueError) as exc:
                raise InputError(path, f"group {i + 1} is incomplete or not numeric ({exc})", member="groups") from None
        if not groups:
            raise InputError(path, "has no calibrated groups")
        switches = None
        if "switches" in document:
            switches = {}
            for i, entry in enumerate(document.get("switches") or []):
                try:
                    switches[(str(entry["op"]), int(entry["nprocs"]))] = ProtocolSwitch.from_json(entry)
                except (KeyError, TypeError, ValueError) as exc:
                    raise InputError(path, f"switch {i + 1} is incomplete or not numeric ({exc})",
                                     member="switches") from None
        return cls(groups, dict(document.get("settings") or {}), str(document.get("source") or path),
                   list(document.get("notes") or []), bool(document.get("self_calibrated")), switches)


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def find_switches(groups: Iterable[Group], segments: str = "auto") -> dict[tuple[str, int], ProtocolSwitch]:
    """The change of law in bytes of each (operation, processes) series of ``groups`` that has one."""
    if segments == "off":
        return {}
    series: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for g in groups:
        if math.isfinite(g.t_max):
            series.setdefault((g.op, g.nprocs), []).append((g.nbytes, g.t_max))
    out = {}
    for key, rows in series.items():
        sizes, times = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
        found = fit_switch(sizes, times)
        if found is not None:
            out[key] = found
    return out


def interpolate(base_p: np.ndarray, base_b: np.ndarray, base_t: np.ndarray, p: np.ndarray, b: np.ndarray,
                scale: str = "linear",
                switches: dict[float, ProtocolSwitch] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``T_f`` at (p, b) from base points (base_p, base_b, base_t): bilinear, clamped (see the module).

    Returns the values and a mask of the points outside the measured range (clamped).  ``scale``
    ``log`` interpolates in log2(1 + bytes) instead of bytes.  ``switches`` maps a process count to
    its change of law in bytes: sizes inside the switch's gap take the line of the segment holding there.
    """
    def x(values: np.ndarray) -> np.ndarray:
        return np.log2(1.0 + np.maximum(values, 0.0)) if scale == "log" else values

    p = np.asarray(p, dtype=float)
    b = np.asarray(b, dtype=float)
    levels = np.unique(base_p)
    values = np.empty((len(levels), *p.shape))
    outside = np.empty((len(levels), *p.shape), bool)
    for i, level in enumerate(levels):
        rows = base_p == level
        order = np.argsort(base_b[rows])
        sizes, times = base_b[rows][order], base_t[rows][order]
        values[i] = np.interp(x(b), x(sizes), times)
        switch = (switches or {}).get(float(level))
        if switch is not None:
            low, high = switch.gap
            values[i] = np.where((b > low) & (b < high), switch.evaluate(b), values[i])
        outside[i] = (b < sizes[0]) | (b > sizes[-1])
    low = np.clip(np.searchsorted(levels, p, side="right") - 1, 0, len(levels) - 1)
    high = np.minimum(low + 1, len(levels) - 1)
    span = levels[high] - levels[low]
    weight = np.where(span > 0, np.clip((p - levels[low]) / np.where(span > 0, span, 1.0), 0.0, 1.0), 0.0)
    index = np.indices(p.shape)
    out = (1 - weight) * values[(low, *index)] + weight * values[(high, *index)]
    clamped = (p < levels[0]) | (p > levels[-1]) | outside[(low, *index)] | ((weight > 0) & outside[(high, *index)])
    return out, clamped


def calibrate(samples: Iterable[tuple[str, int, float, np.ndarray]], *, q_max: float = DEFAULT_Q_MAX,
              alpha: float = 0.05, window: float | None = None, resolution: float = 1e-9, critical: str = "exact",
              source: str = "", self_calibrated: bool = False, segments: str = "auto") -> Reference:
    """A reference from samples (op, processes, bytes, times in seconds), one :func:`fit_sample` each;
    ``segments`` ``auto`` finds each series' change of law in bytes (:func:`find_switches`), ``off`` not."""
    if segments not in SEGMENTS:
        raise ValueError(f"segments must be one of {', '.join(SEGMENTS)}, got {segments!r}")
    groups = [Group(op, int(p), float(b), fit_sample(times, q_max=q_max, alpha=alpha, window=window,
                                                      resolution=resolution, critical=critical))
              for op, p, b, times in samples]
    groups.sort(key=lambda g: (g.op, g.nprocs, g.nbytes))
    settings = {"q_max": q_max, "alpha": alpha, "window": "auto" if window is None else window,
                "timer_resolution": resolution, "critical": critical, "segments": segments}
    notes = []
    empirical = [g for g in groups if g.fit.model == "empirical"]
    if empirical:
        notes.append(f"{len(empirical)} of {len(groups)} groups use the empirical {q_max:g} quantile: both models "
                     "were rejected or the sample was too small")
    reference = Reference(groups, settings, source, notes, self_calibrated)
    reference.protocol_switches()
    return reference
