"""Declared plugin options: name, type, default and help, parsed from ``-O name=value`` and friends.

Readers, modelers, priors and detectors declare their options as a tuple of :class:`Option` so
the CLI can list them, parse them with the right type, and reject unknown names and values out of
their declared range: a ``float`` option is always a finite number (``nan`` and ``inf`` are
refused), and ``minimum``/``maximum`` bound numeric options.  The SDK resolves them once
(:func:`resolve_options`: parse, check, fill defaults) and calls the plugin with every declared
option; a plugin never parses or checks them again.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pmkit.errors import UsageError

PAIRS = "list of NAME=VALUE pairs separated by commas"
"""How the text form of a ``dict`` option is described in errors."""

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Option:
    """One option a plugin accepts.

    ``type`` is ``bool``, ``int``, ``float``, ``str`` or ``dict`` (names to names, given on the
    command line as ``a=b,c=d``).  ``minimum`` and ``maximum`` (inclusive) bound an ``int`` or
    ``float`` option; ``choices`` lists the values a ``str`` option may take (where they include ``true``
    and ``false``, it takes a bool too: :meth:`boolean_choice`).
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
            elif self.type is dict:
                value = parse_pairs(text)
            else:
                value = self.boolean_choice(self.type(text))
        except ValueError:
            what = PAIRS if self.type is dict else f"valid {self.type.__name__}"
            raise UsageError(f"option {self.name}: {text!r} is not a {what}") from None
        self.check(value)
        return value

    def boolean_choice(self, value: Any) -> Any:
        """A ``str`` option whose choices include ``true`` and ``false`` (``hedge``: ``auto``, ``true``, ``false``)
        reads a bool, and a word a ``bool`` option reads (``yes``, ``on``, ``0``…), as one of those two; any other
        value as it is."""
        if self.type is not str or not self.choices or not {"true", "false"} <= set(self.choices):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return "true" if value.strip().lower() in _TRUE else "false"
        return value

    def text(self, value: Any) -> str:
        """``value`` as it is written on the command line, so that what ``pmkit plugins --options``
        shows can be typed back: ``true``/``false``, ``a=b,c=d`` for a ``dict``, ``''`` for an empty
        string (Python's ``True`` or ``{'size': 'n'}`` are not what ``parse`` reads)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, dict):
            return ",".join(f"{k}={v}" for k, v in value.items()) or "''"
        if isinstance(value, str):
            return value or "''"
        return _num(value) if isinstance(value, float) else str(value)

    def check(self, value: Any) -> None:
        """UsageError unless ``value`` (already of this option's type) is allowed."""
        if self.type is dict and not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise UsageError(f"option {self.name}: {value!r} must map names to names")
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


def parse_assignments(items: Iterable[str], flag: str = "-O") -> dict[str, str]:
    """``["a=1", "b=x"]`` → ``{"a": "1", "b": "x"}``; UsageError naming ``flag`` on an item without ``=``."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"{flag} expects NAME=VALUE, got {item!r}")
        out[name.strip()] = value.strip()
    return out


def parse_pairs(text: str) -> dict[str, str]:
    """``"size=n, p=ranks"`` → ``{"size": "n", "p": "ranks"}``: the text form of a ``dict`` option."""
    out: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(item.strip())
        out[name.strip()] = value.strip()
    return out


def with_defaults(declared: Sequence[Option], given: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """The declared defaults overlaid by ``given``, for a plugin method called directly.

    The SDK always passes every declared option, resolved; this fills in the rest for code that
    calls a plugin object itself (tests, notebooks) and refuses names ``owner`` does not declare,
    without parsing or checking values again.
    """
    _check_names(declared, given, owner)
    return {**{o.name: o.default for o in declared}, **given}


def _check_names(declared: Sequence[Option], given: Mapping[str, Any], owner: str) -> None:
    names = {o.name for o in declared}
    unknown = [k for k in given if k not in names]
    if unknown:
        known = ", ".join(sorted(names)) or "none"
        raise UsageError(f"{owner} has no option {', '.join(unknown)}; its options: {known}")


def route_options(owners: Mapping[str, Sequence[Option]], given: Mapping[str, Any], kind: str) -> dict[str, dict]:
    """Split options among several plugins of one ``kind``: ``{owner: {option: value}}``.

    ``name=value`` goes to every owner declaring ``name``; ``owner.name=value`` to that owner only.
    An option no owner declares, or an owner that is not among ``owners``, is a UsageError: an
    option is never dropped silently.
    """
    out: dict[str, dict] = {owner: {} for owner in owners}
    for key, value in given.items():
        owner, dot, name = key.rpartition(".")
        if dot:
            if owner not in owners:
                selected = ", ".join(owners) or "none"
                raise UsageError(f"option {key}: no {kind} named {owner!r} runs (running: {selected})")
            out[owner][name] = value
            continue
        takers = [o for o, declared in owners.items() if any(d.name == key for d in declared)]
        if not takers:
            known = sorted({f"{o}.{d.name}" for o, declared in owners.items() for d in declared}) or ["none"]
            raise UsageError(f"no {kind} that runs has an option {key}; their options: {', '.join(known)}")
        for owner in takers:
            out[owner][key] = value
    return out


def resolve_options(declared: Sequence[Option], given: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """Defaults overlaid by ``given``; strings are parsed, other values type-checked.

    Unknown names raise UsageError listing the options ``owner`` accepts.
    """
    _check_names(declared, given, owner)
    by_name = {o.name: o for o in declared}
    values = {o.name: o.default for o in declared}
    for name, value in given.items():
        option = by_name[name]
        value = option.boolean_choice(value)
        if isinstance(value, str) and option.type is not str:
            value = option.parse(value)
        elif option.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        elif not isinstance(value, option.type):
            what = f"one of {', '.join(map(str, option.choices))}" if option.choices else option.type.__name__
            raise UsageError(f"option {name} of {owner} must be {what}, got {value!r}")
        option.check(value)
        values[name] = value
    return values
