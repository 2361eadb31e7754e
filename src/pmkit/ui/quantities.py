"""How pmkit's views write numbers: values with units and SI prefixes, shares, points, quality figures,
changes, severities, growth colours.

The only place numbers are formatted for people, so the terminal views, the model table, the
findings panel and the Markdown report agree.  A missing or non-finite number is ``–`` everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pmkit.names import printable

if TYPE_CHECKING:
    from pmkit.strong_scaling import Speedup

TIME_UNITS = {"s", "sec", "secs", "second", "seconds"}
SUBSECOND_UNITS = {"ms": 1e-3, "msec": 1e-3, "us": 1e-6, "usec": 1e-6, "µs": 1e-6, "ns": 1e-9, "nsec": 1e-9}
"""Time units of a fraction of a second (perf's ``task-clock`` is in msec): shown as seconds with a prefix."""
COUNT_UNITS = {"#", "occ", "count", "counts", "number", "visits", "calls"}
"""Units of counts: a count is written as a number with an SI prefix and no unit (``16.2 k``)."""
BYTE_UNITS = {"bytes", "byte", "b"}
"""Units of bytes: written with an SI prefix and ``B`` (``4.20 GB``)."""
_SMALL = ((1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"))
_LARGE = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))

GROWTH_STYLES = {0: "green", 1: "cyan", 2: "yellow", 3: "dark_orange", 4: "bold red"}
"""Colour of a growth class by level: constant/decreasing, logarithmic, sub-linear, linear, super-linear."""


def _digits(value: float, digits: int = 3) -> str:
    """``digits`` significant digits, as ``123``, ``12.3`` or ``1.23`` (``value`` is 1 to 999 after rounding)."""
    magnitude = abs(value)
    decimals = max(0, digits - 1 - (math.floor(math.log10(magnitude)) if magnitude > 0 else 0))
    return f"{value:.{decimals}f}"


def format_value(value: float | None, unit: str = "", digits: int = 3) -> str:
    """``0.01234, "s"`` → ``"12.3 ms"``; ``4.2e9, "bytes"`` → ``"4.20 GB"``; ``16200, "occ"`` → ``"16.2 k"``;
    NaN → ``"–"``.

    ``digits`` significant digits (three) with an SI prefix; seconds go down to ps and up to 99999 s, other units
    up to T.  A unit pmkit does not know is written after the number as it is.
    """
    if value is None or not math.isfinite(value):
        return "–"
    if unit.lower() in SUBSECOND_UNITS:
        value, unit = value * SUBSECOND_UNITS[unit.lower()], "s"
    value = float(f"{value:.{digits}g}")  # round first, so that 999.7 µs becomes 1.00 ms, not 1000 µs
    kind = unit.lower()
    if kind in COUNT_UNITS:
        unit = ""
    elif kind in BYTE_UNITS:
        unit = "B"
    unit = "s" if kind in TIME_UNITS else printable(unit)
    if value == 0:
        return f"0 {unit}".strip()
    magnitude = abs(value)
    if kind in TIME_UNITS:
        if magnitude >= 1e5:
            return f"{value:.{digits}g} s"
        for scale, prefix in _SMALL:
            if scale <= magnitude < scale * 1000:
                return f"{_digits(value / scale, digits)} {prefix}s"
        if magnitude >= 1:
            return f"{_digits(value, digits)} s"
        return f"{value:.2e} s"
    for scale, prefix in _LARGE:
        if magnitude >= scale:
            if magnitude >= scale * 1000:
                return f"{value:.{digits}g} {unit}".strip()
            return f"{_digits(value / scale, digits)} {prefix}{unit}".strip()
    number = f"{value:.{digits}g}"
    if "e" in number and magnitude >= 1:  # 150 to one digit is 1.5e+02: write it out
        number = _digits(value, digits)
    return f"{number} {unit}".strip()


def format_signed_value(value: float | None, unit: str = "") -> str:
    """A difference with its sign: ``+1.20 ms``, ``-38.9 ms``; zero as ``0 s``; NaN as ``–``."""
    text = format_value(value, unit)
    if value is None or not math.isfinite(value) or value == 0 or text.startswith("-"):
        return text
    return "+" + text


def format_tick(value: float, unit: str = "") -> str:
    """An axis label: the round value with as few digits as it needs (``1 ms``, ``2.5 ms``, ``276.5 ms``)."""
    digits = next((d for d in range(1, 7) if math.isclose(float(f"{value:.{d}g}"), value, rel_tol=1e-9)), 6)
    text = format_value(value, unit, max(digits, 1))
    number, _, rest = text.partition(" ")
    if "." in number and "e" not in number:
        number = number.rstrip("0").rstrip(".")
    return f"{number} {rest}".strip()


def format_share(share: float | None) -> str:
    """``0.4213`` → ``"42.1%"``; below 0.1 % → ``"<0.1%"``; NaN → ``"–"``."""
    if share is None or not math.isfinite(share):
        return "–"
    percent = share * 100
    if percent == 0:
        return "0%"
    if 0 < percent < 0.1:
        return "<0.1%"
    if percent >= 99.95:
        return f"{percent:.0f}%"
    return f"{percent:.1f}%"


def format_count(count: int, word: str) -> str:
    """``1 point``, ``7 points``: a count with its word, plural where it is not 1."""
    return f"{count} {word}" + ("" if count == 1 else "s")


def format_number(value: float) -> str:
    """A coordinate as written by a person: ``65536``, ``0.5``, ``1.2e+06``."""
    if not math.isfinite(value):
        return str(value)
    if float(value).is_integer() and abs(value) < 1e12:
        return str(int(value))
    return f"{value:.4g}"


def format_change_point(value: float) -> str:
    """A change point to three significant digits, written like a coordinate: ``98.5``, ``1010``."""
    return format_number(float(f"{value:.3g}")) if math.isfinite(value) else str(value)


def format_point(point: Mapping[str, float]) -> str:
    """``{"p": 512.0, "size": 30.0}`` → ``"p=512, size=30"``."""
    return ", ".join(f"{printable(name)}={format_number(v)}" for name, v in point.items())


def format_growth_factor(factor: float | None) -> str:
    """How many times larger at the target: ``×16``, ``×1.3``; NaN, and a negative factor (a negative
    prediction: no number of times), → ``"–"``."""
    if factor is None or not math.isfinite(factor) or factor < 0:
        return "–"
    if factor >= 100:
        return f"×{factor:.3g}" if factor < 1e5 else f"×{factor:.1e}"
    return f"×{factor:.2g}" if factor < 10 else f"×{factor:.0f}"


def format_figure(value: float | None, digits: int = 3, suffix: str = "") -> str:
    """A quality figure to ``digits`` significant digits: ``format_figure(2.0, suffix="%")`` → ``"2%"``."""
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}g}{suffix}"


def format_r2(value: float | None) -> str:
    """An (adjusted) R², four decimals: ``0.9987``."""
    return "–" if value is None or not math.isfinite(value) else f"{value:.4f}"


def format_change(value: float | None) -> str:
    """A relative difference with its sign: ``+1.2%``, ``-0.4%``; below 0.05 % ``0.0%``."""
    if value is None or not math.isfinite(value):
        return "–"
    if abs(value) < 0.0005:
        return "0.0%"
    return f"{value * 100:+.1f}%"


def format_spread(value: float | None) -> str:
    """Run-to-run spread (± of the mean): ``3.1%``."""
    return "–" if value is None or not math.isfinite(value) else f"{value * 100:.1f}%"


def format_severity(value: float, unit: str) -> str:
    """A finding's severity: a share (unit ``share``) as ``25.0%``, anything else as a value with its unit."""
    if unit == "share":
        return format_spread(value)
    return format_value(value, unit)


def format_cell(value: str | float, unit: str = "") -> str:
    """A cell of a contributed table: text as it is, a number with its unit (:func:`format_value`)."""
    if isinstance(value, str):
        return value
    return format_value(value, unit)


def growth_style(level: int | None) -> str:
    """The rich style of a growth level; dim when there is no model."""
    return "dim" if level is None else GROWTH_STYLES.get(level, "bold red")


def format_speedups(speedups: Sequence[Speedup]) -> str:
    """``×2.03 over p=32 (efficiency 50.8%) · ×24.7 over p=2 (38.6%)``; an upper bound is written ``≤×2.03``."""
    parts = []
    for n, s in enumerate(speedups):
        bound = "≤" if s.upper_bound else ""
        efficiency = f"{bound}{format_share(s.efficiency)}"
        factor = "–" if not math.isfinite(s.speedup) else f"×{_digits(s.speedup)}" if s.speedup < 1000 else \
            f"×{float(f'{s.speedup:.3g}'):.0f}" if s.speedup < 1e6 else f"×{s.speedup:.3g}"
        parts.append(f"{bound}{factor} over {format_point(s.baseline)} "
                     + (f"(efficiency {efficiency})" if n == 0 else f"({efficiency})"))
    return " · ".join(parts)
