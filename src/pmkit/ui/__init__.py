"""Rich rendering of analyses, models and findings; renders to a Console passed in, never models.

The views of ``pmkit show`` are available to notebooks and other tools; they render the
:class:`~pmkit.analysis.Analysis` that :func:`pmkit.analyse` computes::

    from rich.console import Console
    import pmkit, pmkit.ui

    analysis = pmkit.analyse("study/", target={"p": 65536})
    pmkit.ui.render_show(Console(), analysis)

or piece by piece, for one input ``result = analysis.inputs[0]``: ``show_view(result)``,
``call_tree_view(result.report)``, ``ranking_view(result.report)``, ``detail_view(result.detail)``
(with ``callpath=`` given to ``analyse``), ``findings_panel(result.findings)``,
``markdown_report(analysis)``.  ``pmkit compare``'s screen renders a
:class:`~pmkit.comparison.Comparison`: ``render_comparison(Console(), pmkit.compare(a, b))``.
Every table is laid out for the width it is printed at (:mod:`pmkit.ui.layout`).
"""

from pmkit.ui.call_tree import call_tree_view
from pmkit.ui.compare import comparison_view, render_comparison
from pmkit.ui.detail import detail_view
from pmkit.ui.findings_panel import findings_panel
from pmkit.ui.markdown_report import markdown_report
from pmkit.ui.plot import MeasurementPlot
from pmkit.ui.ranking import ranking_view
from pmkit.ui.show import render_show, show_view

__all__ = ["MeasurementPlot", "call_tree_view", "comparison_view", "detail_view", "findings_panel", "markdown_report",
           "ranking_view", "render_comparison", "render_show", "show_view"]
