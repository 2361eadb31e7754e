"""Per-call-path constraints on a model's search space, as priors produce and modelers obey.

A constraint says which parameters may appear in a call path's model, which groups of them may
multiply (parameters in different groups only add), or that the model is constant.  ``None`` in a
field means "no constraint from this prior".
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Constraint:
    """What a prior allows for one call path; ``source`` names the prior, ``reason`` says why."""

    constant: bool = False
    allowed: frozenset[str] | None = None
    groups: tuple[frozenset[str], ...] | None = None
    source: str = ""
    reason: str = ""

    def __post_init__(self) -> None:
        # accept plain sets and lists from callers; keep the constraint hashable and immutable
        if self.allowed is not None:
            object.__setattr__(self, "allowed", frozenset(self.allowed))
        if self.groups is not None:
            object.__setattr__(self, "groups", tuple(frozenset(g) for g in self.groups))

    def allows(self, parameter: str) -> bool:
        """Whether ``parameter`` may appear in the model at all."""
        if self.constant:
            return False
        return self.allowed is None or parameter in self.allowed

    def may_multiply(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` may share a term; without groups any allowed pair may."""
        if not (self.allows(a) and self.allows(b)):
            return False
        if self.groups is None:
            return True
        return any(a in g and b in g for g in self.groups)

    def note(self) -> str:
        """A one-line description for a model's notes."""
        if self.constant:
            what = "constant"
        elif self.allowed is not None and self.groups is not None:
            groups = " + ".join("·".join(sorted(g)) for g in self.groups if g & (self.allowed or g))
            what = f"parameters {{{', '.join(sorted(self.allowed))}}}, combined as {groups or 'constant'}"
        elif self.allowed is not None:
            what = f"parameters {{{', '.join(sorted(self.allowed))}}}"
        elif self.groups is not None:
            what = f"parameters combined as {' + '.join('·'.join(sorted(g)) for g in self.groups)}"
        else:
            what = "unconstrained"
        text = f"{what} by {self.source or 'prior'}"
        return f"{text} ({self.reason})" if self.reason else text
