"""Rich rendering of experiments, models and findings; renders to a Console passed in, never models.

The views of ``pmkit show`` are available to notebooks and other tools::

    from rich.console import Console
    import pmkit, pmkit.ui

    exp = pmkit.read("study/")
    models = pmkit.model(exp)
    pmkit.ui.render_show(Console(), exp, models, target={"p": 65536})

or piece by piece: ``report = pmkit.scaling.analyse(exp, models)`` and then ``call_tree_view(report)``,
``ranking_view(report)``, ``detail_view(pmkit.scaling.detail(report, "main->solve"))``,
``findings_panel(findings)``, ``MeasurementPlot(detail.plot)``.
"""

from pmkit.ui.call_tree import call_tree_view
from pmkit.ui.detail import detail_view
from pmkit.ui.findings_panel import findings_panel
from pmkit.ui.markdown_report import markdown_report
from pmkit.ui.plot import MeasurementPlot
from pmkit.ui.ranking import ranking_view
from pmkit.ui.show import render_show, show_view

__all__ = ["MeasurementPlot", "call_tree_view", "detail_view", "findings_panel", "markdown_report",
           "ranking_view", "render_show", "show_view"]
