"""Region names reduced to the forms a prior's function tables use, for matching call paths.

Score-P names C++ regions by their demangled signature (``Grid::update(double)``, sometimes with a
return type for templates), while a prior may key functions by mangled name, by full demangled
signature or by bare name.  These helpers give the qualified name without arguments and the base
name without namespaces, so matching can fall back from exact to looser forms.
"""

from __future__ import annotations

from pmkit.names import matching_open

_QUALIFIERS = ("const", "volatile", "noexcept", "&", "&&", "override", "final")


def qualified_name(name: str) -> str:
    """``void ns::f<int>(int*, char const*) const`` → ``ns::f<int>``; plain names pass unchanged."""
    text = name.strip()
    text = _strip_trailing_qualifiers(text)
    if text.endswith(")"):
        start = matching_open(text, len(text) - 1)
        if start > 0:
            text = text[:start].rstrip()
    return _last_top_level_token(text)


def base_name(name: str) -> str:
    """``void ns::Grid::update(double)`` → ``update``: the qualified name after its last ``::``."""
    qualified = qualified_name(name)
    depth = 0
    cut = 0
    i = 0
    while i < len(qualified):
        ch = qualified[i]
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif depth == 0 and qualified.startswith("::", i):
            cut = i + 2
            i += 1
        i += 1
    return qualified[cut:]


def _strip_trailing_qualifiers(text: str) -> str:
    changed = True
    while changed:
        changed = False
        for q in _QUALIFIERS:
            if text.endswith(q) and text[: -len(q)].rstrip().endswith(")"):
                text = text[: -len(q)].rstrip()
                changed = True
    return text


def _last_top_level_token(text: str) -> str:
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0:
            start = i + 1
    token = text[start:]
    return token.lstrip("*&") or text
