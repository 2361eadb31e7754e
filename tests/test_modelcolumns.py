"""Model columns: what the built-in modelers produce and every consumer reads instead of Model objects.

Each series' Model built from the columns must be the model the objects describe, and everything
computed from the columns for all series at once (values at points, growth classes, texts) must be
exactly what the Function of each series gives.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction as F

import numpy as np
import pytest

from pmkit.constraints import Constraint
from pmkit.growth import growth_of
from pmkit.modelcolumns import ModelColumns, Terms, intern_notes
from pmkit.modelers.refining import RefiningModeler
from pmkit.models import Model, ModelSet, Quality
from pmkit.pmnf import Factor, Function, Term
from pmkit.schema import finite_json
from pmkit.series import SeriesBatch

X = np.array([2.0, 4, 8, 16, 32])
X7 = np.array([1.0, 2, 4, 8, 16, 32, 64])


def one_parameter_batch() -> SeriesBatch:
    """Growing laws, constants, holes, nothing, zeros, negatives, infinities, an outlier, constraints."""
    rng = np.random.default_rng(3)
    laws = [5 + 2 * X, 1 + 0.5 * X ** 2, 3 + 7 * np.log2(X), 4 + X ** 1.5, np.full(5, 9.0), 30 - 0 * X,
            X ** (2 / 3) * 10, 2 + 3 * X * np.log2(X)]
    rows = [law * (1 + rng.uniform(-0.01, 0.01, 5)) for law in laws]
    nan = np.nan
    rows += [np.array([5.0, nan, 9, 13, 17]), np.array([5.0, 7, nan, nan, 17]), np.full(5, nan), np.zeros(5),
             np.array([-1.0, -3, -7, -15, -31]), np.array([1.0, np.inf, 3, 4, 5]), np.array([4.0, 4, 4, 4, 4])]
    values = np.array(rows)[:, :, None].repeat(2, axis=2)
    values[0, 2, 1] = np.nan  # one missing repetition
    constraints = [None] * len(rows)
    constraints[1] = Constraint(constant=True, source="taint", reason="no parameter reaches it")
    constraints[2] = Constraint(allowed=frozenset({"p"}), source="taint")
    names = [f"main->f{i}" for i in range(len(rows))]
    return SeriesBatch(("p",), X[:, None], values, names, ["time"] * len(rows), constraints)


def outlier_batch() -> SeriesBatch:
    clean = 3 + 2 * X7
    bumped = clean.copy()
    bumped[2] *= 3  # far off the law of the others
    values = np.array([clean, bumped, 10 + 0.1 * X7 ** 2])
    return SeriesBatch(("p",), X7[:, None], values, ["a", "b", "c"], ["time", "time", "bytes"])


def two_parameter_batch() -> SeriesBatch:
    grid = np.array([(p, q) for p in (4.0, 8, 16, 32, 64) for q in (10.0, 20, 30, 40, 50)])
    p, q = grid[:, 0], grid[:, 1]
    values = np.array([3 + 2 * p * q, 3 + 2 * p ** 1.5 + 0.5 * q * np.log2(q), 1 + 0.25 * p ** 2 * np.log2(q),
                       5 + 0.1 * p * q + 4 * p, np.full(len(grid), 7.0), 2 + 3 * q, 3 + 2 * p * q,
                       3 + 200 * q / p, 1 + 500 / p + 2 * q])
    values[3, 4] = np.nan
    constraints = [None] * len(values)
    constraints[6] = Constraint(groups=(frozenset({"p"}), frozenset({"q"})), source="taint")
    n = len(values)
    return SeriesBatch(("p", "q"), grid, values, [f"cp{i}" for i in range(n)], ["time"] * n, constraints)


def five_parameter_batch() -> SeriesBatch:
    points = np.array([[a, 1, 1, 1, 1] for a in (1.0, 2, 3, 4, 5)])
    return SeriesBatch(tuple("abcde"), points, np.array([[1.0, 2, 3, 4, 5]]), ["main"], ["time"])


def strong_scaling_batch() -> SeriesBatch:
    """Falling laws and falling + growing sums (two terms), as strong scaling gives them."""
    p = np.array([1.0, 2, 4, 8, 16, 32, 64])
    laws = [5 + 100 / p, 2 + 400 / p + 0.5 * p, 1 + 300 / p + 3 * np.log2(p), 50 / p ** 0.5, 3 + 0 * p,
            10 + 2 * p, 200 / p + 0.01 * p ** 2]
    rng = np.random.default_rng(9)
    values = np.array([law * (1 + rng.uniform(-0.005, 0.005, len(p))) for law in laws])
    return SeriesBatch(("p",), p[:, None], values, [f"k{i}" for i in range(len(laws))], ["time"] * len(laws))


BATCHES = {"one parameter": one_parameter_batch, "outlier": outlier_batch, "two parameters": two_parameter_batch,
           "five parameters": five_parameter_batch, "strong scaling": strong_scaling_batch}


def handmade() -> ModelSet:
    """Functions no modeler makes today: several terms, a term without factors, zero, negative and
    NaN coefficients, negative exponents, log-only factors — and models without a function."""
    params = ("p", "n")
    laws = [
        Function(params, 3.0, (Term(2.0, (Factor("p", 1), Factor("n", F(1, 2), 1))), Term(-0.5, (Factor("n", 2),)))),
        Function(params, 0.0, (Term(5.0, ()),)),
        Function(params, -1.5, (Term(0.0, (Factor("p", 1),)), Term(4.0, (Factor("p", 0, F(3, 2)),)))),
        Function(params, 2.0, (Term(3.0, (Factor("p", -1),)), Term(0.25, (Factor("p", 0, 1),)))),
        Function(params, 1.0, (Term(math.nan, (Factor("p", 2),)),)),
        Function(params, 1e-300, (Term(-2.0, (Factor("n", F(-2, 3)),)), Term(1e300, (Factor("p", 3),)))),
        Function(params, 4.0),
        None,
    ]
    models = [Model(f"main->k{i}", "time" if i % 3 else "bytes", law, Quality(0.1 * i, 2.0, 0.9, None if i else 1.0),
                    "handmade" if i % 2 else "other", {"k": i}, (f"note {i % 2}",), i)
              for i, law in enumerate(laws)]
    return ModelSet(params, models)


@functools.cache
def model_sets() -> dict[str, ModelSet]:
    sets = {name: RefiningModeler().model(make()) for name, make in BATCHES.items()}
    sets["handmade"] = handmade()
    return sets


@pytest.fixture(scope="module", params=list(model_sets()))
def models(request) -> ModelSet:
    return model_sets()[request.param]


def point_of(parameters: tuple[str, ...], scale: float) -> dict[str, float]:
    return {name: scale * (k + 2) for k, name in enumerate(parameters)}


def test_models_built_from_columns_are_the_models_the_objects_describe(models: ModelSet) -> None:
    columns = models.columns
    again = ModelColumns.from_models(models.parameters, list(models))
    assert len(columns) == len(models) == len(again)
    for i, model in enumerate(models):
        rebuilt = again.model(i)
        assert finite_json(rebuilt.to_json()) == finite_json(model.to_json())
        assert (rebuilt.callpath, rebuilt.metric, rebuilt.modeler, rebuilt.notes, rebuilt.n_points) == \
               (model.callpath, model.metric, model.modeler, tuple(model.notes), model.n_points)
        assert (rebuilt.function is None) == (model.function is None)
        if model.function is not None:
            assert rebuilt.function.extrap_text() == model.function.extrap_text()
            assert [t.factors for t in rebuilt.function.terms] == [t.factors for t in model.function.terms]
            assert all(isinstance(f.exponent, F) for t in rebuilt.function.terms for f in t.factors)


def test_values_at_points_are_those_of_each_function(models: ModelSet) -> None:
    columns = models.columns
    for scale in (0.5, 1.0, 37.0):
        point = point_of(models.parameters, scale)
        values = columns.evaluate(point)
        for i, model in enumerate(models):
            if model.function is None:
                assert math.isnan(values[i])
                continue
            with np.errstate(all="ignore"):
                expected = model.function.evaluate({n: point[n] for n in model.function.parameters})
            assert values[i] == expected or (math.isnan(values[i]) and math.isnan(expected)), (i, model.function)
    many = {name: np.array([1.0, 8.0, 1e6]) * (k + 1) for k, name in enumerate(models.parameters)}
    grid = columns.evaluate(many)
    assert grid.shape == (len(models), 3)
    for i, model in enumerate(models):
        if model.function is not None:
            with np.errstate(all="ignore"):
                expected = model.function.evaluate(many)
            np.testing.assert_array_equal(grid[i], expected)


def test_growth_classes_and_texts_are_those_of_each_function(models: ModelSet) -> None:
    columns = models.columns
    codes, classes = columns.growth()
    texts, pretty = columns.extrap_texts(), columns.pretty_texts()
    for i, model in enumerate(models):
        expected = growth_of(model.function)
        assert (None if codes[i] < 0 else classes[codes[i]]) == expected
        assert texts[i] == (None if model.function is None else model.function.extrap_text())
        assert pretty[i] == (None if model.function is None else model.function.pretty_text())
    if len(models) > 2:
        assert columns.extrap_texts(1, 3) == texts[1:3]


def test_a_model_set_builds_models_only_when_asked() -> None:
    batch = one_parameter_batch()
    models = RefiningModeler().model(batch)
    assert models._cache.count(None) == len(batch)
    assert models.get("main->f3", "time").callpath == "main->f3"
    assert models.position("main->f3", "time") == 3 and models.get("main->f3", "bytes") is None
    assert models.modelers("time") == ["refining"] and models.modelers("bytes") == []
    assert models._cache.count(None) == len(batch) - 1, "looking a model up builds that one only"
    assert models[3] is models[3]


def test_a_set_of_objects_gets_its_columns_from_them() -> None:
    models = handmade()
    assert models.modelers() == ["handmade", "other"]
    assert models.modelers("bytes") == ["handmade", "other"] and models.modelers("energy") == []
    columns = models.columns
    assert columns.modeler == "" and columns.modelers() == ["handmade", "other"]
    assert columns.has_function.tolist() == [m.function is not None for m in models]
    assert list(np.diff(columns.term_start)) == [2, 1, 2, 2, 1, 2, 0, 0]
    with pytest.raises(ValueError, match="parameter 'z'"):
        ModelColumns.from_models(("p",), [Model("a", "time", Function(("z",), 1.0, (Term(1.0, (Factor("z", 1),)),)))])


def test_terms_keep_each_series_order_whatever_the_order_of_calls() -> None:
    terms = Terms(4, 2)
    one = np.array([[1, 1], [0, 1]])
    terms.add(np.array([3, 0]), np.array([30.0, 1.0]), one, np.array([[0, 1], [0, 1]]))
    terms.add(np.array([0]), np.array([2.0]), np.array([[[2, 1], [1, 2]]]), np.array([[[0, 1], [1, 1]]]))
    start, coefficient, exponent, log_exponent = terms.build()
    assert start.tolist() == [0, 2, 2, 2, 3]
    assert coefficient.tolist() == [1.0, 2.0, 30.0]
    assert exponent[1].tolist() == [[2, 1], [1, 2]] and log_exponent[1].tolist() == [[0, 1], [1, 1]]


def test_notes_are_interned_by_the_facts_that_decide_them() -> None:
    calls = []

    def notes_of(i: int) -> list[str]:
        calls.append(i)
        return [f"kind {i % 2}"]

    group, groups = intern_notes([np.array([0, 1, 0, 1, 0]), np.array([5, 5, 5, 5, 6])], notes_of)
    assert [groups[g] for g in group] == [("kind 0",), ("kind 1",), ("kind 0",), ("kind 1",), ("kind 0",)]
    assert len(calls) == 3


class Doubling(Function):
    """A plugin's function that evaluates and prints itself its own way."""

    def evaluate(self, points):
        return 2 * super().evaluate(points)

    def extrap_text(self, digits: int = 10) -> str:
        return "twice " + super().extrap_text(digits)


def test_a_plugins_own_function_is_evaluated_and_printed_through_the_object() -> None:
    law = Doubling(("p",), 1.0, (Term(3.0, (Factor("p", 1),)),))
    models = ModelSet(("p",), [Model("a", "time", law), Model("b", "time", Function(("p",), 1.0, law.terms))])
    columns = models.columns
    assert columns.evaluate({"p": 4.0}).tolist() == [26.0, 13.0]
    assert columns.extrap_texts() == ["twice 1 + 3 * p^(1)", "1 + 3 * p^(1)"]
    codes, classes = columns.growth()
    assert [classes[c].label for c in codes] == ["p", "p"]



def test_single_columns_hold_the_laws_of_single_function() -> None:
    from pmkit.fitting.refinement import refine_series
    from pmkit.modelers.search_inputs import settings_from
    from pmkit.modelers.single import single_columns, single_function
    from pmkit.options import with_defaults

    batch = strong_scaling_batch()
    options = with_defaults(RefiningModeler().options, {}, "test")
    fits = refine_series(batch.points[:, 0], batch.reduced(), settings_from(options))
    assert fits.two_term.sum() >= 2 and (fits.alpha[:, 0] < 0).sum() >= 3, "falling and two-term laws"
    count = len(batch)
    none = (np.zeros(count, dtype=np.int64), [()])
    columns = single_columns(batch, fits, np.full(count, 7), none, none, "refining", options)
    for i in range(count):
        expected = single_function(fits, i, "p")
        assert columns.function(i) == expected
        assert columns.extrap_texts(i, i + 1) == [expected.extrap_text()]
        assert columns.evaluate({"p": 256.0})[i] == expected.evaluate({"p": 256.0})
    assert RefiningModeler().model(batch).columns.term_start.tolist() == columns.term_start.tolist()
