"""The command line the example-study generators share: ``python -m pmkit.testing.MODULE [--FLAG] TARGET``.

The README's first commands run these generators (``example_study``, ``segmented_study``,
``trace_programs``, ``imbalance_study``); a user who tries ``--help`` on one must get help on
stdout with exit 0, not a study written into a folder named ``--help`` or a traceback.  The help
is the module docstring's paragraph about the command, without its reStructuredText markup and
wrapped at 80 columns.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from collections.abc import Sequence

HELP = ("-h", "--help")
_ROLE = re.compile(r":\w+:`~?([^`]+)`")
"""A Sphinx role such as :data:`PLANTED`; the help keeps its target's name."""


def help_text(module: str, operand: str, doc: str | None, flags: Sequence[str] = ()) -> str:
    """The usage line and the docstring's paragraph that describes the command (the one naming
    ``python -m``; else the first after the summary), as plain text wrapped at 80 columns."""
    usage = f"usage: python -m {module}{''.join(f' [--{flag}]' for flag in flags)} {operand}"
    paragraphs = [p.strip() for p in (doc or "").strip().split("\n\n")]
    start = next((i for i, p in enumerate(paragraphs) if "python -m" in p), 1)
    chosen = paragraphs[start:start + 1]
    if chosen and chosen[0].endswith(":") and start + 1 < len(paragraphs):  # the list it announces
        chosen.append(paragraphs[start + 1])
    blocks = []
    for paragraph in chosen:
        items = re.split(r"\n(?=[*-] )", paragraph)  # a bulleted list: one block per item
        for item in items:
            plain = " ".join(_ROLE.sub(r"\1", item).replace("``", "").split())
            bullet = plain[:2] if plain[:2] in ("* ", "- ") else ""
            blocks.append(textwrap.fill(plain, 80, subsequent_indent="  " if bullet else ""))
    return "\n\n".join([usage, *blocks]) if blocks else usage


def parse(argv: Sequence[str] | None, module: str, operand: str, doc: str | None,
          flags: Sequence[str] = ()) -> tuple[str, dict[str, bool]] | int:
    """``(target, {flag: given})``, or the exit code after printing help (0, on stdout) or the usage
    of a wrong command line (2, on stderr): one operand, flags named ``--flag``, nothing else."""
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in HELP for a in args):
        try:
            print(help_text(module, operand, doc, flags), flush=True)
        except BrokenPipeError:  # piped into head, which has left: what it read is what was asked
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    given = {flag: f"--{flag}" in args for flag in flags}
    rest = [a for a in args if a.lstrip("-") not in given or not a.startswith("--")]
    if len(rest) != 1 or rest[0].startswith("-"):
        print(help_text(module, operand, doc, flags), file=sys.stderr)
        return 2
    return rest[0], given
