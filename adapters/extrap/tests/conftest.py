"""Fixtures for the adapter's tests: the shared real data, the repository's Extra-P test files, and a
pmkit registry with a small least-squares modeler beside the installed ones."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from pmkit.hookspecs import hookimpl
from pmkit.models import Model, ModelSet, Quality
from pmkit.options import Option
from pmkit.plugins import build_registry, reset_registry
from pmkit.pmnf import Factor, Function, Term

REPO = Path(__file__).resolve().parents[3]
EXTRAP_FILES = REPO / "tests" / "extrap_files"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``$PMKIT_SHARED_DATA`` or ``../shared/data`` beside the repository; skip if absent."""
    path = Path(os.environ.get("PMKIT_SHARED_DATA", REPO.parent / "shared" / "data"))
    if not path.is_dir():
        pytest.skip(f"real data folder {path} is absent (set PMKIT_SHARED_DATA)")
    return path


class LineModeler:
    """Fits ``c0 + c1·x`` in the first parameter to every series by least squares (test modeler)."""

    name = "line"
    description = "least-squares line in the first parameter (adapter tests)"
    options = (Option("exponent", str, "1", "exponent of the first parameter"),)

    def model(self, batch, exponent: str = "1") -> ModelSet:
        x = batch.points[:, 0]
        factor = Factor(batch.parameters[0], exponent, 0)
        basis = np.column_stack([np.ones_like(x), factor.evaluate(x)])
        y = batch.reduced("mean")
        models = []
        for i in range(len(batch)):
            ok = ~np.isnan(y[i])
            if ok.sum() < 2:
                models.append(Model(batch.callpaths[i], batch.metrics[i], None, Quality(), self.name, {},
                                    ("fewer than two points with values",), int(ok.sum())))
                continue
            coef, *_ = np.linalg.lstsq(basis[ok], y[i, ok], rcond=None)
            function = Function(batch.parameters, coef[0], (Term(coef[1], (factor,)),))
            rss = float(np.sum((basis[ok] @ coef - y[i, ok]) ** 2))
            models.append(Model(batch.callpaths[i], batch.metrics[i], function, Quality(rss=rss), self.name,
                                {"exponent": exponent}, (), int(ok.sum())))
        return ModelSet(batch.parameters, models, modeler=self.name)


class LinePlugin:
    @hookimpl
    def pmkit_register_modelers(self, register):
        register(LineModeler())


@pytest.fixture
def registry():
    """pmkit's registry (installed modelers) plus the ``line`` test modeler, installed process-wide."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = build_registry([LinePlugin()])
    reset_registry(reg)
    yield reg
    reset_registry(None)


def segmented_experiment():
    """A pmkit experiment whose ``main->send`` grows slowly up to p = 100 and ten times faster beyond
    (11 points p = 2..2048, 1% noise), and whose ``main->compute`` follows one law."""
    from pmkit.experiment import ExperimentBuilder

    builder = ExperimentBuilder(("p",), "generated")
    builder.add_metric("time", unit="s")
    rng = np.random.default_rng(7)
    for p in 2.0 ** np.arange(1, 12):
        truth = 3 + 0.5 * p if p < 100 else 53 + 5 * (p - 100)
        builder.add_values("main->send", "time", (p,), truth * (1 + 0.01 * rng.standard_normal(3)))
        builder.add_values("main->compute", "time", (p,), (10 + 0.2 * p) * (1 + 0.01 * rng.standard_normal(3)))
    return builder.build()
