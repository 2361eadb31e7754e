"""Small parsing steps readers share: reading a file as text, peeking at its head, numbers.

Each step turns a failure into :class:`~pmkit.errors.InputError` naming the file (and the line
or member) so that readers never let a ``ValueError`` or ``UnicodeDecodeError`` escape.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from stat import S_ISREG
from typing import Any, BinaryIO

from pmkit.errors import InputError, excerpt
from pmkit.readers.limits import MAX_LINE_BYTES, MIB, Limits

HEAD_BYTES = 65536
"""How much of a file ``sniff`` methods look at: enough for a first line, cheap to read."""


CHUNK_BYTES = 4 * MIB
"""Plain input is read and parsed in pieces of about this size (whole lines)."""

BOM = b"\xef\xbb\xbf"


def open_input(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes; InputError in plain words if the system refuses."""
    try:
        return open(path, "rb")
    except OSError as exc:
        raise InputError.from_os_error(path, exc) from None


def text_chunks(path: Path, limits: Limits, *, max_line: int | None = MAX_LINE_BYTES,
                size: int | None = None) -> Iterator[tuple[int, bytes]]:
    """``path`` as pieces of whole lines: (number of the piece's first line, UTF-8 bytes).

    Newlines are normalised to ``\\n`` (``\\r\\n`` and a lone ``\\r`` end a line, as Python's
    universal newlines do), a leading UTF-8 BOM is dropped, and the file is refused — with
    InputError naming the line — when it holds a NUL byte (binary data, or an endless ``/dev/zero``),
    is not UTF-8, has a line longer than ``max_line`` bytes, or grows beyond ``limits.input_bytes``.
    Memory stays within a piece and a line, whatever the input is.
    """
    with open_input(path) as file:
        try:
            yield from _pieces(path, file, limits.input_bytes, max_line, size or CHUNK_BYTES)
        except OSError as exc:
            raise InputError.from_os_error(path, exc) from None


def _pieces(path: Path, file: BinaryIO, limit: int, max_line: int | None, size: int) -> Iterator[tuple[int, bytes]]:
    stat = os.fstat(file.fileno())
    if S_ISREG(stat.st_mode) and stat.st_size > limit:
        raise InputError(path, f"is {stat.st_size / MIB:,.0f} MiB, more than the max_input_mb limit of "
                         f"{limit // MIB:,} MiB (raise it with -R max_input_mb=N)")
    line, total, carry, held, data, at_end = 1, 0, b"", b"", b"", False
    while len(data) < len(BOM) and not at_end:  # a BOM is dropped, even when the first reads are tiny
        more = file.read(size)
        data, at_end = data + more, not more
    data = data.removeprefix(BOM)
    while True:
        total += len(data)
        if total > limit:
            raise InputError(path, f"is longer than the max_input_mb limit of {limit // MIB:,} MiB (an endless "
                             "stream?); raise it with -R max_input_mb=N")
        nul = data.find(b"\0")
        if nul >= 0:
            where = line + carry.count(b"\n") + data.count(b"\n", 0, nul)
            raise InputError(path, "holds a NUL byte: binary data, not text", line=where)
        data, held = held + data, b""
        if data.endswith(b"\r") and not at_end:  # a \r\n may be split between two reads
            data, held = data[:-1], b"\r"
        if b"\r" in data:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = carry + data if carry else data
        cut = len(buffer) if at_end else buffer.rfind(b"\n") + 1
        if cut > 0:
            piece = buffer[:cut]
            if not piece.isascii():
                _check_utf8(path, piece, line)
            yield line, piece
            line += piece.count(b"\n")
        carry = buffer[cut:]
        if max_line is not None and len(carry) > max_line:
            raise InputError(path, f"has a line longer than {max_line // MIB} MiB", line=line)
        if at_end:
            return
        data = file.read(size)
        at_end = not data


def _check_utf8(path: Path, piece: bytes, line: int) -> None:
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, "is not UTF-8 text (a byte cannot be decoded)",
                         line=line + piece.count(b"\n", 0, exc.start)) from None


def read_text(path: Path, limits: Limits | None = None, *, max_line: int | None = None) -> str:
    """The whole file as text with newlines normalised to ``\\n`` (a UTF-8 BOM dropped), within
    ``limits``; InputError if it cannot be read or is not text (see :func:`text_chunks`)."""
    return "".join(piece.decode("utf-8") for _, piece in text_chunks(path, limits or Limits(), max_line=max_line))


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
        raise InputError(path, f"{what}: {excerpt(token)} is not a number", line=line, member=member) from None
    if math.isinf(value):
        raise InputError(path, f"{what}: {excerpt(token)} is not a finite number", line=line, member=member)
    return value


def json_number(value: Any, path: Path, what: str, *, line: int | None = None, member: str | None = None,
                allow_strings: bool = False) -> float:
    """A JSON number (or, with ``allow_strings``, a numeric string) as a finite float or NaN.

    Booleans, nulls, lists and objects are rejected with InputError naming ``what``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(path, f"{what}: expected a number, got {_describe(value)}", line=line, member=member)
    if isinstance(value, str) and not allow_strings:
        raise InputError(path, f"{what}: expected a number, got the string {excerpt(value)}", line=line,
                         member=member)
    if isinstance(value, str):
        return parse_float(value, path, what, line=line, member=member)
    try:
        number = float(value)
    except OverflowError:
        raise InputError(path, f"{what}: {excerpt(value)} is too large", line=line, member=member) from None
    if math.isinf(number):
        raise InputError(path, f"{what}: {excerpt(value)} is not a finite number", line=line, member=member)
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
    except ValueError:  # Python refuses integers of more than 4,300 digits
        raise InputError(path, "is not usable JSON: it holds a number of more than 4,300 digits", line=line) from None


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return excerpt(value)
