"""The ``taint`` prior: Perf-Taint's analysis as per-call-path constraints, findings and filters.

Following Perf-Taint (``papers/002_…`` §4.5, §6): a function no registered parameter reaches is
modeled constant; parameters that cannot reach a function leave its search space; parameters in
separate dependency sets only add, within a set they may multiply.  Functions Perf-Taint marks
unimportant (instrumented, but no registered parameter seen at run time) are left to the data by
default, since the taint run may simply not have executed them.  :func:`contradictions` reports
where the measurements show growth the code cannot cause (the paper's LULESH contention study), and
:func:`score_p_filter` writes a Score-P filter keeping only the functions a parameter reaches.

On the command line, ``pmkit show DIR --prior taint.json --prior-map size=n`` loads this prior
through the registry with ``map={"size": "n"}``; ``pmkit taint-filter taint.json`` prints the loaded
knowledge's :meth:`TaintKnowledge.score_p_filter`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pmkit.constraints import Constraint
from pmkit.errors import InputError, UsageError, excerpt
from pmkit.experiment import Experiment
from pmkit.findings import Finding
from pmkit.fitting.leastsquares import smape
from pmkit.hookspecs import hookimpl
from pmkit.models import Model, ModelSet
from pmkit.options import Option, with_defaults
from pmkit.priors.region_names import base_name, qualified_name
from pmkit.priors.taint_json import (
    CONSTANT,
    PARAMETRIC,
    PRUNED,
    STATUS_TEXT,
    UNIMPORTANT,
    Monomial,
    TaintAnalysis,
    TaintFunction,
    read_taint,
)

SOURCE = "taint"

MAX_CV = 0.1
"""Data good enough to contradict the analysis: every point's repetitions vary by at most 10 %
(coefficient of variation), the paper's cut-off for reliable functions (§6, noise resilience)."""

MARGIN = 3.0
"""How many noise floors the constrained model's SMAPE must exceed the unconstrained one's by.
The noise floor is the SMAPE a correct model reaches on the repetition means (√(2/π)·CV/√r).
Measured with ``bench/taint_prior.py`` (p study, 5 % noise, 5 repetitions, 20 seeds): no finding
on the 20 other functions (noisy constants, p and size kernels) of any seed, while the planted 25 %
contention growth was found in 16 of 20 seeds."""

MIN_GAP = 1.0
"""The smallest SMAPE gap (percentage points) that counts, however quiet the data."""


class TaintKnowledge:
    """A loaded Perf-Taint analysis, ready to constrain the call paths of an experiment.

    After :meth:`constraints`, ``unmatched`` lists the region names that matched no Perf-Taint
    function, ``unmeasured`` the parametric Perf-Taint functions no call path matched, ``matches``
    maps each matched call path to the mangled names it matched, and ``notes`` says per call path
    why it got no constraint (or how it was matched when that was loose).
    """

    def __init__(self, analysis: TaintAnalysis, mapping: Mapping[str, str] | None = None,
                 unimportant: str = "data") -> None:
        self.analysis = analysis
        self.unimportant = unimportant
        self.mapping = self._resolve_map(dict(mapping or {}))
        self.unmatched: list[str] = []
        self.unmeasured: list[str] = []
        self.matches: dict[str, tuple[str, ...]] = {}
        self.notes: dict[str, str] = {}
        self._index: dict[str, dict[str, list[TaintFunction]]] | None = None

    def contradictions(self, experiment: Experiment, constrained: ModelSet, unconstrained: ModelSet,
                       constraints: Mapping[str, Constraint]) -> list[Finding]:
        """Findings where measured growth contradicts the analysis; see :func:`contradictions`."""
        return contradictions(experiment, constrained, unconstrained, constraints)

    def score_p_filter(self, *, include_callers: bool = False) -> str:
        """A Score-P filter keeping only the functions a parameter reaches; see :func:`score_p_filter`."""
        return score_p_filter(self, include_callers=include_callers)

    def _resolve_map(self, pairs: dict[str, str]) -> dict[str, str]:
        known = set(self.analysis.known_parameters)
        mapping = {p: p for p in known}
        for a, b in pairs.items():
            if a in known:
                mapping[a] = b
            elif b in known:
                mapping[b] = a
            else:
                raise UsageError(f"parameter map {a}={b}: neither is a parameter of the Perf-Taint analysis "
                                 f"(it has {', '.join(self.analysis.known_parameters) or 'none'})")
        return mapping

    def lookup(self, region: str, mangled: str | None = None) -> tuple[list[TaintFunction], str]:
        """The Perf-Taint functions a region name matches, and how (``mangled``, ``demangled``, ...)."""
        index = self._indexes()
        if mangled and mangled in index["mangled"]:
            return index["mangled"][mangled], "mangled"
        for how, table, key in (("name", "mangled", region), ("demangled", "demangled", region),
                                ("qualified", "qualified", qualified_name(region)),
                                ("base", "base", base_name(region))):
            found = index[table].get(key)
            if found:
                return found, how
        return [], ""

    def _indexes(self) -> dict[str, dict[str, list[TaintFunction]]]:
        if self._index is None:
            index: dict[str, dict[str, list[TaintFunction]]] = {k: {} for k in
                                                                 ("mangled", "demangled", "qualified", "base")}
            for fn in self.analysis.functions.values():
                index["mangled"].setdefault(fn.mangled, []).append(fn)
                index["demangled"].setdefault(fn.demangled, []).append(fn)
                for key in {qualified_name(fn.demangled), qualified_name(fn.name)}:
                    index["qualified"].setdefault(key, []).append(fn)
                for key in {base_name(fn.demangled), base_name(fn.name)}:
                    index["base"].setdefault(key, []).append(fn)
            self._index = index
        return self._index

    def constraints(self, experiment: Experiment) -> dict[str, Constraint]:
        """A constraint per call path whose last region Perf-Taint knows and restricts."""
        inclusive = any(m.inclusive for m in experiment.metrics)
        params = tuple(experiment.parameters)
        out: dict[str, Constraint] = {}
        unmatched: dict[str, None] = {}
        seen: set[str] = set()
        self.matches, self.notes = {}, {}
        for cp in experiment.callpaths:
            fns, how = self.lookup(cp.name, cp.mangled_name)
            if not fns:
                unmatched[cp.name] = None
                self.notes[cp.path] = "not in the Perf-Taint output; left to the data"
                continue
            seen.update(f.mangled for f in fns)
            self.matches[cp.path] = tuple(f.mangled for f in fns)
            constraint, why = self.constraint_for(fns, params, inclusive)
            if how in ("qualified", "base") or len(fns) > 1:
                why = f"matched {', '.join(f.demangled for f in fns)} by {how} name; {why}"
            if constraint is None:
                self.notes[cp.path] = why
            else:
                out[cp.path] = constraint
                if why != constraint.reason:
                    self.notes[cp.path] = why
        self.unmatched = list(unmatched)
        self.unmeasured = sorted(f.demangled for f in self.analysis.functions.values()
                                 if f.status == PARAMETRIC and f.mangled not in seen)
        return out

    def constraint_for(self, functions: Sequence[TaintFunction], parameters: Sequence[str],
                       inclusive: bool = False) -> tuple[Constraint | None, str]:
        """The constraint for a region matching ``functions`` in an experiment over ``parameters``.

        Returns (None, why) where the prior says nothing useful.  ``inclusive`` says the metrics
        include callees' cost, which a processed file's pruned functions may hide.
        """
        statuses = {f.status for f in functions}
        names = ", ".join(f.demangled for f in functions)
        experiment = set(parameters)
        known = {self.mapping[p] for p in self.analysis.known_parameters} & experiment
        unknown = [p for p in parameters if p not in known]
        if PARAMETRIC not in statuses:
            if UNIMPORTANT in statuses and self.unimportant == "data":
                return None, f"{STATUS_TEXT[UNIMPORTANT]}; left to the data"
            if PRUNED in statuses and inclusive and not self.analysis.callers_complete:
                return None, ("pruned in a processed Perf-Taint file, whose call stacks omit such callers, "
                              "so its inclusive cost may still grow with its callees'; use the raw file")
            status = CONSTANT if CONSTANT in statuses else (PRUNED if PRUNED in statuses else UNIMPORTANT)
            return self._constant(unknown, STATUS_TEXT[status])
        groups: set[Monomial] = set()
        for fn in functions:
            if fn.status == PARAMETRIC:
                groups |= fn.groups
        mapped = {frozenset(self.mapping[p] for p in g if self.mapping.get(p) in experiment) for g in groups}
        mapped = maximal(mapped - {frozenset()})
        if not mapped:
            reached = sorted(frozenset().union(*groups))
            return self._constant(unknown, f"only {', '.join(reached)} reach {names}, which the experiment "
                                  "does not vary")
        text = " + ".join("·".join(sorted(g)) for g in sorted(mapped, key=lambda g: (len(g), sorted(g))))
        extra = frozenset(unknown)
        allowed = frozenset().union(*mapped) | extra
        final = tuple(sorted((g | extra for g in mapped), key=lambda g: (len(g), sorted(g))))
        if allowed == experiment and len(final) == 1:
            return None, f"Perf-Taint lets every parameter reach and multiply ({text}); nothing to restrict"
        reason = f"Perf-Taint: {text}"
        if unknown:
            reason += f"; {', '.join(unknown)} unknown to Perf-Taint, left free"
        return Constraint(allowed=allowed, groups=final, source=SOURCE, reason=reason), reason

    def _constant(self, unknown: Sequence[str], why: str) -> tuple[Constraint, str]:
        if not unknown:
            return Constraint(constant=True, source=SOURCE, reason=why), why
        free = frozenset(unknown)
        reason = f"{why}; {', '.join(unknown)} unknown to Perf-Taint, left free"
        return Constraint(allowed=free, groups=(free,), source=SOURCE, reason=reason), reason


def maximal(groups: Iterable[Monomial]) -> set[Monomial]:
    """Drop sets contained in another: within a set parameters *may* multiply, so subsets add nothing."""
    groups = set(groups)
    return {g for g in groups if not any(g < h for h in groups)}


def load(paths: str | os.PathLike | Iterable[str | os.PathLike], *, map: Mapping[str, str] | None = None,
         unimportant: str = "data") -> TaintKnowledge:
    """Read Perf-Taint output (a file, several per-rank files, or a folder of them) as a prior."""
    return TaintKnowledge(read_taint(paths), map, unimportant)


class TaintPrior:
    """The ``taint`` prior plugin; ``load`` accepts a file, a folder, or a list of per-rank files."""

    name = SOURCE
    description = "Perf-Taint JSON (raw or processed): constant functions, allowed parameters, groups"
    options = (
        Option("map", dict, {}, "rename parameters, TAINT=EXPERIMENT pairs separated by commas (e.g. size=n,p=ranks)"),
        Option("unimportant", str, "data", "functions Perf-Taint instrumented but never saw a parameter reach: "
               "'data' leaves them to the data, 'constant' models them constant", choices=("data", "constant")),
    )

    def load(self, path: Path | Sequence[Path], **options: Any) -> TaintKnowledge:
        values = with_defaults(self.options, options, f"prior {self.name}")
        return load(path, map=values["map"], unimportant=values["unimportant"])


@hookimpl(trylast=True)
def pmkit_register_priors(register: Any) -> None:
    register(TaintPrior())


def score_p_filter(knowledge: TaintKnowledge | TaintAnalysis, *, include_callers: bool = False) -> str:
    """A Score-P filter file keeping only the functions a registered parameter reaches, and ``main``.

    By default a function is kept when its own loops or its MPI calls depend on a parameter (what
    Perf-Taint calls important); ``include_callers`` also keeps functions that only call such
    functions.  C++ functions are included by mangled name (``INCLUDE MANGLED``), which is exact;
    C and MPI functions by name.  Names are written so that Score-P matches them literally (see
    :func:`filter_token`); a name with a line break or control character is refused (InputError
    naming it), since no filter line can hold it safely.
    """
    analysis = knowledge.analysis if isinstance(knowledge, TaintKnowledge) else knowledge
    keep = [f for f in analysis.functions.values()
            if f.own_groups or (include_callers and f.status == PARAMETRIC)]
    plain = sorted({f.mangled for f in keep if f.mangled == f.demangled} | {"main"})
    mangled = sorted({f.mangled for f in keep if f.mangled != f.demangled})
    source = ", ".join(analysis.sources)
    lines = [
        f"# Score-P filter from Perf-Taint ({', '.join(Path(s).name for s in analysis.sources)}):",
        f"# keeps the {len(keep)} of {len(analysis.functions)} functions a parameter reaches, and main",
        "SCOREP_REGION_NAMES_BEGIN",
        "  EXCLUDE *",
    ]
    lines += [f"  INCLUDE {filter_token(name, source)}" for name in plain]
    lines += [f"  INCLUDE MANGLED {filter_token(name, source)}" for name in mangled]
    lines.append("SCOREP_REGION_NAMES_END")
    return "\n".join(lines) + "\n"


FILTER_KEYWORDS = frozenset({"SCOREP_REGION_NAMES_BEGIN", "SCOREP_REGION_NAMES_END", "SCOREP_FILE_NAMES_BEGIN",
                             "SCOREP_FILE_NAMES_END", "INCLUDE", "EXCLUDE", "MANGLED"})
"""Words Score-P's filter parser takes as keywords wherever they stand."""

_FILTER_SPECIAL = re.compile(r"([\\*?\[\]#\s])")


def filter_token(name: str, source: str = "") -> str:
    """``name`` as one Score-P filter token that matches exactly that name.

    Score-P splits filter lines at whitespace and cuts them at ``#`` unless a backslash precedes
    them, and matches tokens as shell patterns (``*``, ``?``, ``[...]``, backslash escapes); a
    token that spells a keyword is taken as the keyword.  So those characters and the backslash
    are escaped, and a keyword gets a backslash before its first letter.  Line breaks, other control
    characters and a final backslash cannot be written safely: InputError naming the function (and
    ``source``).
    """
    if not name or name.endswith("\\") or any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        problem = ("is empty" if not name else "ends with a backslash, which Score-P reads as an escaped line break"
                   if name.endswith("\\") else "holds a line break or control character")
        raise InputError(source or None, f"function name {excerpt(name)} {problem}; a Score-P filter cannot name "
                         "it safely (Perf-Taint's output should never hold one)", member="functions")
    token = _FILTER_SPECIAL.sub(r"\\\1", name)
    if token in FILTER_KEYWORDS:
        token = "\\" + token
    return token


def contradictions(experiment: Experiment, constrained_models: ModelSet, unconstrained_models: ModelSet,
                   constraints: Mapping[str, Constraint] | None = None, *, max_cv: float = MAX_CV,
                   margin: float = MARGIN, min_gap: float = MIN_GAP) -> list[Finding]:
    """Findings where the data shows a dependence the taint analysis rules out.

    For each call path whose model the prior shaped, when the repetitions are good (coefficient of
    variation ≤ ``max_cv`` at every point, at least two repetitions) and the unconstrained model fits
    the repetition means better than the constrained one by ``margin`` noise floors (and
    ``min_gap`` SMAPE points), the growth must come from outside the code: hardware contention or
    the experiment's design (paper §6, "Detecting hardware contention").  Severity is the largest
    difference between the two models over the measured points, in the metric's unit.
    """
    findings: list[Finding] = []
    for free in unconstrained_models:
        shaped = constrained_models.get(free.callpath, free.metric)
        if shaped is None or free.function is None or shaped.function is None:
            continue
        constraint = constraints.get(free.callpath) if constraints is not None else None
        forbidden = _forbidden(free, shaped, constraint)
        if not forbidden or free.callpath not in experiment.callpaths:
            continue
        values = experiment.measurements[free.metric][experiment.callpaths.index(free.callpath)]
        quality = _repetition_quality(values)
        if quality is None or quality[0] > max_cv:
            continue
        worst_cv, floor, means = quality
        points = experiment.points
        ok = ~np.isnan(means)
        f_free = np.asarray(free.function.evaluate(points[ok]), dtype=float)
        f_shaped = np.asarray(shaped.function.evaluate(points[ok]), dtype=float)
        s_free, s_shaped = float(smape(means[ok], f_free)), float(smape(means[ok], f_shaped))
        needed = max(min_gap, margin * floor)
        if not (s_shaped - s_free >= needed):
            continue
        diff = f_free - f_shaped
        worst = int(np.argmax(np.abs(diff)))
        where = experiment.point_label(int(np.flatnonzero(ok)[worst]))
        names = ", ".join(sorted(forbidden))
        unit = experiment.metric(free.metric).unit
        findings.append(Finding(
            detector=SOURCE,
            title=f"measured growth in {names} that the code cannot cause: contention or experiment design?",
            callpath=free.callpath,
            metric=free.metric,
            severity=float(abs(diff[worst])),
            unit=unit,
            message=(f"Perf-Taint rules out {names} here ({_rule_text(constraint)}), yet the model "
                     f"{free.function.pretty_text()} fits the data with SMAPE {s_free:.1f} % against "
                     f"{s_shaped:.1f} % for {shaped.function.pretty_text()}, on repetitions varying by at most "
                     f"{100 * worst_cv:.1f} %; the gap is largest at {where}. Look for hardware contention "
                     "(shared memory bandwidth, ranks per node) or an experiment that changes more than its "
                     "parameters."),
            evidence={
                "forbidden": sorted(forbidden),
                "constrained": shaped.function.extrap_text(),
                "unconstrained": free.function.extrap_text(),
                "smape_constrained": s_shaped,
                "smape_unconstrained": s_free,
                "noise_floor_smape": floor,
                "required_gap": needed,
                "max_cv": worst_cv,
                "constraint": _rule_text(constraint),
            },
        ))
    return sorted(findings, key=lambda f: -f.severity)


def _forbidden(free: Model, shaped: Model, constraint: Constraint | None) -> set[str]:
    assert free.function is not None and shaped.function is not None
    used: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for term in free.function.terms:
        if term.coefficient == 0:
            continue
        names = sorted({f.parameter for f in term.factors if not f.is_trivial})
        used.update(names)
        pairs.update((a, b) for i, a in enumerate(names) for b in names[i + 1:])
    if constraint is None:
        kept = {f.parameter for t in shaped.function.terms for f in t.factors if not f.is_trivial}
        return used - kept
    out = {p for p in used if not constraint.allows(p)}
    for a, b in pairs:
        if constraint.allows(a) and constraint.allows(b) and not constraint.may_multiply(a, b):
            out.add(f"{a}·{b}")
    return out


def _repetition_quality(values: np.ndarray) -> tuple[float, float, np.ndarray] | None:
    """(worst coefficient of variation, noise-floor SMAPE in %, per-point means), or None without repetitions."""
    counts = np.sum(~np.isnan(values), axis=1)
    measured = counts > 0
    if measured.sum() < 2 or np.any(counts[measured] < 2):
        return None
    with np.errstate(all="ignore"):
        means = np.nanmean(np.where(measured[:, None], values, 0.0), axis=1)
        stds = np.nanstd(np.where(measured[:, None], values, 0.0), axis=1, ddof=1)
        cv = np.abs(stds / means)
    means = np.where(measured, means, np.nan)
    cv = cv[measured]
    if not np.all(np.isfinite(cv)):
        return None
    floor = 100.0 * math.sqrt(2.0 / math.pi) * float(np.median(cv)) / math.sqrt(float(np.median(counts[measured])))
    return float(cv.max()), floor, means


def _rule_text(constraint: Constraint | None) -> str:
    if constraint is None:
        return "by the prior"
    return constraint.note()
