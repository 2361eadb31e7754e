"""How a prediction's interval is shown: ``×5.8e3 [×40 … ×9e3]``, flagged where it spans more than 10×.

Small functions on purpose: the ranking and the call tree put them in their cells, and views that
change those columns (strong scaling's speed-up and efficiency) can call them the same way.
"""

from __future__ import annotations

import math

from rich.text import Text

from pmkit.intervals import WIDE, interval_ratio
from pmkit.scaling import CallpathScaling

WIDE_MARK = "?"
WIDE_NOTE = (f"{WIDE_MARK} the 90% interval spans more than {WIDE:g}×: the measurements fit laws that part company "
             "before the target (measure at larger scale, or more repetitions)")


def compact_factor(factor: float) -> str:
    """A growth factor in at most two significant digits: ``×1.3``, ``×40``, ``×5.8e3``; NaN → ``–``."""
    if not math.isfinite(factor):
        return "–" if math.isnan(factor) else "×∞"
    if factor <= 0:
        return f"×{factor:.2g}"
    if factor < 1000:
        return f"×{factor:.2g}" if factor < 100 else f"×{factor:.0f}"
    exponent = math.floor(math.log10(factor))
    mantissa = factor / 10 ** exponent
    if round(mantissa, 1) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"×{mantissa:.2g}e{exponent}"


def is_wide(row: CallpathScaling) -> bool:
    """Whether the row's interval at the target spans more than :data:`~pmkit.intervals.WIDE` times; a model
    negative at the target is not flagged (its ``!`` already says it does not hold there)."""
    if row.negative:
        return False
    ratio = float(interval_ratio([row.low], [row.high])[0])
    return ratio > WIDE  # NaN (no interval) is not wide; inf (it reaches 0) is


def growth_interval_text(row: CallpathScaling) -> Text:
    """The growth factor with its interval, ``×5.8e3 [×40 … ×9e3]``; the interval yellow and marked when wide,
    dim otherwise; the factor alone without an interval, or where the interval shows the same digits."""
    text = Text(compact_factor(row.growth))
    if interval_shown(row):
        wide = is_wide(row)
        text.append(f" [{compact_factor(row.growth_low)} … {compact_factor(row.growth_high)}]",
                    style="yellow" if wide else "dim")
        if wide:
            text.append(WIDE_MARK, style="bold yellow")
    return text


def interval_shown(row: CallpathScaling) -> bool:
    """Whether :func:`growth_interval_text` shows ``row``'s interval: known, and not the factor's own digits
    (as sure as the digits shown)."""
    low, high = row.growth_low, row.growth_high
    if compact_factor(low) == compact_factor(high) == compact_factor(row.growth):
        return False
    return math.isfinite(low) and math.isfinite(high)


def mark_wide(cell: Text, row: CallpathScaling) -> Text:
    """``cell`` (a prediction) with the wide-interval mark appended where the row's interval is wide."""
    if is_wide(row):
        cell.append(WIDE_MARK, style="bold yellow")
    return cell
