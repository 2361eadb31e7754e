"""The laws with a closed form described at once from the model columns (``trend.closed_form_json``) give
exactly the documents of the per-row path (``trend_of(...).to_json``) — compared by ``repr``, so every float to
its last bit, NaN and the sign of zero included — and the laws without one are left to that path."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest

from pmkit.modelcolumns import ModelColumns
from pmkit.models import Model
from pmkit.pmnf import Factor, Function, Term
from pmkit.sdk import analyse
from pmkit.testing import segmented_study
from pmkit.trend import closed_form_json, trend_of


def text(value: float) -> str:
    return f"{value:.3g} s"


def per_row(report, indices):
    out = []
    for i in indices:
        trend = report.trend(i)
        out.append(None if trend is None else trend.to_json(text))
    return out


def random_laws(rng: np.random.Generator, n: int, parameters: tuple[str, ...]) -> list[Function | None]:
    """Constants, one- and two-term laws of every sign, falling ones that cross zero, other parameters' factors,
    NaN and no function at all."""
    shapes = [(F(-1), F(0)), (F(-1, 2), F(0)), (F(-2), F(0)), (F(1), F(0)), (F(1, 2), F(0)), (F(2), F(0)),
              (F(0), F(1)), (F(0), F(2)), (F(0), F(-1)), (F(1), F(1)), (F(-1), F(1)), (F(3, 4), F(0))]
    laws: list[Function | None] = []
    for _ in range(n):
        kind = rng.integers(10)
        c0 = float(rng.choice([0.0, -0.0, 1.0, -3.0, 50.0])) * float(rng.uniform(0.5, 2)) if kind else math.nan
        terms = []
        for _ in range(int(rng.choice([0, 1, 1, 1, 2]))):
            alpha, beta = shapes[rng.integers(len(shapes))]
            factors = [Factor(parameters[0], alpha, beta)]
            if len(parameters) > 1 and rng.integers(3) == 0:  # a factor of n, or a term of n alone
                alpha, beta = F(int(rng.integers(1, 3))), F(int(rng.integers(2)))
                factors[rng.integers(2):] = [Factor(parameters[1], alpha, beta)]
            coefficient = float(rng.choice([1.0, -1.0, 0.0 if rng.integers(20) == 0 else 1.0]) * rng.lognormal(0, 3))
            terms.append(Term(coefficient, tuple(factors)))
        laws.append(None if kind == 1 else Function(parameters, c0, tuple(terms)))
    return laws


@pytest.mark.parametrize("parameters", [("p",), ("p", "n")])
def test_closed_forms_equal_the_per_row_documents(parameters):
    rng = np.random.default_rng(5)
    laws = random_laws(rng, 3000, parameters)
    models = [Model(f"f{i}", "time", law) for i, law in enumerate(laws)]
    columns = ModelColumns.from_models(parameters, models)
    positions = np.arange(len(laws))
    target = {name: 512.0 for name in parameters}
    values = columns.evaluate(target)
    values[::50] = np.nan  # a prediction missing: left to the per-row path
    values[1::97] = 0.0
    values[2::89] *= -1
    for start in (1.0, 2.0, 8.0):
        done = closed_form_json(columns, positions, values, "p", start, target, text)
        assert len(done) > len(laws) // 3
        for k, document in done.items():
            known = float(values[k])
            trend = trend_of(columns.function(k), "p", start, target, None, known if math.isfinite(known) else None)
            assert trend is not None
            assert repr(document) == repr(trend.to_json(text)), laws[k]
        left = set(range(len(laws))) - set(done)
        assert any(laws[k] is not None and len(laws[k].terms) == 2 for k in left)


def test_kinds_of_laws_the_closed_form_takes():
    laws = [Function(("p",), 2.0, (Term(100.0, (Factor("p", -1, 0),)),)),  # flattens
            Function(("p",), -5.0, (Term(100.0, (Factor("p", -1, 0),)),)),  # negative beyond p ≈ 20
            Function(("p",), 1.0, (Term(0.5, (Factor("p", 0, 2),)),)),  # grows as log2(p)^2
            Function(("p",), 3.0),  # constant
            Function(("p",), 1.0, (Term(1.0, (Factor("p", -1, 0),)), Term(0.01, (Factor("p", 1, 0),)))),
            Function(("p",), 1.0, (Term(1.0, (Factor("p", 1, 1),)),))]  # p·log2(p): the grid search
    columns = ModelColumns.from_models(("p",), [Model(f"f{i}", "time", law) for i, law in enumerate(laws)])
    target = {"p": 4096.0}
    done = closed_form_json(columns, np.arange(len(laws)), columns.evaluate(target), "p", 1.0, target, text)
    assert sorted(done) == [0, 1, 2, 3]
    assert [done[k]["state"] for k in range(4)] == ["flattens", "negative", "grows", "constant"]
    assert done[1]["negative_from"] == pytest.approx(20.0) and done[1]["text"] == "negative beyond p ≈ 20"
    assert done[0]["text"] == "flattens at 2 s" and done[2]["text"] == "grows as log2(p)^2"


def write_mixed_study(path, n: int = 400):
    """An Extra-P text file of ``n`` call paths measured at p = 2…64: falling, flat, growing and constant laws,
    some noisy, some falling below zero, one never measured (NaN)."""
    rng = np.random.default_rng(11)
    points = [2, 4, 8, 16, 32, 64]
    p = np.array(points, dtype=float)
    laws = [lambda c: c[0] + c[1] / p, lambda c: c[0] - c[1] * np.log2(p), lambda c: c[0] + c[1] * p ** 0.5,
            lambda c: np.full(len(p), c[0]), lambda c: c[0] + c[1] / p + 0.001 * c[1] * p,
            lambda c: c[1] / p - c[0], lambda c: c[0] + c[1] * p * np.log2(p)]
    lines = ["PARAMETER p", "POINTS " + " ".join(f"( {x} )" for x in points), "METRIC time"]
    for i in range(n):
        values = laws[i % len(laws)](rng.uniform(0.5, 20, 2)) * rng.uniform(0.97, 1.03, len(p))
        if i == 5:
            values[:] = np.nan
        lines += [f"REGION main->k{i % 7}->f{i}"] + [f"DATA {v:.6g}" for v in values]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("modeler", ["refining", "segmented"])
def test_show_json_behaviours_equal_the_per_row_ones(tmp_path, modeler):
    """A whole study as pmkit show describes it: its report's behaviours at once and row by row."""
    path = write_mixed_study(tmp_path / "mixed.txt")
    segmented = segmented_study.write(tmp_path / "segmented.txt")
    for source in (path, segmented):
        report = analyse(source, modeler=modeler, detectors=[]).inputs[0].report
        indices = list(range(len(report.experiment.callpaths)))
        assert repr(report.trends_json(indices, text)) == repr(per_row(report, indices))


def test_a_study_of_constants_only():
    laws = [Function(("p",), 3.0), Function(("p",), -1.0), None]
    columns = ModelColumns.from_models(("p",), [Model(f"f{i}", "time", law) for i, law in enumerate(laws)])
    target = {"p": 64.0}
    done = closed_form_json(columns, np.arange(3), columns.evaluate(target), "p", 1.0, target, text)
    assert sorted(done) == [0, 1] and done[1]["state"] == "negative" and done[1]["negative_from"] == 1.0
    assert closed_form_json(columns, np.arange(0), np.zeros(0), "p", 1.0, target, text) == {}
