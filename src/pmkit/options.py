"""Declared plugin options: name, type, default and help, parsed from ``--option name=value``.

Readers, modelers, priors and detectors declare their options as a tuple of :class:`Option` so
the CLI can list them, parse them with the right type, and reject unknown names and values out of
their declared range: a ``float`` option is always a finite number (``nan`` and ``inf`` are
refused), and ``minimum``/``maximum`` bound numeric options.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pmkit.errors import UsageError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Option:
    """One option a plugin accepts.  ``type`` is ``bool``, ``int``, ``float`` or ``str``.

    ``minimum`` and ``maximum`` (inclusive) bound an ``int`` or ``float`` option; ``choices`` lists
    the values a ``str`` option may take.
    """

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None

    def parse(self, text: str) -> Any:
        """Convert the text given on the command line to this option's type, or raise UsageError."""
        try:
            if self.type is bool:
                low = text.strip().lower()
                if low in _TRUE:
                    value: Any = True
                elif low in _FALSE:
                    value = False
                else:
                    raise ValueError(text)
            else:
                value = self.type(text)
        except ValueError:
            raise UsageError(f"option {self.name}: {text!r} is not a valid {self.type.__name__}") from None
        self.check(value)
        return value

    def check(self, value: Any) -> None:
        """Raise UsageError if ``value`` is outside the declared choices or range."""
        if self.choices is not None and value not in self.choices:
            raise UsageError(f"option {self.name}: {value!r} is not one of {', '.join(map(str, self.choices))}")
        if self.type not in (int, float) or isinstance(value, bool):
            return
        if self.type is float and not math.isfinite(value):
            raise UsageError(f"option {self.name}: {value!r} is not a finite number{self._range()}")
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            raise UsageError(f"option {self.name}: {value!r} is out of range{self._range()}")

    def _range(self) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f"; give a number from {_num(self.minimum)} to {_num(self.maximum)}"
        if self.minimum is not None:
            return f"; give a number of at least {_num(self.minimum)}"
        if self.maximum is not None:
            return f"; give a number of at most {_num(self.maximum)}"
        return ""


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """``["a=1", "b=x"]`` → ``{"a": "1", "b": "x"}``; raises UsageError on an item without ``=``."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--option expects name=value, got {item!r}")
        out[name.strip()] = value.strip()
    return out


def resolve_options(declared: Sequence[Option], given: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """Defaults overlaid by ``given``; strings are parsed, other values type-checked.

    Unknown names raise UsageError listing the options ``owner`` accepts.
    """
    by_name = {o.name: o for o in declared}
    unknown = [k for k in given if k not in by_name]
    if unknown:
        known = ", ".join(sorted(by_name)) or "none"
        raise UsageError(f"{owner} has no option {', '.join(unknown)}; its options: {known}")
    values = {o.name: o.default for o in declared}
    for name, value in given.items():
        option = by_name[name]
        if isinstance(value, str) and option.type is not str:
            value = option.parse(value)
        elif option.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        elif not isinstance(value, option.type):
            raise UsageError(f"option {name} of {owner} must be {option.type.__name__}, got {value!r}")
        option.check(value)
        values[name] = value
    return values
