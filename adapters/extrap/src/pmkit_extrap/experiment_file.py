"""Writing and reading ``.extra-p`` files with Extra-P's own serializer.

:func:`write_extrap` saves a pmkit experiment and its model sets so that the stock Extra-P opens it
(``extrap --experiment FILE``, the GUI's *Open experiment*): functions and hypotheses are Extra-P's
standard types.  A model set made by a pmkit modeler records that modeler's adapter class; an
Extra-P without this adapter loads it with a warning about the unknown modeler and keeps the
models.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from extrap.fileio.experiment_io import read_experiment, write_experiment

from pmkit.experiment import Experiment
from pmkit.models import ModelSet
from pmkit_extrap.convert import to_extrap, to_pmkit


def write_extrap(path: str | os.PathLike, experiment: Experiment, models: Mapping[str, ModelSet] | None = None, *,
                 include_stored: bool = True, measure: str = "mean") -> None:
    """Save ``experiment`` with ``models`` (name → ModelSet) and its stored models as an ``.extra-p`` file."""
    write_experiment(to_extrap(experiment, models, include_stored=include_stored, measure=measure), str(path))


def read_extrap(path: str | os.PathLike, measure: str = "mean") -> Experiment:
    """Read an ``.extra-p`` file with Extra-P's reader and convert it to pmkit's Experiment."""
    return to_pmkit(read_experiment(str(path)), measure, source=str(path))
