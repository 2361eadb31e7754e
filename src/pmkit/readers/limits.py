"""How much a reader takes in before it refuses: input size, line length, inflated size, ratio.

A plain file is as large as it is, but a stream is endless (``/dev/zero``) and a compressed member
names no honest size: a 1.5 MB ``.cubex`` whose anchor is gzip of 1.5 GiB of blanks once took 3 GB
of memory.  So readers read plain input in pieces up to ``max_input_mb``, refuse a line longer
than :data:`MAX_LINE_BYTES`, and inflate compressed members as a stream, refusing — in one line,
before memory grows — a member that would inflate beyond ``max_inflated_mb`` or, once it is past
:data:`RATIO_FLOOR`, to more than ``max_ratio`` times the compressed bytes it came from.  Cube data
members inflate to exactly the size their index announces, never beyond.  The limits are reader
options (``-R max_inflated_mb=4096``); ``docs/limits.md`` lists them and what each refusal says.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pmkit.options import Option

MIB = 1 << 20

MAX_INPUT_MB = 4096
"""Largest plain input read (MiB).  A text file of a million call paths at five points is ~130 MB."""

MAX_INFLATED_MB = 1024
"""Largest size one compressed member may inflate to (MiB).  Real Cube anchors and Extra-P
experiment JSON are kilobytes to a few hundred megabytes."""

MAX_RATIO = 100.0
"""Largest compression ratio of a member once it has inflated past :data:`RATIO_FLOOR`.  Measured
on the shared real files: Cube anchors inflate 4×, an Extra-P experiment.json 10×; gzip of blanks
inflates ~1000×, zlib at most ~1032×."""

RATIO_FLOOR = 16 * MIB
"""Below this inflated size the ratio is not checked: small members of zeros are harmless."""

MAX_LINE_BYTES = 64 * MIB
"""Longest line of a line-based format (Extra-P text, JSON Lines, Talpas)."""

PIECE = 1 * MIB
"""Bytes inflated or read per step."""

MAX_INPUT_OPTION = Option("max_input_mb", int, MAX_INPUT_MB, "largest input read, in MiB; a longer file or "
                          "stream is refused", minimum=1)
MAX_INFLATED_OPTION = Option("max_inflated_mb", int, MAX_INFLATED_MB, "largest size a compressed member may "
                             "inflate to, in MiB; a larger one is refused", minimum=1)
MAX_RATIO_OPTION = Option("max_ratio", float, MAX_RATIO, "largest compression ratio of a member that inflates "
                          f"past {RATIO_FLOOR // MIB} MiB; a higher one is refused as a decompression bomb",
                          minimum=1.0)


class LimitError(Exception):
    """Input refused because it exceeds a limit; the message says which and how to raise it."""


@dataclass(frozen=True)
class Limits:
    """The limits of one read, in bytes (and the ratio)."""

    input_bytes: int = MAX_INPUT_MB * MIB
    inflated_bytes: int = MAX_INFLATED_MB * MIB
    ratio: float = MAX_RATIO

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Limits:
        """The limits a reader's resolved options give (defaults where an option is absent)."""
        return cls(int(options.get(MAX_INPUT_OPTION.name, MAX_INPUT_MB)) * MIB,
                   int(options.get(MAX_INFLATED_OPTION.name, MAX_INFLATED_MB)) * MIB,
                   float(options.get(MAX_RATIO_OPTION.name, MAX_RATIO)))


def _mib(size: int) -> str:
    return f"{size / MIB:,.0f} MiB" if size >= MIB else f"{size:,} bytes"


def inflate(read: Callable[[int], bytes], compressed_size: int, limits: Limits, *, wbits: int = zlib.MAX_WBITS,
            budget: int | None = None) -> bytes:
    """Inflate one zlib (``wbits=15``) or gzip (``wbits=31``) stream read from ``read``, within limits.

    At most ``compressed_size`` bytes are read.  With ``budget`` the stream may inflate to at most
    that many bytes (a Cube data chunk, whose size the index fixes) and is cut off one byte beyond
    it; otherwise the size and ratio limits apply.  Concatenated gzip members are joined, as
    ``gzip.decompress`` does.  Raises :class:`LimitError` beyond a limit and ``zlib.error`` or
    ``EOFError`` for damaged or truncated data; memory never exceeds the limit by more than a piece.
    """
    cap = budget if budget is not None else limits.inflated_bytes
    out = bytearray()
    left = compressed_size
    consumed = 0
    stream = zlib.decompressobj(wbits)
    pending = b""
    while True:
        if not pending and left > 0:
            pending = read(min(PIECE, left))
            left = left - len(pending) if pending else 0
            consumed += len(pending)
        piece = stream.decompress(pending, min(PIECE, cap + 1 - len(out)))
        out += piece
        pending = stream.unconsumed_tail
        if budget is None:
            _check(len(out), consumed - len(pending), limits)
        elif len(out) > budget:
            raise LimitError(f"inflates to more than the {budget:,} bytes its index announces")
        if stream.eof:
            rest = stream.unused_data + pending
            if wbits > zlib.MAX_WBITS and rest[:2] == b"\x1f\x8b":  # another gzip member follows
                stream, pending = zlib.decompressobj(wbits), rest
                continue
            break
        if not piece and not pending and left <= 0:
            break
    if not stream.eof:
        raise EOFError("compressed data ends before its end marker")
    return bytes(out)


def read_inflating(read: Callable[[int], bytes], consumed: Callable[[], int], limits: Limits) -> bytes:
    """Read a stream that inflates as it goes (a zip member) to its end, within the size and ratio
    limits; ``consumed`` tells how many compressed bytes it has used so far.  Read in pieces, so
    memory never exceeds a limit by more than a piece."""
    out = bytearray()
    while True:
        piece = read(min(PIECE, limits.inflated_bytes + 1 - len(out)))
        if not piece:
            return bytes(out)
        out += piece
        _check(len(out), consumed(), limits)


def _check(inflated: int, consumed: int, limits: Limits) -> None:
    if inflated > limits.inflated_bytes:
        raise LimitError(f"inflates to more than {_mib(limits.inflated_bytes)} (the max_inflated_mb limit; raise "
                         "it with -R max_inflated_mb=N if the file is genuine)")
    if inflated > RATIO_FLOOR and inflated > limits.ratio * max(consumed, 1):
        raise LimitError(f"inflates more than {limits.ratio:g} times its compressed size: a decompression bomb, "
                         "not a measurement (raise the max_ratio limit with -R max_ratio=N if the file is genuine)")
