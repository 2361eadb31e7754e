"""APMT's machine profile: counter names by role, access latencies per memory level, the clock.

Profiles are TOML files.  pmkit ships ``apmt_profiles/default.toml`` (package data); a user's file
(``-O profile=mine.toml``) is merged into it — tables key by key, lists replaced — so it only needs
what differs.  Every key is checked: an unknown key, a wrong type or a negative latency is an
:class:`~pmkit.errors.InputError` naming the file and the key.  Nothing in a profile is evaluated:
``"A - B"`` is split at `` - `` into two metric names.  See ``docs/apmt-profile.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from pmkit.errors import InputError

ROLES = ("cycles", "instructions", "stall_cycles", "l1_hits", "l2_hits", "llc_hits", "memory_accesses")
"""The paper's counters (Table 2): cycles, instructions, stall cycles, hits per level, memory accesses."""

LEVELS = ("l1", "l2", "llc", "memory")
HIT_ROLES = {"l1": "l1_hits", "l2": "l2_hits", "llc": "llc_hits", "memory": "memory_accesses"}
METRIC_ROLES = ("time", "bytes", "visits")
TIME_UNITS = {"s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0, "msec": 1e-3, "ms": 1e-3,
              "usec": 1e-6, "us": 1e-6, "µs": 1e-6, "nsec": 1e-9, "ns": 1e-9}
"""Seconds per unit of a time metric."""

SHIPPED = "default"
_MODIFIERS = re.compile(r":[ukhpPGHISDW]+$")
_PMU = re.compile(r"^[A-Za-z0-9_.-]+/([^/=,]+)/[A-Za-z]*$")


@dataclass(frozen=True)
class Latency:
    """The latency of one access: ``value`` core ``cycles`` (scaling with the clock) or ``ns``."""

    value: float
    unit: str

    def seconds(self, frequency_hz: float | np.ndarray) -> float | np.ndarray:
        return self.value * 1e-9 if self.unit == "ns" else self.value / frequency_hz

    def cycles(self, frequency_hz: float | np.ndarray) -> float | np.ndarray:
        return self.value * 1e-9 * frequency_hz if self.unit == "ns" else self.value

    def text(self) -> str:
        return f"{self.value:g} {self.unit}"


@dataclass(frozen=True)
class MachineProfile:
    """A loaded profile; ``source`` says which files it came from."""

    name: str
    description: str
    frequency_ghz: float
    latencies: Mapping[str, Latency]
    counters: Mapping[str, tuple[str, ...]]
    metrics: Mapping[str, tuple[str, ...]]
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "frequency_ghz": self.frequency_ghz,
                "latency": {level: {lat.unit: lat.value} for level, lat in self.latencies.items()},
                "source": self.source}


def shipped_profile_path(name: str = SHIPPED) -> Path:
    """The file of a profile shipped with pmkit."""
    return Path(str(resources.files("pmkit.modelers").joinpath("apmt_profiles", f"{name}.toml")))


def shipped_profiles() -> list[str]:
    folder = resources.files("pmkit.modelers").joinpath("apmt_profiles")
    return sorted(Path(str(entry)).stem for entry in folder.iterdir() if str(entry).endswith(".toml"))


def load_profile(profile: str = "") -> MachineProfile:
    """The shipped default merged with ``profile``: a shipped profile's name or a TOML file's path."""
    base_path = shipped_profile_path()
    data = _read_toml(base_path)
    sources = [f"{SHIPPED} (shipped)"]
    if profile and profile != SHIPPED:
        if profile in shipped_profiles():
            path = shipped_profile_path(profile)
            sources.append(f"{profile} (shipped)")
        else:
            path = Path(profile)
            if not path.is_file():
                raise InputError(path, f"machine profile not found (shipped profiles: {', '.join(shipped_profiles())})")
            sources.append(str(path))
        override = _read_toml(path)
        _check(override, path)
        data = _merge(data, override)
        source_path = path
    else:
        source_path = base_path
    _check(data, source_path)
    latencies = {level: _latency(data["latency"][level], source_path, level) for level in LEVELS}
    counters = {role: _names(data["counters"][role], source_path, f"counters.{role}") for role in ROLES}
    metrics = {role: _names(data["metrics"][role], source_path, f"metrics.{role}") for role in METRIC_ROLES}
    frequency = data["frequency_ghz"]
    if isinstance(frequency, bool) or not isinstance(frequency, (int, float)) or not 0 < frequency < 100:
        raise InputError(source_path, f"frequency_ghz must be a clock in GHz, got {frequency!r}",
                         member="frequency_ghz")
    return MachineProfile(str(data.get("name", "")), str(data.get("description", "")), float(frequency), latencies,
                          counters, metrics, " + ".join(sources))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, f"is not valid TOML: {exc}") from None


_SCHEMA: dict[str, Any] = {"name": str, "description": str, "frequency_ghz": float,
                           "latency": dict.fromkeys(LEVELS, dict), "counters": dict.fromkeys(ROLES, list),
                           "metrics": dict.fromkeys(METRIC_ROLES, list)}


def _check(data: Mapping[str, Any], path: Path, schema: Mapping[str, Any] = _SCHEMA, prefix: str = "") -> None:
    for key, value in data.items():
        where = f"{prefix}{key}"
        if key not in schema:
            raise InputError(path, f"unknown key {where!r}; a profile has {', '.join(prefix + k for k in schema)}",
                             member=where)
        expected = schema[key]
        if isinstance(expected, dict):
            if not isinstance(value, dict):
                raise InputError(path, f"{where} must be a table", member=where)
            _check(value, path, expected, f"{where}.")
        elif expected is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(path, f"{where} must be a number, got {value!r}", member=where)
        elif not isinstance(value, expected):
            raise InputError(path, f"{where} must be a {expected.__name__}, got {value!r}", member=where)


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = _merge(base[key], value)
        else:
            out[key] = value
    return out


def _latency(table: Any, path: Path, level: str) -> Latency:
    where = f"latency.{level}"
    if not isinstance(table, dict) or len(table) != 1 or next(iter(table)) not in ("cycles", "ns"):
        raise InputError(path, f"{where} must be {{ cycles = N }} or {{ ns = N }}, got {table!r}", member=where)
    unit, value = next(iter(table.items()))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e6:
        raise InputError(path, f"{where}: {value!r} is not a latency (a number of {unit}, 0 or more)", member=where)
    return Latency(float(value), unit)


def _names(items: Any, path: Path, where: str) -> tuple[str, ...]:
    if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
        raise InputError(path, f"{where} must be a list of metric names", member=where)
    return tuple(i.strip() for i in items)


def normalise(name: str) -> str:
    """A metric name as profiles match it: lower case, perf modifiers (``:u``) and PMU prefixes dropped."""
    text = _MODIFIERS.sub("", name.strip())
    match = _PMU.match(text)
    if match:
        text = match.group(1)
    return _MODIFIERS.sub("", text).lower()


@dataclass(frozen=True)
class Source:
    """Where a role's values come from: ``plus`` minus ``minus`` metrics (``minus`` empty for one metric)."""

    plus: tuple[str, ...]
    minus: tuple[str, ...] = ()

    def text(self) -> str:
        text = " + ".join(self.plus)
        return text + "".join(f" - {m}" for m in self.minus)


def resolve(names: Sequence[str], candidates: Sequence[str], *, summed: bool = False) -> Source | None:
    """The first candidate the experiment's metric ``names`` can provide (all of them, summed, if ``summed``)."""
    by_name: dict[str, str] = {}
    for name in names:
        by_name.setdefault(normalise(name), name)
    found: list[str] = []
    for candidate in candidates:
        parts = [p.strip() for p in candidate.split(" - ")]
        actual = [by_name.get(normalise(p)) for p in parts]
        if any(a is None for a in actual):
            continue
        if len(actual) == 2:
            if not summed:
                return Source((actual[0],), (actual[1],))  # type: ignore[arg-type]
            continue
        if not summed:
            return Source((actual[0],))  # type: ignore[arg-type]
        found.append(actual[0])  # type: ignore[arg-type]
    return Source(tuple(found)) if found else None
