"""The modeler ``perprocess``: a per-process symbolic model (paper 003) calibrated on per-location values.

``pmkit.model(exp, "perprocess", model="stencil.toml", parameters="params.csv")`` calibrates the
model file's sections on the experiment's per-process values (one run per point and repetition;
the table names runs like Extra-P's folders, see :mod:`pmkit.perprocess.tables`).

What it returns, and why: a per-process model predicts each *process* from its own parameters
(cells, neighbours), so a section's law is a function of those, not of the experiment's
parameters (``p``, ``size``) — a :class:`~pmkit.pmnf.Function` of the batch's parameters would be
a different, weaker model.  Each series of a call path in a section therefore gets a model with
``function = None``, the section's fit quality (SMAPE and adjusted R² over every (run, process)
sample), and notes giving the calibrated predictor; series outside every section, or of another
metric, get a note saying so.  The whole calibration is the result's ``calibration`` attribute
(:class:`~pmkit.perprocess.Calibration`): ``models.calibration.predict("scenario.csv")`` predicts
scenarios, as ``pmkit predict`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pmkit.errors import InputError, UsageError
from pmkit.hookspecs import hookimpl
from pmkit.models import Model, ModelSet, Quality
from pmkit.options import Option, with_defaults
from pmkit.series import SeriesBatch

NAME = "perprocess"


class PerProcessModels(ModelSet):
    """The models of a batch, with the :class:`~pmkit.perprocess.Calibration` they come from (or None)."""

    def __init__(self, parameters: Sequence[str], models: Sequence[Model], calibration: Any) -> None:
        super().__init__(parameters, models, modeler=NAME)
        self.calibration = calibration


class PerProcessModeler:
    """Calibrates a per-process model file on the batch's experiment; see the module docstring."""

    name = NAME
    description = "Per-process model: code sections calibrated on each process's time; -O model=FILE.toml"
    options: Sequence[Option] = (
        Option("model", str, "", "the per-process model file (TOML, see docs/perprocess.md); required"),
        Option("parameters", str, "", "per-process parameter table, CSV run,rank,NAME,...; required"),
    )

    def model(self, batch: SeriesBatch, **options: Any) -> ModelSet:
        """One model per series; the calibration is attached as ``calibration``.

        ``options`` come resolved from the SDK; a direct caller's missing ones get their defaults.
        """
        from pmkit.perprocess import PerProcessModel, read_table

        values = with_defaults(self.options, options, f"modeler {self.name}")
        model, parameters = str(values["model"]), str(values["parameters"])
        if not model or not parameters:
            raise UsageError("modeler perprocess needs a model file and a parameter table: -O model=FILE.toml "
                             "-O parameters=TABLE.csv (see docs/perprocess.md)")
        loaded = PerProcessModel.load(model)
        table = read_table(parameters)
        calibration, problem = None, ""
        if batch.experiment is None:
            problem = "the batch carries no experiment, so there are no per-process values"
        else:
            try:
                calibration = loaded.calibrate(batch.experiment, table)
            except InputError as exc:
                problem = str(exc)
        owner = {}
        if calibration is not None:
            owner = {path: fit for fit in calibration.sections for path in fit.callpaths}
        models = []
        for callpath, metric in zip(batch.callpaths, batch.metrics, strict=True):
            notes: tuple[str, ...]
            quality = Quality()
            samples = 0
            if calibration is None:
                notes = (f"no per-process model: {problem}",)
            elif metric != loaded.spec.metric:
                notes = (f"the per-process model describes metric {loaded.spec.metric}, not {metric}",)
            elif callpath not in owner:
                notes = (f"{callpath} is in no section of {loaded.spec.path}",)
            else:
                fit = owner[callpath]
                quality = Quality(smape=fit.quality.smape, adjusted_r2=fit.quality.adjusted_r2,
                                  cv_smape=fit.quality.loo_smape)
                samples = fit.quality.samples
                paths = f"{len(fit.callpaths)} call path{'s' if len(fit.callpaths) > 1 else ''}"
                notes = (f"section {fit.name}: {fit.formula()} per process ({samples} process samples of {paths})",
                         "a per-process model is a function of each process's parameters, not of "
                         f"{', '.join(batch.parameters)}: predict scenarios with pmkit predict or "
                         "models.calibration.predict(TABLE)", *fit.notes)
            models.append(Model(callpath, metric, None, quality, NAME, values, notes, samples))
        return PerProcessModels(batch.parameters, models, calibration)


@hookimpl(trylast=True)
def pmkit_register_modelers(register: Any) -> None:
    register(PerProcessModeler())
