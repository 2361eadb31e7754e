"""pmkit: empirical performance modeling of parallel programs.

The public SDK: ``read``, ``model``, ``detect``, ``call_overheads`` (MPI call overheads of a trace),
the core types, and ``hookimpl`` for plugins.
"""

from pmkit.constraints import Constraint
from pmkit.errors import InputError, PmkitError, UsageError
from pmkit.experiment import CallTree, EventTable, Experiment, ExperimentBuilder, Metric
from pmkit.findings import Finding
from pmkit.hookspecs import hookimpl
from pmkit.models import Model, ModelSet, Quality
from pmkit.options import Option
from pmkit.overhead import call_overheads
from pmkit.pmnf import Factor, Function, Term
from pmkit.sdk import detect, model, read
from pmkit.series import SeriesBatch

__all__ = [
    "CallTree", "Constraint", "EventTable", "Experiment", "ExperimentBuilder", "Factor", "Finding",
    "Function", "InputError", "Metric", "Model", "ModelSet", "Option", "PmkitError",
    "Quality", "SeriesBatch", "Term", "UsageError", "call_overheads", "detect", "hookimpl", "model", "read",
]
