"""Small parsing steps readers share: reading a file as text, peeking at its head, numbers.

Each step turns a failure into :class:`~pmkit.errors.InputError` naming the file (and the line
or member) so that readers never let a ``ValueError`` or ``UnicodeDecodeError`` escape.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pmkit.errors import InputError

HEAD_BYTES = 65536
"""How much of a file ``sniff`` methods look at: enough for a first line, cheap to read."""


def read_text(path: Path) -> str:
    """The whole file as text with newlines normalised to ``\\n`` (a UTF-8 BOM dropped); InputError if unreadable."""
    try:
        with open(path, encoding="utf-8-sig", newline=None) as file:
            return file.read()
    except UnicodeDecodeError as exc:
        raise InputError(path, f"is not UTF-8 text (byte {exc.start} cannot be decoded)") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, not a file") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None


def read_head(path: Path, size: int = HEAD_BYTES) -> str | None:
    """The first ``size`` bytes as text (undecodable bytes replaced), or None if unreadable."""
    try:
        if not path.is_file():
            return None
        with open(path, "rb") as file:
            data = file.read(size)
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


def first_content_line(text: str) -> str | None:
    """The first line that is neither blank nor a ``#`` comment, stripped; None if there is none."""
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped
    return None


def parse_float(token: str, path: Path, what: str, *, line: int | None = None, member: str | None = None) -> float:
    """``token`` as a float (NaN allowed and kept as a missing value); InputError naming ``what``.

    Infinite values are rejected: no performance measurement is infinite, and one would poison
    every fit it touches.
    """
    try:
        value = float(token)
    except (ValueError, OverflowError):
        raise InputError(path, f"{what}: {token!r} is not a number", line=line, member=member) from None
    if math.isinf(value):
        raise InputError(path, f"{what}: {token!r} is not a finite number", line=line, member=member)
    return value


def json_number(value: Any, path: Path, what: str, *, line: int | None = None, member: str | None = None,
                allow_strings: bool = False) -> float:
    """A JSON number (or, with ``allow_strings``, a numeric string) as a finite float or NaN.

    Booleans, nulls, lists and objects are rejected with InputError naming ``what``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(path, f"{what}: expected a number, got {_describe(value)}", line=line, member=member)
    if isinstance(value, str) and not allow_strings:
        raise InputError(path, f"{what}: expected a number, got the string {value!r}", line=line, member=member)
    if isinstance(value, str):
        return parse_float(value, path, what, line=line, member=member)
    try:
        number = float(value)
    except OverflowError:
        raise InputError(path, f"{what}: {value} is too large", line=line, member=member) from None
    if math.isinf(number):
        raise InputError(path, f"{what}: {value} is not a finite number", line=line, member=member)
    return number


def load_json(text: str, path: Path, *, line: int | None = None) -> Any:
    """Parse JSON text; InputError with the decoder's position (or ``line``) if it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = line if line is not None else exc.lineno
        raise InputError(path, f"is not valid JSON: {exc.msg} (column {exc.colno})", line=where) from None
    except RecursionError:
        raise InputError(path, "is not usable JSON: it is nested too deeply", line=line) from None


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return repr(value)
