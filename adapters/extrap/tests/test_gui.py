"""``pmkit-extrap-gui``: Extra-P's GUI with pmkit's modelers, checked through its widgets and a screenshot.

The GUI runs headless: Qt's ``offscreen`` platform by default, or an X display such as Xvfb's when
``QT_QPA_PLATFORM=xcb`` and ``DISPLAY`` are set (``Xvfb :99 & DISPLAY=:99 QT_QPA_PLATFORM=xcb``; Qt's
xcb platform needs libxcb-cursor0 and friends).  Screenshots are what Qt renders the window as.
"""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from extrap.extrap import extrapgui
from extrap.fileio.experiment_io import write_experiment
from PySide6.QtCore import QEvent
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QProgressDialog

from pmkit.readers.extrap_experiment import ExtrapExperimentReader
from pmkit_extrap import register
from pmkit_extrap.gui import pmkit_in_extrap_gui, tolerant_formula

P = (2, 4, 8, 16, 32, 64)
PLATFORM = os.environ.get("QT_QPA_PLATFORM", "offscreen")
"""Qt's platform for these tests: headless unless one is chosen."""


@pytest.fixture(scope="module")
def app() -> QApplication:
    os.environ["QT_QPA_PLATFORM"] = PLATFORM
    return QApplication.instance() or QApplication([])


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """An Extra-P text input: a noisy linear call path, and one that is exactly log2(p) (constant 0)."""
    rng = np.random.default_rng(5)
    lines = ["PARAMETER p", "POINTS " + " ".join(map(str, P)), "", "REGION main", "METRIC time"]
    lines += ["DATA " + " ".join(f"{(3 + 0.2 * p) * (1 + 0.01 * e):.9g}" for e in rng.standard_normal(3)) for p in P]
    lines += ["", "REGION exact", "METRIC time"] + [f"DATA {math.log2(p):g}" for p in P]
    path = tmp_path / "study.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def window(app: QApplication, registry, study: Path) -> Iterator:
    """Extra-P's main window as pmkit-extrap-gui opens it, with ``study`` loaded."""
    register(registry)
    hooks = (warnings.showwarning, sys.excepthook, list(warnings.filters))
    try:
        with pmkit_in_extrap_gui():  # as in pmkit-extrap-gui, for as long as the window lives
            window, _ = extrapgui.main(args=["--text", str(study)], test=True)
            app.processEvents()
            yield window
            window.hide()  # close() would ask "Are you sure to quit?" in a modal box
            forget_progress_dialogs(window)
            window.deleteLater()
            QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
            app.processEvents()
    finally:  # Extra-P's GUI installs its own warning and exception hooks; give the test session its own back
        warnings.showwarning, sys.excepthook, warnings.filters[:] = hooks


def forget_progress_dialogs(window) -> None:
    """Disconnect Extra-P's progress dialogs from their ProgressWindow objects before the window goes:
    a dialog destroyed with its window emits ``canceled`` into a ProgressWindow Python may already have
    collected, which crashed the next test's event processing about one run in six (a segmentation
    fault in ``ProgressWindow.user_cancel``)."""
    for dialog in window.findChildren(QProgressDialog):
        with warnings.catch_warnings(), contextlib.suppress(RuntimeError, TypeError):
            warnings.simplefilter("ignore", RuntimeWarning)
            dialog.canceled.disconnect()


def select(window, modeler: str) -> None:
    selector = window.modeler_widget._model_selector
    index = selector.findText(modeler)
    assert index >= 0, f"{modeler} is not offered: {items(selector)}"
    selector.setCurrentIndex(index)
    QApplication.processEvents()


def items(combo) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


def pixels(image: QImage) -> np.ndarray:
    """The image as a (height, width) array of 0xAARRGGBB values."""
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    rows = np.frombuffer(image.constBits(), np.uint32).reshape(image.height(), image.bytesPerLine() // 4)
    return rows[:, : image.width()].copy()


def test_pmkit_modelers_are_offered_beside_extraps_and_selectable(window, registry) -> None:
    offered = items(window.modeler_widget._model_selector)
    assert {"Default", "Refining"} <= set(offered)
    assert {f"pmkit-{name}" for name in registry.names("modeler")} <= set(offered)
    select(window, "pmkit-line")
    modeler = window.modeler_widget._modeler
    assert modeler.PMKIT_MODELER == "line" and modeler.exponent == "1"


def test_model_sets_are_named_after_their_modeler_unless_the_user_names_them(window, tmp_path: Path) -> None:
    widget = window.modeler_widget
    assert widget.getName() == "Default", "named after Extra-P's preselected modeler, not 'New Model'"
    select(window, "pmkit-line")
    assert widget.getName() == "pmkit-line"
    widget.remodel()
    QApplication.processEvents()
    assert items(window.selector_widget.model_selector)[-1] == "pmkit-line"
    widget.model_name_edit.clear()
    QTest.keyClicks(widget.model_name_edit, "my line")
    select(window, "pmkit-refining")
    assert widget.getName() == "my line", "a name the user typed is kept"
    saved = tmp_path / "saved.extra-p"
    write_experiment(window.getExperiment(), str(saved))
    stored = ExtrapExperimentReader().read(saved).stored_models
    assert stored["pmkit-line"].modeler == "extrap:PmkitLineModeler"


def test_formulas_extrap_cannot_format_are_shown_as_they_are() -> None:
    def extraps(formula: str) -> str:
        return str(int(formula))

    assert tolerant_formula(extraps)("12") == "12"
    assert tolerant_formula(extraps)("log2(p)^(1)") == "log2(p)^(1)"


def test_screenshot_shows_the_window_with_a_pmkit_model_of_every_call_path(window, tmp_path: Path) -> None:
    select(window, "pmkit-refining")
    window.modeler_widget.remodel()
    tree = window.selector_widget.tree_view
    tree.expandAll()
    tree.selectAll()  # draws every call path's model, "exact"'s log2(p)^(1) included, in the tree and the graph
    QApplication.processEvents()
    shot = tmp_path / "pmkit-extrap-gui.png"
    assert window.grab().save(str(shot))
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (window.width(), window.height())
    screen = pixels(image)
    assert len(np.unique(screen)) > 100, "the screenshot is not a blank window"
    combo = window.modeler_widget._model_selector
    corner = combo.mapTo(window, combo.rect().topLeft())
    shown = screen[corner.y(): corner.y() + combo.height(), corner.x(): corner.x() + combo.width()]
    with_pmkit = pixels(combo.grab().toImage())
    assert np.array_equal(shown, with_pmkit), "the screenshot shows the generator list with pmkit-refining selected"
    select(window, "Refining")
    assert not np.array_equal(pixels(combo.grab().toImage()), with_pmkit), "the selected name is what is drawn"
    assert items(window.selector_widget.model_selector)[-1] == "pmkit-refining"


DRIVER = '''
"""Runs pmkit-extrap-gui's main() as the console script does; when Extra-P would enter Qt's event
loop, it selects pmkit-refining, saves a screenshot to argv[1], prints what it saw and returns."""
import sys

from PySide6.QtWidgets import QApplication, QMainWindow

from pmkit_extrap.gui import main


def capture(app):
    app.processEvents()
    (window,) = [w for w in app.topLevelWidgets() if isinstance(w, QMainWindow) and w.isVisible()]
    selector = window.modeler_widget._model_selector
    print("offered:", "|".join(selector.itemText(i) for i in range(selector.count())))
    selector.setCurrentIndex(selector.findText("pmkit-refining"))
    app.processEvents()
    print("model name:", window.modeler_widget.getName())
    print("saved:", window.grab().save(sys.argv[1]))
    return 0


QApplication.exec = capture
main(sys.argv[2:])
'''


def test_the_console_script_starts_extraps_gui_with_pmkit_modelers(study: Path, tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("pmkit-extrap-gui")
    env = {**os.environ, "QT_QPA_PLATFORM": PLATFORM}
    helped = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120, env=env)
    assert helped.returncode == 0 and "--text" in helped.stdout, helped.stderr
    driver = tmp_path / "driver.py"
    driver.write_text(textwrap.dedent(DRIVER), encoding="utf-8")
    shot = tmp_path / "console.png"
    done = subprocess.run([sys.executable, str(driver), str(shot), "--text", str(study)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "pmkit-refining" in done.stdout.split("offered:")[1].splitlines()[0].split("|")
    assert "model name: pmkit-refining" in done.stdout and "saved: True" in done.stdout
    assert len(np.unique(pixels(QImage(str(shot))))) > 100


def test_extraps_gui_shows_both_segments_of_a_segmented_pmkit_model(window, app: QApplication, tmp_path: Path) -> None:
    from extrap.fileio.experiment_io import read_experiment
    from PySide6.QtCore import QModelIndex, Qt

    import pmkit
    from conftest import segmented_experiment
    from pmkit_extrap import write_extrap

    experiment = segmented_experiment()
    models = pmkit.model(experiment)
    send = models.get("main->send", "time")
    assert send.segmented
    path = tmp_path / "segmented.extra-p"
    write_extrap(path, experiment, {"pmkit": models})
    window.import_file(read_experiment, file_name=str(path), model=False)  # File > Open experiment
    app.processEvents()
    tree = window.selector_widget.tree_model
    main = tree.index(0, 0, QModelIndex())
    assert tree.data(tree.index(0, 0, main), Qt.ItemDataRole.DisplayRole) == "send"
    first, second = tree.data(tree.index(0, 3, main), Qt.ItemDataRole.DisplayRole).splitlines()
    assert first.endswith(f"for p<={send.change_point.value:.3f}") and "for p>=" in second
    assert f"{send.segments[1].function.terms[0].coefficient:.3f} * p" in second
