"""How region and call path names are shown to people: short C++ names, control characters made visible.

Score-P records C++ functions by their demangled signature, ``void CalcAccelerationForNodes(Domain&,
Index_t)`` or ``std::vector<double>::operator[](unsigned long)``; a view shows each by its short name
(:func:`short_name`: the function without namespace, return type and parameters), telling overloads
apart where siblings would otherwise look alike (:func:`display_names`), and shows a name whole only
where asked (``--full-names``, the detail view, JSON).  Every name from an input passes through
:func:`printable` on its way to a terminal or a Markdown report, so an escape sequence hidden in a
region name is shown, not obeyed; JSON keeps names exactly as read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pmkit.experiment import CALLPATH_SEPARATOR, CallTree

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")


UNNAMED_METRIC = "(unnamed)"
"""How views name a metric its file leaves unnamed (an Extra-P text file without a ``METRIC`` line)."""


def metric_name(name: str) -> str:
    """A metric's name as views print it: :func:`printable`, and :data:`UNNAMED_METRIC` for the empty name, which
    would otherwise leave a blank in a table column or a caption (" is exclusive")."""
    return printable(name) if name else UNNAMED_METRIC


def printable(text: str) -> str:
    """``text`` with every control character written as an escape (``\\x1b``, ``\\u202e``).

    Control characters (C0, DEL, C1) and Unicode bidirectional overrides would otherwise move the
    cursor, recolour or retitle the terminal, or reorder what is shown; a tab or newline in a name
    is shown as ``\\t``/``\\n`` too, so that one name stays one line.  A lone surrogate — a byte of a file
    name that is not UTF-8, as Python keeps it — is shown as that byte (``\\xff``): the terminal cannot encode
    it, and printing it raised UnicodeEncodeError.
    """
    if not _UNSAFE.search(text):
        return text
    return _UNSAFE.sub(lambda m: _escape(m.group()), text)


def _escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's surrogate escape of the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return {"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(char, f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


TEMPLATE_ARGUMENTS = 10
"""Template arguments up to this many characters stay in a short name (``Dot<double>``); longer
ones are written ``<…>`` (``sort<…>``), and told apart from a sibling only when one has the same
short name."""

_QUALIFIER = re.compile(r"^(.*\S)\s*(?:\bconst|\bvolatile|&&|&|\bnoexcept|\boverride|\bfinal|\bthrow\s*\(\s*\))$", re.S)
_CLONE = re.compile(r"\s*\[clone [^\]]*\]$")
_ABI = re.compile(r"\[abi:[^\]]*\]")
_OPERATORS = ("new[]", "delete[]", "new", "delete", "co_await", "()", "[]", "->*", "->", "<=>", "<<=", ">>=",
              "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=",
              "&=", "|=", "+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">", ",")
_OPENING, _CLOSING = "<([{", ">)]}"
_LAMBDA = re.compile(r"^\{lambda\(.*\)#(\d+)\}$")


def short_name(name: str, *, parameters: bool = False) -> str:
    """The function's name without namespace, return type and parameters: what people call it.

    ``void CalcForceForNodes(Domain&)`` → ``CalcForceForNodes``; ``std::vector<int>::operator[](unsigned
    long)`` → ``vector<int>::operator[]`` (an operator, constructor or destructor keeps its class);
    ``Real_t Dot<double>(double const*)`` → ``Dot<double>``.  Names that are not C++ signatures
    (``MPI_Allreduce``, ``!$omp parallel @lulesh.cc:42``) stay as they are; so does anything this
    cannot parse.  ``parameters`` keeps the parameter list, to tell overloads apart.
    """
    if "(" not in name and "::" not in name:
        return name
    try:
        return _short(name, parameters)
    except ValueError:
        return name


def _short(name: str, keep_parameters: bool) -> str:
    text = _strip_qualifiers(_ABI.sub("", _CLONE.sub("", name.strip())))
    head, params = text, ""
    if text.endswith(")"):
        start = matching_open(text, len(text) - 1)
        if start < 0:
            raise ValueError(name)
        if not re.search(r"\boperator\s*$", text[:start]):
            head, params = text[:start].rstrip(), text[start:]
    if not params and _last_space(head) >= 0:
        return name  # words without a parameter list: not a C++ signature (an OpenMP region, say)
    components = _split_scopes(_unqualified(head))
    own = components[-1]
    if not own or own.startswith("("):
        raise ValueError(name)
    scope = components[-2] if len(components) > 1 else ""
    base_scope = scope.split("<")[0]
    if scope and (own.startswith("operator") or own in (base_scope, "~" + base_scope)):
        return f"{_lambda(_template(scope))}::{own}" + (params if keep_parameters else "")
    short = own if own.startswith("operator") else _template(own)
    return short + params if keep_parameters else short


def _strip_qualifiers(text: str) -> str:
    """``f(int) const &`` → ``f(int)``; text that does not end in a parameter list stays as it is."""
    stripped = text
    while (match := _QUALIFIER.match(stripped)) is not None:
        stripped = match.group(1).rstrip()
    return stripped if stripped.endswith(")") else text


def matching_open(text: str, close: int) -> int:
    """The index of the ``(`` matching the ``)`` at ``close``; -1 when there is none."""
    depth = 0
    for i in range(close, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _operator_end(text: str, i: int) -> int | None:
    """Where the operator starting with the keyword at ``i`` ends; None if ``operator`` is part of a word."""
    end = i + len("operator")
    if (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")) or (
            end < len(text) and (text[end].isalnum() or text[end] == "_")
            and not text[end:].startswith(("new", "delete", "co_await"))):
        return None
    rest = text[end:].lstrip()
    offset = len(text) - len(rest)
    for symbol in _OPERATORS:
        if rest.startswith(symbol):
            return offset + len(symbol)
    if rest.startswith('""'):
        return offset + 2 + len(re.match(r"\s*\w*", rest[2:]).group())  # type: ignore[union-attr]
    return len(text)  # a conversion operator: its type runs to the end


def _split_scopes(text: str) -> list[str]:
    """``text`` split at ``::`` outside brackets, with an operator's symbol kept whole."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text.startswith("operator", i) and (stop := _operator_end(text, i)) is not None:
            i = stop
            continue
        char = text[i]
        if char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            depth -= 1
        elif depth == 0 and text.startswith("::", i):
            parts.append(text[start:i])
            start = i + 2
            i += 2
            continue
        i += 1
    if depth != 0:
        raise ValueError(text)
    parts.append(text[start:])
    return parts


def _last_space(text: str) -> int:
    """The index of the last space outside brackets (before an operator keyword, if there is one)."""
    depth, last, i = 0, -1, 0
    while i < len(text):
        if text.startswith("operator", i) and _operator_end(text, i) is not None:
            return last
        char = text[i]
        if char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            depth -= 1
        elif char == " " and depth == 0:
            last = i
        i += 1
    return last


def _unqualified(head: str) -> str:
    """A signature's name without the return type before it (``Real_t* ns::Dot<double>`` → ``ns::Dot<double>``)."""
    return head[_last_space(head) + 1:].lstrip("*&").strip()


def _template(name: str) -> str:
    """``name<args>`` with long arguments written ``<…>``."""
    if not name.endswith(">") or "<" not in name:
        return name
    start = name.index("<")
    if len(name) - start - 2 > TEMPLATE_ARGUMENTS:
        return name[:start] + "<…>"
    return name


def _lambda(scope: str) -> str:
    match = _LAMBDA.match(scope)
    return f"{{lambda#{match.group(1)}}}" if match else scope


def display_names(tree: CallTree, *, full: bool = False) -> list[str]:
    """Per call tree node, the name a view shows: short (see :func:`short_name`), printable.

    Siblings whose short names coincide (overloads, or one function in two namespaces) keep their
    parameter lists, and their full names where even those coincide; ``full`` shows every name whole.
    """
    if full:
        return [printable(node.name) for node in tree]
    names = [short_name(node.name) for node in tree]
    seen: dict[tuple[int | None, str], list[int]] = {}
    for node in tree:
        seen.setdefault((node.parent, names[node.index]), []).append(node.index)
    for group in seen.values():
        if len({tree[i].name for i in group}) < 2:
            continue
        longer = {i: short_name(tree[i].name, parameters=True) for i in group}
        for i in group:
            clash = sum(longer[j] == longer[i] for j in group) > 1
            names[i] = tree[i].name if clash else longer[i]
    return [printable(name) for name in names]


def display_path(tree: CallTree, index: int, names: Sequence[str]) -> str:
    """The call path of node ``index`` in display names: ``main->LagrangeLeapFrog->CalcForceForNodes``."""
    parts = []
    node: int | None = index
    while node is not None:
        parts.append(names[node])
        node = tree[node].parent
    return CALLPATH_SEPARATOR.join(reversed(parts))
