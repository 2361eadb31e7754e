"""Per-process symbolic performance models (paper 003, the HemoCell model): predict load-imbalanced runs.

Empirical models see one value per call path and run; a per-process model describes *each process*
from its own work — cells, grid nodes, neighbours — so it can predict a run nobody measured (half
the processes with three times the work) and what its imbalance costs.  The user writes the model
in a TOML file (``docs/perprocess.md``); pmkit calibrates each code section on the per-process
times of measured runs and predicts scenarios given as per-process parameter tables::

    import pmkit

    model = pmkit.PerProcessModel.load("stencil.toml")
    calibration = model.calibrate("runs/balanced", parameters="runs/balanced/params.csv")
    prediction = calibration.predict("half3x.csv", measured="runs/half3x")
    for run in prediction.runs:
        print(run.name, run.total, run.balanced, run.overhead, run.error)

or in one call, as ``pmkit predict`` does: ``pmkit.predict("stencil.toml", "runs/balanced",
"half3x.csv", measured="runs/half3x")``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pmkit.errors import InputError
from pmkit.perprocess.calibration import Calibration, SectionFit, calibrate
from pmkit.perprocess.modelfile import ModelSpec, load_model, parse_model
from pmkit.perprocess.prediction import Prediction, RunPrediction
from pmkit.perprocess.tables import ParameterTable, read_table

if TYPE_CHECKING:
    from pmkit.experiment import Experiment
    from pmkit.perprocess.measured import Measurements

PARAMETERS_FILE = "pmkit-parameters.csv"
"""The parameter table looked for in a study folder when none is given."""

PathLike = str | os.PathLike
Studies = PathLike | Sequence[PathLike]

__all__ = ["PARAMETERS_FILE", "Calibration", "ModelSpec", "ParameterTable", "PerProcessModel", "Prediction",
           "RunPrediction", "SectionFit", "load_model", "parse_model", "predict", "read_table"]


class PerProcessModel:
    """A checked model file; :meth:`calibrate` fits it to measured runs."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec

    @classmethod
    def load(cls, path: PathLike) -> PerProcessModel:
        """Read a model file; InputError naming the file, line and token of any problem."""
        return cls(load_model(path))

    @property
    def name(self) -> str:
        return self.spec.name

    def __repr__(self) -> str:
        return f"<PerProcessModel {self.spec.name!r} sections={list(self.spec.section_names)}>"

    def calibrate(self, data: Studies | Experiment, parameters: PathLike | ParameterTable | None = None, *,
                  executor: Any = None) -> Calibration:
        """Calibrate every section on measured runs.

        ``data`` is a Cube study (a folder of run folders, a ``.cubex`` file or a manifest), a list
        of them, or an :class:`~pmkit.experiment.Experiment` with per-location values.
        ``parameters`` is the per-process parameter table (default: ``pmkit-parameters.csv`` in the
        study folder, else the values Score-P's parameter instrumentation recorded in the Cube files).
        ``executor`` reads the runs (one task each; see :mod:`pmkit.executors`).
        """
        from pmkit import executors

        with executors.using(executor):
            return self._calibrate(data, parameters)

    def _calibrate(self, data: Studies | Experiment, parameters: PathLike | ParameterTable | None) -> Calibration:
        from pmkit.experiment import Experiment
        from pmkit.perprocess.measured import from_experiment, load_studies, study_paths

        if isinstance(data, Experiment):
            if parameters is None:
                raise InputError(None, "a per-process model of an experiment needs a parameter table (run,rank,...)")
            measurements = from_experiment(data, [self.spec.metric])
        else:
            paths = study_paths(data)
            measurements = load_studies(paths, [self.spec.metric])
            if parameters is None:
                parameters = default_parameters(paths) or self._instrumented(paths, measurements)
        table = parameters if isinstance(parameters, ParameterTable) else read_table(parameters)
        return calibrate(self.spec, measurements, table)

    def _instrumented(self, paths: Sequence[Path], measurements: Measurements) -> ParameterTable:
        """The model's parameters from Score-P parameter instrumentation in the Cube files, if they have it."""
        from pmkit.perprocess.cube_parameters import read_parameters

        per_process, globals_ = self.spec.parameters_used()
        names = per_process + [g for g in globals_ if g != "p"]
        where = ", ".join(map(str, paths))
        table, skipped = read_parameters(measurements.runs, names, f"Score-P parameters in {where}")
        if table is None:
            raise InputError(paths[0] if paths else None, f"no per-process parameter values: give a table "
                             f"(run,rank,PARAMETER,...) with --parameters, put {PARAMETERS_FILE} in the study "
                             "folder, or record them with Score-P's parameter instrumentation")
        measurements.skipped.extend(skipped)
        return table


def default_parameters(paths: Sequence[Path]) -> Path | None:
    """The ``pmkit-parameters.csv`` of the first study folder that has one."""
    for path in paths:
        folder = path if path.is_dir() else path.parent
        if (folder / PARAMETERS_FILE).is_file():
            return folder / PARAMETERS_FILE
    return None


def predict(model: PathLike | PerProcessModel, calibrate: Studies | Experiment, scenario: PathLike | ParameterTable,
            *, parameters: PathLike | ParameterTable | None = None, measured: Studies | None = None,
            executor: Any = None) -> Prediction:
    """Calibrate ``model`` on ``calibrate`` and predict ``scenario``; what ``pmkit predict`` runs.

    ``parameters`` is the calibration runs' parameter table; ``measured`` the Cube studies of the
    scenario's runs, if they were measured (then every matched run gets its prediction error).
    ``executor`` reads the runs (see :mod:`pmkit.executors`).
    """
    from pmkit import executors

    loaded = model if isinstance(model, PerProcessModel) else PerProcessModel.load(model)
    with executors.using(executor) as engine:
        return loaded.calibrate(calibrate, parameters).predict(scenario, measured, executor=engine)
