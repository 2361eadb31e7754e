"""pmkit: empirical performance modeling of parallel programs.

The public SDK: ``read``, ``model``, ``detect``, ``load_prior``, ``analyse`` (all of it at once, as
``pmkit show`` does), ``compare`` (two studies side by side, as ``pmkit compare`` does), per-process
models (``PerProcessModel``, ``predict``), the MPI call overheads of a trace (``call_overheads``), the
core types, and ``hookimpl`` for plugins.
"""

from pmkit.analysis import Analysis
from pmkit.comparison import Comparison, compare
from pmkit.constraints import Constraint
from pmkit.errors import InputError, PmkitError, UsageError
from pmkit.experiment import CallTree, EventTable, Experiment, ExperimentBuilder, Metric
from pmkit.findings import Finding
from pmkit.hookspecs import hookimpl
from pmkit.models import Model, ModelSet, Quality
from pmkit.options import Option
from pmkit.pmnf import Factor, Function, Term
from pmkit.sdk import analyse, detect, load_prior, model, read
from pmkit.series import SeriesBatch

__all__ = [
    "Analysis", "CallTree", "Comparison", "Constraint", "EventTable", "Experiment", "ExperimentBuilder", "Factor",
    "Finding", "Function", "InputError", "Metric", "Model", "ModelSet", "Option", "PerProcessModel", "PmkitError",
    "Quality", "SeriesBatch", "Term", "UsageError", "analyse", "call_overheads", "compare", "detect", "hookimpl",
    "load_prior",
    "model", "predict", "read",
]


def __getattr__(name: str) -> object:
    """``PerProcessModel``, ``predict`` and ``call_overheads`` load on first use, so that ``pmkit --help``
    stays fast."""
    if name in ("PerProcessModel", "predict"):
        from pmkit import perprocess

        return getattr(perprocess, name)
    if name == "call_overheads":
        from pmkit.overhead import call_overheads

        return call_overheads
    raise AttributeError(f"module 'pmkit' has no attribute {name!r}")
